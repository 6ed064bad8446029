import os

import pytest

# Pin the rich console width so that rendered tables are stable.
os.environ.setdefault("COLUMNS", "120")
os.environ.setdefault("TERM", "dumb")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """One build cache for the whole session, never the user's own."""
    cache = tmp_path_factory.getbasetemp() / "autotune-cache"
    monkeypatch.setenv("AUTOTUNE_CACHE_DIR", str(cache))
