"""End-to-end tests of the compiler wrapper: real clang, the real runtime, real binaries run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autotune.errors import AutotuneError
from autotune.target import build_harness

BIN = Path(sys.executable).parent
AUTOTUNE_CC = str(BIN / "autotune-cc")
AUTOTUNE_CXX = str(BIN / "autotune-c++")
AUTOTUNE = str(BIN / "autotune")

PROGRAM = textwrap.dedent("""\
    #include <stdint.h>
    #include <stdio.h>
    uint32_t cov_guard_count(void); /* from autotune's runtime (kernels/cov.h) */
    static int twice_or_inc(int x) { return x > 2 ? x * 2 : x + 1; }
    int main(int argc, char **argv) {
        (void)argv;
        printf("result %d guards %u\\n", twice_or_inc(argc), (unsigned)cov_guard_count());
        return 0;
    }
""")

HARNESS = textwrap.dedent("""\
    #include <stddef.h>
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size >= 5 && memcmp(data, "CRASH", 5) == 0)
            abort();
        return 0;
    }
""")

CXX_HARNESS = textwrap.dedent("""\
    #include <cstddef>
    #include <cstdint>
    #include <cstdlib>
    #include <string>
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        std::string s(reinterpret_cast<const char *>(data), size);
        if (s.find("CRASH") != std::string::npos)
            std::abort();
        return 0;
    }
""")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=120, **kw)


def symbols(binary: Path) -> dict[str, str]:
    """{name: nm type letter} of a binary's symbols."""
    out = run(["nm", binary]).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            syms[parts[-1]] = parts[-2]
    return syms


def sections(binary: Path) -> str:
    return run(["readelf", "-SW", binary]).stdout


def test_compile_then_link_instruments_and_links_the_runtime(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    obj, prog = tmp_path / "prog.o", tmp_path / "prog"
    r = run([AUTOTUNE_CC, "-O0", "-Wall", "-Wextra", "-c", src, "-o", obj])
    assert r.returncode == 0, r.stderr
    osyms = symbols(obj)
    # the object is instrumented but carries no runtime
    assert osyms["__sanitizer_cov_trace_pc_guard"] == "U"
    assert osyms["__cyg_profile_func_enter"] == "U"
    assert "__sancov_guards" in sections(obj)
    assert ".debug_info" in sections(obj)

    r = run([AUTOTUNE_CC, obj, "-o", prog])
    assert r.returncode == 0, r.stderr
    psyms = symbols(prog)
    for name in ("__sanitizer_cov_trace_pc_guard", "__sanitizer_cov_trace_pc_guard_init",
                 "__cyg_profile_func_enter", "__cyg_profile_func_exit", "cov_guard_count"):
        assert psyms.get(name) == "T", name
    assert "LLVMFuzzerTestOneInput" not in psyms and "__sancov_guards" in sections(prog)
    # clang's UBSan runtime (linked by default with -fsanitize-coverage) is kept out
    assert not [n for n in psyms if n.startswith("__ubsan_handle")]

    out = run([prog, "a", "b"])
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    assert words[:2] == ["result", "6"]  # argc 3 -> 6
    assert int(words[3]) >= 3  # the runtime registered the program's guards (a branch at -O0)


def test_compile_only_modes_run_like_the_compiler(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    pre = run([AUTOTUNE_CC, "-E", "-DVALUE=7", src])
    assert pre.returncode == 0 and "twice_or_inc" in pre.stdout and pre.stderr == ""
    deps = run([AUTOTUNE_CC, "-MM", src])
    assert deps.returncode == 0 and deps.stdout.startswith("prog.o:")
    asm = run([AUTOTUNE_CC, "-S", src, "-o", tmp_path / "prog.s"])
    assert asm.returncode == 0 and "__sanitizer_cov_trace_pc_guard" in (tmp_path / "prog.s").read_text()
    ver = run([AUTOTUNE_CC, "--version"])
    assert ver.returncode == 0 and "clang version" in ver.stdout
    bad = run([AUTOTUNE_CC, "-c", tmp_path / "missing.c"])
    assert bad.returncode != 0 and "no such file" in bad.stderr.lower()


def test_single_step_build_from_stdin(tmp_path):
    """configure's style: source on stdin with -x c, compiled and linked in one go."""
    prog = tmp_path / "conftest"
    r = run([AUTOTUNE_CC, "-x", "c", "-", "-o", prog], input=PROGRAM)
    assert r.returncode == 0, r.stderr
    assert run([prog]).stdout.startswith("result 2 ")


def test_fuzzer_harness_runs_inputs_standalone(tmp_path):
    src = tmp_path / "h.c"
    src.write_text(HARNESS)
    harness = build_harness(sources=[src], output=tmp_path / "bin" / "h", extra_cflags=["-O1"])
    assert harness == tmp_path / "bin" / "h" and os.access(harness, os.X_OK)
    syms = symbols(harness)
    assert syms["LLVMFuzzerTestOneInput"] == "T" and syms["main"] == "T"
    assert syms["__sanitizer_cov_trace_pc_guard"] == "T"
    assert list((tmp_path / "bin").iterdir()) == [harness]  # no temporary left behind

    ok, crash = tmp_path / "ok", tmp_path / "crash"
    ok.write_bytes(b"hello")
    crash.write_bytes(b"CRASH!")
    assert run([harness, ok]).returncode == 0
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a").write_bytes(b"x")
    (corpus / "b").write_bytes(b"")
    assert run([harness, corpus]).returncode == 0
    assert run([harness, crash]).returncode != 0


def test_cxx_harness_through_the_cxx_wrapper(tmp_path):
    src = tmp_path / "h.cc"
    src.write_text(CXX_HARNESS)
    out = tmp_path / "hxx"
    r = run([AUTOTUNE_CXX, "-O1", "-fsanitize=fuzzer", src, "-o", out])
    assert r.returncode == 0, r.stderr
    (tmp_path / "ok").write_bytes(b"fine")
    (tmp_path / "bad").write_bytes(b"xxCRASHxx")
    assert run([out, tmp_path / "ok"]).returncode == 0
    assert run([out, tmp_path / "bad"]).returncode != 0


def test_build_harness_failure_carries_the_compiler_message(tmp_path):
    src = tmp_path / "broken.c"
    src.write_text("int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return nope; }\n")
    out = tmp_path / "h"
    out.write_bytes(b"previous good build")
    with pytest.raises(AutotuneError) as ei:
        build_harness(sources=[src], output=out)
    assert "broken.c" in ei.value.message and "nope" in ei.value.message
    assert out.read_bytes() == b"previous good build"  # a failed build leaves the old one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.c", "h"]
    with pytest.raises(AutotuneError, match="does not exist"):
        build_harness(sources=[tmp_path / "absent.c"], output=out)


def test_a_build_script_that_fails_silently_is_told_where_its_logs_are(tmp_path, monkeypatch):
    """A build script that sends its tools' output to files under $WORK (as configure-and-make
    scripts do) and fails says nothing itself: the error names WORK, where its logs are."""
    from autotune.target.build import build
    from autotune.target.recipe import TargetSpec

    monkeypatch.setenv("AUTOTUNE_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "build.sh"
    script.write_text('echo "configure: error: cannot run C compiled programs" > "$WORK/configure.log"\nexit 1\n')
    with pytest.raises(AutotuneError) as ei:
        build(spec=TargetSpec(kind="script", script=str(script)), cc_kind="plain", build_vars={}, env=os.environ)
    work = re.search(r"WORK=(\S+),", ei.value.message)
    assert work and "printed nothing" in ei.value.message, ei.value.message
    assert "cannot run C compiled programs" in Path(work.group(1), "configure.log").read_text()


@pytest.mark.parametrize("cmd", [[AUTOTUNE_CC], [AUTOTUNE, "cc"]])
def test_no_clang_on_path_is_one_clear_error(tmp_path, cmd):
    src = tmp_path / "a.c"
    src.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOTUNE_CC", "AUTOTUNE_CXX")}
    env["PATH"] = str(tmp_path)  # no compiler at all
    r = run([*cmd, "-c", src], env=env)
    assert r.returncode == 1
    assert "apt-get install -y clang" in r.stderr
    assert "Traceback" not in r.stderr
    if cmd == [AUTOTUNE_CC]:
        assert r.stderr.count("\n") == 1, r.stderr


def test_autotune_cc_subcommand_passes_every_argument_through(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    prog = tmp_path / "prog"
    r = run([AUTOTUNE, "cc", "-O1", "-DUNUSED=1", "-Wall", src, "-o", prog])
    assert r.returncode == 0, r.stderr
    assert run([prog, "x"]).stdout.startswith("result 3 ")
    ver = run([AUTOTUNE, "c++", "--version"])
    assert ver.returncode == 0 and "clang version" in ver.stdout


TINYCONF = Path(__file__).resolve().parent / "tinyconf"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("autoconf") is None or shutil.which("autoheader") is None,
                    reason="autoconf is not installed (apt-get install -y autoconf; .ci/setup.sh does)")
def test_autoconf_project_configures_and_builds_with_the_wrapper(tmp_path):
    """configure's probes (compile, link, run, headers, functions, libraries) and make, CC=autotune-cc."""
    proj = tmp_path / "tinyconf"
    shutil.copytree(TINYCONF, proj)
    for tool in ("autoconf", "autoheader"):
        r = run([tool], cwd=proj)
        assert r.returncode == 0, r.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CFLAGS", "MAKEFLAGS")}
    r = run(["./configure", f"CC={AUTOTUNE_CC}", "CFLAGS=-O1"], cwd=proj, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + (proj / "config.log").read_text()[-3000:]
    assert "checking whether the C compiler works... yes" in r.stdout
    config = (proj / "config.h").read_text()
    for define in ("#define HAVE_MEMMEM 1", "#define HAVE_STDINT_H 1", "#define SIZEOF_LONG 8",
                   "#define RUN_PROBE_OK 1"):
        assert define in config
    assert "#define HAVE_NO_SUCH_FUNCTION_XYZ" not in config
    r = run(["make"], cwd=proj, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert AUTOTUNE_CC in r.stdout  # make ran the wrapper
    assert symbols(proj / "tiny")["__sanitizer_cov_trace_pc_guard"] == "T"
    out = run([proj / "tiny", "one two", "three"])
    assert out.returncode == 0 and out.stdout == "words 3 cos0 1.0 sizeof_long 8 probes ok\n"
