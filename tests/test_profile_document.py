"""The profile document: TOML round trip, validation of every field, the reference profiles."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.errors import DocumentError
from autotune.profile import (
    HostProfile,
    detect_host,
    list_reference_profiles,
    load_profile,
    reference_profile,
    save_profile,
)

FIXTURES = Path(__file__).parent / "fixtures" / "sysfs"
KiB, MiB = 1 << 10, 1 << 20
TABLE1 = ["apu4d4", "visionfive2", "quartz64", "celeron", "nuc8i7", "i9", "xeon", "ryzen", "epyc",
          "threadripper", "ampere", "m3max"]


def fake(name: str) -> HostProfile:
    return detect_host(sysfs_root=FIXTURES / name / "sys", procfs_root=FIXTURES / name / "proc", use_cpuinfo=False)


@pytest.mark.parametrize("name", ["thishost", "two-socket", "amd-ccx", "no-l3", "no-sysfs", "hybrid"])
def test_toml_round_trip(tmp_path, name):
    profile = fake(name)
    path = save_profile(profile, tmp_path / "p.toml")
    assert load_profile(path) == profile
    assert HostProfile.from_dict(profile.to_dict()) == profile


def test_reference_profiles_all_load():
    names = list_reference_profiles()
    assert sorted(names) == sorted(TABLE1 + ["bigmap-xeon-e5645"])
    for name in names:
        p = reference_profile(name)
        assert p.name == name and p.origin == "reference"
        assert ("Table 1" in p.citation) if name in TABLE1 else ("section V-A" in p.citation)
        assert p.checks is None and p.flags is None  # not in the papers: unknown, not invented
        for cache in p.caches:
            assert cache.as_given and cache.ways is None and cache.line_bytes is None


def test_reference_figures_are_the_papers():
    xeon = reference_profile("xeon")
    assert (xeon.brand, xeon.cores, xeon.threads) == ("Intel Xeon 8358", 32, 64)
    assert [(c.level, c.size_bytes, c.scope) for c in xeon.caches] == [
        (1, 64 * KiB, "core"), (2, 1 * MiB, "core"), (3, 48 * MiB, "shared")]
    assert xeon.l1d_bytes is None  # Table 1 does not say whether its L1 figure is the data cache
    assert xeon.cache(1).size_bytes == 64 * KiB and xeon.llc_bytes == 48 * MiB
    assert xeon.cache(2).instances == 32 and xeon.cache(3).instances is None
    quartz = reference_profile("quartz64")  # '-' for L2
    assert [c.level for c in quartz.caches] == [1, 3] and quartz.l2_bytes is None
    m3 = reference_profile("m3max")
    assert m3.cache(1).size_bytes is None and m3.cache(1).as_given == "192/128 KB p.c"
    assert [(c.size_bytes, c.instances) for c in m3.caches_at(2)] == [(16 * MiB, 2), (4 * MiB, 1)]
    bigmap = reference_profile("bigmap-xeon-e5645")
    assert (bigmap.packages, bigmap.cores, bigmap.threads) == (2, 12, None)
    assert (bigmap.l1d_bytes, bigmap.l2_bytes, bigmap.llc_bytes) == (32 * KiB, 256 * KiB, 12 * MiB)
    assert bigmap.cache(2).kind == "unified" and bigmap.line_bytes is None


def test_reference_profile_unknown_name():
    from autotune.errors import AutotuneError

    with pytest.raises(AutotuneError) as exc:
        reference_profile("no-such-host")
    assert "xeon" in exc.value.fix


# -- corrupt and incomplete files -------------------------------------------------------------

def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


def _doc() -> dict:
    return fake("thishost").to_dict()


CORRUPTIONS = [
    ("schema_version", lambda d: d.pop("schema_version"), "missing"),
    ("schema_version", lambda d: d.update(schema_version=99), "not supported"),
    ("origin", lambda d: d.update(origin="guessed"), "must be one of"),
    ("cpu", lambda d: d.pop("cpu"), "missing"),
    ("cpu.cores", lambda d: d["cpu"].update(cores="two"), "integer"),
    ("cpu.threads", lambda d: d["cpu"].update(threads=0), "at least 1"),
    ("cpu.online_cpus", lambda d: d["cpu"].update(online_cpus="0-x"), "CPU list"),
    ("memory.hugepages[0].reserved", lambda d: d["memory"]["hugepages"][0].pop("reserved"), "missing"),
    ("caches", lambda d: d.update(caches={"a": 1}), "list"),
    ("caches[2].size_bytes", lambda d: d["caches"][2].update(size_bytes="2 MB"), "integer"),
    ("caches[2].size_bytes", lambda d: d["caches"][2].pop("size_bytes"), "missing"),
    ("caches[0].kind", lambda d: d["caches"][0].update(kind="both"), "must be one of"),
    ("caches[0].ways", lambda d: d["caches"][0].update(ways=True), "integer"),
    ("caches[3].total_bytes", lambda d: d["caches"][3].update(total_bytes=1), "size_bytes x instances"),
    ("caches[1].sources.ways", lambda d: d["caches"][1]["sources"].pop("ways"), "no source"),
    ("caches[1].sources", lambda d: d["caches"][1]["sources"].update(colour="sysfs"), "unknown figure"),
    ("checks[0].severity", lambda d: d["checks"][0].update(severity="fatal"), "must be one of"),
    ("notes", lambda d: d.update(notes="none"), "list of strings"),
]


@pytest.mark.parametrize("field,corrupt,words", CORRUPTIONS, ids=[f"{c[0]}-{c[2]}" for c in CORRUPTIONS])
def test_corrupt_profile_names_file_and_field(tmp_path, field, corrupt, words):
    doc = copy.deepcopy(_doc())
    corrupt(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(DocumentError) as exc:
        load_profile(path)
    assert exc.value.field == field
    assert str(path) in exc.value.message and words in exc.value.message
    assert exc.value.fix


def test_not_toml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\nname = [\n")
    with pytest.raises(DocumentError, match="not valid TOML"):
        load_profile(bad)
    with pytest.raises(DocumentError, match="file not found"):
        load_profile(tmp_path / "absent.toml")


@pytest.mark.parametrize("content", [
    "schema_version = 1\nname = [\n",  # not TOML
    'schema_version = 1\nname = "x"\norigin = "detected"\n',  # incomplete
    tomli_w.dumps({**_doc(), "caches": [{"level": 9}]}),  # a bad field deep inside
])
def test_cli_corrupt_profile_is_one_line_and_exit_1(tmp_path, content):
    path = tmp_path / "corrupt.toml"
    path.write_text(content)
    for args in (["profile", "--show", str(path)], ["profile", "--show", str(path), "--json"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1
        assert result.stdout == ""
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and str(path) in errors[0]
        assert "Traceback" not in result.stderr
        assert len(result.stderr.splitlines()) <= 2  # the error, and its fix


def test_save_does_not_overwrite_a_good_file_on_failure(tmp_path, monkeypatch):
    path = save_profile(fake("thishost"), tmp_path / "good.toml")
    before = path.read_bytes()
    import os

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    from autotune.errors import AutotuneError

    with pytest.raises(AutotuneError):
        save_profile(fake("two-socket"), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["good.toml"]
