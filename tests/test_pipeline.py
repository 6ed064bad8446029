"""The main job end to end: the README's first command, `autotune run --demo`, as the README writes it.

The command is read from the README's first screen (its first code block), so the test follows the
README. The real job takes about ten minutes (a 60 s probe, 40 tune calls, an 8-minute race); the
test appends the smallest budgets the command accepts for a job with every stage (a 6 s probe, 6
tune calls, the race of guard alone against AFL++'s default, one 5 s trial each: the race has its
own tests), runs it with the venv's console script in a fresh directory (so its default --out,
autotune-out/, lands there), and checks the output has the lines the sample output shows (whole in
docs/USAGE.md, abridged in the README; tests/test_docs.py keeps the two alike).
"""

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
FIRST_SCREEN_LINES = 24
SMALL_BUDGETS = ["--probe-time", "6", "--calls", "6", "--metrics", "guard", "--repeats", "1", "--final-repeats", "1", "--budget", "12",
                 "--min-trial", "5"]


def readme_main_job() -> str:
    """The main job's command on the README's first screen: the first code block's first line, after
    the set-up command, without its comment."""
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:FIRST_SCREEN_LINES])
    block = re.search(r"^```sh\n(.*?)^```", head, re.M | re.S)
    assert block, f"no ```sh block in the README's first {FIRST_SCREEN_LINES} lines"
    first = block.group(1).splitlines()[0].split("#", 1)[0]
    setup, _, job = first.partition("&&")
    assert setup.strip() == "bash .ci/setup.sh", first
    return job.strip()


def test_the_readme_names_the_main_job():
    assert readme_main_job() == ".venv/bin/autotune run --demo"


@pytest.mark.slow
def test_readme_main_job_runs_every_stage_and_writes_loadable_env_files(tmp_path):
    argv = shlex.split(readme_main_job())
    exe = ROOT / argv[0]  # the README's path is relative to the repository
    assert exe.is_file(), f"{exe} is missing: run bash .ci/setup.sh"
    env = {**os.environ, "COLUMNS": "1000"}  # long lines unwrapped, as in the README
    proc = subprocess.run([str(exe), *argv[1:], *SMALL_BUDGETS], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "autotune-out"
    # the stages and the summary lines of the README's sample output
    for stage in ("profile", "probe", "tune", "race"):
        assert f"==> {stage}: " in proc.stderr, stage
    # tune: one summary line, its calls in its report
    err_lines = proc.stderr.replace(f"{tmp_path.resolve()}/", "").splitlines()
    assert any(ln.startswith("tune: 6 calls by replay, best ") and ln.endswith("; every call in autotune-out/tune/report.md")
               for ln in err_lines), proc.stderr[-3000:]
    assert not any(re.match(r"call \d+ \(", ln) for ln in err_lines), proc.stderr[-3000:]
    lines = proc.stdout.replace(f"{tmp_path.resolve()}/", "").splitlines()  # relative, as in the README
    for start in ("host profile: autotune-out/host-profile.toml", "probe: autotune-out/probe/probe.json (", "tune: ",
                  "race: ", "recommended: ", "report: autotune-out/race/race.md", "check:  autotune preflight"):
        assert any(ln.startswith(start) for ln in lines), (start, proc.stdout)
    # one recommendation: no replay-only "best:" line, no "load:" pointing at tune's files
    assert not any(ln.startswith(("best: ", "load: ")) for ln in lines), proc.stdout

    race = json.loads((out / "race" / "race.json").read_text())
    decision = race["race"]["decision"]
    assert {c["name"] for c in race["race"]["contestants"]} == {"aflpp-default", "guard"}
    files = {"afl-build.env", "afl-run.env"} | (set() if decision["is_default"]
                                                else {"autotune-build.env", "autotune-run.env"})
    assert files <= {p.name for p in (out / "race").iterdir()}
    assert race["race"]["search"]["strategy"] == "search" and race["tune_dir"] and race["probe_dir"]
    assert (out / "probe" / "probe.json").is_file()
    for name in ("autotune-run.env", "afl-build.env", "afl-run.env", "report.md", "report.json"):
        assert (out / "tune" / name).is_file(), name
    # the env files load in a real shell and set what the report chose
    best = json.loads((out / "tune" / "report.json").read_text())["best"]["config"]
    env = subprocess.run(["bash", "-c", f"set -a; . {out}/tune/autotune-run.env; set +a; env"],
                         capture_output=True, text=True, check=True).stdout
    assert f"AUTOTUNE_METRIC={best['metric']}" in env
    if best["metric"] == "guard":  # one slot per guard: no layout to set
        assert "AUTOTUNE_LAYOUT=" not in env
    else:
        assert f"AUTOTUNE_LAYOUT={best['layout']}" in env


def test_run_prints_one_tune_line_and_reports_every_call(tmp_path):
    """The tune stage of the main job: one summary line on screen (no line per call, on a log as
    here), every call in tune's report.md, in call order. --no-race: no afl-fuzz campaign."""
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["run", "--demo", "--no-race", "--probe-time", "3", "--calls", "6", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert not re.search(r"^call \d+ \(", res.stderr, re.M), res.stderr
    (line,) = [ln for ln in res.stderr.splitlines() if ln.startswith("tune: ")]
    m = re.fullmatch(rf"tune: (\d+) calls by replay, best (\S+); every call in {re.escape(str(out.resolve()))}/tune/report\.md",
                     line)
    assert m, line
    from autotune.tune.result import load_tune_result

    tuned = load_tune_result(out / "tune")
    assert int(m.group(1)) == tuned.calls == 6 and m.group(2) == tuned.best_config.key()
    every = (out / "tune" / "report.md").read_text().split("## Every call\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in every.splitlines() if re.match(r"\| \d+ \| ", ln)]
    assert [int(r.split("|")[1]) for r in rows] == list(range(1, 7)), every


def test_run_needs_a_target(tmp_path):
    res = CliRunner().invoke(app, ["run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert "give exactly one target" in res.output
    assert "Traceback" not in res.output
