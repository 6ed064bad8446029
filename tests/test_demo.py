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
