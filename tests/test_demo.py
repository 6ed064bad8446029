"""The bundled demo target: shipped inputs, warning-free C, and its documented bugs (no autotune
runtime here: a plain libFuzzer-style main, under ASan+UBSan)."""

import shutil
import subprocess

import pytest

from autotune import demo
from autotune.demo import inputs

MAIN_C = r"""
#include <stdint.h>
#include <stdio.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int main(int argc, char **argv) {
  static uint8_t buf[1 << 16];
  for (int a = 1; a < argc; a++) {
    FILE *f = fopen(argv[a], "rb");
    if (!f) return 2;
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
  }
  return 0;
}
"""


def test_shipped_inputs_are_the_generated_ones():
    for sub, items in (("seeds", inputs.seeds()), ("inputs", inputs.bad_inputs())):
        d = demo.seed_dir() if sub == "seeds" else demo.bad_inputs_dir()
        assert sorted(p.name for p in d.iterdir()) == sorted(items)
        for name, data in items.items():
            assert (d / name).read_bytes() == data, name


def test_checksum_seed_is_valid():
    data = inputs.seeds()["09-checksum"]
    assert data[-3:-1] == b"C\x01" and inputs.crc8(data[:-3]) == data[-1]


@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_warning_free(cc, tmp_path):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not installed")
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-c", str(demo.harness_source()),
                           "-o", str(tmp_path / "h.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def asan_demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo-asan")
    (d / "main.c").write_text(MAIN_C)
    exe = d / "demo"
    subprocess.run(["clang", "-std=c11", "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    str(demo.harness_source()), str(d / "main.c"), "-o", str(exe)], check=True)
    return exe


def test_seeds_run_clean_under_sanitizers(asan_demo):
    seeds = sorted(demo.seed_dir().iterdir())
    proc = subprocess.run([str(asan_demo), *map(str, seeds)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "runtime error" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr


def test_documented_bugs(asan_demo):
    d = demo.bad_inputs_dir()
    a = subprocess.run([str(asan_demo), str(d / "crash-abort")], capture_output=True, text=True, timeout=60)
    assert a.returncode != 0
    n = subprocess.run([str(asan_demo), str(d / "crash-null")], capture_output=True, text=True, timeout=60)
    assert n.returncode != 0 and ("null pointer" in n.stderr or "SEGV" in n.stderr), n.stderr
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([str(asan_demo), str(d / "hang-loop")], capture_output=True, timeout=2)


@pytest.fixture(scope="module")
def canary_demo(tmp_path_factory):
    """The demo with its canaries counting (not fatal), libFuzzer's driver: one run per file argument."""
    from autotune.paths import kernels_dir

    if shutil.which("clang") is None:
        pytest.skip("clang is not installed")
    exe = tmp_path_factory.mktemp("demo-canary") / "demo"
    subprocess.run(["clang", "-std=c11", "-O1", "-g", "-fsanitize=fuzzer", f"-I{kernels_dir()}",
                    str(demo.harness_source()), "-o", str(exe)], check=True)
    return exe


def test_each_canary_input_triggers_its_planted_bug_and_no_seed_triggers_any(canary_demo):
    """The replay tool (autotune.bugs.page) on the shipped inputs: canary-demo00N triggers DEMO00N
    and nothing else; the seed 11-steps reaches every planted bug (it runs the step machine) and
    triggers none, nor does any other seed."""
    from autotune.bugs import page

    d = demo.bad_inputs_dir()
    canaries = sorted(p for p in d.iterdir() if p.name.startswith("canary-"))
    assert [p.name for p in canaries] == ["canary-demo001", "canary-demo002", "canary-demo003"]
    for got in page.replay(canary_demo, canaries):
        assert sorted(got.triggered) == [got.path.name.removeprefix("canary-").upper()], got
    seeds = sorted(demo.seed_dir().iterdir())
    by_name = {g.path.name: g for g in page.replay(canary_demo, seeds)}
    assert not any(g.triggered for g in by_name.values())
    assert sorted(by_name["11-steps"].reached) == ["DEMO001", "DEMO002", "DEMO003"]


def _orders() -> dict[str, str]:
    """Each planted bug's steps, read from harness.c's DEMO00N_ORDER macros."""
    import re

    text = demo.harness_source().read_text()
    return {m[1]: "".join(re.findall(r"'([a-h])'", m[2]))
            for m in re.finditer(r"#define (DEMO\d+)_ORDER \((.*)\)\n", text)}


def test_the_deeper_planted_bugs_are_more_than_one_byte_change_from_the_steps_seed():
    """DEMO001 ("bad") is one byte change of the seed's "abcdefgh" (c -> a: AFL++ 5.02c's default
    triggers it within seconds); DEMO002 needs two and DEMO003 three, in every window of the seed."""
    steps = inputs.seeds()["11-steps"][-8:].decode()
    assert steps == "abcdefgh"

    def fewest_changes(order: str) -> int:
        return min(sum(a != b for a, b in zip(order, steps[i:i + len(order)]))
                   for i in range(len(steps) - len(order) + 1))

    orders = _orders()
    assert orders == {"DEMO001": "bad", "DEMO002": "hcf", "DEMO003": "gebd"}
    assert [fewest_changes(orders[b]) for b in sorted(orders)] == [1, 2, 3]
    assert all(a not in b for a in orders.values() for b in orders.values() if a != b)
