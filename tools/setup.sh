#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), then
#   run   builds the command line alone (Release) and simulates configs/default.json
#   test  builds everything and the model set at full size (its slow test's models), and runs the
#         whole test suite through ctest
#   build builds everything (the command line, the Python module, the tests, the ONNX models)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-build}

packages=(g++ cmake pkgconf libsystemc-dev libboost-dev libfmt-dev catch2
          nlohmann-json3-dev libvalijson-dev libcli11-dev python3-matplotlib
          openmpi-bin libopenmpi-dev libboost-mpi-dev libboost-serialization-dev
          libonnx-dev libprotobuf-dev python3-torch python3-torchvision
          pybind11-dev python3-dev python3-pytest libclang-dev)
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DIPUSIM_UNITY_BUILD=ON >/dev/null
case "$what" in
  # the command line alone: the first result does not wait for the tests, the Python module or
  # the bundled ONNX models
  run)   cmake --build build -j "$jobs" --target ipusim_cli
         ./build/ipusim run configs/default.json ;;
  test)  cmake --build build -j "$jobs"
         cmake --build build -j "$jobs" --target model_set # minutes of torch tracing, once
         ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" ;;
  build) cmake --build build -j "$jobs" ;;
  *) echo "usage: tools/setup.sh [build|run|test]" >&2; exit 2 ;;
esac
