"""benchmarks/keep_state.py: a stopped compare's state packed, the machine gone, unpacked, and the
compare's own resume check (finished_trial) takes the trial back; the queues are left out, the
archive is reproducible, and a bad archive or a clash is refused with a clear error."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from autotune.compare.compare import finished_trial
from autotune.trials import TrialResult
from autotune.trials.coverage import Yardstick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import keep_state  # noqa: E402

RECORDED = ROOT / "benchmarks" / "results" / "bugs-study-2026-11-27" / "libxml2-default-trial-0.trial.json.gz"


def stopped_compare(out: Path) -> dict:
    """A compare's output as a session leaves it: one finished trial (the bug study's recorded libxml2
    trial, moved to ``out``) with its queue, a trial cut mid-way (afl-out only), the seeds."""
    doc = json.loads(gzip.decompress(RECORDED.read_bytes()))
    doc["spec"]["out_dir"] = str(out / "trials" / "default" / "trial-0")
    doc["spec"]["seeds"] = str(out / "seeds")
    done = out / "trials" / "default" / "trial-0"
    (done / "afl-out" / "default" / "queue").mkdir(parents=True)
    (done / "afl-out" / "default" / "queue" / "id:000000,orig:a.xml").write_bytes(b"<a/>")
    (done / "afl-out" / "default" / "fuzzer_stats").write_text("execs_done : 1\n")
    (done / "afl-fuzz.log").write_text("afl-fuzz says\n")
    (done / "trial.json").write_text(json.dumps(doc, indent=1))
    cut = out / "trials" / "default" / "trial-1" / "afl-out" / "default" / "queue"
    cut.mkdir(parents=True)
    (cut / "id:000000").write_bytes(b"x")
    (out / "seeds").mkdir()
    (out / "seeds" / "a.xml").write_bytes(b"<a/>")
    (out / "config-default.env").write_text("AUTOTUNE_CANARY_FATAL=1\n")
    return doc


def test_pack_unpack_resumes_the_finished_trial(tmp_path: Path) -> None:
    out = tmp_path / "study"
    doc = stopped_compare(out)
    archive = tmp_path / "state" / "study.tar.gz"
    assert keep_state.pack(out, archive) == 3
    names = [n for n, _ in keep_state.members(archive)]
    assert names == ["config-default.env", "seeds/a.xml", "trials/default/trial-0/trial.json"]

    shutil.rmtree(out)  # the machine is gone
    assert keep_state.unpack(archive, out) == (3, 0)
    spec = TrialResult.from_dict(doc).spec
    yard = Yardstick(kind=doc["yardstick"]["kind"], binary="/nowhere/pcguard", sha256="0" * 64)
    back = finished_trial(spec, yard)
    assert back is not None and back.to_dict() == TrialResult.from_dict(doc).to_dict()
    # the cut trial is not there: the resumed compare runs it again
    cut = TrialResult.from_dict(doc).spec
    assert finished_trial(type(cut).from_dict({**cut.to_dict(), "index": 1,
                                              "out_dir": str(out / "trials" / "default" / "trial-1")}), yard) is None
    assert keep_state.unpack(archive, out) == (0, 3)  # again: nothing to write


def test_archive_is_reproducible(tmp_path: Path) -> None:
    stopped_compare(tmp_path / "a")
    keep_state.pack(tmp_path / "a", tmp_path / "1.tar.gz")
    keep_state.pack(tmp_path / "a", tmp_path / "2.tar.gz")
    assert (tmp_path / "1.tar.gz").read_bytes() == (tmp_path / "2.tar.gz").read_bytes()


def test_clash_refused_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "study"
    stopped_compare(out)
    archive = tmp_path / "s.tar.gz"
    keep_state.pack(out, archive)
    trial = out / "trials" / "default" / "trial-0" / "trial.json"
    kept = trial.read_bytes()
    trial.write_text("{}")
    with pytest.raises(keep_state.StateError, match="differ from the archive"):
        keep_state.unpack(archive, out)
    assert trial.read_text() == "{}"  # nothing written
    keep_state.unpack(archive, out, force=True)
    assert trial.read_bytes() == kept


def test_unsafe_member_refused(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("../escape.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(gzip.compress(raw.getvalue()))
    with pytest.raises(keep_state.StateError, match="not a relative file path"):
        keep_state.unpack(bad, tmp_path / "out")
    assert not (tmp_path / "escape.json").exists()


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "keep_state.py"
    (tmp_path / "empty").mkdir()
    for argv, says in ((["pack", str(tmp_path / "empty"), str(tmp_path / "x.tar.gz")], "nothing to keep"),
                       (["unpack", str(tmp_path / "missing.tar.gz"), str(tmp_path / "o")], "does not exist"),
                       (["list", str(RECORDED)], "cannot be read as a gzip'd tar")):
        r = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True)
        assert r.returncode == 2, r
        assert says in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.tar.gz").exists()


@pytest.mark.parametrize("rel, kept", [
    ("sensitive_metrics.json", True),  # benchmarks/sensitive_metrics.py --resume reads it
    ("libxml2/ngram-8/run/race/race.json", True),
    ("trials/default/trial-0/afl-out/default/fuzzer_stats", False),
    ("trials/default/trial-0/afl-out/default/queue/trial.json", False),  # under afl-out: never
    ("work/index-0.bin", False),
])
def test_what_a_benchmarks_resume_needs_is_kept(rel: str, kept: bool) -> None:
    from pathlib import PurePosixPath

    assert keep_state.wanted(PurePosixPath(rel)) == kept


def test_a_sensitive_metrics_census_union_is_kept_and_its_campaigns_are_not() -> None:
    """A cell whose trials finished can run its census on another machine from the union of its queues
    (benchmarks/sensitive_metrics.py); the campaigns' own output stays out."""
    from pathlib import PurePosixPath

    assert keep_state.wanted(PurePosixPath("libxml2/ctx/collisions/union/id:000001,orig:a.xml"))
    assert keep_state.wanted(PurePosixPath("sensitive_metrics.json"))
    assert not keep_state.wanted(PurePosixPath("libxml2/ctx/ours-ctx-in16-t0/afl-out/default/queue/id:000001"))
    assert not keep_state.wanted(PurePosixPath("libxml2/ctx/collisions/aflpp-census.map"))
    assert not keep_state.wanted(PurePosixPath("libxml2/ctx/union/x"))
