#!/usr/bin/env bash
# build.sh BUILD_DIR [extra cmake args...]: configure (once) and build with Ninja.
# CGRAPH_TARGETS="a b": build only those targets (default: everything).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$root/build}"; shift || true
jobs="${CGRAPH_JOBS:-$(nproc)}"
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake "$dir" "$@"
fi
# shellcheck disable=SC2086
cmake --build "$dir" -j "$jobs" ${CGRAPH_TARGETS:+--target $CGRAPH_TARGETS}
