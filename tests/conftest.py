import os

import pytest

# Pin the rich console width so that rendered tables are stable.
os.environ.setdefault("COLUMNS", "120")
os.environ.setdefault("TERM", "dumb")


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """One build cache for the whole test run, never the user's own: set before any fixture of any
    scope runs, so the runtime, the targets' builds (autotune.target) and the tests' runtime objects
    (programs/covtools.py runtime_objects) are built once per run and shared by every test.

    Under pytest-xdist every worker has its own base temp directory, all in one directory of the
    run: the cache goes there, so the workers share it too (builds take a lock and appear by rename,
    autotune.target.build and autotune.runtime.build)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    cache = base / "autotune-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOTUNE_CACHE_DIR", str(cache))
        yield cache
