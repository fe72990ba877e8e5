#!/usr/bin/env bash
# Issue 30: the pruned search answers exactly as --exhaustive.
# With --exact-rows (every model's row optimised) the whole report is the
# exhaustive one; by default (models that cannot change the answer stop at
# their first feasible plan) the answer, its plans, its Pareto front and
# every optimised row are, and each stopped row is feasible in both with
# days at least the exhaustive row's (check_default below).
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
  "$bin" $q --threads 2 --exact-rows --out "$a" >/dev/null
  # shellcheck disable=SC2086
  "$bin" $q --threads 2 --exhaustive --out "$b" >/dev/null
  # shellcheck disable=SC2086
  "$bin" $q --threads 2 --out "$work/q$k-default" >/dev/null
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
if p["pruned_answer"] != 0 or any(not c["optimised"] for c in ja["candidates"]):
    print(f"FAIL [{q}]: --exact-rows stopped a model early"); ok = False
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
  python3 - "$work/q$k-default" "$b" "$q" <<'PY' || fail=1
# The default search against --exhaustive: the answer, its plans and Pareto
# front, and every optimised row identical; a stopped row feasible in both,
# its plan simulated by both, its days at least the exhaustive row's.
import csv, json, sys
a, b, q = sys.argv[1:4]
ja, jb = (json.load(open(d + "/result.json")) for d in (a, b))
ok = True
def drop(c):
    return {k: v for k, v in c.items() if k not in ("plan_counts",)}
if ja["best"] != jb["best"] or ja["pareto_front"] != jb["pareto_front"]:
    print(f"FAIL [{q}]: default: the answer or its Pareto front differs"); ok = False
p = ja["pruning"]
if ja["plans_evaluated"] + p["pruned_deadline"] + p["pruned_incumbent"] + p["pruned_answer"] != jb["plans_evaluated"]:
    print(f"FAIL [{q}]: default: simulated + pruned != exhaustive plans"); ok = False
ca, cb = ja["candidates"], jb["candidates"]
if [c["architecture"] for c in ca] != [c["architecture"] for c in cb]:
    print(f"FAIL [{q}]: default: other candidate models"); ok = False
stopped = 0
for x, y in zip(ca, cb):
    if x["optimised"]:
        if drop(x) != drop(y):
            print(f"FAIL [{q}]: default: optimised row {x['architecture']['name']} differs"); ok = False
        continue
    stopped += 1
    if not (x["feasible"] and y["feasible"] and x["days"] >= y["days"] and x["loss"] == y["loss"]):
        print(f"FAIL [{q}]: default: stopped row {x['architecture']['name']} is not a feasible upper bound"); ok = False
    # Only a model that ranks below the answer (smaller, or a higher loss) may stop.
    bb = jb["best"]
    if bb is None or not (x["params"] < bb["params"] or x["loss"] > bb["loss"]):
        print(f"FAIL [{q}]: default: stopped row {x['architecture']['name']} does not rank below the answer"); ok = False
if (stopped > 0) != (p["pruned_answer"] > 0):
    print(f"FAIL [{q}]: default: stopped rows and pruned_answer disagree"); ok = False
# The default's plans are exhaustive plans (simulated alike).
pa, pb = (list(csv.DictReader(open(d + "/plans.csv"))) for d in (a, b))
sb = {tuple(sorted(r.items())) for r in pb}
if any(tuple(sorted(r.items())) not in sb for r in pa):
    print(f"FAIL [{q}]: default: plans.csv has a row --exhaustive lacks"); ok = False
print(f"[{q}] default: {ja['plans_evaluated']} simulated, {stopped} rows stopped at a first feasible plan")
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
