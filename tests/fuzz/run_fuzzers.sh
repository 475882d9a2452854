#!/usr/bin/env bash
# Runs libFuzzer targets on their seed corpora: tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS_EACH [NAME...]
# (default: all six). The checked-in corpus is read only; new inputs go to a scratch directory, crashes to
# $PARSIM_FUZZ_ARTIFACTS (default: BUILD_DIR/fuzz-artifacts). Exits non-zero when any target finds a crash, a leak,
# a timeout (> 10 s on one input) or an input that needs more than 2 GB. Long campaigns: see tests/fuzz/README.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS_EACH [NAME...]}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS_EACH [NAME...]}
shift 2
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(plan model hardware nccl kineto merge)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/parsim_fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
artifacts=${PARSIM_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}
mkdir -p "$artifacts"
status=0
for name in "${names[@]}"; do
  exe="$build/fuzz_$name"
  [ -x "$exe" ] || { echo "run_fuzzers: $exe is missing (configure with -DPARSIM_FUZZ=ON)" >&2; exit 2; }
  mkdir -p "$scratch/$name"
  dict=()
  [ -f "$here/dict/$name.dict" ] && dict=("-dict=$here/dict/$name.dict")
  log="$scratch/$name.log"
  # Scratch files of the harnesses go to TMPDIR; keep them in the scratch directory.
  if TMPDIR="$scratch" ASAN_OPTIONS=detect_leaks=1 "$exe" "$scratch/$name" "$here/corpus/$name" "${dict[@]}" \
       -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix="$artifacts/${name}-" >"$log" 2>&1; then
    execs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 | grep -o 'cov: [0-9]*' || true)
    echo "fuzz_$name: clean, ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}"
  else
    status=1
    echo "fuzz_$name: FINDING (log follows; artifacts in $artifacts)"
    grep -v '^#' "$log" | tail -40
  fi
done
exit $status
