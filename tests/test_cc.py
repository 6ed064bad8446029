"""Unit tests of the compiler wrapper's argument rewriting and compiler choice.

The only thing replaced is the process boundary (os.execve); the runtime artefacts are real.
The real compiler runs in tests/test_cc_build.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from autotune import cc
from autotune.errors import AutotuneError

CLANG = cc.Toolchain(path="/usr/bin/clang", cxx=False)
INSTR = ["-fsanitize-coverage=trace-pc-guard", "-finstrument-functions-after-inlining", "-g"]
AFL_LIKE = ["-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1", "-funroll-loops"]  # as afl-clang-fast adds them
FLAGS = [*INSTR, *AFL_LIKE]  # a compile or link
PFLAGS = [*INSTR, AFL_LIKE[0]]  # preprocessing: the macro, no codegen flag
RT = Path("/cache/autotune-rt.a")
DRV = Path("/cache/autotune-driver.o")
RT_LINK = ["-Wl,--whole-archive", str(RT), "-Wl,--no-whole-archive", "-lpthread", "-ldl",
           "-Wl,--defsym=autotune_instrument_kind=autotune_kind_full"]
LFLAGS = [*FLAGS, "-fno-sanitize-link-runtime"]  # a link without a sanitizer of the user's


def rewritten(args: list[str], toolchain: cc.Toolchain = CLANG) -> list[str]:
    """What the wrapper runs for ``args``, with placeholder artefact paths."""
    inv = cc.parse_args(args)
    need_rt, need_drv = cc.link_needs(inv)
    return cc.rewrite(inv, toolchain=toolchain, runtime=RT if need_rt else None,
                      driver=DRV if need_drv else None)


@pytest.mark.parametrize("args", [
    ["-c", "a.c", "-o", "a.o"],
    ["-O2", "-Wall", "-DX=1", "-I", "inc", "-c", "a.c"],
    ["-MD", "-MF", "a.d", "-c", "a.c", "-o", "a.o"],
    ["-S", "a.c", "-o", "a.s"],
    ["-E", "a.c"],
    ["-M", "a.c"],
    ["-MM", "a.c"],
    ["-fsyntax-only", "a.c"],
])
def test_compile_only_adds_instrumentation_and_nothing_else(args):
    pre = args[0] in ("-E", "-M", "-MM")
    assert rewritten(args) == ["/usr/bin/clang", *(PFLAGS if pre else FLAGS), *args]


def test_link_adds_whole_runtime_archive_and_libs_last():
    args = ["-O2", "a.o", "b.o", "-lz", "-o", "prog"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, *args, *RT_LINK]


def test_compile_and_link_in_one_step_gets_runtime():
    args = ["a.c", "-o", "a"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, *args, *RT_LINK]


def test_fsanitize_fuzzer_is_replaced_by_driver_first_and_runtime_last():
    args = ["-O1", "-fsanitize=fuzzer", "h.c", "lib.a", "-o", "h"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, str(DRV), "-O1", "h.c", "lib.a", "-o", "h", *RT_LINK]


def test_a_user_sanitizer_keeps_clangs_runtimes():
    args = ["-fsanitize=address", "a.o", "-o", "a"]
    assert rewritten(args) == ["/usr/bin/clang", *FLAGS, *args, *RT_LINK]


def test_fuzzer_is_removed_from_a_sanitizer_list_and_the_rest_kept():
    args = ["-fsanitize=address,fuzzer,undefined", "h.c", "-o", "h"]
    assert rewritten(args) == ["/usr/bin/clang", *FLAGS, str(DRV), "-fsanitize=address,undefined",
                               "h.c", "-o", "h", *RT_LINK]


def test_fno_sanitize_fuzzer_cancels_the_driver():
    args = ["-fsanitize=fuzzer", "h.c", "-fno-sanitize=fuzzer", "-o", "h"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, "h.c", "-o", "h", *RT_LINK]


def test_fuzzer_no_link_means_instrument_only():
    assert rewritten(["-fsanitize=fuzzer-no-link", "-c", "a.c"]) == ["/usr/bin/clang", *FLAGS, "-c", "a.c"]
    # when linking a plain program it is still a plain program: runtime, no driver
    assert rewritten(["-fsanitize=fuzzer-no-link", "a.o", "-o", "a"]) == \
        ["/usr/bin/clang", *LFLAGS, "a.o", "-o", "a", *RT_LINK]


def test_fuzzer_with_compile_only_links_nothing():
    assert rewritten(["-fsanitize=fuzzer", "-c", "h.c"]) == ["/usr/bin/clang", *FLAGS, "-c", "h.c"]


@pytest.mark.parametrize("flag", ["-shared", "-r", "-nostdlib"])
def test_shared_and_relocatable_links_get_no_runtime(flag):
    args = ["-fsanitize=fuzzer", flag, "a.o", "-o", "liba.so"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, flag, "a.o", "-o", "liba.so"]


@pytest.mark.parametrize("args", [
    ["--version"], ["-v"], ["-dumpversion"], ["-print-prog-name=ld"], ["-print-search-dirs"],
    ["-I", "x", "-o", "out"],  # option values are not inputs
    ["--version", "a.c"],
])
def test_invocations_that_do_not_link_get_no_runtime(args):
    inv = cc.parse_args(args)
    assert inv.mode == "info"
    assert rewritten(args) == ["/usr/bin/clang", *INSTR, *args]  # nothing compiled: no macro, no codegen flag


def test_verbose_link_still_links_the_runtime():
    assert rewritten(["-v", "a.o", "-o", "a"]) == ["/usr/bin/clang", *LFLAGS, "-v", "a.o", "-o", "a", *RT_LINK]


def test_language_override_is_reset_before_the_archive():
    args = ["-x", "c", "-", "-o", "a"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, *args, "-x", "none", *RT_LINK]
    args = ["-xc++", "h.cc", "-fsanitize=fuzzer", "-o", "h"]
    assert rewritten(args) == ["/usr/bin/clang", *LFLAGS, str(DRV), "-xc++", "h.cc", "-o", "h",
                               "-x", "none", *RT_LINK]


def test_response_files_are_expanded_so_their_flags_count(tmp_path):
    rsp = tmp_path / "args.rsp"
    rsp.write_text('-c "my file.c"\n-o out.o -fsanitize=fuzzer\n')
    assert rewritten([f"@{rsp}", "-O2"]) == ["/usr/bin/clang", *FLAGS, "-c", "my file.c", "-o", "out.o", "-O2"]
    assert rewritten([f"@{tmp_path}/missing.rsp"]) == ["/usr/bin/clang", *INSTR, f"@{tmp_path}/missing.rsp"]


# --- choosing the compiler ---------------------------------------------------------------

def _fake_exe(d: Path, name: str) -> Path:
    p = d / name
    p.write_text("#!/bin/sh\nexit 0\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return p


def test_finds_clang_then_versioned_clang_on_path(tmp_path):
    _fake_exe(tmp_path, "clang-14")
    assert cc.find_toolchain(cxx=False, env={"PATH": str(tmp_path)}) == \
        cc.Toolchain(path=str(tmp_path / "clang-14"), cxx=False)
    _fake_exe(tmp_path, "clang")
    assert cc.find_toolchain(cxx=False, env={"PATH": str(tmp_path)}).path == str(tmp_path / "clang")
    _fake_exe(tmp_path, "clang++")
    assert cc.find_toolchain(cxx=True, env={"PATH": str(tmp_path)}) == \
        cc.Toolchain(path=str(tmp_path / "clang++"), cxx=True)


def test_env_override_picks_the_compiler(tmp_path):
    clang = _fake_exe(tmp_path, "my-clang-15")
    tc = cc.find_toolchain(cxx=False, env={"PATH": str(tmp_path), "AUTOTUNE_CC": "my-clang-15"})
    assert tc == cc.Toolchain(path=str(clang), cxx=False)
    tc = cc.find_toolchain(cxx=True, env={"PATH": "", "AUTOTUNE_CXX": "/usr/bin/clang++"})
    assert tc == cc.Toolchain(path="/usr/bin/clang++", cxx=True)


def test_env_override_with_gcc_is_refused_with_the_reason(tmp_path):
    _fake_exe(tmp_path, "gcc-12")
    with pytest.raises(AutotuneError, match="trace-pc-guard") as ei:
        cc.find_toolchain(cxx=False, env={"PATH": str(tmp_path), "AUTOTUNE_CC": "gcc-12"})
    assert "apt-get install -y clang" in ei.value.fix


def test_env_override_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(AutotuneError, match="AUTOTUNE_CC=nope-cc"):
        cc.find_toolchain(cxx=False, env={"PATH": str(tmp_path), "AUTOTUNE_CC": "nope-cc"})


def test_env_override_pointing_at_the_wrapper_is_refused(tmp_path):
    _fake_exe(tmp_path, "autotune-cc")
    with pytest.raises(AutotuneError, match="wrapper itself"):
        cc.find_toolchain(cxx=False, env={"PATH": str(tmp_path), "AUTOTUNE_CC": "autotune-cc"})


def test_no_clang_names_the_package(tmp_path):
    _fake_exe(tmp_path, "gcc")
    with pytest.raises(AutotuneError) as ei:
        cc.find_toolchain(cxx=True, env={"PATH": str(tmp_path)})
    assert ei.value.fix == "apt-get install -y clang"
    assert "clang++" in ei.value.message


# --- the process boundary: run() replaces itself with the compiler -----------------------

class ExecCalled(Exception):
    pass


@pytest.fixture
def execve(monkeypatch):
    calls: list[tuple[str, list[str], dict]] = []

    def fake(path, argv, env):
        calls.append((path, list(argv), dict(env)))
        raise ExecCalled

    monkeypatch.setattr(os, "execve", fake)
    return calls


def test_run_execs_the_compiler_with_exact_argv_and_env(execve, monkeypatch):
    """The compiler gets the wrapper's environment and the select plugin's stage, whatever stage the
    caller's environment held (autotune cc decides it)."""
    from autotune.llvm import clang_major

    monkeypatch.delenv("AUTOTUNE_CC", raising=False)
    monkeypatch.setenv(cc.PLUGIN_STAGE_VAR, "bogus")
    with pytest.raises(ExecCalled):
        cc.run(["-c", "a.c", "-o", "a.o"], cxx=False, prog="autotune-cc")
    (path, argv, env), = execve
    clang = cc.find_toolchain(cxx=False, env=os.environ).path
    assert path == clang
    plugin = artifacts_plugin()
    assert argv == [clang, *INSTR, *_allow(clang), *AFL_LIKE, f"-fpass-plugin={plugin}", "-c", "a.c", "-o", "a.o"]
    stage = cc.plugin_stage(cc.parse_args(["-c", "a.c"]), "full", clang_major(clang))
    assert env == {**os.environ, cc.PLUGIN_STAGE_VAR: stage}


def _allow(clang: str, kind: str = "full") -> list[str]:
    """The allowlist flag a compile of ``kind`` by ``clang`` carries: with LLVM 16+ SanitizerCoverage
    runs in the select plugin at OptimizerEarly and clang's own pass gets a list matching nothing."""
    from autotune.llvm import clang_major
    from autotune.paths import kernels_dir

    early = cc.plugin_stage(cc.parse_args(["-c", "a.c"]), kind, clang_major(clang)) == cc.STAGE_SANCOV_EARLY
    return [f"-fsanitize-coverage-allowlist={kernels_dir() / cc.SANCOV_NONE}"] if early else []


def artifacts_plugin():
    from autotune.runtime import artifacts

    plugin = artifacts.select_plugin()
    assert plugin.is_file() and plugin.suffix == ".so"
    return plugin


@pytest.mark.parametrize("value, loads", [("0", False), ("1", True), ("", True)])
def test_selects_plugin_on_every_compile_unless_turned_off(execve, monkeypatch, value, loads):
    monkeypatch.delenv("AUTOTUNE_CC", raising=False)
    monkeypatch.setenv("AUTOTUNE_CC_SELECTS", value)
    with pytest.raises(ExecCalled):
        cc.run(["-c", "a.c", "-o", "a.o"], cxx=False, prog="autotune-cc")
    (clang, argv, _), = execve
    # with LLVM 16+ it is loaded whatever the value: it runs SanitizerCoverage (and splits selects as asked)
    assert any(a.startswith("-fpass-plugin=") for a in argv) == (loads or bool(_allow(clang)))
    # preprocessing never loads it
    assert not cc.plugin_needed(cc.parse_args(["-E", "a.c"]), {})


def test_a_bad_selects_value_is_refused():
    with pytest.raises(AutotuneError, match="AUTOTUNE_CC_SELECTS=2 is not 0 or 1"):
        cc.plugin_needed(cc.parse_args(["-c", "a.c"]), {"AUTOTUNE_CC_SELECTS": "2"})


def test_run_links_the_real_cached_artefacts(execve, monkeypatch):
    from autotune.runtime import artifacts

    monkeypatch.setenv("AUTOTUNE_CXX", "/usr/bin/clang++")
    with pytest.raises(ExecCalled):
        cc.run(["-fsanitize=fuzzer", "h.cc", "-o", "h"], cxx=True, prog="autotune-c++")
    (path, argv, env), = execve
    rt, drv = artifacts.runtime_archive(), artifacts.driver_object()
    assert rt.is_file() and drv.is_file()
    assert argv == ["/usr/bin/clang++", *INSTR, *_allow("/usr/bin/clang++"), *AFL_LIKE,
                    f"-fpass-plugin={artifacts.select_plugin()}",
                    "-fno-sanitize-link-runtime", str(drv), "h.cc", "-o", "h", "-Wl,--whole-archive", str(rt),
                    "-Wl,--no-whole-archive", "-lpthread", "-ldl",
                    "-Wl,--defsym=autotune_instrument_kind=autotune_kind_full", *_order_marker("/usr/bin/clang++")]
    assert env["AUTOTUNE_CXX"] == "/usr/bin/clang++"


def _order_marker(clang: str) -> list[str]:
    """The entry-hook order marker a full-kind link of ``clang`` carries (clang 21: enter first)."""
    from autotune.llvm import ENTER_FIRST, hook_order

    return [cc.ENTER_FIRST_MARKER] if hook_order(clang) == ENTER_FIRST else []


def test_run_without_clang_prints_one_line_and_returns_1(execve, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("AUTOTUNE_CC", raising=False)
    assert cc.run(["-c", "a.c"], cxx=False, prog="autotune-cc") == 1
    assert execve == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("autotune-cc: error: no clang compiler found on PATH")
    assert "apt-get install -y clang" in err


def test_runtime_archive_takes_every_kernel_source_but_driver_and_bench():
    from autotune.paths import kernels_dir
    from autotune.runtime import artifacts

    names = {p.name for p in artifacts.runtime_sources()}
    assert names == {p.name for p in kernels_dir().glob("*.c")} - {"driver.c", "bench.c"}
    assert names  # the runtime has sources


def test_runtime_archive_digest_covers_every_kernel_file(tmp_path):
    """A change to any runtime source or kernels header (the fork server's aflfs*.c and
    aflfs_internal.h, bigmap_simd_body.h, ...) gives the archive a new digest, so a cached build is
    never reused for changed sources."""
    import shutil

    from autotune.paths import kernels_dir
    from autotune.runtime import artifacts
    from autotune.runtime.build import Compiler, _digest

    kdir = tmp_path / "kernels"
    shutil.copytree(kernels_dir(), kdir)
    compiler = Compiler(path="/usr/bin/clang", version="clang version 0")

    def digest() -> str:
        return _digest(artifacts.runtime_sources(kdir=kdir), artifacts.RUNTIME_CFLAGS, compiler, "archive")

    files = [*artifacts.runtime_sources(kdir=kdir), *sorted(kdir.glob("*.h"))]
    names = {p.name for p in files}
    assert {"aflfs.c", "aflfs_relay.c", "aflfs_reporting.c", "aflfs_futex.c", "aflfs_internal.h",
            "bigmap_simd_body.h"} <= names
    seen = {digest()}
    for p in files:
        p.write_bytes(p.read_bytes() + b"\n/* changed */\n")
        seen.add(digest())
    assert len(seen) == len(files) + 1


def test_runtime_archive_defines_no_main():
    """main() comes from the program or from the driver (-fsanitize=fuzzer), never the runtime."""
    import subprocess

    from autotune.runtime import artifacts

    out = subprocess.run(["nm", "--defined-only", str(artifacts.runtime_archive())],
                         capture_output=True, text=True, check=True).stdout
    assert not [line for line in out.splitlines() if line.endswith(" main")]
    assert " T __sanitizer_cov_trace_pc_guard" in out


@pytest.mark.parametrize("kind, flags", [
    ("full", ["-fsanitize-coverage=trace-pc-guard", "-finstrument-functions-after-inlining", "-g"]),
    ("blocks", ["-fsanitize-coverage=trace-pc-guard", "-g"]),
    ("guard", ["-fsanitize-coverage=inline-8bit-counters", "-g"]),
    ("edge", ["-g"]),
])
def test_build_kinds_instrument_and_mark_the_link(kind, flags):
    inv = cc.parse_args(["-c", "a.c"])
    assert cc.rewrite(inv, toolchain=CLANG, runtime=None, driver=None, kind=kind) == ["/usr/bin/clang", *flags,
                                                                                     *AFL_LIKE, "-c", "a.c"]
    inv = cc.parse_args(["a.o", "-o", "p"])
    argv = cc.rewrite(inv, toolchain=CLANG, runtime=RT, driver=None, kind=kind)
    assert argv[1:1 + len(flags)] == flags
    assert argv[-1] == f"-Wl,--defsym=autotune_instrument_kind=autotune_kind_{kind}"
    assert cc.build_kind({"AUTOTUNE_CC_INSTRUMENT": kind}) == kind


def test_edge_kind_loads_our_edge_pass_after_the_select_pass():
    """The edge kind has no SanitizerCoverage flag: its instrumentation is the edge plugin, loaded
    last so that its pass runs after the select splitting (when that is asked for)."""
    sel, edge = Path("/cache/autotune-selects.so"), Path("/cache/autotune-edges.so")
    inv = cc.parse_args(["-c", "a.c"])
    argv = cc.rewrite(inv, toolchain=CLANG, runtime=None, driver=None, kind="edge", plugin=sel, kind_plugin=edge)
    assert argv == ["/usr/bin/clang", "-g", *AFL_LIKE, f"-fpass-plugin={sel}", f"-fpass-plugin={edge}", "-c", "a.c"]
    inv = cc.parse_args(["a.o", "-o", "p"])
    argv = cc.rewrite(inv, toolchain=CLANG, runtime=RT, driver=None, kind="edge", kind_plugin=edge)
    assert argv[-1] == "-Wl,--defsym=autotune_instrument_kind=autotune_kind_edge"
    assert not any(a.startswith("-fsanitize-coverage") for a in argv)


@pytest.mark.parametrize("kind, value, loads", [("edge", None, False), ("edge", "1", True), ("edge", "0", False),
                                                ("blocks", None, True), ("guard", "0", False)])
def test_the_edge_kind_splits_selects_only_when_asked(kind, value, loads):
    env = {} if value is None else {"AUTOTUNE_CC_SELECTS": value}
    assert cc.plugin_needed(cc.parse_args(["-c", "a.c"]), env, kind) == loads


@pytest.mark.parametrize("kind, major, stage", [
    ("guard", 21, cc.STAGE_SANCOV_EARLY), ("full", 16, cc.STAGE_SANCOV_EARLY), ("blocks", 18, cc.STAGE_SANCOV_EARLY),
    ("guard", 15, cc.STAGE_LAST), ("full", 14, cc.STAGE_LAST), ("edge", 21, cc.STAGE_EARLY),
    ("ngram", 16, cc.STAGE_EARLY), ("edge", 15, cc.STAGE_LAST), ("guard", None, cc.STAGE_LAST)])
def test_sanitizer_coverage_moves_to_pcguards_stage_from_llvm_16(kind, major, stage):
    """From LLVM 16 on AFL++'s PCGUARD runs at OptimizerEarly: the SanitizerCoverage kinds then load
    the select plugin whatever AUTOTUNE_CC_SELECTS says (it runs SanitizerCoverage there), and clang's
    own pass gets the allowlist that matches nothing; the inline kinds' selects are split where their
    pass counts (OptimizerEarly from 16 too); older LLVMs split before clang's pass."""
    inv = cc.parse_args(["-c", "a.c"])
    assert cc.plugin_stage(inv, kind, major) == stage
    early = stage == cc.STAGE_SANCOV_EARLY
    assert cc.plugin_needed(inv, {"AUTOTUNE_CC_SELECTS": "0"}, kind, early=early) == early
    argv = cc.rewrite(inv, toolchain=CLANG, runtime=None, driver=None, kind=kind, early=early)
    allow = [a for a in argv if a.startswith("-fsanitize-coverage-allowlist=")]
    assert len(allow) == early
    if early:
        none = Path(allow[0].partition("=")[2])
        assert none.is_file() and all(ln.startswith("#") for ln in none.read_text().splitlines())


@pytest.mark.parametrize("args, lists", [(["-c", "a.c"], False),
                                         (["-fsanitize-coverage-allowlist=allow.txt", "-c", "a.c"], True),
                                         (["-fsanitize-coverage-ignorelist=deny.txt", "-c", "a.c"], True),
                                         (["-fsanitize-coverage-blocklist=deny.txt", "-c", "a.c"], True)])
def test_a_users_coverage_lists_keep_clangs_own_pass(args, lists):
    """Only clang's SanitizerCoverage reads -fsanitize-coverage-allowlist/-ignorelist: a compile that
    gives one stays at OptimizerLast rather than have the early pass ignore it."""
    inv = cc.parse_args(args)
    assert cc.user_sancov_lists(inv) == lists
    assert cc.plugin_stage(inv, "guard", 21) == (cc.STAGE_LAST if lists else cc.STAGE_SANCOV_EARLY)


def test_plan_of_an_edge_compile_runs_the_real_edge_plugin(monkeypatch):
    from autotune.runtime import artifacts

    monkeypatch.delenv("AUTOTUNE_CC", raising=False)
    argv = cc.plan(["-c", "a.c"], cxx=False, env={**os.environ, "AUTOTUNE_CC_INSTRUMENT": "edge"}).argv
    plugin = artifacts.edge_plugin()
    assert plugin.is_file() and argv[-3:] == [f"-fpass-plugin={plugin}", "-c", "a.c"]
    assert not any("autotune-selects" in a for a in argv)


@pytest.mark.parametrize("selects", ["1", "0"])
def test_plan_of_a_guard_compile_loads_the_counter_plugin_even_without_selects(monkeypatch, selects):
    """The guard kind's counters are NeverZero only through its plugin: loaded last, with or
    without the select plugin; the other SanitizerCoverage kinds do not load it."""
    from autotune.runtime import artifacts

    monkeypatch.delenv("AUTOTUNE_CC", raising=False)
    env = {**os.environ, "AUTOTUNE_CC_INSTRUMENT": "guard", "AUTOTUNE_CC_SELECTS": selects}
    argv = cc.plan(["-c", "a.c"], cxx=False, env=env).argv
    plugin = artifacts.counter_plugin()
    assert plugin.is_file() and argv[-3:] == [f"-fpass-plugin={plugin}", "-c", "a.c"]
    assert any("autotune-selects" in a for a in argv) == (selects == "1" or bool(_allow(argv[0], "guard")))
    for kind in ("blocks", "full"):
        argv = cc.plan(["-c", "a.c"], cxx=False, env={**os.environ, "AUTOTUNE_CC_INSTRUMENT": kind}).argv
        assert not any("autotune-counters" in a for a in argv)


def test_build_kind_default_and_bad_value():
    assert cc.build_kind({}) == "full" and cc.build_kind({"AUTOTUNE_CC_INSTRUMENT": ""}) == "full"
    with pytest.raises(AutotuneError) as ei:
        cc.build_kind({"AUTOTUNE_CC_INSTRUMENT": "pcguard"})
    assert "AUTOTUNE_CC_INSTRUMENT=pcguard" in ei.value.message and "full, blocks, guard" in ei.value.fix


def test_run_with_a_bad_build_kind_prints_one_line(execve, monkeypatch, capsys):
    monkeypatch.setenv("AUTOTUNE_CC_INSTRUMENT", "inline")
    assert cc.run(["-c", "a.c"], cxx=False, prog="autotune-cc") == 1
    assert execve == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "AUTOTUNE_CC_INSTRUMENT=inline is not a build kind" in err


def test_a_full_link_records_the_compilers_entry_hook_order():
    """clang 14 puts a function's entry block guard before its entry hook, clang 21 after
    (autotune.llvm.hook_order measures it): a full-kind link of an enter-first clang carries the
    marker the runtime reads (kernels/cov_thread.c); other kinds, which have no hooks, never."""
    from autotune.llvm import ENTER_FIRST, GUARD_FIRST, hook_order

    clang = cc.find_toolchain(cxx=False, env=os.environ).path
    order = hook_order(clang)
    assert order in (GUARD_FIRST, ENTER_FIRST)
    assert hook_order(clang) == order  # cached
    link = ["h.o", "-fsanitize=fuzzer", "-o", "h"]
    full = cc.plan(link, cxx=False, env={**os.environ, "AUTOTUNE_CC_INSTRUMENT": "full"}).argv
    blocks = cc.plan(link, cxx=False, env={**os.environ, "AUTOTUNE_CC_INSTRUMENT": "blocks"}).argv
    assert (cc.ENTER_FIRST_MARKER in full) == (order == ENTER_FIRST)
    assert cc.ENTER_FIRST_MARKER not in blocks
    assert cc.HOOKED_KINDS == {"full"}


def test_the_compilers_are_named_by_their_clang(tmp_path):
    """Campaign figures name the clang behind afl-clang-fast and autotune cc (autotune.llvm.compilers):
    the version clang prints, found by --version through a wrapper as through clang itself."""
    from autotune.llvm import clang_version, compilers, compilers_text

    fake = tmp_path / "clang-9000"
    fake.write_text("#!/bin/sh\necho 'Debian clang version 21.1.8 (14)'\necho 'Target: x86_64-pc-linux-gnu'\n")
    fake.chmod(0o755)
    assert clang_version(str(fake)) == "21.1.8"
    found = compilers({**os.environ, "AUTOTUNE_CC": str(fake)})
    assert found["autotune cc"] == "clang 21.1.8"
    assert compilers_text({"afl-clang-fast": "clang 21.1.8", "autotune cc": "clang 21.1.8"}) == \
        "clang 21.1.8 (afl-clang-fast and autotune cc)"
    assert compilers_text({"afl-clang-fast": "clang 14.0.6", "autotune cc": "clang 21.1.8"}) == \
        "afl-clang-fast: clang 14.0.6, autotune cc: clang 21.1.8"
    assert compilers_text(None) == "compilers not recorded"
