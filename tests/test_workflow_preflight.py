"""The GitHub Actions workflow .github/workflows/autotune-preflight.yml, run here.

The YAML is parsed (PyYAML, a dependency of scikit-optimize's pyaml) and every step's `run:`
commands execute in a fresh clone of the repository with the job's environment, in order, with
bash's GitHub defaults (-e -o pipefail), the real tools and shorter budgets (PROBE_TIME_S,
RACE_ARGS, PREFLIGHT_TIME_S). `uses:` steps stand for themselves: the clone is the checkout, the cache
starts empty. The set-up step is checked with `bash -n` only: .ci/setup.sh would reinstall the
running venv from the temporary clone; the clone gets this venv instead (.ci/run runs setup.sh
for real on CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "autotune-preflight.yml"
# The probe runs longer than preflight's own campaign: a tuned configuration is sized for the keys
# the probe saw, and a probe no longer than the check can see fewer keys than the check when the
# host slows down during it (a 3 s probe on a host with 10-20 % steal tuned ngram-7 into 64 Ki
# slots for fewer than 2,600 keys; the 3 s preflight then saw 3,067, 2.32 % collisions > 2 %).
# The race: guard alone against AFL++'s default, one 5 s trial each (the smallest budget the main job
# accepts, as tests/test_pipeline.py runs it).
SHORT = {"PROBE_TIME_S": "6", "PREFLIGHT_TIME_S": "3",
         "RACE_ARGS": "--metrics guard --repeats 1 --final-repeats 1 --budget 12 --min-trial 5"}


def _job() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the key `on` as true
    assert on and "push" in on and "pull_request" in on
    (job,) = doc["jobs"].values()
    return job


def test_workflow_shape():
    job = _job()
    steps = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    runs = [s["run"] for s in steps if "run" in s]
    assert any("bash .ci/setup.sh" in r for r in runs)
    assert "autotune preflight" in runs[-1] and "--github" in runs[-1]
    # it checks the main job's recommendation (the race's directory), not tune's replay-based choice
    assert any("autotune run --demo" in r for r in runs) and '"$RECOMMENDATION_DIR"' in runs[-1]
    assert job["env"]["RECOMMENDATION_DIR"] == f'{job["env"]["OUT_DIR"]}/race'
    assert any(s.get("uses", "").startswith("actions/cache@") for s in steps)
    # the host overrides preflight turns into warnings, not a failed job
    assert job["env"]["AFL_SKIP_CPUFREQ"] == "1" and job["env"]["AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES"] == "1"


@pytest.mark.slow
def test_workflow_commands_run_here(tmp_path):
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    (clone / ".venv").symlink_to(Path(sys.prefix))
    job = _job()
    env = {**os.environ, **{k: str(v) for k, v in job["env"].items()}, **SHORT}
    outputs = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        cmd = step["run"]
        if "bash .ci/setup.sh" in cmd:
            subprocess.run(["bash", "-n", ".ci/setup.sh"], cwd=clone, check=True)
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", cmd], cwd=clone,
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"step {step.get('name')!r} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        outputs.append(proc.stdout)
    assert (clone / env["OUT_DIR"] / "tune" / "report.json").is_file()
    assert (clone / env["OUT_DIR"] / "tune" / "autotune-run.env").is_file()
    # preflight checked the main job's recommendation: the race's directory
    assert Path(env["RECOMMENDATION_DIR"]) == Path(env["OUT_DIR"]) / "race"
    for name in ("race.json", "afl-build.env", "afl-run.env"):
        assert (clone / env["RECOMMENDATION_DIR"] / name).is_file(), name
    last = outputs[-1].rstrip().splitlines()
    assert last[-1].startswith("::notice::preflight: the configuration fits")
