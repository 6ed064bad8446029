"""The fork server's two-level index is free to create (kernels/aflfs.c, bigmap's lazy index).

A 2^24-entry index is 64 MiB; stored as slot + 1 (0 = unassigned) a zero-filled region is an
empty index, so a fork-server start writes only its headers. Asserted in pages (max RSS of the
afl-showmap process tree, allocated blocks of a new index file), never in time. Also: an index
file of an older format is refused with a clear error, and a re-attached file keeps its slots.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from autotune.target import build_harness
from autotune.runtime.afl_index import read_index_stats

PROGRAMS = Path(__file__).parent / "programs_afl"
AFL_SHOWMAP = shutil.which("afl-showmap")
INDEX_SLOTS = 1 << 24
INDEX_BYTES = 4 * INDEX_SLOTS  # 64 MiB

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not AFL_SHOWMAP, reason="afl++ is not installed (apt-get install afl++)"),
]


def env_for(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    env["AUTOTUNE_CACHE_DIR"] = os.environ["AUTOTUNE_CACHE_DIR"]
    env.update(AFL_SKIP_CPUFREQ="1", AFL_NO_UI="1", AFL_NO_AFFINITY="1", AUTOTUNE_LAYOUT="twolevel",
               AUTOTUNE_INDEX_SIZE=str(INDEX_SLOTS))
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def branchy(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lazy-index-bin")
    return build_harness(sources=[PROGRAMS / "branchy.c"], output=out / "branchy", extra_cflags=["-O0"])


# Runs a command and reports the max RSS of its process tree (wait4's rusage). A small wrapper
# process, because a child forked straight from pytest would count pytest's RSS (the pages it
# shares until exec) in its own maximum.
MAXRSS_WRAPPER = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
print(f"@@maxrss_kb={usage.ru_maxrss}", flush=True)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def showmap(binary: Path, tmp: Path, env: dict[str, str]) -> tuple[int, str, str, int]:
    """afl-showmap of one input: (exit code, map text, output, max RSS in bytes of afl-showmap,
    the fork server and its child)."""
    inp = tmp / "input"
    inp.write_bytes(b"AAAA")
    out = tmp / "map"
    proc = subprocess.run([sys.executable, "-S", "-c", MAXRSS_WRAPPER, AFL_SHOWMAP, "-r", "-o", str(out), "--",
                           str(binary), str(inp)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    m = re.search(r"@@maxrss_kb=(\d+)", proc.stdout)
    assert m, proc.stdout
    return proc.returncode, out.read_text() if out.exists() else "", proc.stdout, int(m.group(1)) * 1024


def test_fork_server_start_does_not_write_the_index(branchy, tmp_path):
    """Anonymous shared index (no index file): the largest process stays far below 64 MiB."""
    rc, tuples, text, maxrss = showmap(branchy, tmp_path, env_for())
    assert rc == 0, text
    assert len(tuples.split()) > 3
    assert maxrss < INDEX_BYTES // 4, f"max RSS {maxrss} bytes: the 64 MiB index was written"


def test_new_index_file_stays_sparse_and_keeps_its_slots(branchy, tmp_path):
    index = tmp_path / "index.bin"
    rc, first, text, maxrss = showmap(branchy, tmp_path, env_for(AUTOTUNE_INDEX_FILE=str(index)))
    assert rc == 0, text
    assert maxrss < INDEX_BYTES // 4, f"max RSS {maxrss} bytes"
    st = index.stat()
    assert st.st_size > INDEX_BYTES  # headers + the full index, sized ...
    assert st.st_blocks * 512 < 1 << 20, f"{st.st_blocks * 512} bytes allocated"  # ... never written
    used = read_index_stats(path=index).used_key
    assert used > 3
    # the file is re-attached with its contents: the same input takes no new slot, same map
    rc, again, text, _ = showmap(branchy, tmp_path, env_for(AUTOTUNE_INDEX_FILE=str(index)))
    assert rc == 0, text
    assert again == first and read_index_stats(path=index).used_key == used


@pytest.mark.parametrize("old", [1, 2])
def test_index_file_of_an_older_format_is_refused(branchy, tmp_path, old):
    """Format 1 stored 0xFFFFFFFF for unassigned; format 2 indexed ngram-N by mix64 of the exact
    key (now its fold): either file's slots would be misread, so both are refused."""
    index = tmp_path / "index.bin"
    rc, _, text, _ = showmap(branchy, tmp_path, env_for(AUTOTUNE_INDEX_FILE=str(index)))
    assert rc == 0, text
    with open(index, "r+b") as f:
        assert f.read(8) == b"ATAFLIX3"
        f.seek(0)
        f.write(b"ATAFLIX%d" % old)  # the magic of an older runtime's file
        f.seek(48)
        assert struct.unpack("<I", f.read(4))[0] == 1  # ready: refused, not re-created
    rc, _, text, _ = showmap(branchy, tmp_path, env_for(AUTOTUNE_INDEX_FILE=str(index)))
    assert rc != 0
    assert f"index format {old}" in text and "reads format 3" in text and "delete the file" in text, text
