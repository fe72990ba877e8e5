#!/usr/bin/env bash
# Issue 30: the pruned search (the default) answers exactly as --exhaustive.
# For each question both runs write --out DIR; compared after dropping only
# what counts simulated plans (the per-model simulated / fit / in-time
# counts, the total, the pruning line and key, the command line):
#  - report.md and result.json byte for byte;
#  - candidates.csv byte for byte without the count columns;
#  - plans.csv: the answer's model's rows byte for byte (the pruned search
#    simulates every plan of the answer's model; other models' rows list
#    only the plans it simulated, a subset of --exhaustive's);
#  - the SVGs (days vs parameters, the answer's plans and Pareto front).
# Usage: prune_identity_test.sh LLMPLAN [WORKDIR]
set -euo pipefail
bin=$1
work=${2:-$(mktemp -d)}
mkdir -p "$work"
questions=(
  "--gpus 1024 --days 30 --gpu a100-80gb"
  "--family llama --gpus 256 --days 60 --gpu h100-sxm --objective loss"
  "--family moe --gpus 64 --days 5 --gpu h100-sxm"
  "--family llama --gpus 256 --days 20 --gpu b200 --budget-usd 2000000"
  "--gpus 512 --days 14 --gpu a100-80gb --objective loss --budget-usd 1500000"
  "--model llama3-70b --gpus 1024 --days 30 --gpu h100-sxm"
  "--family llama --gpus 2048 --days 30 --gpu h100-sxm --confidence 0.9"
  "--gpus 64 --days 3 --gpu h100-sxm --tokens-per-param 200"
  "--family llama --gpus 256 --days 30 --gpu h100-sxm --tokens 1T"
  "--family llama --gpus 256 --days 30 --gpu h100-sxm --unique-tokens 100B"
  "--family llama --gpus 256 --days 30 --gpu h100-sxm --inference-tokens 1e12"
  "--family llama --gpus 2048 --days 30 --gpu h100-sxm --no-interruptions"
  "--family llama --gpus 4096 --days 20 --gpu h100-sxm --spare-nodes 8 --checkpoint-write-gbps 200"
)
norm_md='s/[0-9]+ simulated, [0-9]+ fit memory, [0-9]+ in time/N simulated/; s/^[0-9]+ candidate shapes and [0-9]+ plans simulated\./PLANS/; /^Pruned without simulation/{N;d}; /^Command: /d'
fail=0
k=0
for q in "${questions[@]}"; do
  k=$((k + 1))
  a=$work/q$k-pruned b=$work/q$k-exhaustive
  # shellcheck disable=SC2086
  "$bin" $q --threads 2 --out "$a" >/dev/null
  # shellcheck disable=SC2086
  "$bin" $q --threads 2 --exhaustive --out "$b" >/dev/null
  for f in report.md; do
    if ! diff <(sed -E "$norm_md" "$a/$f") <(sed -E "$norm_md" "$b/$f") >/dev/null; then
      echo "FAIL [$q]: $f differs"; diff <(sed -E "$norm_md" "$a/$f") <(sed -E "$norm_md" "$b/$f") | head -20 || true; fail=1
    fi
  done
  for f in days_vs_params.svg pareto.svg; do
    if [[ -e $b/$f ]] && ! cmp -s "$a/$f" "$b/$f"; then echo "FAIL [$q]: $f differs"; fail=1; fi
  done
  python3 - "$a" "$b" "$q" <<'PY' || fail=1
import csv, io, json, sys
a, b, q = sys.argv[1:4]
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if k not in ("plan_counts", "plans_evaluated", "pruning", "command_line")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
ja, jb = (json.load(open(d + "/result.json")) for d in (a, b))
ok = True
if strip(ja) != strip(jb):
    print(f"FAIL [{q}]: result.json differs"); ok = False
if not jb["pruning"]["exhaustive"] or jb["pruning"]["pruned_deadline"] + jb["pruning"]["pruned_incumbent"] != 0:
    print(f"FAIL [{q}]: --exhaustive pruned"); ok = False
p = ja["pruning"]
if ja["plans_evaluated"] + p["pruned_deadline"] + p["pruned_incumbent"] != jb["plans_evaluated"]:
    print(f"FAIL [{q}]: simulated + pruned != exhaustive plans"); ok = False
counts = {"layouts", "memory_pruned", "plans_simulated", "plans_fit", "plans_in_time"}
def rows(path, drop):
    r = list(csv.reader(open(path)))
    keep = [i for i, h in enumerate(r[0]) if h not in drop]
    return [[row[i] for i in keep] for row in r]
if rows(a + "/candidates.csv", counts) != rows(b + "/candidates.csv", counts):
    print(f"FAIL [{q}]: candidates.csv differs"); ok = False
best = jb["best"]
if best is not None:
    name = best["architecture"]["name"]
    pa, pb = (list(csv.DictReader(open(d + "/plans.csv"))) for d in (a, b))
    key = "model" if "model" in pa[0] else "name"
    sel = lambda rs: [r for r in rs if r[key] == name]
    if not sel(pb) or sel(pa) != sel(pb):
        print(f"FAIL [{q}]: plans.csv rows of the answer ({name}) differ"); ok = False
    # Every pruned run's row is an exhaustive row.
    sb = {tuple(sorted(r.items())) for r in pb}
    if any(tuple(sorted(r.items())) not in sb for r in pa):
        print(f"FAIL [{q}]: plans.csv has a row --exhaustive lacks"); ok = False
sys.exit(0 if ok else 1)
PY
done
# A frontier study (its searches share simulations through SearchRun): the
# same table, only the reuse line (simulation counts) and the command differ.
f="frontier --gpus 64,128 --days 7,30 --gpu a100-80gb,h100-sxm --threads 2"
norm_f='/Reuse: /d; /^Command: /d'
# shellcheck disable=SC2086
"$bin" $f > "$work/frontier-pruned.md"
# shellcheck disable=SC2086
"$bin" $f --exhaustive > "$work/frontier-exhaustive.md"
if ! diff <(sed -E "$norm_f" "$work/frontier-pruned.md") <(sed -E "$norm_f" "$work/frontier-exhaustive.md"); then
  echo "FAIL [$f]: the frontier differs"; fail=1
fi
exit $fail
