#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each, on a scratch copy of its seed
# corpus (the repository stays clean), two targets at a time. Fails when any
# target reports a crash, a leak, a timeout, running out of memory or a
# sanitizer error; prints one summary line per target. See README.md.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (targets at a
# time, default 2), FUZZ_WORK_DIR (scratch folder, default a new temporary
# one; kept when a target fails, so its crash input and log can be read).
set -euo pipefail

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET...]" >&2
  exit 2
fi
seconds=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-2}
work=${FUZZ_WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/llmplan-fuzz.XXXXXX")}
mkdir -p "$work"

if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  targets=()
  for dir in "$here"/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# Fuzzer options: a slow input (> 10 s) counts as a hang, more than 2 GiB of
# memory as a failure; UBSan reports stop the run like ASan's do.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local target=$1
  local binary=$build/tests/fuzz/$target
  local corpus=$work/corpus/$target
  local log=$work/$target.log
  if [[ ! -x $binary ]]; then
    echo "$target: no binary at $binary (build with -DLLMPLAN_FUZZ=ON)" >"$log"
    return 1
  fi
  rm -rf "$corpus"
  mkdir -p "$corpus" "$work/artifacts"
  cp "$here/corpus/$target/"* "$corpus/"
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$target-" "$corpus" >"$log" 2>&1
}

summary() {
  local target=$1 status=$2
  local log=$work/$target.log
  local execs cov ft rate
  # A target that crashed on its seeds printed no "cov:" line: "?" then, and
  # the failure is reported below (a failed grep must not end this script).
  execs=$({ sed -n 's/^stat::number_of_executed_units: *//p' "$log" || true; } | tail -1)
  rate=$({ sed -n 's/^stat::average_exec_per_sec: *//p' "$log" || true; } | tail -1)
  cov=$({ grep -Eo 'cov: [0-9]+' "$log" || true; } | tail -1 | cut -d' ' -f2)
  ft=$({ grep -Eo 'ft: [0-9]+' "$log" || true; } | tail -1 | cut -d' ' -f2)
  printf '%-20s %-4s execs %10s  execs/s %6s  cov %6s  ft %6s  corpus %s\n' "$target" \
    "$status" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
    "$(find "$work/corpus/$target" -type f 2>/dev/null | wc -l)"
}

failed=()
pids=()
names=()
flush() {  # waits for the running targets, in start order
  local i
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      summary "${names[$i]}" ok
    else
      summary "${names[$i]}" FAIL
      failed+=("${names[$i]}")
    fi
  done
  pids=()
  names=()
}
for target in "${targets[@]}"; do
  run_one "$target" &
  pids+=($!)
  names+=("$target")
  if ((${#pids[@]} >= jobs)); then flush; fi
done
flush

if ((${#failed[@]})); then
  for target in "${failed[@]}"; do
    echo "== $target failed; the end of its log ($work/$target.log):"
    tail -n 40 "$work/$target.log"
  done
  echo "crash inputs, if any: $work/artifacts/ (reproduce: tests/fuzz/README.md)"
  exit 1
fi
if [[ -z ${FUZZ_WORK_DIR:-} ]]; then rm -rf "$work"; fi
