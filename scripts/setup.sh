#!/usr/bin/env bash
# Installs the Debian 12 packages cgraph needs (only the missing ones). Idempotent;
# works as root or as a user with sudo. Nothing is downloaded except apt packages.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  clang-14 llvm-14-dev llvm-14-tools libclang-14-dev libclang-rt-14-dev
  llvm-spirv-14 libllvmspirvlib-14-dev spirv-tools libclc-14
  catch2 nlohmann-json3-dev libcli11-dev libzstd-dev libxxhash-dev
  libtbb-dev libboost-context-dev
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
  lld-14 libamdhip64-dev
  libze-dev
  libopenmpi-dev openmpi-bin
  python3-numpy python3-pytest libdlpack-dev
  libopenblas0-pthread  # numpy's BLAS (through Debian's alternatives) for the decode reference
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: error: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
