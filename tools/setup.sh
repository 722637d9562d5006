#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), builds ipusim (Release) and then
#   run   simulates the bundled default config (configs/default.json)
#   test  runs the whole test suite through ctest
#   build only builds
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-build}

packages=(g++ cmake pkgconf libsystemc-dev libboost-dev libfmt-dev catch2
          nlohmann-json3-dev libvalijson-dev libcli11-dev python3-matplotlib
          openmpi-bin libopenmpi-dev libboost-mpi-dev libboost-serialization-dev
          libonnx-dev libprotobuf-dev python3-torch python3-torchvision
          pybind11-dev python3-dev python3-pytest)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"

case "$what" in
  run)   ./build/ipusim run configs/default.json ;;
  test)  ctest --test-dir build --output-on-failure -j "$jobs" ;;
  build) ;;
  *) echo "usage: tools/setup.sh [build|run|test]" >&2; exit 2 ;;
esac
