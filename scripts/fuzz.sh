#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, in build-fuzz: clang, ASan + UBSan, no tests) and runs
# each for SECONDS, first replaying every regression input (fuzz/regressions/<target>/). Prints
# one line per target (executions, corpus size, crashes) and writes them to DIR/fuzz-summary.txt;
# a crash or broken invariant leaves its input in DIR/fuzz-crashes/<target>/ and fails the run.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   SECONDS  per target (default 60); CI (scripts/test.sh) runs 10
#   TARGET   only these (default: every target; `VRAMPLAN_FUZZ_LIST=1 DIR/fuzz_vramplan` lists them)
#   VRAMPLAN_FUZZ_DIR   build dir (default build-fuzz)
#   VRAMPLAN_FUZZ_JOBS  targets run at once (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
dir="${VRAMPLAN_FUZZ_DIR:-build-fuzz}"
jobs="${VRAMPLAN_FUZZ_JOBS:-1}"
[[ "$seconds" =~ ^[0-9]+$ ]] || {
  echo "fuzz.sh: SECONDS must be a whole number of seconds, got '$seconds'" >&2
  exit 2
}
command -v clang++-14 >/dev/null || {
  echo "fuzz.sh: clang++-14 is missing (scripts/setup.sh test installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
}
# A build dir that exists keeps its tests and benchmarks configured (scripts/test.sh fuzzes in
# build-asan, whose tests it has just run); a new one gets neither.
keep=(-DBUILD_TESTING=OFF -DVRAMPLAN_BUILD_BENCH=OFF)
if [[ -f "$dir/CMakeCache.txt" ]]; then
  keep=()
  while IFS= read -r setting; do keep+=("$setting"); done < <(sed -n \
    's/^\(BUILD_TESTING\|VRAMPLAN_BUILD_BENCH\):BOOL=\(.*\)$/-D\1=\2/p' "$dir/CMakeCache.txt")
fi
VRAMPLAN_TARGET=fuzz_vramplan scripts/build.sh "$dir" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++-14 -DVRAMPLAN_SANITIZE=ON -DVRAMPLAN_FUZZ=ON "${keep[@]}"
fuzzer="$dir/fuzz_vramplan"
corpus="$dir/fuzz-corpus"
seeds="$dir/fuzz-seeds"
crashes="$dir/fuzz-crashes"
rm -rf "$seeds"
python3 fuzz/make_corpus.py . "$seeds"
if (($# > 0)); then targets=("$@"); else read -r -a targets < <(VRAMPLAN_FUZZ_LIST=1 "$fuzzer"); fi

# Leak checking stays on; a single input may take 10 s and 2 GiB at most.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
summary="$dir/fuzz-summary.txt"
: >"$summary"

run_target() {
  local target="$1" log="$dir/fuzz-logs/$1.log"
  mkdir -p "$corpus/$target" "$crashes/$target" "$dir/fuzz-logs"
  local regressions=()
  [[ -d "fuzz/regressions/$target" ]] && regressions=("fuzz/regressions/$target")
  local dict=()
  [[ -f "$seeds/$target.dict" ]] && dict=(-dict="$seeds/$target.dict")
  local rc=0
  VRAMPLAN_FUZZ_TARGET="$target" "$fuzzer" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$crashes/$target/" "$corpus/$target" "$seeds/$target" \
    "${regressions[@]}" >"$log" 2>&1 || rc=$?
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  local size
  size=$(find "$corpus/$target" -type f | wc -l)
  local found
  found=$(find "$crashes/$target" -type f | wc -l)
  local line
  line=$(printf '%-28s %12s executions  %6s corpus  %3s crashes  %s' "$target" "${runs:-?}" \
    "$size" "$found" "$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc, see $log)")")
  echo "$line"
  echo "$line" >>"$summary"
  return "$rc"
}

failed=0
running=0
for target in "${targets[@]}"; do
  if ((jobs > 1)); then
    run_target "$target" &
    running=$((running + 1))
    if ((running >= jobs)); then
      wait -n || failed=1
      running=$((running - 1))
    fi
  else
    run_target "$target" || failed=1
  fi
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
if ((failed)); then
  echo "fuzz.sh: a target crashed or broke an invariant: inputs in $crashes/, logs in $dir/fuzz-logs/" >&2
  exit 1
fi
