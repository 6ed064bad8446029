"""Portfolios (autotune.portfolio): hosts files, AFL++'s -M/-S roles and variations, the launch and
cross-machine sync scripts run for real (two "machines" as two output trees on this one, the real
afl-fuzz), and `autotune status` with the yardstick."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune import afl
from autotune.cli.main import app
from autotune.compare.config import ConfigSpec, parse_config
from autotune.errors import AutotuneError
from autotune.portfolio.hosts import Host, parse_cpus, parse_hosts
from autotune.portfolio.model import MAIN, SECONDARY, aflpp_variation, make_portfolio
from autotune.trials.ensemble import strategy_flag


def _cli(*args, env=None):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", **(env or {})})


def test_hosts_file_lines_and_their_errors(tmp_path):
    hosts = parse_hosts("# machines\nfuzz1 8 /srv/out\n\nfuzz2 cpus=0-3,6 me@fuzz2:/srv/out  # remote\nlocal 2\n",
                        path="h", default_root=tmp_path)
    assert [h.name for h in hosts] == ["fuzz1", "fuzz2", "local"]
    assert hosts[0].cpus == tuple(range(8)) and hosts[0].remote is None and hosts[0].path == "/srv/out"
    assert hosts[1].cpus == (0, 1, 2, 3, 6) and hosts[1].remote == "me@fuzz2" and hosts[1].path == "/srv/out"
    assert hosts[2].root == str(tmp_path.resolve() / "local" / "out")
    bad = {"fuzz1\n": "1 fields", "fuzz1 8 /a /b\n": "4 fields", "fu/zz 2\n": "not a host name",
           "a 2\na 3\n": "named twice", "a 0\n": "at least one core", "a 0-3\n": "cpus=LIST",
           "a cpus=3-1\n": "backwards", "a 2 relative/out\n": "not an absolute path", "# only comments\n": "no host"}
    for text, what in bad.items():
        with pytest.raises(AutotuneError) as e:
            parse_hosts(text, path="hosts.txt", default_root=tmp_path)
        assert what in e.value.message, (text, e.value.message)
        assert e.value.fix
        if "no host" not in what:
            assert "hosts.txt:" in e.value.message  # the line is named
    assert parse_cpus("cpus=1") == (1,)


def test_roles_variations_and_configs_in_turn(tmp_path):
    hosts = [Host("a", (0, 1, 2, 3), "/x/a"), Host("b", (4, 5), "/x/b")]
    cfgs = [parse_config("default"), ConfigSpec(name="guard", cc_kind="autotune",
                                                build_vars={"AUTOTUNE_CC_INSTRUMENT": "guard"},
                                                run_vars={"AUTOTUNE_METRIC": "guard"})]
    p = make_portfolio(configs=cfgs, hosts=hosts)
    assert [i.name for i in p.instances] == ["main-a", "s1-a", "s2-a", "s3-a", "main-b", "s1-b"]
    assert [i.role for i in p.on("a")] == [MAIN, SECONDARY, SECONDARY, SECONDARY]
    assert [i.cpu for i in p.instances] == [0, 1, 2, 3, 4, 5]
    assert [i.config.name for i in p.on("a")] == ["default", "guard", "default", "guard"]
    assert p.main_of("b").afl_args == () and p.main_of("b").afl_env == ()
    assert p.on("a")[1].afl_args == ("-p", "explore") and dict(p.on("a")[1].afl_env) == {"AFL_DISABLE_TRIM": "1"}
    # AFL++'s proportions over ten secondaries: 60 % no trimming, 40 % explore, 20 % exploit, 10 % -L 0, 10 % -Z
    var = [aflpp_variation(i) for i in range(1, 11)]
    assert sum("AFL_DISABLE_TRIM" in env for _, env in var) == 6
    assert sum(args[:2] == ("-p", "explore") for args, _ in var) == 4
    assert sum(args[:2] == ("-p", "exploit") for args, _ in var) == 2
    assert sum("-L" in args for args, _ in var) == 1 and sum("-Z" in args for args, _ in var) == 1
    # the strategy as the AFL++ that runs them spells it: -P (mutation strategy) from 4.10c, where the
    # power schedule's default is already explore; -p (power schedule) on 4.04c or when unknown
    new = afl.AflppVersion(5, 2, "c")
    assert aflpp_variation(1, new) == (("-P", "explore"), {"AFL_DISABLE_TRIM": "1"})
    assert aflpp_variation(2, new)[0] == ("-P", "exploit")
    assert aflpp_variation(1, afl.AflppVersion(4, 4, "c"))[0] == ("-p", "explore") == aflpp_variation(1)[0]
    assert aflpp_variation(1, afl.AflppVersion(4, 9, "c"))[0][0] == "-p"
    assert aflpp_variation(1, afl.AflppVersion(4, 10, "c"))[0][0] == "-P"
    newer = make_portfolio(configs=cfgs, hosts=hosts, afl_version=new)
    assert newer.on("a")[1].afl_args == ("-P", "explore") and newer.main_of("a").afl_args == ()
    # more instances than cores: said, never silent
    said = []
    p = make_portfolio(configs=cfgs[:1], hosts=hosts[1:], instances=3, warn=said.append)
    assert len(p.instances) == 3 and said and "3 instances on 2 cores" in said[0]


def test_a_binary_that_cannot_serve_a_metric_is_refused_before_anything_is_written(tmp_path):
    env = tmp_path / "ctx.env"
    env.write_text("AUTOTUNE_CC_INSTRUMENT=blocks\nAUTOTUNE_METRIC=ctx\n")
    cfg = parse_config(str(env))
    with pytest.raises(AutotuneError) as e:
        make_portfolio(configs=[parse_config("default"), cfg], hosts=[Host("a", (0, 1), "/x")])
    assert "cannot serve the metric ctx" in e.value.message and "AUTOTUNE_CC_INSTRUMENT=full" in e.value.fix
    out = tmp_path / "p"
    res = _cli("portfolio", "--demo", "--config", "default", "--config", str(env), "--instances", "2", "--out", out)
    assert res.exit_code == 1 and "cannot serve the metric ctx" in res.output and "Traceback" not in res.output
    assert not out.exists()
    hosts = tmp_path / "hosts"
    hosts.write_text("a 2\nb two\n")
    res = _cli("portfolio", "--demo", "--hosts", hosts, "--out", out)
    assert res.exit_code == 1 and f"{hosts}:2" in res.output and "fix:" in res.output and not out.exists()


def test_cmplog_secondaries_as_aflpp_recipe_has_them(tmp_path):
    """--cmplog K: the first K secondaries of each machine also run AFL++'s CMPLOG companion (-c), the
    first with -l 2AT (AFL++'s docs/fuzzing_in_depth.md); the main never; more than the secondaries is
    refused with the fix; the launch line carries -c and its binary; portfolio.json round-trips it."""
    from autotune.portfolio.launch import launch_script
    from autotune.portfolio.model import Portfolio

    hosts = [Host("a", (0, 1, 2, 3), "/x/a"), Host("b", (4, 5), "/x/b")]
    p = make_portfolio(configs=[parse_config("default")], hosts=hosts, cmplog=1)
    assert [i.cmplog for i in p.instances] == [False, True, False, False, False, True]
    assert p.on("a")[1].afl_args == ("-l", "2AT", "-p", "explore")  # CMPLOG's, then the variation's
    assert p.on("a")[2].afl_args == aflpp_variation(2)[0]
    two = make_portfolio(configs=[parse_config("default")], hosts=hosts[:1], cmplog=2)
    assert [i.cmplog for i in two.instances] == [False, True, True, False]
    assert two.instances[2].afl_args == aflpp_variation(2)[0]  # the second CMPLOG secondary: CMPLOG's defaults
    assert Portfolio.from_dict(p.to_dict()) == p
    assert not any(i.cmplog for i in make_portfolio(configs=[parse_config("default")], hosts=hosts).instances)
    with pytest.raises(AutotuneError) as e:
        make_portfolio(configs=[parse_config("default")], hosts=hosts, cmplog=2)  # host b has one secondary
    assert "host b runs 1 secondary" in e.value.message and "--cmplog 1 or fewer" in e.value.fix
    with pytest.raises(AutotuneError):
        make_portfolio(configs=[parse_config("default")], hosts=hosts, cmplog=-1)
    binaries = {i.name: "/bin/fuzzer" for i in p.instances}
    text = launch_script(p, hosts[1], binaries=binaries, seeds="/s", afl_fuzz="afl-fuzz", cmplog_binary="/bin/cmplog")
    line = next(ln for ln in text.splitlines() if ln.startswith("launch s1-b "))
    assert line.endswith("-c /bin/cmplog -l 2AT -p explore -- /bin/fuzzer")
    assert "[ -x /bin/cmplog ]" in text
    main = next(ln for ln in text.splitlines() if ln.startswith("launch main-b "))
    assert "-c " not in main
    with pytest.raises(AutotuneError):
        launch_script(p, hosts[1], binaries=binaries, seeds="/s", afl_fuzz="afl-fuzz")


@pytest.mark.slow
def test_a_cmplog_secondary_runs_in_the_real_afl_fuzz(tmp_path):
    """`autotune portfolio --demo --instances 2 --cmplog 1`: the CMPLOG companion built by the real
    afl-clang-fast, and the launch script's secondary fuzzing with it under the real afl-fuzz."""
    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    from autotune.trials import host_cores

    if len(host_cores()) < 2:
        pytest.skip("a 2-instance portfolio needs 2 cores")
    pdir = tmp_path / "p"
    res = _cli("portfolio", "--demo", "--instances", "2", "--cmplog", "1", "--out", pdir, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    cmplog = Path(doc["cmplog_binary"])
    assert cmplog.is_file() and str(cmplog) not in doc["binaries"].values()
    host = doc["portfolio"]["hosts"][0]
    s1 = doc["portfolio"]["instances"][1]
    assert s1["cmplog"] and s1["afl_args"][:2] == ["-l", "2AT"]
    run = subprocess.run(["bash", str(pdir / f"launch-{host['name']}.sh"), "6"], capture_output=True, text=True,
                         timeout=180, env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stdout + run.stderr  # the script waits for its instances (-V 6)
    out = Path(host["root"])
    stats = out / s1["name"] / "fuzzer_stats"
    assert stats.is_file(), (out / f"{s1['name']}.log").read_text()[-2000:]
    text = stats.read_text()
    assert f"-c {cmplog}" in text and "-l 2AT" in text  # afl-fuzz's own record of its command line
    done = int(next(ln.split(":")[1] for ln in text.splitlines() if ln.startswith("execs_done")))
    assert done > 0, (out / f"{s1['name']}.log").read_text()[-2000:]


@pytest.mark.slow
def test_two_machines_synced_by_the_generated_script_and_the_status(tmp_path):
    """Two "machines" as two output trees on this host, one instance each (CPU 0 and 1): the launch
    scripts start the real afl-fuzz, the generated sync script copies the main instances' queues
    between the trees, and each main imports the other's finds (afl-fuzz names them sync:main-X)."""
    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    hosts = tmp_path / "hosts"
    hosts.write_text(f"A cpus=0 {tmp_path}/A/out\nB cpus=1 {tmp_path}/B/out\n")
    guard = tmp_path / "guard.env"
    guard.write_text("AUTOTUNE_CC_INSTRUMENT=guard\nAUTOTUNE_METRIC=guard\n")
    pdir = tmp_path / "p"
    res = _cli("portfolio", "--demo", "--hosts", hosts, "--config", f"guard={guard}", "--sync-minutes", "0.05",
               "--out", pdir, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc == json.loads((pdir / "portfolio.json").read_text())
    assert {p.name for p in pdir.iterdir()} >= {"launch-A.sh", "launch-B.sh", "sync.sh", "env", "host.env"}
    assert "AUTOTUNE_METRIC=guard" in (pdir / "env" / "main-A.env").read_text()
    env = {"PATH": "/usr/bin:/bin"}

    def campaigns(seconds: int, **extra: str) -> None:
        procs = [subprocess.Popen(["bash", str(pdir / f"launch-{h}.sh"), str(seconds)], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, env={**env, **extra}) for h in "AB"]
        for p in procs:
            assert p.wait(timeout=120) == 0, p.stdout.read()

    # Not timed against afl-fuzz's own sync: a main syncs at its first loop and then only every
    # AFL_SYNC_TIME / 2 (minutes), so a copy made while it runs shows in a short campaign only by
    # chance. The machines fuzz, the generated script copies their mains' queues, and the mains,
    # resumed, import the copies at their first sync.
    campaigns(8)
    sync = subprocess.run(["bash", str(pdir / "sync.sh"), "2"], capture_output=True, text=True, timeout=120,
                          env={**env, "SYNC_INTERVAL": "1"})
    assert sync.returncode == 0, sync.stderr
    assert "sync round 2 done" in sync.stdout
    campaigns(8, AFL_AUTORESUME="1")
    a, b = tmp_path / "A" / "out", tmp_path / "B" / "out"
    assert (a / "main-B" / "queue").is_dir() and (b / "main-A" / "queue").is_dir()  # the copies
    imported = [p.name for p in (a / "main-A" / "queue").iterdir() if ",sync:main-B" in p.name]
    imported += [p.name for p in (b / "main-B" / "queue").iterdir() if ",sync:main-A" in p.name]
    assert imported, "neither main imported the other machine's queue"
    st = _cli("status", a, b, "--demo", "--json", "--plot", tmp_path / "union.png")
    assert st.exit_code == 0, st.output
    sdoc = json.loads(st.stdout)
    assert [i["name"] for i in sdoc["instances"]] == ["main-A", "main-B"]  # the copies are not instances
    assert all(i["execs_done"] > 0 and not i["alive"] for i in sdoc["instances"])
    union = sdoc["union"]
    assert union["edges"] > 100 and set(union["by_instance"]) == {"main-A", "main-B"}
    assert sum(v["first"] for v in union["by_instance"].values()) <= union["edges"]
    assert (tmp_path / "union.png").stat().st_size > 1000


def _two_core_guard_env(tmp_path: Path) -> Path:
    """An env file of our guard build, where the real afl-fuzz, afl-clang-fast and two cores can run a
    2-instance ensemble trial (else the test is skipped)."""
    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    from autotune.trials import host_cores

    if len(host_cores()) < 2:
        pytest.skip("a 2-instance portfolio needs 2 cores")
    guard = tmp_path / "guard.env"
    guard.write_text("AUTOTUNE_CC_INSTRUMENT=guard\nAUTOTUNE_METRIC=guard\n")
    return guard


@pytest.mark.slow
def test_compare_runs_portfolios_as_ensemble_trials(tmp_path):
    """`autotune compare --instances 2` and `--portfolio`: each trial is two afl-fuzz instances (-M and
    -S with AFL++'s variation) syncing one output directory on two cores, measured as the union,
    with each instance's part. A secondary that moves (``late``): s1 (AFL++'s default build) stops at
    its move time, s1-then (our guard build) fuzzes the rest on the same core, imports the others'
    queues by afl-fuzz's sync, and the union, the execs/s, the finds' times and the per-instance table
    count both."""
    guard = _two_core_guard_env(tmp_path)
    out = tmp_path / "cmp"
    res = _cli("compare", "--demo", "--config", "default", "--instances", "2", "--portfolio", f"mixed=default,guard={guard}",
               "--portfolio", f"late=default,default@4s>guard={guard}",
               "--trials", "1", "--fuzz-time", "8", "--out", out, "--json", "--no-plot")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [c["config"]["name"] for c in doc["configs"]] == ["default", "mixed", "late"]
    fuzz = afl.find_tool("afl-fuzz", env=afl.base_env())
    flag = strategy_flag(afl.aflpp_version(fuzz))  # -P from 4.10c, -p on 4.04c
    for c in doc["configs"]:
        name = c["config"]["name"]
        assert [m["name"] for m in c["config"]["members"]] == {
            "default": ["default", "default"], "mixed": ["default", "guard"], "late": ["default", "default@4s>guard"]}[name]
        t = c["trials"][0]
        members = t["spec"]["members"]
        assert [(m["name"], m["role"]) for m in members] == [("main", "main"), ("s1", "secondary")]
        assert members[1]["afl_args"] == [flag, "explore"] and members[1]["env"]["AFL_DISABLE_TRIM"] == "1"
        instances = {"main", "s1"} | ({"s1-then"} if name == "late" else set())
        stats = t["stats"]["members"]
        assert set(stats) == instances
        by = t["yardstick"]["by_instance"]
        assert set(by) == instances and t["yardstick"]["edges"] >= max(v["edges"] for v in by.values())
        afl_out = Path(t["spec"]["out_dir"]) / "afl-out"
        assert all((afl_out / i / "fuzzer_stats").is_file() for i in instances)
        if name != "late":
            assert t["stats"]["execs_per_sec"] == pytest.approx(sum(m["execs_per_sec"] for m in stats.values()), rel=1e-3)
    mixed = doc["configs"][1]["trials"][0]["spec"]["members"]
    assert mixed[1]["env"]["AUTOTUNE_METRIC"] == "guard" and mixed[0]["binary"] != mixed[1]["binary"]
    md = (out / "compare.md").read_text()
    assert "## Portfolios: who found what" in md
    # the secondary that moved
    t = doc["configs"][2]["trials"][0]
    s1 = t["spec"]["members"][1]
    assert (s1["moves_at_s"], s1["then"]["name"], s1["then"]["afl_args"]) == (4, "s1-then", [flag, "explore"])
    assert s1["then"]["env"]["AUTOTUNE_METRIC"] == "guard" and s1["then"]["binary"] == mixed[1]["binary"]
    stats = t["stats"]["members"]
    assert stats["s1"]["run_time"] <= 6 and 2 <= stats["s1-then"]["run_time"] <= 7
    assert all(stats[n]["execs_done"] > 0 for n in stats)
    core = (stats["s1"]["execs_done"] + stats["s1-then"]["execs_done"]) / (stats["s1"]["run_time"] + stats["s1-then"]["run_time"])
    assert t["stats"]["execs_per_sec"] == pytest.approx(stats["main"]["execs_per_sec"] + core, rel=1e-3)
    queue = Path(t["spec"]["out_dir"]) / "afl-out" / "s1-then" / "queue"
    assert any(",sync:" in q.name for q in queue.iterdir()), "s1-then imported nothing by afl-fuzz's sync"
    from autotune.trials.ensemble import trial_inputs
    from autotune.trials.trial import TrialSpec

    later = [k.time_ms for k in trial_inputs(queue.parent.parent, TrialSpec.from_dict(t["spec"]))
             if k.instance == "s1-then" and k.time_ms is not None]
    assert later and min(later) >= 3000  # on the trial's clock: s1-then started about 4 s in
    assert "| s1 | default@4s>guard |" in md and "| s1-then | guard |" in md


def test_a_secondary_that_moves_is_parsed_recorded_and_refused_where_it_cannot(tmp_path):
    """``--portfolio NAME=MAIN,FIRST@SECONDSs>THEN``: the secondary's instance stops at that time and
    ``s1-then`` (THEN's build, the same variation) takes its core; compare.json, race.json and
    trial.json read it back; a main that moves, a bad spelling and a move at or past the trial's end
    are refused with the fix."""
    from autotune.compare.config import parse_portfolio
    from autotune.configuration import Configuration
    from autotune.trials.ensemble import portfolio_members
    from autotune.trials.trial import Member

    guard = tmp_path / "guard.env"
    guard.write_text("AUTOTUNE_CC_INSTRUMENT=guard\nAUTOTUNE_METRIC=guard\n")
    p = parse_portfolio(f"late=default,default@900s>g={guard}")
    first = p.members[1]
    assert [m.name for m in p.members] == ["default", "default@900s>g"] and first.moves_at_s == 900
    assert (first.cc_kind, first.then.name, first.then.cc_kind, first.then.run_vars) == (
        "afl", "g", "autotune", {"AUTOTUNE_METRIC": "guard"})
    assert first.then.build_vars == {"AUTOTUNE_CC_INSTRUMENT": "guard"} and str(guard) in first.files
    assert Configuration.from_dict(p.to_compare_dict()) == p
    again = Configuration.from_dict(p.to_race_dict()).members[1]
    assert (again.then.name, again.moves_at_s) == ("g", 900)
    members = portfolio_members([("/b/afl", {}), ("/b/afl", {})], afl.AflppVersion(5, 2, "c"),
                                {1: ("/b/guard", first.then.run_vars, 900)})
    s1 = members[1]
    assert [m.name for m in s1.chain()] == ["s1", "s1-then"] and s1.moves_at_s == 900
    assert (s1.then.binary, s1.then.role, s1.then.afl_args) == ("/b/guard", SECONDARY, s1.afl_args)
    assert s1.then.env == {"AUTOTUNE_METRIC": "guard", "AFL_DISABLE_TRIM": "1"}  # the same variation
    assert Member.from_dict(s1.to_dict()) == s1 and members[0].chain() == (members[0],)
    assert "then" not in members[0].to_dict()  # a trial.json of a portfolio without moves reads as before
    for arg, what in ((f"late=default@900s>{guard},default", "main instance"),
                      (f"late=default,default@900>{guard}", "FIRST@SECONDSs>THEN"),
                      (f"late=default,default@0s>{guard}", "moves at 0 s")):
        with pytest.raises(AutotuneError) as e:
            parse_portfolio(arg)
        assert what in e.value.message and e.value.fix
    if not shutil.which("afl-fuzz"):
        return
    res = _cli("compare", "--demo", "--portfolio", f"late=default,default@60s>{guard}", "--trials", "1",
               "--fuzz-time", "30", "--out", tmp_path / "cmp")
    assert res.exit_code != 0 and "moves at 60 s, but a trial lasts 30 s" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "cmp").exists()


def test_the_finds_of_an_instance_that_took_a_moving_secondarys_core_are_on_the_trials_clock(tmp_path):
    """afl-fuzz names a find by the time since its own start: s1-then started 905 s after the main
    (fuzzer_stats' start_time), so its finds count from there; the others' as named."""
    from autotune.trials.ensemble import trial_inputs
    from autotune.trials.trial import Member, TrialSpec

    afl_out = tmp_path / "afl-out"
    for inst, start in (("main", 1000), ("s1", 1000), ("s1-then", 1905)):
        (afl_out / inst / "queue").mkdir(parents=True)
        (afl_out / inst / "fuzzer_stats").write_text(f"start_time        : {start}\nexecs_done : 1\n")
        (afl_out / inst / "queue" / "id:000001,time:2500,op:havoc").write_bytes(b"x")
    (afl_out / "s1-then" / "queue" / "id:000002,sync:main,src:000001").write_bytes(b"x")
    then = Member(name="s1-then", role="secondary", binary="/g", env={})
    members = (Member(name="main", role="main", binary="/b", env={}),
               Member(name="s1", role="secondary", binary="/b", env={}, then=then, moves_at_s=900))
    spec = TrialSpec(config="late", index=0, binary="/b", env={}, seeds="/s", seconds=1800, rng_seed=0,
                     out_dir=str(tmp_path), members=members)
    got = {(k.instance, k.path.name): k.time_ms for k in trial_inputs(afl_out, spec)}
    assert got == {("main", "id:000001,time:2500,op:havoc"): 2500, ("s1", "id:000001,time:2500,op:havoc"): 2500,
                   ("s1-then", "id:000001,time:2500,op:havoc"): 907_500,
                   ("s1-then", "id:000002,sync:main,src:000001"): None}


def test_status_warns_when_an_instances_dense_map_overflowed(tmp_path):
    """`autotune status` reads each instance's index file (the runtime's own counters, where the launch
    script puts it): an overflowed dense map is a warning with the size that fits, not a silence."""

    from autotune.portfolio.launch import INDEX_DIR
    from autotune.portfolio.status import portfolio_status
    from autotune.runtime.afl_index import CTL, HEADER, INDEX_MAGIC

    out = tmp_path / "out"
    for name in ("main-h", "s1-h"):
        (out / name).mkdir(parents=True)
        (out / name / "fuzzer_stats").write_text("start_time : 1000\nlast_update : 1100\nfuzzer_pid : 0\n"
                                                 "execs_done : 5000\nexecs_per_sec : 50.0\ncorpus_count : 7\n")
    (out / INDEX_DIR).mkdir()
    head = HEADER.pack(INDEX_MAGIC, HEADER.size, 1, 0, 10, 0, 1 << 16, 1024, 1, 0)
    ctl = CTL.pack(0, 1, 8, 1 << 16, 1024, 1024, 3000)
    (out / INDEX_DIR / "s1-h.index.bin").write_bytes(head + ctl + bytes(64))
    doc = portfolio_status(out)
    assert "index" not in doc["instances"][0] and doc["instances"][1]["index"]["overflow_keys"] == 3000
    assert doc["warnings"] == [f"s1-h: {doc['instances'][1]['index']['advice']}"]
    assert "AUTOTUNE_MAP_SIZE=8192" in doc["warnings"][0]  # 4,024 keys, twice that rounded up
    res = _cli("status", out)
    assert res.exit_code == 0 and "warning:" in res.output and "AUTOTUNE_MAP_SIZE=8192" in res.output


def test_the_race_s_portfolio_with_our_indexed_secondary_launches_in_the_real_afl_fuzz(tmp_path):
    """What `autotune run --instances 2` prints as the launch of a portfolio with our secondary (race.report's
    portfolio_line: `autotune portfolio ... --config default --config RACE/autotune-run.env --instances 2`),
    run as printed: AFL++'s afl-clang-fast main and our ctx-2 secondary, counted inline through the index
    (too many keys for a flat map, so the race builds it indexed), both fuzzing in the real afl-fuzz; the
    secondary's index file shows the keys it assigned and `autotune status` reads them."""
    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    from autotune.emit.configuration import race_env_files
    from autotune.race.contestants import make_contestants
    from autotune.trials import host_cores

    if len(host_cores()) < 2:
        pytest.skip("a 2-instance portfolio needs 2 cores")
    ours = make_contestants(metrics=("ctx-2",), estimated_keys={"ctx-2": 300_000.0}, afl_cc=True)[1]
    assert dict(ours.build)["AUTOTUNE_CC_INDEX"] == "1"  # past a flat map's 2^17 slots: the inline kind, indexed
    race = tmp_path / "race"
    race.mkdir()
    for name, text in race_env_files(ours.tuned, why="the race: a test", index_file=str(race / "index.bin")).items():
        (race / name).write_text(text)
    pdir = tmp_path / "p"
    res = _cli("portfolio", "--demo", "--config", "default", "--config", race / "autotune-run.env", "--instances", "2",
               "--out", pdir, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    host = doc["portfolio"]["hosts"][0]
    main, s1 = doc["portfolio"]["instances"]
    assert main["role"] == "main" and s1["role"] == "secondary"
    run = subprocess.run(["bash", str(pdir / f"launch-{host['name']}.sh"), "6"], capture_output=True, text=True,
                         timeout=180, env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stdout + run.stderr
    out = Path(host["root"])
    for inst in (main, s1):
        stats = out / inst["name"] / "fuzzer_stats"
        assert stats.is_file(), (out / f"{inst['name']}.log").read_text()[-2000:]
        done = int(next(ln.split(":")[1] for ln in stats.read_text().splitlines() if ln.startswith("execs_done")))
        assert done > 0, (out / f"{inst['name']}.log").read_text()[-2000:]
    st = _cli("status", out, "--json")
    assert st.exit_code == 0, st.output
    idx = {i["name"]: i.get("index") for i in json.loads(st.stdout)["instances"]}
    assert idx[main["name"]] is None  # AFL++'s own build: no index of ours
    assert idx[s1["name"]] and idx[s1["name"]]["used_key"] > 100 and not idx[s1["name"]].get("advice")
