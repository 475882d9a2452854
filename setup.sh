#!/usr/bin/env bash
# parsim set-up: installs what is missing (Debian 12 packages), builds in Release, then
#   ./setup.sh run   — runs `parsim --model llama7b --plan tp8pp2dp4`
#   ./setup.sh test  — builds the test suite and runs all of it (ctest)
#   ./setup.sh sanitize — (CI, issue 12) builds with clang, AddressSanitizer + UndefinedBehaviorSanitizer and the
#                      libFuzzer targets in build-fuzz/, runs the whole test suite there, then every fuzz target for
#                      PARSIM_FUZZ_SECONDS (default 8) seconds on its corpus
# The build includes the Python module (build/python/parsim*.so: PYTHONPATH=build/python python3 -c "import parsim").
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
case "$mode" in run|test|sanitize) ;; *) echo "usage: ./setup.sh run|test|sanitize" >&2; exit 2 ;; esac

pkgs=(g++ cmake ninja-build libboost-graph-dev nlohmann-json3-dev libcli11-dev libtbb-dev libeigen3-dev doctest-dev
      zlib1g-dev pybind11-dev python3-dev)
# Only the sanitizer/fuzz step needs clang; libFuzzer and the sanitizer runtimes are in libclang-rt-14-dev, which
# clang-14 only recommends (and recommendations are not installed below).
[ "$mode" = sanitize ] && pkgs+=(clang libclang-rt-14-dev)
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
if [ "$mode" = sanitize ]; then
  # -O1 -g1: sanitizer reports with line numbers at about half the compile time of -O2 -g.
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPARSIM_FUZZ=ON -DPARSIM_WERROR=ON -DPARSIM_PYTHON=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null
  # The whole suite under the sanitizers (issue 12: every label — unit, cli, contract, golden, validation, fuzz
  # replays; ~1 min of tests at -j2), then the fuzzers. Except test_cross_validation: it re-simulates the 377
  # validation rows 25 times (about 2 min in Release, several times that sanitized) through the same code paths
  # test_validation runs here once; CI's budget is 20 minutes on 2 cores.
  cmake --build build-fuzz -j "$jobs"
  ctest --test-dir build-fuzz --output-on-failure -j "$jobs" -E '^test_cross_validation$'
  tests/fuzz/run_fuzzers.sh build-fuzz "${PARSIM_FUZZ_SECONDS:-8}"
  exit 0
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARSIM_WERROR=ON >/dev/null
if [ "$mode" = run ]; then
  cmake --build build --target parsim -j "$jobs"
  ./build/parsim --model llama7b --plan tp8pp2dp4
else
  cmake --build build -j "$jobs"
  ctest --test-dir build --output-on-failure -j "$jobs"
fi
