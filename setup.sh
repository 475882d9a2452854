#!/usr/bin/env bash
# parsim set-up: installs what is missing (Debian 12 packages), builds in Release, then
#   ./setup.sh run   — runs `parsim --model llama7b --plan tp8pp2dp4`
#   ./setup.sh test  — builds the test suite and runs all of it (ctest)
# The build includes the Python module (build/python/parsim*.so: PYTHONPATH=build/python python3 -c "import parsim").
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
case "$mode" in run|test) ;; *) echo "usage: ./setup.sh run|test" >&2; exit 2 ;; esac

pkgs=(g++ cmake ninja-build libboost-graph-dev nlohmann-json3-dev libcli11-dev libtbb-dev libeigen3-dev doctest-dev
      zlib1g-dev pybind11-dev python3-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARSIM_WERROR=ON >/dev/null
if [ "$mode" = run ]; then
  cmake --build build --target parsim -j "$jobs"
  ./build/parsim --model llama7b --plan tp8pp2dp4
else
  cmake --build build -j "$jobs"
  ctest --test-dir build --output-on-failure -j "$jobs"
fi
