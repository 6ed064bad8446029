"""The bug benchmark's manifest against its files (benchmarks/bugs): every bug has a canary in its
library's patch and the inputs the manifest promises; and the source fetcher's other-suite entries."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from buglibs_support import LIBRARIES, buglibs
from targets.debsrc import SourceUnavailable, entries_codename, system_codename, with_suite

ID = re.compile(r"^(TIF|XML|PNG|SQL|EXP|LAR|OPJ)\d{3}$")


def test_the_benchmark_has_at_least_55_bugs_over_7_libraries():
    assert {"libtiff", "libxml2", "libpng", "sqlite3", "expat", "libarchive", "openjpeg"} <= set(LIBRARIES)
    bugs = [b for lib in LIBRARIES.values() for b in lib.bugs]
    assert len(bugs) >= 55
    assert len({b.id for b in bugs}) == len(bugs)  # ids unique over the benchmark


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_every_bug_has_one_canary_in_the_patch_and_its_inputs(name):
    lib = LIBRARIES[name]
    patch = lib.patch.read_text()
    added = [ln for ln in patch.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    sites = re.findall(r"AUTOTUNE_BUG\((\w+),", "\n".join(added))
    assert set(sites) == {b.id for b in lib.bugs}  # a canary per bug, none without a manifest entry
    assert '+#include "canary.h"' in patch
    for bug in lib.bugs:
        assert ID.match(bug.id), bug.id
        assert bug.fix and bug.site and bug.description
        assert bug.cve == "" or re.match(r"^CVE-\d{4}-\d{4,}$", bug.cve)
        assert lib.input_path(bug.id, "reach").is_file(), f"{bug.id}: inputs/{bug.id}.reach is missing"
        assert lib.input_path(bug.id, "trigger").is_file() == bug.trigger_known, bug.id
    assert sorted(p.name for p in lib.inputs_dir.iterdir()) == sorted(
        f"{b.id}.{kind}" for b in lib.bugs for kind in ("reach", "trigger") if kind == "reach" or b.trigger_known)
    assert len(list(lib.seeds_dir.iterdir())) >= 5
    assert lib.build_script.is_file()
    assert all(f.is_file() for f in lib.harness_files())


def test_patches_only_add_lines():
    """Keep upstream's behaviour (the bug stays in): a canary patch adds lines; it removes only the
    lines it puts back inside new braces."""
    for lib in LIBRARIES.values():
        removed = [ln for ln in lib.patch.read_text().splitlines() if ln.startswith("-") and not ln.startswith("---")]
        assert all(ln[1:].strip() in {"", "else /* 8-bit output */", "png_set_scale_16(png_ptr);",
                                      "if (ent->content != NULL)", "ent->content[0] = 0;",
                                      # libarchive LAR002: the same call, its result kept for the canary
                                      "__archive_read_consume(a, w->cntlen + 4U/*\\r\\n\\r\\n separator*/);"}
                   for ln in removed), (lib.name, removed)


def test_manifest_rejects_another_schema(tmp_path):
    doc = tmp_path / "bugs.toml"
    doc.write_text("schema_version = 99\n[library]\n")
    with pytest.raises(ValueError, match="schema_version 99"):
        buglibs.load_manifest(doc)


def test_with_suite_moves_the_installed_release_to_another():
    entries = ("Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n\n"
               "Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n")
    assert with_suite(entries, codename="bookworm", suite="bullseye") == entries.replace("bookworm", "bullseye")
    with pytest.raises(SourceUnavailable, match="code name is unknown"):
        with_suite(entries, codename="", suite="bullseye")


def test_system_codename_reads_os_release(tmp_path):
    f = tmp_path / "os-release"
    f.write_text('NAME="Debian GNU/Linux"\nVERSION_CODENAME=bookworm\n')
    assert system_codename(os_release=f) == "bookworm"
    assert system_codename(os_release=tmp_path / "none") == ""


def test_readme_bug_table_is_the_manifests():
    readme = (buglibs.HERE / "README.md").read_text()
    assert buglibs.bug_table(LIBRARIES) in readme, "regenerate it: python benchmarks/bugs/buglibs.py table"


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_recipe_names_every_file_the_build_reads(name, monkeypatch, capsys):
    """`buglibs.py recipe LIB` gives autotune the build script, every file it compiles, applies or
    sources (so a change to any of them rebuilds) and the seeds, all existing, relative to the
    working directory when below it."""
    lib = LIBRARIES[name]
    root = lib.folder.parent.parent.parent
    monkeypatch.chdir(root)
    assert buglibs.main(["recipe", name]) == 0
    args = capsys.readouterr().out.split()
    assert args[:2] == ["--build-script", str(lib.build_script.relative_to(root))]
    sources = [args[i + 1] for i, a in enumerate(args) if a == "-s"]
    assert {Path(s) for s in sources} == {f.relative_to(root) for f in lib.harness_files()}
    assert "kernels/canary.h" in sources and str(lib.patch.relative_to(root)) in sources
    assert args[-2:] == ["--corpus", str(lib.seeds_dir.relative_to(root))]
    assert all((root / p).exists() for p in [args[1], *sources, args[-1]])


def test_entries_codename_is_the_release_the_entries_name():
    """Inside a sid root that binds this host's /etc/apt, os-release says sid but the entries say
    bookworm: the entries' release is the one another suite's entries are derived from."""
    entries = ("Types: deb-src\nURIs: http://example.invalid/debian\nSuites: bookworm bookworm-updates\n\n"
               "Types: deb-src\nURIs: http://example.invalid/debian-security\nSuites: bookworm-security\n")
    assert entries_codename(entries, installed="bookworm") == "bookworm"
    assert entries_codename(entries, installed="sid") == "bookworm"
    assert entries_codename(entries, installed="") == "bookworm"
    two = entries + "\nTypes: deb-src\nURIs: http://example.invalid/debian\nSuites: trixie\n"
    assert entries_codename(two, installed="sid") == "sid"  # ambiguous: os-release decides (and fails later)
