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


# ---- the suite's order (tests/suite_order.py) ----------------------------------------------------

def pytest_addoption(parser):
    parser.addoption("--store-durations", action="store_true",
                     help="write each test module's measured seconds to tests/durations.json (the suite's order)")


def _module_of(item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(session, config, items):
    from suite_order import balanced_order, load_durations

    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = balanced_order(items, _module_of, load_durations(), workers)


_SECONDS: dict = {}


def pytest_runtest_logreport(report):
    module = report.nodeid.split("::", 1)[0]
    _SECONDS[module] = _SECONDS.get(module, 0.0) + float(getattr(report, "duration", 0.0) or 0.0)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if config.getoption("--store-durations") and not hasattr(config, "workerinput") and _SECONDS:
        from suite_order import store_durations

        store_durations(_SECONDS)
