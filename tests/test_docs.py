"""docs/DESIGN.md: every section the code and the README cite exists, and it covers the commands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "DESIGN.md"
# a citation: the file name, then the section in double quotes, possibly wrapped across comment lines
CITATION = re.compile(r'DESIGN\.md,?\s+"([^"]+)"')


def _headings() -> list[str]:
    return [ln.lstrip("#").strip() for ln in DESIGN.read_text().splitlines() if ln.startswith("#")]


def _cited() -> list[tuple[Path, str]]:
    files = [ROOT / "README.md", *ROOT.glob("autotune/**/*.py"), *ROOT.glob("kernels/**/*.[ch]"),
             *(f for f in ROOT.glob("tests/**/*.py") if f.name != Path(__file__).name)]
    out = []
    for f in files:
        text = re.sub(r"\n\s*(?:#|\*|//)?\s*", " ", f.read_text(errors="replace"))  # join wrapped lines
        out += [(f, m.group(1)) for m in CITATION.finditer(text)]
    return out


def test_every_cited_section_exists():
    heads = _headings()
    cited = _cited()
    assert len(cited) > 10
    missing = [(str(f.relative_to(ROOT)), name) for f, name in cited if not any(h.startswith(name) for h in heads)]
    assert not missing, missing


def test_design_covers_the_commands():
    text = DESIGN.read_text()
    for cmd in ("autotune run", "autotune race", "autotune compare", "autotune validate", "autotune preflight"):
        assert f"`{cmd}`" in text, cmd
    assert "profile -> probe -> tune -> race" in text
