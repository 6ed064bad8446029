#!/usr/bin/env bash
# Set up autotune from nothing on Debian 12: system packages (clang, AFL++, ...), the Debian
# source entries used to fetch real third-party targets (apt-get source), and a venv in .venv
# with autotune installed (editable) with its test extra. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: need root (or sudo) to install Debian packages" >&2; exit 1; fi
fi

PKGS=(clang llvm lld-14 libclang-rt-14-dev afl++ dpkg-dev valgrind make binutils python3-venv autoconf)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# deb-src entries mirroring the configured deb entries, so `apt-get source PKG` works.
SRC=/etc/apt/sources.list.d/autotune-src.sources
need_update=0
if [ ! -f "$SRC" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$SRC" >/dev/null
  need_update=1
fi
if [ ${#missing[@]} -gt 0 ] || [ $need_update = 1 ]; then
  $SUDO apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
echo "setup: ready (.venv/bin/autotune)" >&2
