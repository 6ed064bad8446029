#!/usr/bin/env bash
# AFL++ 5.02c (the sid root of .ci/aflpp-current.sh) with a larger compile-time map for its hashed
# modes, CLASSIC / NGRAM-N / CTX / CTX-K / CALLER: MAP_SIZE = 2^POW2 instead of 2^16 (issue 36).
# Safe to run again: a finished directory is reused.
#
#   bash benchmarks/aflpp_bigmap.sh POW2        make /var/cache/autotune/aflpp-map<POW2> (17..24), print its bin dir
#   bash benchmarks/aflpp_bigmap.sh bin POW2    print the bin dir (afl-clang-fast, afl-clang-fast++, afl-cc,
#                                               afl-fuzz, afl-showmap): put it first on PATH, inside or outside the root
#
# How, and why not a rebuild from source. MAP_SIZE_POW2 (include/config.h) reaches a CLASSIC-mode
# build through three values: the LLVM pass's map_size (every block id and every CTX id is
# random() % map_size; the xor of ids below 2^k stays below 2^k), the width of PREV_LOC_T
# (instrumentation/llvm-alternative-coverage.h: u16 up to POW2 16, u32 above; NGRAM's block ids and
# previous-locations vector and CTX-K's callers vector are of it, so a 16-bit NGRAM build stays below
# 2^16 in any map), and the runtime's initial __afl_map_size (with its copies __afl_cov_map_size and
# __afl_set_map_size), which the target reports to afl-fuzz in the fork-server handshake. FuzzBench
# rebuilt AFL++ with sed on config.h for its ngram4_17/18 and ctx_17/18 variants. Debian sid's source
# package of afl++ 5.02c-0.5 cannot be downloaded here (its .dsc and tarballs answer 404; the binary
# package installs) and AFL++'s repository is out of reach, so this script sets the same values in
# copies of Debian's own 5.02c binaries, where they hold them:
#   afl-llvm-pass.so       the pass object's initial fields {ngram_size 0, ctx_k 0, map_size 2^16,
#                          function_minimum_size 1}: one 16-byte constant in .rodata (checked unique);
#                          the 16 of `mov $0x10,%esi; call getIntNTy` (IntLocTy, the one such call) -> 32
#   afl-compiler-rt*.o     __afl_map_size, __afl_cov_map_size, __afl_set_map_size in .data (found by
#                          symbol, each checked to hold 2^16 first)
# Anything else (another AFL++ build, a changed layout) is refused, not guessed. Every other file of
# /usr/lib/afl is copied as is; afl-cc finds the copies through AFL_PATH, set by the wrappers.
# afl-fuzz and afl-showmap stay Debian's: they take the size the target reports in the fork-server
# handshake, so no rebuilt fuzzer is needed; up to 2^23 with no setting, above that only with
# AFL_MAP_SIZE=2^POW2 in their environment (they offer DEFAULT_SHMEM_SIZE, 8 MiB, and abort with
# "Target's coverage map size of 16777216 is larger than the one this AFL++ is set with (8388608)";
# the wrappers of a 2^24 map set it). A self-check builds a small NGRAM-8 program
# with the patched afl-clang-fast and asks afl-showmap for its tuples: some must lie above 2^16.
#
# Limits of the result (as of a real rebuild, except the last two): only the hashed modes use the map
# size (PCGUARD and LTO number their guards); the map afl-fuzz sees is the whole 2^POW2, so every
# execution resets, classifies and compares 2^POW2 bytes (that cost is the point of the comparison).
# Debian's runtime keeps its arrays of 16 and 32 u16 previous locations, which hold 8 and 16 of the
# pass's 32-bit ones: NGRAM-N for N <= 9 and CTX-K for K <= 16 only (the wrappers refuse larger ones;
# a rebuild doubles the arrays). A target run outside afl-fuzz / afl-showmap with POW2 >= 22 needs
# AFL_MAP_SIZE=2^POW2 in its environment (the patched runtime keeps Debian's 2 MiB static map for
# that case, where a rebuild would have one of 2^POW2).
#
# Writes only /var/cache/autotune/aflpp-map<POW2> (beside the sid root); the sid root
# (made by `bash .ci/aflpp-current.sh`) is read, never changed; the host's apt sources are untouched.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SID=${AUTOTUNE_AFLPP_ROOT:-/var/cache/autotune/aflpp-sid}
BASE=$(dirname "$SID")  # .ci/aflpp-current.sh binds its siblings aflpp-map* into the root
PATCH_VERSION=3  # bump when the patch or the wrappers change: finished directories are then remade

die() { echo "aflpp_bigmap: $*" >&2; exit 1; }

pow2_arg() {
  case "${1:-}" in
    1[7-9]|2[0-4]) echo "$1" ;;
    *) die "POW2 must be 17..24 (2^24 = 16 MiB; stock AFL++ has 16), got '${1:-}'" ;;
  esac
}

write_wrappers() {  # $1 = out dir
  local out=$1 t cur
  cur=$(printf %q "$HERE/.ci/aflpp-current.sh")
  mkdir -p "$out/bin"
  for t in afl-clang-fast afl-clang-fast++ afl-cc afl-c++; do
    sed -e "s|@T@|$t|g; s|@POW2@|$POW2|g; s|@OUT@|$out|g; s|@CURRENT@|$cur|g" > "$out/bin/$t" <<'EOF'
#!/usr/bin/env bash
# @T@ of AFL++ 5.02c with MAP_SIZE 2^@POW2@ (benchmarks/aflpp_bigmap.sh): AFL_PATH points afl-cc at the
# patched pass and runtime in @OUT@/lib/afl.
# The patched pass keeps 32-bit previous locations in Debian's runtime arrays of 16 and 32 u16s: NGRAM-N
# fits for N <= 9 (8 previous ids), CTX-K for K <= 16. Larger ones would write past them: refused.
up=$(printf '%s' "${AFL_LLVM_INSTRUMENT:-}" | tr a-z A-Z)
for n in $(printf '%s' "$up" | grep -oE 'NGRAM-?[0-9]+' | grep -oE '[0-9]+') ${AFL_LLVM_NGRAM_SIZE:-} ${AFL_NGRAM_SIZE:-}; do
  [ "$n" -le 9 ] 2>/dev/null || { echo "@T@ (map 2^@POW2@): NGRAM-$n needs N <= 9 in this patched AFL++ (benchmarks/aflpp_bigmap.sh)" >&2; exit 1; }
done
for k in $(printf '%s' "$up" | grep -oE 'CTX-[0-9]+' | grep -oE '[0-9]+') ${AFL_LLVM_CTX_K:-} ${AFL_CTX_K:-}; do
  [ "$k" -le 16 ] 2>/dev/null || { echo "@T@ (map 2^@POW2@): CTX-$k needs K <= 16 in this patched AFL++ (benchmarks/aflpp_bigmap.sh)" >&2; exit 1; }
done
if [ -f /.autotune-ready ]; then  # already inside the sid root
  AFL_PATH=@OUT@/lib/afl exec /usr/bin/@T@ "$@"
fi
exec bash @CURRENT@ run env AFL_PATH=@OUT@/lib/afl /usr/bin/@T@ "$@"
EOF
    chmod +x "$out/bin/$t"
  done
  offer=""
  [ "$POW2" -le 23 ] || offer="export AFL_MAP_SIZE=\${AFL_MAP_SIZE:-$((1 << POW2))}"
  for t in afl-fuzz afl-showmap afl-tmin afl-cmin; do
    sed -e "s|@T@|$t|g; s|@CURRENT@|$cur|g; s|@OFFER@|$offer|g" > "$out/bin/$t" <<'EOF'
#!/usr/bin/env bash
# @T@ of AFL++ 5.02c as Debian built it: it takes the map size the target reports, up to the 8 MiB
# it offers by default; a larger map needs AFL_MAP_SIZE (benchmarks/aflpp_bigmap.sh)
@OFFER@
if [ -f /.autotune-ready ]; then exec /usr/bin/@T@ "$@"; fi
exec bash @CURRENT@ run /usr/bin/@T@ "$@"
EOF
    chmod +x "$out/bin/$t"
  done
}

# The patch: python3 of the host (any 3.8+), on copies; prints what it changed.
patch_copies() {  # $1 = lib dir of copies, $2 = pow2
  python3 - "$1" "$2" <<'PY'
import re, struct, subprocess, sys
from pathlib import Path

lib, pow2 = Path(sys.argv[1]), int(sys.argv[2])
OLD, NEW = 1 << 16, 1 << pow2

def sections(b):
    cls = b[4]
    if b[:4] != b"\x7fELF" or cls not in (1, 2):
        raise SystemExit(f"not an ELF file")
    if cls == 2:
        shoff, = struct.unpack_from("<Q", b, 0x28); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
        fmt = "<IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from("<I", b, 0x20); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x2e)
        fmt = "<IIIIIIIIII"
    raw = [struct.unpack_from(fmt, b, shoff + i * shentsize) for i in range(shnum)]
    # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
    strtab_off = raw[shstrndx][4]
    def name(o):
        return b[strtab_off + o:b.index(b"\0", strtab_off + o)].decode()
    return cls, [(name(s[0]),) + s[1:] for s in raw]

def width_site(path, secs):
    """File offset of the 16 in `mov $0x10,%esi; call getIntNTy@plt`: IntLocTy = sizeof(PREV_LOC_T) * 8."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", str(path)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    sites = []
    for prev, line in zip(dis, dis[1:]):
        if "call" in line and "llvm::Type::getIntNTy(" in line:
            m = re.match(r"\s*([0-9a-f]+):\s+mov\s+\$0x10,%esi$", prev)
            if not m:
                raise SystemExit(f"{path}: getIntNTy is called without `mov $0x10,%esi` before it; refusing")
            sites.append(int(m.group(1), 16))
    if len(sites) != 1:
        raise SystemExit(f"{path}: expected one getIntNTy(C, 16) call, found {len(sites)}; refusing")
    text = [s for s in secs if s[0] == ".text"][0]
    return sites[0] - text[3] + text[4] + 1  # the immediate follows the opcode byte be

def patch_pass(path):
    b = bytearray(path.read_bytes())
    if b"afl-llvm-pass++5.02c" not in b:
        raise SystemExit(f"{path}: not AFL++ 5.02c's afl-llvm-pass.so; refusing to patch another build")
    _, secs = sections(b)
    # PREV_LOC_T (instrumentation/llvm-alternative-coverage.h) is u16 up to MAP_SIZE_POW2 16, u32 above:
    # the element of NGRAM's previous-locations vector and of CTX-K's callers vector, and the type of
    # NGRAM's block ids. Left at 16 bits, NGRAM's ids and indices would stay below 2^16 in any map.
    w = width_site(path, secs)
    if b[w - 1:w + 4] != b"\xbe\x10\x00\x00\x00":
        raise SystemExit(f"{path}: the bytes at {w - 1:#x} are not `mov $0x10,%esi`; refusing")
    b[w] = 32
    print(f"{path.name}: PREV_LOC_T width at file offset {w:#x}: 16 -> 32 bits")
    ro = [s for s in secs if s[0] == ".rodata"][0]
    start, size = ro[4], ro[5]
    want = struct.pack("<IIII", 0, 0, OLD, 1)
    hits = [i for i in range(start, start + size - 15, 4) if b[i:i + 16] == want]
    if len(hits) != 1:
        raise SystemExit(f"{path}: expected one {{0, 0, 2^16, 1}} in .rodata, found {len(hits)}; refusing")
    b[hits[0] + 8:hits[0] + 12] = struct.pack("<I", NEW)
    path.write_bytes(bytes(b))
    print(f"{path.name}: map_size at file offset {hits[0] + 8:#x}: {OLD} -> {NEW}")

def patch_runtime(path):
    b = bytearray(path.read_bytes())
    cls, secs = sections(b)
    symtab = [s for s in secs if s[1] == 2][0]  # SHT_SYMTAB
    strtab = secs[symtab[6]]
    ent = 24 if cls == 2 else 16
    want = {"__afl_map_size", "__afl_cov_map_size", "__afl_set_map_size"}
    done = set()
    for i in range(symtab[5] // ent):
        o = symtab[4] + i * ent
        if cls == 2:
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", b, o)
        else:
            st_name, st_value, st_size, st_info, st_other, st_shndx = struct.unpack_from("<IIIBBH", b, o)
        nm = b[strtab[4] + st_name:b.index(b"\0", strtab[4] + st_name)].decode()
        if nm not in want:
            continue
        sec = secs[st_shndx]
        if sec[0] != ".data" or st_size != 4:
            raise SystemExit(f"{path}: {nm} is not a 4-byte .data variable; refusing")
        off = sec[4] + st_value
        cur, = struct.unpack_from("<I", b, off)
        if cur != OLD:
            raise SystemExit(f"{path}: {nm} holds {cur}, not 2^16; refusing")
        struct.pack_into("<I", b, off, NEW)
        done.add(nm)
        print(f"{path.name}: {nm} at file offset {off:#x}: {OLD} -> {NEW}")
    if done != want:
        raise SystemExit(f"{path}: missing {', '.join(sorted(want - done))}; refusing")
    path.write_bytes(bytes(b))

patch_pass(lib / "afl-llvm-pass.so")
for name in ("afl-compiler-rt.o", "afl-compiler-rt-64.o", "afl-compiler-rt-32.o"):
    if (lib / name).is_file():
        patch_runtime(lib / name)
PY
}

# The self-check: an NGRAM-8 program of many blocks (-O0: at -O1 clang folds the branches into selects); afl-showmap must see tuples above 2^16 and
# none at or above 2^POW2. Run inside the root (the patched compiler's output needs sid's glibc).
self_check() {  # $1 = out dir
  local out=$1 tmp
  tmp=$(mktemp -d /tmp/aflpp-bigmap-check.XXXXXX)
  python3 - "$tmp/prog.c" <<'PY'
import sys
fns = "\n".join(f"static int f{i}(int x) {{ if (x & {1 << (i % 7)}) return x + {i}; return x ^ {i}; }}" for i in range(400))
calls = "\n".join(f"  s = f{i}(s + buf[{i} % n]);" for i in range(400))
open(sys.argv[1], "w").write(f"""#include <stdio.h>
{fns}
int main(void) {{ unsigned char buf[64]; int n = (int)fread(buf, 1, sizeof buf, stdin), s = 0;
  if (n <= 0) return 0;
{calls}
  return s == 12345; }}
""")
PY
  mkdir "$tmp/in"
  printf 'seed input for the map check, all bits: \xff\x7f\x3f\x1f\x0f\x07\x03\x01\n' > "$tmp/in/seed"
  AFL_LLVM_INSTRUMENT=NGRAM-8 AFL_QUIET=1 "$out/bin/afl-clang-fast" -O0 "$tmp/prog.c" -o "$tmp/prog" >/dev/null
  # -i DIR: afl-showmap runs each file as the target's input (a single input on stdin with -o FILE
  # records only the program's first tuples)
  "$out/bin/afl-showmap" -q -i "$tmp/in" -o "$tmp/maps" -- "$tmp/prog" >/dev/null 2>&1 || true
  python3 - "$tmp/maps/seed" "$POW2" <<'PY'
import sys
ids = [int(l.split(":")[0]) for l in open(sys.argv[1]) if l.strip()]
top, n = max(ids, default=-1), 1 << int(sys.argv[2])
if len(ids) < 100 or top < 65536 or top >= n:
    raise SystemExit(f"self-check failed: {len(ids)} tuples, highest {top} (want some >= 65536 and all < {n})")
print(f"self-check: {len(ids)} NGRAM-8 tuples of a 400-function program, highest index {top} (map 2^{sys.argv[2]} = {n})")
PY
  local rc=$?  # (set -e does not act inside a function called before ||)
  rm -rf "$tmp"
  return $rc
}

make_map() {
  local out="$BASE/aflpp-map$POW2" f
  [ -f "$SID/.autotune-ready" ] || die "no sid root at $SID: run 'bash .ci/aflpp-current.sh' first"
  [ -f "$SID/usr/lib/afl/afl-llvm-pass.so" ] || die "$SID has no /usr/lib/afl/afl-llvm-pass.so (afl++ not installed in the root?)"
  local inputs want
  inputs=$(cd "$SID/usr/lib/afl" && sha256sum afl-llvm-pass.so afl-compiler-rt*.o | awk '{print $1}' | tr '\n' ' ')
  want="aflpp_bigmap $PATCH_VERSION pow2 $POW2 wrappers of $HERE inputs $inputs"
  if [ -f "$out/.ready" ] && [ "$(cat "$out/.ready")" = "$want" ]; then echo "$out/bin"; return; fi
  echo "aflpp_bigmap: AFL++ 5.02c with MAP_SIZE 2^$POW2 into $out" >&2
  rm -rf "$out.new"; mkdir -p "$out.new/lib"
  cp -a "$SID/usr/lib/afl" "$out.new/lib/afl"
  patch_copies "$out.new/lib/afl" "$POW2" > "$out.new/PATCHED.txt"
  {
    echo "AFL++ $(grep -ao 'afl-llvm-pass++[0-9a-z.]*' "$SID/usr/lib/afl/afl-llvm-pass.so" | head -n 1 | sed 's/afl-llvm-pass++//')"
    echo "package: $(cat "$SID/var/lib/dpkg/status" | awk '/^Package: afl\+\+$/{p=1} p&&/^Version:/{print $2; exit}')"
    echo "MAP_SIZE_POW2: $POW2 (stock: 16)"
    echo "inputs (sha256 of afl-llvm-pass.so afl-compiler-rt*.o): $inputs"
    echo "made by: benchmarks/aflpp_bigmap.sh (patch version $PATCH_VERSION)"
  } > "$out.new/MANIFEST.txt"
  rm -rf "$out"; mv "$out.new" "$out"
  write_wrappers "$out"
  cat "$out/PATCHED.txt" >&2
  self_check "$out" >&2 || { rm -f "$out/.ready"; die "the self-check failed; $out left for a look"; }
  echo "$want" > "$out/.ready"
  echo "$out/bin"
}

case "${1:-}" in
  bin) POW2=$(pow2_arg "${2:-}"); echo "$BASE/aflpp-map$POW2/bin" ;;
  "") die "usage: aflpp_bigmap.sh POW2 | bin POW2" ;;
  *) POW2=$(pow2_arg "$1"); make_map ;;
esac
