#!/usr/bin/env bash
# Runs llmplan at each documented extreme (docs/commands.md: "Sizes are bounded") and
# prints wall time, CPU time and peak memory, so that every bound is backed by
# a measurement (issue 31, item 8). Not part of the test suite: it takes
# several minutes. Usage, from the repository root:
#
#   tests/bench/limits.sh build/planner/llmplan
#
# Each line: the limit, then `/usr/bin/time`'s wall s, user s, peak KB and
# the exit status (0: the extreme runs; the case just past it is refused by
# tests/cli/*.cases and the unit tests).
set -uo pipefail
llmplan=$(cd "$(dirname "${1:?usage: $0 LLMPLAN}")" && pwd)/$(basename "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/llmplan_limits.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

# A loss table of N rows from the Chinchilla law with 1 % noise (fixed seed).
loss_table() {
  awk -v n="$1" 'BEGIN {
    srand(1); print "params,tokens,loss"
    for (i = 0; i < n; i++) {
      N = 10 ^ (7 + 3 * rand()); D = 10 ^ (9 + 3 * rand())
      printf "%g,%g,%g\n", N, D, (1.69 + 406.4 / N ^ 0.34 + 410.7 / D ^ 0.28) * (0.99 + 0.02 * rand())
    }
  }'
}
loss_table 10000 >rows10000.csv
loss_table 1000 >rows1000.csv

# measure NAME MAX_CPU_S ARGS...: MAX_CPU_S is the extreme's stated bound
# (docs/commands.md, "Sizes are bounded": CPU seconds on a 2-core machine);
# a run over it, or one that fails, is marked and makes the script exit 1.
over=0
measure() {
  local name=$1 max_cpu_s=$2
  shift 2
  /usr/bin/time -f "%e %U %M %x" -o time.txt "$llmplan" "$@" >/dev/null 2>err.txt
  # The last line: /usr/bin/time puts "Command exited with non-zero status N" before it.
  read -r wall user kb status < <(tail -n 1 time.txt)
  local verdict="ok (bound ${max_cpu_s} s CPU)"
  if [[ $status != 0 ]] || awk -v u="$user" -v m="$max_cpu_s" 'BEGIN { exit !(u > m) }'; then
    verdict="OVER its bound of ${max_cpu_s} s CPU or failed"
    over=1
  fi
  printf '%-58s wall %7.1f s  user %7.1f s  peak %6.0f MB  exit %s  %s\n' "$name" "$wall" "$user" \
    "$((kb / 1024))" "$status" "$verdict"
  [[ $status == 0 ]] || sed 's/^/    /' err.txt
}

measure "fit: 10,000 rows (kMaxLossRows)" 60 fit rows10000.csv
measure "fit --bootstrap: 10,000 resamples x 1,000 rows (1e7)" 240 fit rows1000.csv --bootstrap 10000
measure "schedule: 10,000 jobs, 131,068 curve points (2^17)" 120 \
  schedule --generate 10000 --seed 1 --gpus 149792 --format csv
measure "frontier: 256 cells (4 x 8 x 8)" 120 \
  frontier --gpu a100-80gb,h100-sxm,h200-sxm,b200 --gpus 1024,2048,4096,8192,16384,32768,65536,131072 \
  --days 7,14,30,45,60,90,180,365 --format csv
exit "$over"
