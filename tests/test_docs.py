"""docs/DESIGN.md and docs/RUNTIME.md: every section the code, the README, the other docs and the
results cite exists; DESIGN.md covers the commands and stays a newcomer's read (about 400 lines); the
README stays about 100 lines and its abridged sample output is docs/USAGE.md's real one, line for line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "DESIGN.md"
RUNTIME = ROOT / "docs" / "RUNTIME.md"


def _citation(doc: Path) -> re.Pattern:
    """A citation: the file name, then the section in double quotes, possibly wrapped across comment lines."""
    return re.compile(re.escape(doc.name) + r',?\s+"([^"]+)"')


def _headings(doc: Path) -> list[str]:
    return [ln.lstrip("#").strip() for ln in doc.read_text().splitlines() if ln.startswith("#")]


def _cited(doc: Path) -> list[tuple[Path, str]]:
    files = [ROOT / "README.md", *(f for f in ROOT.glob("docs/*.md") if f != doc),
             *ROOT.glob("benchmarks/results/*.md"),
             *ROOT.glob("autotune/**/*.py"), *ROOT.glob("kernels/**/*.[ch]"),
             *(f for f in ROOT.glob("tests/**/*.py") if f.name != Path(__file__).name)]
    out = []
    for f in files:
        text = re.sub(r"\n\s*(?:#|\*|//)?\s*", " ", f.read_text(errors="replace"))  # join wrapped lines
        out += [(f, m.group(1)) for m in _citation(doc).finditer(text)]
    return out


@pytest.mark.parametrize("doc", [DESIGN, RUNTIME], ids=lambda d: d.name)
def test_every_cited_section_exists(doc):
    heads = _headings(doc)
    cited = _cited(doc)
    assert len(cited) > (10 if doc == DESIGN else 0)
    missing = [(str(f.relative_to(ROOT)), name) for f, name in cited if not any(h.startswith(name) for h in heads)]
    assert not missing, missing


def test_the_readme_and_the_design_stay_short():
    """The README at most about 100 lines, DESIGN.md at most 400 (issue 56): details go to
    docs/USAGE.md, docs/RUNTIME.md, docs/CI.md and docs/RESULTS.md."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 110
    assert len(DESIGN.read_text().splitlines()) <= 400


def test_design_covers_the_commands():
    text = DESIGN.read_text()
    for cmd in ("autotune run", "autotune race", "autotune compare", "autotune validate", "autotune preflight"):
        assert f"`{cmd}`" in text, cmd
    assert "profile -> probe -> tune -> race" in text


def _sample_output(path: Path) -> list[str]:
    """The lines of the first code block that starts with `$ .venv/bin/autotune run --demo`."""
    block = re.search(r"^```\n(\$ \.venv/bin/autotune run --demo\n.*?)^```", path.read_text(), re.M | re.S)
    assert block, f"no sample output of the main job in {path}"
    return block.group(1).splitlines()


def test_the_readmes_sample_output_is_the_usage_pages():
    """The README shows the main job's output abridged ("..." where lines are left out); every line
    it shows is in docs/USAGE.md's whole sample, in the same order."""
    full = _sample_output(ROOT / "docs" / "USAGE.md")
    short = [ln for ln in _sample_output(ROOT / "README.md") if ln != "..."]
    assert len(short) > 10
    at = 0
    for ln in short:
        assert ln in full[at:], ln
        at = full.index(ln, at) + 1
