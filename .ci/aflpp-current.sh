#!/usr/bin/env bash
# The current AFL++ (Debian sid's afl++, 5.02c today, built with LLVM 21) on a Debian 12 host,
# without changing the host's apt sources. Safe to run again: a finished root is reused.
#
#   bash .ci/aflpp-current.sh                 make the root (once, ~5 min, ~1.5 GB), print its wrappers' dir
#   bash .ci/aflpp-current.sh --venv DIR      also a venv in DIR (made by the root's python) with autotune[test]
#   bash .ci/aflpp-current.sh run CMD ARGS..  run CMD inside the root, with this host's paths bound in place
#   bash .ci/aflpp-current.sh bin             print the wrappers' dir (afl-fuzz, afl-showmap, afl-clang-fast,
#                                             clang-21, ...: put it first on PATH to use AFL++ 5.02c from the host)
#
# Why a root: sid's binaries need glibc 2.38+ and libpython3.14, which Debian 12 does not have. The
# root is made by debootstrap from the Debian archive this host's apt already uses; its tools run
# by bubblewrap with the root as / and the host's working directories (this checkout, /tmp, the
# cache, /root, /work) bound at their own paths, so a command sees the same files inside as outside.
# A binary built inside (sid's glibc) runs only inside; one built on the host runs in both.
#
# What it changes on the host: it installs debootstrap and bubblewrap (apt-get install) and writes
# under $AUTOTUNE_AFLPP_ROOT (default /var/cache/autotune/aflpp-sid) and its sibling .bin directory.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${AUTOTUNE_AFLPP_ROOT:-/var/cache/autotune/aflpp-sid}
BIN="$ROOT.bin"
LLVM=21
# What the root holds: AFL++ and its LLVM; what autotune's builds need (make, the sanitizer
# runtimes, autotools and cmake for real targets, dpkg-dev for apt-get source, tclsh for SQLite's
# amalgamation in benchmarks/bugs/sqlite3); python for a venv.
PKGS=(afl++ "clang-$LLVM" "lld-$LLVM" "llvm-$LLVM" "llvm-$LLVM-dev" "libclang-rt-$LLVM-dev" make binutils
      python3 python3-venv python3-dev dpkg-dev autoconf automake libtool pkg-config cmake valgrind
      tcl ca-certificates file git)
STAMP="$ROOT/.autotune-ready"
WANT="packages: ${PKGS[*]}"
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -qq)

die() { echo "aflpp-current: $*" >&2; exit 1; }

run_inside() {
  [ -f "$STAMP" ] || die "no root at $ROOT yet: run 'bash .ci/aflpp-current.sh' first"
  local binds=() d
  # AFL++ 5.02c with larger maps (benchmarks/aflpp_bigmap.sh: $ROOT's siblings aflpp-map<POW2>), read-only
  for d in "$(dirname "$ROOT")"/aflpp-map*; do
    [ -d "$d" ] && binds+=(--ro-bind "$d" "$d")
  done
  for d in "$HERE" /tmp /root /work /var/tmp "${AUTOTUNE_CACHE_DIR:-}" "${AUTOTUNE_AFLPP_BIND:-}"; do
    [ -n "$d" ] && [ -d "$d" ] && binds+=(--bind "$d" "$d")
  done
  # The host's apt configuration, so that apt-get source (benchmarks/targets/debsrc.py) fetches the
  # same Debian 12 sources inside as outside; the host's certificates, so that pip trusts what the
  # host trusts.
  exec bwrap --bind "$ROOT" / "${binds[@]}" --ro-bind /etc/apt /etc/apt --ro-bind /etc/ssl/certs /etc/ssl/certs \
    --ro-bind /etc/resolv.conf /etc/resolv.conf --dev-bind /dev /dev --proc /proc --bind /sys /sys \
    --setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --chdir "$PWD" -- "$@"
}

mirror() {
  # The Debian archive this host's apt uses (deb822 or one-line entries), never a fixed host name.
  local m
  m=$(grep -rhoE '^(URIs:\s*|deb\s+(\[[^]]*\]\s+)?)\S+/debian/?(\s|$)' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null \
      | grep -oE '\S+/debian/?' | head -n 1 || true)
  [ -n "$m" ] || die "cannot find a Debian archive in /etc/apt (a 'URIs: .../debian' or 'deb .../debian' entry)"
  echo "${m%/}"
}

write_wrappers() {
  mkdir -p "$BIN.tmp"
  local t
  for t in afl-fuzz afl-showmap afl-tmin afl-cmin afl-whatsup afl-cc afl-clang-fast afl-clang-fast++ \
           afl-clang-lto afl-clang-lto++ "clang-$LLVM" "clang++-$LLVM" "llvm-config-$LLVM" "opt-$LLVM"; do
    printf '#!/usr/bin/env bash\n# %s of the root %s (AFL++ from Debian sid), run by .ci/aflpp-current.sh\nexec bash %q run %q "$@"\n' \
      "$t" "$ROOT" "$HERE/.ci/aflpp-current.sh" "/usr/bin/$t" > "$BIN.tmp/$t"
    chmod +x "$BIN.tmp/$t"
  done
  rm -rf "$BIN"; mv "$BIN.tmp" "$BIN"
}

make_root() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    [ -d "$BIN" ] || write_wrappers
    return
  fi
  [ "$(id -u)" = 0 ] || die "making the root needs root (debootstrap, chroot); run as root once"
  local need=()
  for p in debootstrap bubblewrap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "aflpp-current: installing ${need[*]} on the host" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  if [ ! -x "$ROOT/usr/bin/apt-get" ] || [ ! -f "$ROOT/.autotune-debootstrap" ]; then
    echo "aflpp-current: debootstrap of Debian sid into $ROOT (a few minutes)" >&2
    rm -rf "$ROOT.new"; mkdir -p "$(dirname "$ROOT")"
    debootstrap --variant=minbase --include=ca-certificates sid "$ROOT.new" "$(mirror)" >"$ROOT.debootstrap.log" 2>&1 \
      || die "debootstrap failed; its log: $ROOT.debootstrap.log"
    touch "$ROOT.new/.autotune-debootstrap"
    rm -rf "$ROOT"; mv "$ROOT.new" "$ROOT"
  fi
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  echo "aflpp-current: installing ${PKGS[*]} in the root" >&2
  chroot "$ROOT" apt-get "${APT_OPTS[@]}" update
  DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get "${APT_OPTS[@]}" install -y "${PKGS[@]}" >"$ROOT.apt.log" 2>&1 \
    || die "apt-get install in the root failed; its log: $ROOT.apt.log"
  chroot "$ROOT" apt-get clean
  write_wrappers
  echo "$WANT" > "$STAMP"
}

make_venv() {
  local dir=$1
  case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
  if [ ! -x "$dir/bin/python" ]; then
    (cd "$HERE" && run_inside_sub python3 -m venv "$dir")
  fi
  (cd "$HERE" && run_inside_sub "$dir/bin/python" -m pip install -q --upgrade pip >/dev/null)
  (cd "$HERE" && run_inside_sub "$dir/bin/python" -m pip install -q -e '.[test]')
}
run_inside_sub() { (run_inside "$@"); }

case "${1:-}" in
  run) shift; [ $# -gt 0 ] || die "usage: aflpp-current.sh run CMD [ARGS...]"; run_inside "$@" ;;
  bin) echo "$BIN" ;;
  --venv) [ $# -ge 2 ] || die "usage: aflpp-current.sh --venv DIR"; make_root; make_venv "$2"; echo "$BIN" ;;
  "") make_root; echo "$BIN" ;;
  *) die "unknown argument $1 (none, --venv DIR, run CMD..., or bin)" ;;
esac
