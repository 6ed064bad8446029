"""The tests' source fetcher (targets/debsrc.py) and what .ci/setup.sh may change on the system."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from targets.debsrc import deb_src_entries, source_versions

ROOT = Path(__file__).resolve().parent.parent


def _etc(tmp_path: Path, files: dict[str, str]) -> Path:
    etc = tmp_path / "etc-apt"
    (etc / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (etc / name).write_text(text)
    return etc


def test_deb822_entries_get_deb_src_twins(tmp_path):
    etc = _etc(tmp_path, {"sources.list.d/debian.sources": (
        "Types: deb\n# a comment\nURIs: http://mirror.invalid/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/k.gpg\n\n"
        "Types: deb-src\nURIs: http://mirror.invalid/already-src\nSuites: bookworm\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.invalid/disabled\nSuites: x\nComponents: main\nEnabled: no\n"),
        "sources.list.d/other.sources.disabled": "Types: deb\nURIs: http://mirror.invalid/no\nSuites: y\n"})
    text = deb_src_entries(apt_etc=etc)
    assert text == ("Types: deb-src\nURIs: http://mirror.invalid/debian\nSuites: bookworm bookworm-updates\n"
                    "Components: main\nSigned-By: /usr/share/keyrings/k.gpg\n")


def test_one_line_entries_get_deb_src_twins(tmp_path):
    etc = _etc(tmp_path, {"sources.list": (
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian bookworm main contrib\n"
        "# deb http://mirror.invalid/commented bookworm main\n"
        "deb-src http://mirror.invalid/src bookworm main\n"
        "deb http://mirror.invalid/plain bookworm-security main\n")})
    stanzas = deb_src_entries(apt_etc=etc).strip().split("\n\n")
    assert stanzas == [
        "Types: deb-src\nURIs: http://mirror.invalid/debian\nSuites: bookworm\nComponents: main contrib\nSigned-By: /k.gpg",
        "Types: deb-src\nURIs: http://mirror.invalid/plain\nSuites: bookworm-security\nComponents: main",
    ]


def test_no_deb_entries_give_nothing(tmp_path):
    assert deb_src_entries(apt_etc=_etc(tmp_path, {})) == ""


def test_setup_writes_no_apt_configuration():
    """setup.sh installs packages and the venv; the only file it touches under /etc is the one an
    earlier setup left (it removes it). A plain read of the script, so any new write shows up."""
    script = (ROOT / ".ci" / "setup.sh").read_text()
    code = "\n".join(ln for ln in script.splitlines() if not ln.lstrip().startswith("#"))
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "setup.sh")]).returncode == 0
    assert not re.search(r"\btee\b|>\s*/etc|sed -i|cp .*/etc|mv .*/etc", code)
    assert re.findall(r"/etc/\S+", code) == ["/etc/apt/sources.list.d/autotune-src.sources"]
    assert "rm -f \"$OLD_SRC\"" in code
    run = (ROOT / ".ci" / "run").read_text()
    assert "bash .ci/setup.sh --tests && .venv/bin/python -m pytest -q" in run
    readme = (ROOT / "README.md").read_text()
    assert "bash .ci/setup.sh --tests && .venv/bin/python -m pytest -q" in readme.split("## ")[0]


def test_source_versions_lists_what_showsrc_offers_newest_first():
    """When the version apt picks cannot be downloaded (a security pool answering 404: zlib on this
    project's machines), fetch_source tries the others apt-cache showsrc lists, newest first."""
    showsrc = ("Package: zlib\nBinary: zlib1g\nVersion: 1.2.13.dfsg-1\nFormat: 3.0 (quilt)\n\n"
               "Package: zlib\nBinary: zlib1g\nVersion: 1:1.2.11.dfsg-2+deb11u2\n\n"
               "Package: zlib\nVersion: 1.2.13.dfsg-1+deb12u1\n\n"
               "Package: zlib\nVersion: 1.2.13.dfsg-1\n\n"  # listed twice (two suites): tried once
               "Package: zlib-other\nVersion: 9.9-1\n")
    assert source_versions(showsrc, "zlib") == ["1:1.2.11.dfsg-2+deb11u2", "1.2.13.dfsg-1+deb12u1", "1.2.13.dfsg-1"]
    assert source_versions("", "zlib") == []
