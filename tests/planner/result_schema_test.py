#!/usr/bin/env python3
"""result.json against its documented schema (reports/schema/result.schema.json),
and candidates.csv / plans.csv as raw numbers (issue 12, "outputs are data").

    result_schema_test.py LLMPLAN SCHEMA

Runs the planner a few ways (the automatic GPT grid with --out, a Llama
grid, a pinned model, an infeasible budget) and checks every document; exits
non-zero with one line per failure."""
import csv
import io
import json
import subprocess
import sys
import tempfile

import jsonschema

TEXT_COLUMNS = {"name", "activation", "positions", "plan", "recompute", "why", "caveats", "precision",
                "loss_vs_answer"}
failures = []


def run(llmplan, *args):
    p = subprocess.run([llmplan, *args], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        failures.append(f"llmplan {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def check_csv(name, text, required):
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        failures.append(f"{name}: no rows")
        return
    missing = [c for c in required if c not in rows[0]]
    if missing:
        failures.append(f"{name}: missing columns {missing}")
    for i, row in enumerate(rows):
        for col, cell in row.items():
            if col in TEXT_COLUMNS or cell == "":
                continue
            try:
                float(cell)
            except ValueError:
                failures.append(f"{name} row {i + 1} column {col}: '{cell}' is not a number")
                return


def main():
    llmplan, schema_path = sys.argv[1], sys.argv[2]
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)

    def validate(name, doc):
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:5]:
            failures.append(f"{name}: {'/'.join(map(str, e.path))}: {e.message}")
        return doc

    # The schema is not vacuous: a document without schema_version fails.
    if validator.is_valid({}):
        failures.append("the schema accepts an empty object")

    with tempfile.TemporaryDirectory() as out:
        run(llmplan, "--gpus", "64", "--days", "2", "--out", out)
        with open(f"{out}/result.json") as f:
            doc = validate("gpt result.json", json.load(f))
        if doc.get("best") is None or doc.get("assumptions", {}).get("family") != "gpt":
            failures.append("gpt result.json: no answer or family not gpt")
        elif doc["candidates"] and doc["best"] not in doc["candidates"]:
            failures.append("gpt result.json: best is not among the candidates")
        with open(f"{out}/candidates.csv") as f:
            check_csv("candidates.csv", f.read(),
                      ["params", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_length",
                       "vocab_size", "activation", "iteration_s", "days", "cost_usd", "mfu", "why",
                       "experts", "active_params", "precision", "cp", "ep", "etp", "mfu_precision_peak",
                       "model_tflops_per_gpu"])
        with open(f"{out}/plans.csv") as f:
            check_csv("plans.csv", f.read(), ["params", "tp", "pp", "dp", "iteration_s", "mfu", "days", "cost_usd",
                                              "experts", "active_params", "precision", "cp", "ep", "etp",
                                              "mfu_precision_peak", "model_tflops_per_gpu"])
        with open(f"{out}/report.md") as f:
            report = f.read()
        for needle in ("![Training days vs model size](days_vs_params.svg)", "## Plan notation",
                       "Command: `llmplan --gpus 64 --days 2 --out"):
            if needle not in report:
                failures.append(f"report.md lacks '{needle}'")
        if "<svg" in report:
            failures.append("report.md inlines an SVG")

    # Issue 29: the training objectives carry their inputs in "training_objective".
    for args, key in ((["--tokens", "200B"], "tokens"), (["--unique-tokens", "5B"], "data_constrained"),
                      (["--inference-tokens", "1e12", "--serving-mfu", "0.3"], "inference")):
        name = " ".join(args)
        doc = validate(name, json.loads(run(llmplan, "--gpus", "64", "--days", "2", *args, "--format", "json")))
        to = doc.get("training_objective") or {}
        if to.get(key) is None or doc.get("best") is None:
            failures.append(f"{name}: no answer or training_objective lacks {key}")
        if key == "inference" and "lifetime_saving_usd" not in to.get("inference", {}):
            failures.append(f"{name}: no lifetime_saving_usd with --serving-mfu")

    doc = validate("llama", json.loads(run(llmplan, "--family", "llama", "--gpus", "256", "--days", "10",
                                           "--gpu", "h100-sxm", "--format", "json")))
    arch = (doc.get("best") or {}).get("architecture", {})
    if arch.get("kv_heads") != 8 or arch.get("activation") != "swiglu" or arch.get("vocab") != 128256 \
            or arch.get("seq") != 8192 or arch.get("tied_embeddings") is not False:
        failures.append(f"llama: the answer's architecture is not Llama-style: {arch}")

    # Issue 25: an H100 answer in FP8 reports its MFU three ways, consistently:
    # against the BF16 peak (mfu), the FP8 peak (half of it on H100: 989 vs
    # 1,979 TFLOP/s) and as model TFLOP/s per GPU (mfu x 989).
    best = doc.get("best") or {}
    plan = best.get("plan") or {}
    for key in ("precision", "cp", "ep", "etp"):
        if key not in plan:
            failures.append(f"llama: best.plan lacks {key}")
    if plan.get("precision") == "fp8":
        if abs(best["mfu_precision_peak"] - best["mfu"] * 989 / 1979) > 1e-9:
            failures.append(f"llama: fp8 mfu_precision_peak {best['mfu_precision_peak']} is not mfu x 989/1979")
    elif plan and abs(best["mfu_precision_peak"] - best["mfu"]) > 1e-12:
        failures.append("llama: a 16-bit plan's mfu_precision_peak differs from mfu")
    if best and abs(best["model_tflops_per_gpu"] - best["mfu"] * 989) > 1e-6:
        failures.append(f"llama: model_tflops_per_gpu {best.get('model_tflops_per_gpu')} is not mfu x 989")
    if best and (best.get("experts") != 0 or best.get("active_params") != best.get("params")):
        failures.append("llama: a dense answer has experts or fewer active parameters")
    with tempfile.TemporaryDirectory() as out:
        run(llmplan, "--family", "llama", "--gpus", "256", "--days", "10", "--gpu", "h100-sxm", "--out", out)
        with open(f"{out}/plans.csv") as f:
            rows = list(csv.DictReader(f))
        if {r["precision"] for r in rows} != {"bf16", "fp8"}:
            failures.append(f"llama plans.csv: precisions {sorted({r['precision'] for r in rows})}, not bf16 and fp8")
        for r in rows:
            if r["precision"] == "fp8" and abs(float(r["mfu_precision_peak"]) - float(r["mfu"]) * 989 / 1979) > 1e-6:
                failures.append(f"llama plans.csv: fp8 row mfu_precision_peak {r['mfu_precision_peak']} vs mfu {r['mfu']}")
                break

    doc = validate("pinned", json.loads(run(llmplan, "--model", "llama3-70b", "--gpus", "1024", "--days", "30",
                                            "--gpu", "h100-sxm", "--format", "json")))
    if not doc.get("pinned") or (doc.get("best") or {}).get("architecture", {}).get("name") != "llama3-70b":
        failures.append("pinned: best is not the pinned llama3-70b")

    doc = validate("moe", json.loads(run(llmplan, "--family", "moe", "--gpus", "64", "--days", "5",
                                         "--gpu", "h100-sxm", "--format", "json")))
    best = doc.get("best") or {}
    dense = (doc.get("dense_comparison") or {}).get("best") or {}
    if not best.get("architecture", {}).get("experts") or best.get("active_params", 0) >= best.get("params", 0):
        failures.append(f"moe: the answer is not an MoE model: {best.get('architecture')}")
    elif best["architecture"]["experts"] % best["plan"]["ep"] != 0:
        failures.append("moe: the answer's ep does not divide its experts")
    elif best.get("experts") != best["architecture"]["experts"]:
        failures.append("moe: best.experts differs from the architecture's")
    if not dense or dense.get("architecture", {}).get("experts", 0) != 0:
        failures.append("moe: no dense answer in dense_comparison")

    doc = validate("over budget", json.loads(run(llmplan, "--gpus", "64", "--days", "2", "--budget-usd", "1",
                                                 "--format", "json")))
    if doc.get("best") is not None:
        failures.append("over budget: an answer within a 1-dollar budget")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
