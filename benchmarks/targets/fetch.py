"""Fetch a Debian source package into autotune's cache (once) and print the unpacked tree's path.

    python benchmarks/targets/fetch.py libyaml        # -> ~/.cache/autotune/targets/libyaml/src/libyaml-0.2.5
    LIBYAML_SRC=$(python benchmarks/targets/fetch.py libyaml) autotune compare --build-script benchmarks/targets/libyaml.sh ...

Uses the tests' fetcher (tests/targets/debsrc.py): a private, temporary apt configuration, so the
system's apt sources are not changed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from autotune.io import file_lock  # noqa: E402
from autotune.paths import cache_dir  # noqa: E402
from targets.debsrc import SourceUnavailable, fetch_source  # noqa: E402


def source_tree(package: str) -> Path:
    base = cache_dir() / "targets" / package
    marker = base / "src.json"
    with file_lock(base / "src.lock"):
        if marker.is_file():
            tree = Path(json.loads(marker.read_text())["source_dir"])
            if tree.is_dir():
                return tree
        trees = fetch_source(package, dest=base / "src")
        if not trees:
            raise SourceUnavailable(f"apt-get source {package} unpacked no tree under {base / 'src'}")
        marker.write_text(json.dumps({"source_dir": str(trees[-1])}))
        return trees[-1]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python benchmarks/targets/fetch.py PACKAGE", file=sys.stderr)
        return 2
    try:
        print(source_tree(argv[0]))
    except SourceUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
