# PyTorch reference measurements of mixture-of-experts kernels on one GPU, beside llmplan-profile's
# MoE kernel set (data/profiles/README.md, "h100-sxm-2026-11-25-moe.json").
# Run on the GPU:  OUT=DIR python3 moe_reference.py [--quick] [--sections NAME,NAME]
# Prints one line per figure and writes $OUT/moe_reference.json. Sections: ceilings (8192^3 GEMM,
# 2 GiB copy), grouped expert GEMMs (torch.bmm = cuBLAS strided-batched, torch._grouped_mm balanced
# and skewed), routing (router GEMM, softmax/sigmoid + top-k), token permutation and combine,
# attention variants (SDPA flash/cuDNN at head dim 64 vs 128, flex attention with a 128-token
# sliding window and with attention sinks, the MLA shape), a dense small-m GEMM sweep, and (#27)
# expert_loop: the per-expert cost of one GEMM per expert against one strided-batched GEMM.
# The grouped-GEMM grid follows the same rules as `llmplan-profile --moe` (profiler/moe_plan.h).
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

import timing
from timing import error_line, gpu_env, p, time_batched

OUT = os.environ.get("OUT", "/tmp/out")
QUICK = "--quick" in sys.argv
dev = torch.device("cuda")
bf16 = torch.bfloat16
res = {"kind": "llmplan-moe-pytorch-reference", "format_version": 1, "env": {}, "ceilings": {},
       "grouped_gemm": [], "routing": [], "permutation": [], "attention": [], "dense_small_m": [],
       "errors": []}
PEAK = 989e12  # H100 SXM dense bf16

# name, hidden, experts, top-k, expert FFN, score function (presets/models.json; DeepSeek-V3 config)
MODELS = [
    ("qwen3-30b-a3b", 2048, 128, 8, 768, "softmax"),
    ("qwen3-235b-a22b", 4096, 128, 8, 1536, "softmax"),
    ("gpt-oss-120b", 2880, 128, 4, 2880, "softmax"),
    ("mixtral-8x7b", 4096, 8, 2, 14336, "softmax"),
    ("deepseek-v3", 7168, 256, 8, 2048, "sigmoid"),
]
LOCAL_EXPERTS = [1, 2, 4, 8, 16, 32]
M_SWEEP = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
TOKENS = [4096, 8192]
MAX_ROWS = 65536  # local experts x m
if QUICK:
    MODELS, LOCAL_EXPERTS, M_SWEEP, TOKENS = MODELS[:1], [4], [64, 1024], [4096]


def err(where, ex):
    msg = error_line(where, ex)
    res["errors"].append(msg)
    p("ERROR", msg)


def time_fn(fn, warmup=3, reps=15):
    """Median/min/max seconds per call. Short ops run `inner` times back to back between two
    events (launch gaps hidden as in a training step); each repetition is separated by a sync."""
    return time_batched(fn, warmup, reps)


def env():
    e = res["env"]
    gpu_env(e, cudnn=True)
    e["has_grouped_mm"] = hasattr(torch, "_grouped_mm")
    e["argv"] = sys.argv
    e["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    p("ENV", json.dumps(e))


def ceilings():
    timing.ceilings(time_fn, dev, res["ceilings"])
    p("CEILINGS", json.dumps(res["ceilings"]))


def skewed(m, e):
    """Unequal tokens per expert with the same total e*m: m_i = m*(2i+1)/e rounded to the nearest
    multiple of 16 (_grouped_mm's weight gradient needs 16-byte group boundaries), the difference
    to the last expert (max/mean ~2). Same rule as llmplan-profile (moe_plan.cc, skewed_split)."""
    ms = [(m * (2 * i + 1) + e * 8) // (e * 16) * 16 for i in range(e)]
    ms[-1] += e * m - sum(ms)
    return ms


def layouts(*fns):
    """The first of fns (the same GEMM with other operand layouts) that runs; raises the first
    error when none does. _grouped_mm's layout rules differ between PyTorch releases."""
    first = None
    for fn in fns:
        try:
            fn()
            torch.cuda.synchronize()
            return fn
        except Exception as ex:  # noqa: BLE001
            first = first or ex
    raise first


def grid():
    out = []
    for name, h, E, k, f, _ in MODELS:
        for e in LOCAL_EXPERTS:
            if e > E or E % e:
                continue
            ms = set(mm for mm in M_SWEEP if e * mm <= MAX_ROWS)
            for T in TOKENS:
                if (T * k) % e == 0 and T * k // e * e <= MAX_ROWS:
                    ms.add(T * k // e)
            for m in sorted(ms):
                out.append((name, h, E, k, f, e, m))
    return out


def grouped_gemms():
    has_gmm = hasattr(torch, "_grouped_mm")
    for name, h, E, k, f, e, m in grid():
        for gemm, K, N in (("fc1", h, 2 * f), ("fc2", f, h)):
            flops = 2.0 * e * m * K * N
            x = torch.randn(e, m, K, device=dev, dtype=bf16)
            w = torch.randn(e, K, N, device=dev, dtype=bf16)  # Megatron GroupedMLP weight layout
            dy = torch.randn(e, m, N, device=dev, dtype=bf16)
            variants = [("torch_bmm", "balanced", "fwd", lambda: torch.bmm(x, w)),
                        ("torch_bmm", "balanced", "bwd_data", lambda: torch.bmm(dy, w.transpose(1, 2))),
                        ("torch_bmm", "balanced", "bwd_weight", lambda: torch.bmm(x.transpose(1, 2), dy))]
            if has_gmm:
                x2, dy2 = x.view(e * m, K), dy.view(e * m, N)
                wt = w.transpose(1, 2).contiguous().transpose(1, 2)  # [e, K, N], K-contiguous
                x2t = x2.t().contiguous().t()
                for split in (["balanced"] if e == 1 or m % 16 else ["balanced", "skewed"]):
                    ms = [m] * e if split == "balanced" else skewed(m, e)
                    offs = torch.tensor(ms, device=dev, dtype=torch.int32).cumsum(0, dtype=torch.int32)
                    variants += [
                        ("torch_grouped_mm", split, "fwd", (
                            lambda offs=offs: torch._grouped_mm(x2, wt, offs=offs),
                            lambda offs=offs: torch._grouped_mm(x2, w, offs=offs))),
                        ("torch_grouped_mm", split, "bwd_data", (
                            lambda offs=offs: torch._grouped_mm(dy2, w.transpose(1, 2), offs=offs),
                            lambda offs=offs: torch._grouped_mm(dy2, wt.transpose(1, 2), offs=offs))),
                        ("torch_grouped_mm", split, "bwd_weight", (
                            lambda offs=offs: torch._grouped_mm(x2t.t(), dy2, offs=offs),
                            lambda offs=offs: torch._grouped_mm(
                                x2t.t(), dy2.t().contiguous().t(), offs=offs))),
                    ]
            for impl, split, pas, fn in variants:
                row = {"model": name, "gemm": gemm, "pass": pas, "impl": impl, "split": split,
                       "local_experts": e, "m": m, "n": N, "k": K, "flops": flops}
                try:
                    row.update(time_fn(layouts(*fn) if isinstance(fn, tuple) else fn, 3, 10 if flops > 1e12 else 15))
                except Exception as ex:  # noqa: BLE001
                    err("grouped_gemm %s %s %s e=%d m=%d %s %s" % (name, gemm, impl, e, m, split, pas), ex)
                    continue
                row["tflops"] = flops / row["time_s"] / 1e12
                res["grouped_gemm"].append(row)
            p("GGEMM %-16s %s e=%-3d m=%-6d %s" % (name, gemm, e, m, " ".join(
                "%s/%s/%s=%.0f" % (r["impl"][6:10], r["split"][:4], r["pass"][:5], r["tflops"])
                for r in res["grouped_gemm"][-len(variants):] if r["m"] == m and r["gemm"] == gemm)))
            del x, w, dy
    torch.cuda.empty_cache()


def routing_and_permutation():
    seen = set()
    for name, h, E, k, f, score in MODELS:
        for T in TOKENS:
            key = (h, E, k, T, score)
            if key in seen:
                continue
            seen.add(key)
            x = torch.randn(T, h, device=dev, dtype=bf16)
            wr = torch.randn(E, h, device=dev, dtype=bf16) * 0.02
            dlog = torch.randn(T, E, device=dev, dtype=bf16)
            base = {"model": name, "tokens": T, "experts": E, "top_k": k, "hidden": h, "score": score}
            for pas, fn in (("fwd", lambda: F.linear(x, wr)), ("bwd_data", lambda: torch.mm(dlog, wr)),
                            ("bwd_weight", lambda: torch.mm(dlog.t(), x))):
                r = dict(base, op="router_gemm", **{"pass": pas}, flops=2.0 * T * h * E)
                r.update(time_fn(fn))
                res["routing"].append(r)
            logits = (x @ wr.t()).float().requires_grad_()

            def score_topk():
                s = torch.softmax(logits, -1) if score == "softmax" else torch.sigmoid(logits)
                v, i = torch.topk(s, k, dim=-1)
                if score == "sigmoid":
                    v = v / v.sum(-1, keepdim=True)
                return v, i

            r = dict(base, op="score_topk", **{"pass": "fwd"}, bytes=T * E * 4 + T * k * 12)
            r.update(time_fn(lambda: score_topk()))
            res["routing"].append(r)
            v, idx = score_topk()
            gv = torch.randn_like(v)
            r = dict(base, op="score_topk", **{"pass": "bwd"}, bytes=T * E * 8 + T * k * 12)
            r.update(time_fn(lambda: torch.autograd.grad(v, logits, gv, retain_graph=True)))
            res["routing"].append(r)
            p("ROUTE %-16s T=%d E=%d k=%d %s" % (name, T, E, k, " ".join(
                "%s/%s=%.1fus" % (q["op"], q["pass"], q["time_s"] * 1e6) for q in res["routing"][-5:])))

            # Permutation as Megatron's index_select/scatter_add path: tokens sorted by expert.
            probs = v.detach().to(bf16)
            flat = idx.reshape(-1)
            order = torch.argsort(flat, stable=True)
            src = (order // k).contiguous()  # token of each permuted row
            xp = x.detach().clone().requires_grad_()
            rows = T * k
            eb = 2 * h

            def permute():
                return xp.index_select(0, src)

            perm = permute()
            g_perm = torch.randn_like(perm)
            eo = torch.randn(rows, h, device=dev, dtype=bf16).requires_grad_()
            pr = probs.reshape(-1)[order].clone().requires_grad_()

            def unpermute():
                return torch.zeros(T, h, device=dev, dtype=bf16).index_add_(0, src, eo * pr[:, None])

            y = unpermute()
            gy = torch.randn_like(y)
            ops = [("permute", "fwd", permute, 2 * rows * eb),
                   ("permute", "bwd", lambda: torch.autograd.grad(perm, xp, g_perm, retain_graph=True),
                    rows * eb + T * eb),
                   ("unpermute", "fwd", unpermute, rows * eb + T * eb),
                   ("unpermute", "bwd", lambda: torch.autograd.grad(y, (eo, pr), gy, retain_graph=True),
                    T * eb + 2 * rows * eb)]
            for op, pas, fn, nbytes in ops:
                r = dict(base, op=op, **{"pass": pas}, rows=rows, bytes=nbytes)
                r.update(time_fn(fn))
                r["gbps"] = nbytes / r["time_s"] / 1e9
                res["permutation"].append(r)
            p("PERM  %-16s T=%d k=%d h=%d %s" % (name, T, k, h, " ".join(
                "%s/%s=%.1fus,%.0fGB/s" % (q["op"], q["pass"], q["time_s"] * 1e6, q["gbps"])
                for q in res["permutation"][-4:])))


def attn_pairs(s, window):
    """Query-key pairs a causal (window=None) or sliding-window (keys q-window+1..q) mask keeps."""
    if window is None or window >= s:
        return s * (s + 1) // 2
    return window * (window + 1) // 2 + (s - window) * window


def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    try:
        import torch._dynamo
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        # One compilation per shape and mask: more than dynamo's default limit of 8.
        for knob in ("recompile_limit", "cache_size_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 64)
        flex = torch.compile(flex_attention, dynamic=False)
    except Exception as ex:  # noqa: BLE001
        err("flex_attention import", ex)
        flex = None

    def run(label, b, hq, hkv, s, dqk, dv, impl, window=None, sinks=False):
        q = torch.randn(b, hq, s, dqk, device=dev, dtype=bf16, requires_grad=True)
        kk = torch.randn(b, hkv, s, dqk, device=dev, dtype=bf16, requires_grad=True)
        vv = torch.randn(b, hkv, s, dv, device=dev, dtype=bf16, requires_grad=True)
        sink = torch.randn(hq, device=dev, dtype=torch.float32, requires_grad=True)
        pairs = attn_pairs(s, window)
        flops_f = 2.0 * b * hq * pairs * (dqk + dv)
        row = {"label": label, "impl": impl, "batch": b, "heads": hq, "kv_heads": hkv, "seq": s,
               "head_dim_qk": dqk, "head_dim_v": dv, "window": window, "sinks": sinks,
               "pairs": pairs, "flops_fwd": flops_f, "flops_bwd": 2.5 * flops_f}
        if impl.startswith("sdpa"):
            be = {"sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION,
                  "sdpa_efficient": SDPBackend.EFFICIENT_ATTENTION}[impl]

            def fwd():
                with sdpa_kernel([be]):
                    return F.scaled_dot_product_attention(q, kk, vv, is_causal=True,
                                                          enable_gqa=hq != hkv)
        else:
            w = window

            def mask(b_, h_, qi, ki):
                return (qi >= ki) & (qi - ki < w) if w is not None else qi >= ki

            bm = create_block_mask(mask, None, None, s, s, device="cuda")

            def fwd():
                if not sinks:
                    return flex(q, kk, vv, block_mask=bm, enable_gqa=hq != hkv)
                # Sink logit per head in the softmax denominator: o * sigmoid(lse - sink).
                o, lse = flex(q, kk, vv, block_mask=bm, enable_gqa=hq != hkv, return_lse=True)
                return o * torch.sigmoid(lse - sink[None, :, None])[..., None].to(o.dtype)
        try:
            out = fwd()
            go = torch.randn_like(out)
            tf = time_fn(fwd, 3, 10)
            params = (q, kk, vv, sink) if sinks else (q, kk, vv)
            tb = time_fn(lambda: torch.autograd.grad(out, params, go, retain_graph=True), 3, 10)
        except Exception as ex:  # noqa: BLE001
            err("attention %s %s" % (label, impl), ex)
            return
        row["fwd"] = tf
        row["bwd"] = tb
        row["fwd_tflops"] = flops_f / tf["time_s"] / 1e12
        row["bwd_tflops"] = 2.5 * flops_f / tb["time_s"] / 1e12
        res["attention"].append(row)
        p("ATTN %-28s %-14s fwd %.3f ms %.0f TF/s  bwd %.3f ms %.0f TF/s" % (
            label, impl, tf["time_s"] * 1e3, row["fwd_tflops"], tb["time_s"] * 1e3, row["bwd_tflops"]))
        del q, kk, vv, out
        torch.cuda.empty_cache()

    seqs = [4096] if QUICK else [4096, 8192]
    for s in seqs:
        b = 8192 // s * (1 if QUICK else 2)
        for label, hq, hkv, d in (("mha_64x64", 64, 64, 64), ("mha_32x128", 32, 32, 128),
                                  ("gqa_64x64_kv8", 64, 8, 64), ("gqa_32x128_kv8", 32, 8, 128)):
            for impl in ("sdpa_flash", "sdpa_cudnn"):
                run("%s_s%d" % (label, s), b, hq, hkv, s, d, d, impl)
            if flex is not None and label.startswith("gqa_64"):
                run("%s_s%d" % (label, s), b, hq, hkv, s, d, d, "flex_causal")
                run("%s_s%d_w128" % (label, s), b, hq, hkv, s, d, d, "flex_window", window=128)
                run("%s_s%d_w128_sinks" % (label, s), b, hq, hkv, s, d, d, "flex_window", window=128,
                    sinks=True)
                run("%s_s%d_sinks" % (label, s), b, hq, hkv, s, d, d, "flex_causal", sinks=True)
    # DeepSeek-V3 MLA attention shape: 128 heads, q/k head dim 192, v head dim 128.
    for impl in ("sdpa_cudnn", "sdpa_flash", "sdpa_efficient"):
        run("mla_128x192v128_s4096", 1, 128, 128, 4096, 192, 128, impl)
    if flex is not None:
        run("mla_128x192v128_s4096", 1, 128, 128, 4096, 192, 128, "flex_causal")


def dense_small_m():
    for nk in ([2048] if QUICK else [2048, 4096, 8192]):
        for n in ([2048] if QUICK else [2048, 4096, 8192]):
            w = torch.randn(n, nk, device=dev, dtype=bf16)
            for m in [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]:
                a = torch.randn(m, nk, device=dev, dtype=bf16)
                t = time_fn(lambda: F.linear(a, w), 3, 15)
                row = {"m": m, "n": n, "k": nk, "flops": 2.0 * m * n * nk, **t}
                row["tflops"] = row["flops"] / t["time_s"] / 1e12
                res["dense_small_m"].append(row)
            p("DENSE n=%d k=%d %s" % (n, nk, " ".join("m%d=%.0f" % (r["m"], r["tflops"])
                                                      for r in res["dense_small_m"][-9:])))


def expert_loop():
    """Per-expert cost of a grouped GEMM run as one GEMM per expert (#27): balanced tokens, the
    same FC1 / FC2 shapes as one torch.bmm (cuBLAS strided-batched) and as a loop of torch.mm over
    the e local experts (each expert's own GEMM, as Transformer Engine's GroupedLinear issues them
    without a grouped kernel), and torch._grouped_mm. (loop - bmm) / e is the added time per expert
    (GPU time plus any launch gap the GPU waits for: an upper bound of a C++ loop's)."""
    res.setdefault("expert_loop", [])
    for name, h, E, k, f, _ in MODELS:
        for e in [x for x in [2, 4, 8, 16] if x <= E]:
            for m in sorted({128, 1024, 4096 * k // e}):
                if e * m > MAX_ROWS:
                    continue
                for gemm, (kk, n) in (("fc1", (h, 2 * f)), ("fc2", (f, h))):
                    a = torch.randn(e, m, kk, device=dev, dtype=bf16)
                    w = torch.randn(e, kk, n, device=dev, dtype=bf16)
                    out = torch.empty(e, m, n, device=dev, dtype=bf16)
                    tb = time_fn(lambda: torch.bmm(a, w, out=out), 3, 10)
                    outs = [out[i] for i in range(e)]
                    ai = [a[i] for i in range(e)]
                    wi = [w[i] for i in range(e)]

                    def loop():
                        for i in range(e):
                            torch.mm(ai[i], wi[i], out=outs[i])
                    tl = time_fn(loop, 3, 10)
                    row = {"model": name, "gemm": gemm, "local_experts": e, "m": m, "k": kk, "n": n,
                           "flops": 2.0 * e * m * kk * n, "bmm_time_s": tb["time_s"],
                           "loop_time_s": tl["time_s"],
                           "per_expert_extra_s": (tl["time_s"] - tb["time_s"]) / e}
                    if hasattr(torch, "_grouped_mm"):
                        try:
                            offs = torch.arange(m, e * m + 1, m, device=dev, dtype=torch.int32)
                            a2 = a.reshape(e * m, kk)
                            wt = w.transpose(-2, -1).contiguous().transpose(-2, -1)
                            fn = layouts(lambda: torch._grouped_mm(a2, w, offs=offs),
                                         lambda: torch._grouped_mm(a2, wt, offs=offs))
                            row["grouped_mm_time_s"] = time_fn(fn, 3, 10)["time_s"]
                        except Exception as ex:  # noqa: BLE001
                            err("expert_loop grouped_mm %s e=%d m=%d" % (name, e, m), ex)
                    res["expert_loop"].append(row)
                    p("LOOP %-16s %s e=%2d m=%5d bmm %.1f us loop %.1f us (+%.2f us/expert) "
                      "grouped_mm %s" % (name, gemm, e, m, tb["time_s"] * 1e6, tl["time_s"] * 1e6,
                                         row["per_expert_extra_s"] * 1e6,
                                         "%.1f us" % (row["grouped_mm_time_s"] * 1e6)
                                         if "grouped_mm_time_s" in row else "-"))
                    del a, w, out, outs, ai, wi


def main():
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    env()
    sections = (ceilings, grouped_gemms, routing_and_permutation, attention, dense_small_m,
                expert_loop)
    if "--sections" in sys.argv:  # e.g. --sections ceilings,expert_loop
        wanted = sys.argv[sys.argv.index("--sections") + 1].split(",")
        sections = tuple(f for f in sections if f.__name__ in wanted)
    for section in sections:
        p("SECTION %s %.1f s" % (section.__name__, timing.run_section(section, err)))
        with open(os.path.join(OUT, "moe_reference.json"), "w") as fh:
            json.dump(res, fh, indent=1)
    res["env"]["wall_s"] = time.time() - t0
    with open(os.path.join(OUT, "moe_reference.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    p("DONE %.1f s, %d errors" % (time.time() - t0, len(res["errors"])))


if __name__ == "__main__":
    main()
