#!/usr/bin/env bash
# Set up autotune from nothing on Debian 12, safe to run again:
#   bash .ci/setup.sh            what the tool needs: Debian packages (clang, AFL++, ...) and a venv
#                                in .venv with autotune installed (editable)
#   bash .ci/setup.sh --tests    also what only the tests and benchmarks need: dpkg-dev (apt-get
#                                source of real third-party targets), autoconf, valgrind, pytest;
#                                cmake, patch, tclsh, zlib headers (benchmarks/bugs' libraries),
#                                clang-16 and its LLVM headers (the pass plugins' LLVM 16 tests)
# What it changes on the system: it installs the Debian packages named below (apt-get install)
# and nothing else. No apt configuration is written: the tests fetch source packages with a
# private, temporary apt configuration (benchmarks/targets/debsrc.py). An earlier setup's deb-src file
# (/etc/apt/sources.list.d/autotune-src.sources) is removed, with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

TESTS=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1 ;;
    *) echo "setup: unknown option $arg (use --tests to add what the tests need)" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: need root (or sudo) to install Debian packages" >&2; exit 1; fi
fi

PKGS=(clang llvm llvm-14-dev lld-14 libclang-rt-14-dev afl++ make binutils python3-venv)
# cmake .. zlib1g-dev: the bug benchmark's builds; clang-16 llvm-16-dev: the pass plugins are also
# tested with LLVM 16, the first whose AFL++ passes run at OptimizerEarly (tests/test_edge_kind.py)
TEST_PKGS=(dpkg-dev autoconf valgrind cmake patch tcl8.6 zlib1g-dev clang-16 llvm-16-dev)
[ $TESTS = 1 ] && PKGS+=("${TEST_PKGS[@]}")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

OLD_SRC=/etc/apt/sources.list.d/autotune-src.sources
if [ -f "$OLD_SRC" ]; then
  echo "setup: removing $OLD_SRC (deb-src entries an earlier autotune setup added; no longer needed)" >&2
  $SUDO rm -f "$OLD_SRC"
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if [ $TESTS = 1 ]; then
  .venv/bin/python -m pip install -q -e '.[test]'
else
  .venv/bin/python -m pip install -q -e .
fi
echo "setup: ready (.venv/bin/autotune)" >&2
