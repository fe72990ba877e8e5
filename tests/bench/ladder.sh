#!/usr/bin/env bash
# The planner's answer on a ladder of GPU counts (issue 25, docs/planner.md,
# "Answers from 1K to 1M GPUs"): for H100 (--gpu h100-sxm), 90 and
# 365 days, G = 1,024 .. 1,048,576 (powers of 4), the gpt, llama and moe
# families. One `llmplan frontier` per family (the cells share their
# simulations; each cell is the planner's answer, byte for byte), printed as
# one Markdown table: parameters (MoE: total and active), predicted loss,
# GPUs used, plan and days used. Deterministic (any thread count gives the
# same answers). Not part of the test suite: it takes about one to two and a half
# minutes on two cores. Usage, from the repository root:
#
#   tests/bench/ladder.sh build/planner/llmplan
#
# Extra arguments go to every frontier call (e.g. --days 30 to replace the
# deadlines, --gpu b200 for another GPU kind: later flags win).
set -euo pipefail
llmplan=${1:?usage: $0 LLMPLAN [FRONTIER FLAGS...]}
shift
gpus=1024,4096,16384,65536,262144,1048576
echo "| family | days | GPUs | parameters | loss | GPUs used | plan | days used |"
echo "|---|---:|---:|---:|---:|---:|---|---:|"
for family in gpt llama moe; do
  # CSV columns (frontier --format csv): 3 gpus, 4 days, 6 found, 9 params,
  # 10 active_params, 12 loss, 13 plan, 14 gpus_used, 15 train_days; none
  # of them holds a comma (the quoted architecture column comes later).
  "$llmplan" frontier --gpu h100-sxm --family "$family" --gpus "$gpus" --days 90,365 \
    --format csv "$@" |
    awk -F, -v family="$family" '
      function human(n) {
        if (n >= 1e12) return sprintf("%.2fT", n / 1e12)
        return sprintf("%.1fB", n / 1e9)
      }
      NR > 1 {
        if ($6 != 1) { printf "| %s | %s | %s | none | - | - | - | - |\n", family, $4, $3; next }
        params = human($9)
        if ($10 != $9) params = params " (" human($10) " active)"
        printf "| %s | %s | %s | %s | %.3f | %s | %s | %.1f |\n", family, $4, $3, params, $12, $14,
               $13, $15
      }' |
    sort -t'|' -k3,3n -k4,4n
done
