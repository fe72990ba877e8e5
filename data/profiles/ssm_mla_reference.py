# PyTorch reference measurements for issue #27 on one GPU (data/profiles/README.md,
# "h100-sxm-2026-11-26-ssm-mla.pytorch.json"): the pieces of a Mamba-2 (SSD) layer at Nemotron-H /
# Nemotron 3 shapes, the pieces of DeepSeek-V3's multi-head latent attention (MLA) at TP 1/2/4/8 and
# its MTP concat projection, and Llama 4 Scout-style chunked attention against full causal.
# Run on the GPU:  OUT=DIR python3 ssm_mla_reference.py [--quick]
# Prints one line per figure and writes $OUT/ssm_mla_reference.json after every section.
#
# The SSD chunked scan here is this script's own eager-PyTorch implementation of the chunked
# algorithm of Dao & Gu 2024 ("Transformers are SSMs", arXiv:2405.21060, section 6): an UPPER BOUND
# on what the production kernel (mamba_ssm's fused Triton `mamba_chunk_scan_combined`, which
# Megatron-Core's MambaMixer calls) costs. mamba_ssm is used instead when it is installed.
import json
import math
import os
import sys
import time
from importlib import metadata

import torch
import torch.nn.functional as F

import timing
from timing import error_line, gpu_env, p, time_batched

OUT = os.environ.get("OUT", "/tmp/out")
QUICK = "--quick" in sys.argv
BUDGET_S = float(os.environ.get("BUDGET_S", "330"))  # optional parts are skipped past this
T0 = time.time()
dev = torch.device("cuda")
bf16 = torch.bfloat16
PEAK_FLOPS = 989e12  # H100 SXM dense bf16 (NVIDIA H100 datasheet)
PEAK_BYTES_S = 3.35e12  # H100 SXM HBM3 (NVIDIA H100 datasheet)
res = {"kind": "llmplan-ssm-mla-pytorch-reference", "format_version": 1, "env": {},
       "conventions": {}, "ceilings": {}, "ssd_check": [], "mamba": [], "mla": [],
       "chunked_attention": [], "compiled": [], "errors": []}

# Mamba-2 mixer shapes (Megatron-Bridge src/megatron/bridge/models/nemotronh/nemotron_h_provider.py:
# NemotronHModelProvider: mamba_num_groups 8, mamba_head_dim 64; per model hidden_size,
# mamba_num_heads, mamba_state_dim). d_inner = heads * head_dim; conv kernel 4 and chunk 128 are
# Megatron-Core MambaMixer's defaults (d_conv=4, chunk_size=128), also the HF configs' conv_kernel 4,
# chunk_size 128. Nemotron 3 Super's mixer (hidden 4096, 128 heads x 64, state 128) equals 8B's.
MAMBA = [
    # name, d_model, heads, head_dim, state, groups
    ("nemotron-3-nano", 2688, 64, 64, 128, 8),
    ("nemotron-h-8b", 4096, 128, 64, 128, 8),
    ("nemotron-h-56b", 8192, 256, 64, 256, 8),
]
CONV_K = 4
CHUNK = 128
# DeepSeek-V3 config.json: hidden_size 7168, num_attention_heads 128, q_lora_rank 1536,
# kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128.
MLA = dict(h=7168, heads=128, q_rank=1536, kv_rank=512, d_nope=128, d_rope=64, d_v=128)
# Llama 4 Scout text_config: hidden 5120, 40 heads, 8 kv heads, head_dim 128,
# attention_chunk_size 8192, no_rope_layers [1,1,1,0]*12 (3 chunked RoPE layers, 1 global NoPE).
SCOUT = dict(heads=40, kv_heads=8, d=128, chunk=8192)


def elapsed():
    return time.time() - T0


def err(where, ex):
    msg = error_line(where, ex)
    res["errors"].append(msg)
    p("ERROR", msg)


def save():
    res["env"]["wall_s"] = elapsed()
    with open(os.path.join(OUT, "ssm_mla_reference.json"), "w") as fh:
        json.dump(res, fh, indent=1)


def time_fn(fn, warmup=3, reps=12):
    """Median/min/max seconds per call, CUDA events. Short ops run `inner` times back to back
    between two events (launch gaps hidden as in a training step); each repetition is separated
    by a sync. Same method as moe_reference.py."""
    return time_batched(fn, warmup, reps)


def rates(row, t, flops=None, nbytes=None):
    """Adds time, TFLOP/s and GB/s (and their share of the datasheet peaks) to row."""
    row.update(t)
    if flops:
        row["flops"] = flops
        row["tflops"] = flops / t["time_s"] / 1e12
        row["pct_peak_flops"] = 100.0 * flops / t["time_s"] / PEAK_FLOPS
    if nbytes:
        row["bytes"] = nbytes
        row["gbps"] = nbytes / t["time_s"] / 1e9
        row["pct_peak_bw"] = 100.0 * nbytes / t["time_s"] / PEAK_BYTES_S
    return row


def fmt(row):
    s = "%.1fus" % (row["time_s"] * 1e6)
    if "tflops" in row:
        s += " %.0fTF/s" % row["tflops"]
    if "gbps" in row:
        s += " %.0fGB/s" % row["gbps"]
    return s


def env():
    e = res["env"]
    pr = gpu_env(e, cudnn=True)
    e["l2_bytes"] = getattr(pr, "L2_cache_size", None)
    e["argv"] = sys.argv
    e["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    e["python"] = sys.version.split()[0]
    pk = {}
    for mod, dist in (("triton", "triton"), ("flash_attn", "flash-attn"),
                      ("flash_attn_interface", "flash-attn-3"), ("mamba_ssm", "mamba-ssm"),
                      ("causal_conv1d", "causal-conv1d"),
                      ("transformer_engine", "transformer-engine"),
                      (None, "nvidia-cublas"), (None, "nvidia-cudnn-cu13")):
        try:
            if mod:
                m = __import__(mod)
                pk[dist] = getattr(m, "__version__", None) or metadata.version(dist)
            else:
                pk[dist] = metadata.version(dist)
        except Exception as ex:  # noqa: BLE001
            pk[dist] = "not installed (%s: %s)" % (type(ex).__name__, str(ex).splitlines()[0][:120]
                                                   if str(ex) else "")
    e["packages"] = pk
    p("ENV", json.dumps(e))
    res["conventions"] = {
        "peak_flops": PEAK_FLOPS, "peak_bytes_per_s": PEAK_BYTES_S,
        "time": "CUDA-event median of `repeats` timings after 3 warm-ups; short ops run "
                "calls_per_timing times back to back per timing; bwd = torch.autograd.grad of the "
                "forward's outputs with a random output gradient (graph kept)",
        "gemm": "flops 2*m*n*k; fwd y=x@W^T (m=tokens), bwd_data dx=dy@W, bwd_weight dW=dy^T@x",
        "ssd_flops_fwd": "2*b*s*(Q*N*G + Q*P*H + 2*N*P*H): C.B^T per group in each chunk, "
                         "(CB*L)@x per head, chunk states B^T@x, state->output C@h; state passing "
                         "between chunks (O(b*s/Q*H*P*N)) not counted; bwd flops taken as 2x fwd",
        "ssd_bytes": "io only: fwd reads x (H*P), dt (H), B, C (G*N each), writes y (H*P), bf16; "
                     "bwd reads x, dt, B, C, dy, writes dx, ddt, dB, dC; one fp32 copy of the chunk "
                     "states (b*s/Q*H*P*N*4) is given separately as chunk_states_bytes",
        "conv1d_bytes": "fwd read+write b*C*s bf16; bwd read dy, x, write dx",
        "gated_norm_bytes": "fwd read y, z, write out (bf16); bwd read dy, y, z, write dy, dz",
        "attention_flops": "2*pairs*(d_qk+d_v) per head fwd, 2.5x that bwd; pairs = query-key "
                           "pairs the mask keeps (causal s(s+1)/2, chunked n_chunks*c(c+1)/2)",
        "mla_rope_bytes": "fwd reads q_up out (H*192), k_nope+v (H*256), k_rope (64); writes q, k "
                          "(H*192 each), v (H*128); bf16, per token; bwd the same amount",
    }


def ceilings():
    timing.ceilings(time_fn, dev, res["ceilings"])
    p("CEILINGS", json.dumps(res["ceilings"]))
    torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------
# Mamba-2 / SSD


def ssd_chunked(x, dt_raw, A_log, B, C, D, dt_bias, Q):
    """Chunked SSD (Dao & Gu 2024, section 6), eager PyTorch. x [b,s,H,P], dt_raw [b,s,H],
    B, C [b,s,G,N] (heads h use group h // (H/G)), A_log, D, dt_bias [H] fp32. dt = softplus(dt_raw
    + dt_bias), A = -exp(A_log); h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T, y_t = C_t h_t + D x_t.
    Matmuls take x's dtype (fp32 accumulation), decays and the chunk recurrence are fp32."""
    b, s, H, P = x.shape
    G, N = B.shape[2], B.shape[3]
    R = H // G
    c = s // Q
    dt = F.softplus(dt_raw.float() + dt_bias)  # [b,s,H]
    A = -torch.exp(A_log)
    dtc = dt.view(b, c, Q, G, R).permute(0, 1, 3, 4, 2)  # [b,c,G,R,Q]
    acs = torch.cumsum(dtc * A.view(G, R, 1), dim=-1)  # [b,c,G,R,Q]
    xc = x.view(b, c, Q, G, R, P).permute(0, 1, 3, 4, 2, 5)  # [b,c,G,R,Q,P]
    Bc = B.view(b, c, Q, G, N)
    Cc = C.view(b, c, Q, G, N)
    tril = torch.ones(Q, Q, device=x.device, dtype=torch.bool).tril()
    # 1. intra-chunk (diagonal blocks): y_l = sum_{s<=l} exp(acs_l - acs_s) dt_s (C_l.B_s) x_s
    cb = torch.einsum("bclgn,bcsgn->bcgls", Cc, Bc)  # [b,c,G,Q,Q]
    seg = (acs[..., :, None] - acs[..., None, :]).masked_fill(~tril, float("-inf"))
    m = cb[:, :, :, None].float() * torch.exp(seg) * dtc[..., None, :]  # [b,c,G,R,Q,Q]
    y_diag = torch.matmul(m.to(x.dtype), xc)  # [b,c,G,R,Q,P]
    # 2. each chunk's state at its end: sum_s exp(acs_last - acs_s) dt_s x_s B_s^T
    w = (torch.exp(acs[..., -1:] - acs) * dtc).to(x.dtype)  # [b,c,G,R,Q]
    states = torch.einsum("bcgrqp,bcqgn->bcgrpn", xc * w[..., None], Bc).float()
    # 3. states entering each chunk (recurrence over chunks, as one masked matmul)
    a_chunk = F.pad(acs[..., -1].permute(0, 2, 3, 1), (1, 0))  # [b,G,R,c+1]
    cs = torch.cumsum(a_chunk, dim=-1)
    trilc = torch.ones(c + 1, c + 1, device=x.device, dtype=torch.bool).tril()
    decay = torch.exp((cs[..., :, None] - cs[..., None, :]).masked_fill(~trilc, float("-inf")))
    st = F.pad(states, (0, 0, 0, 0, 0, 0, 0, 0, 1, 0))  # zero initial state: [b,c+1,G,R,P,N]
    prev = torch.einsum("bgrzc,bcgrpn->bzgrpn", decay, st)[:, :-1]  # [b,c,G,R,P,N]
    # 4. state -> output: y_l += exp(acs_l) C_l . h_prev
    y_off = torch.einsum("bcqgn,bcgrpn->bcgrqp", Cc, prev.to(x.dtype))
    y = y_diag.float() + y_off.float() * torch.exp(acs)[..., None]
    y = y.permute(0, 1, 4, 2, 3, 5).reshape(b, s, H, P) + x.float() * D[:, None]
    return y.to(x.dtype)


def ssd_sequential(x, dt_raw, A_log, B, C, D, dt_bias):
    """Token-by-token recurrence, fp32: the definition the chunked form must reproduce."""
    b, s, H, P = x.shape
    G, N = B.shape[2], B.shape[3]
    R = H // G
    x, B, C = x.float(), B.float(), C.float()
    dt = F.softplus(dt_raw.float() + dt_bias)
    A = -torch.exp(A_log)
    h = torch.zeros(b, H, P, N, device=x.device)
    ys = []
    for t in range(s):
        Bt = B[:, t].repeat_interleave(R, dim=1)  # [b,H,N]
        Ct = C[:, t].repeat_interleave(R, dim=1)
        h = h * torch.exp(dt[:, t] * A)[..., None, None] + \
            (dt[:, t, :, None, None] * x[:, t, :, :, None] * Bt[:, :, None, :])
        ys.append((h * Ct[:, :, None, :]).sum(-1) + D[:, None] * x[:, t])
    return torch.stack(ys, dim=1)


def ssd_inputs(b, s, H, P, N, G, dtype, grad=True):
    g = torch.Generator(device="cuda").manual_seed(1234)

    def rn(*shape, scale=1.0, dt=dtype):
        return (torch.randn(*shape, device=dev, generator=g) * scale).to(dt).requires_grad_(grad)
    x = rn(b, s, H, P)
    dt_raw = rn(b, s, H, scale=0.5)
    B = rn(b, s, G, N, scale=N ** -0.5)
    C = rn(b, s, G, N, scale=N ** -0.5)
    # Mamba-2's init: A in [1, 16] -> A_log = log(A); dt_bias = softplus^-1(dt in [1e-3, 0.1]).
    A_log = torch.log(torch.linspace(1, 16, H, device=dev)).requires_grad_(grad)
    dts = torch.exp(torch.linspace(math.log(1e-3), math.log(0.1), H, device=dev))
    dt_bias = (dts + torch.log(-torch.expm1(-dts))).requires_grad_(grad)
    D = torch.ones(H, device=dev).requires_grad_(grad)
    return x, dt_raw, A_log, B, C, D, dt_bias


def ssd_check():
    """The chunked implementation against the sequential recurrence (outputs and gradients)."""
    for dtype, (b, s, H, P, N, G, Q) in ((torch.float32, (2, 256, 8, 16, 32, 2, 64)),
                                         (bf16, (1, 512, 8, 64, 128, 2, 128))):
        ins = ssd_inputs(b, s, H, P, N, G, dtype)
        ref_ins = [t.detach().float().requires_grad_() for t in ins]
        y = ssd_chunked(*ins, Q)
        yr = ssd_sequential(*ref_ins)
        gy = torch.randn_like(yr)
        gs = torch.autograd.grad(y.float(), ins, gy)
        grs = torch.autograd.grad(yr, ref_ins, gy)
        row = {"dtype": str(dtype), "b": b, "s": s, "heads": H, "head_dim": P, "state": N,
               "groups": G, "chunk": Q,
               "y_max_rel_err": ((y.float() - yr).abs().max() / yr.abs().max()).item()}
        for name, ga, gr in zip(("x", "dt", "A_log", "B", "C", "D", "dt_bias"), gs, grs):
            row["grad_%s_max_rel_err" % name] = ((ga.float() - gr).abs().max() /
                                                 gr.abs().max().clamp_min(1e-30)).item()
        res["ssd_check"].append(row)
        p("SSDCHECK", json.dumps(row))


def gemm_rows(base, name, m, n, k, reps=12):
    a = torch.randn(m, k, device=dev, dtype=bf16)
    w = torch.randn(n, k, device=dev, dtype=bf16) * k ** -0.5
    dy = torch.randn(m, n, device=dev, dtype=bf16)
    rows = []
    for pas, fn in (("fwd", lambda: F.linear(a, w)), ("bwd_data", lambda: torch.mm(dy, w)),
                    ("bwd_weight", lambda: torch.mm(dy.t(), a))):
        row = dict(base, op=name, **{"pass": pas}, m=m, n=n, k=k)
        rates(row, time_fn(fn, 3, reps), flops=2.0 * m * n * k)
        rows.append(row)
    del a, w, dy
    return rows


def gated_rmsnorm(y, z, weight, groups, eps=1e-5):
    """Megatron-Core MambaMixer's RMSNormGated (norm_before_gate=False): rmsnorm over each of
    `groups` channel groups of y*silu(z), times weight; computed in fp32, stored bf16."""
    shape = y.shape
    g = y.float() * F.silu(z.float())
    g = g.view(*shape[:-1], groups, shape[-1] // groups)
    g = g * torch.rsqrt(g.pow(2).mean(-1, keepdim=True) + eps)
    return (g.view(shape) * weight).to(y.dtype)


def fwd_bwd(base, op, fwd, inputs, flops=None, bytes_fwd=None, bytes_bwd=None, reps=12,
            flops_bwd=None, extra=None):
    """Times fwd() and the autograd backward of its output(s) w.r.t. inputs; returns 2 rows."""
    out = fwd()
    outs = out if isinstance(out, tuple) else (out,)
    gos = tuple(torch.randn_like(o) for o in outs)
    tf = time_fn(fwd, 3, reps)
    tb = time_fn(lambda: torch.autograd.grad(outs, inputs, gos, retain_graph=True), 3, reps)
    rf = rates(dict(base, op=op, **{"pass": "fwd"}, **(extra or {})), tf, flops, bytes_fwd)
    rb = rates(dict(base, op=op, **{"pass": "bwd"}, **(extra or {})), tb,
               flops_bwd if flops_bwd is not None else (2 * flops if flops else None), bytes_bwd)
    del out, outs, gos
    return [rf, rb]


def mamba_configs():
    cfgs = []
    for name, d, H, P, N, G in MAMBA:
        for s in (4096, 8192):
            for b in (1, 2):
                cfgs.append((name, d, H, P, N, G, s, b, 1))
        for tp in (2, 4, 8):
            if name != "nemotron-3-nano":
                cfgs.append((name, d, H, P, N, G, 8192, 1, tp))
    if QUICK:
        cfgs = cfgs[:1]
    return cfgs


def mamba():
    try:
        from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined
    except Exception:  # noqa: BLE001
        mamba_chunk_scan_combined = None
    for name, d, H, P, N, G, s, b, tp in mamba_configs():
        Hl, Gl = H // tp, G // tp
        di = Hl * P  # local d_inner
        T = b * s
        base = {"model": name, "d_model": d, "heads": Hl, "head_dim": P, "state": N, "groups": Gl,
                "seq": s, "batch": b, "tp": tp, "chunk": CHUNK, "conv_kernel": CONV_K}
        rows = []
        try:
            # in_proj: d_model -> [z, x, B, C, dt] = 2*d_inner + 2*G*N + H (per TP rank)
            rows += gemm_rows(base, "in_proj", T, 2 * di + 2 * Gl * N + Hl, d)
            rows += gemm_rows(base, "out_proj", T, d, di)
            # causal depthwise conv1d over x, B, C channels, layout [b, channels, s]
            ch = di + 2 * Gl * N
            xc = torch.randn(b, ch, s, device=dev, dtype=bf16, requires_grad=True)
            wc = (torch.randn(ch, 1, CONV_K, device=dev, dtype=bf16) * 0.5).requires_grad_()
            bc = torch.zeros(ch, device=dev, dtype=bf16, requires_grad=True)
            nb = b * ch * s * 2
            conv = lambda: F.conv1d(xc, wc, bc, padding=CONV_K - 1, groups=ch)[..., :s]  # noqa: E731
            rows += fwd_bwd(base, "conv1d", conv, (xc, wc, bc), bytes_fwd=2 * nb, bytes_bwd=3 * nb,
                            extra={"channels": ch})
            rows += fwd_bwd(base, "conv1d_silu", lambda: F.silu(conv()), (xc, wc, bc),
                            bytes_fwd=2 * nb, bytes_bwd=3 * nb, extra={"channels": ch})
            del xc, wc, bc
            # SSD chunked scan
            ins = ssd_inputs(b, s, Hl, P, N, Gl, bf16)
            fl = 2.0 * b * s * (CHUNK * N * Gl + CHUNK * P * Hl + 2 * N * P * Hl)
            io = 2 * b * s * (2 * Hl * P + Hl + 2 * Gl * N)
            io_b = 2 * b * s * (3 * Hl * P + 2 * Hl + 4 * Gl * N)
            nc = s // CHUNK
            ex = {"chunk_states_bytes": b * nc * Hl * P * N * 4,
                  "eager_chunk_recurrence_flops": 2.0 * b * (nc + 1) ** 2 * Hl * P * N}
            rows += fwd_bwd(base, "ssd_eager", lambda: ssd_chunked(*ins, CHUNK), ins, flops=fl,
                            bytes_fwd=io, bytes_bwd=io_b, extra=ex, reps=8)
            if mamba_chunk_scan_combined is not None:
                x, dt_raw, A_log, B, C, D, dt_bias = ins

                def prod():
                    return mamba_chunk_scan_combined(x, dt_raw, -torch.exp(A_log), B, C, CHUNK,
                                                     D=D, dt_bias=dt_bias, dt_softplus=True)
                rows += fwd_bwd(base, "ssd_mamba_ssm_triton", prod, ins, flops=fl, bytes_fwd=io,
                                bytes_bwd=io_b, extra=ex)
            del ins
            # gated RMSNorm over d_inner in G groups
            y = torch.randn(T, di, device=dev, dtype=bf16, requires_grad=True)
            z = torch.randn(T, di, device=dev, dtype=bf16, requires_grad=True)
            wn = torch.ones(di, device=dev, dtype=bf16, requires_grad=True)
            nb = T * di * 2
            rows += fwd_bwd(base, "gated_rmsnorm_eager", lambda: gated_rmsnorm(y, z, wn, Gl),
                            (y, z, wn), bytes_fwd=3 * nb, bytes_bwd=5 * nb)
            del y, z, wn
        except Exception as ex:  # noqa: BLE001
            err("mamba %s s=%d b=%d tp=%d" % (name, s, b, tp), ex)
        res["mamba"] += rows
        p("MAMBA %-16s s=%d b=%d tp=%d %s" % (name, s, b, tp, " ".join(
            "%s/%s=%s" % (r["op"], r["pass"][:5], fmt(r)) for r in rows)))
        torch.cuda.empty_cache()
        save()


# ---------------------------------------------------------------------------------------------
# MLA (DeepSeek-V3) and MTP


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rot * sin


def attn_pairs(s, chunk=None):
    if chunk is None or chunk >= s:
        return s * (s + 1) // 2
    return (s // chunk) * chunk * (chunk + 1) // 2


def mla():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    c = MLA
    h, H, dn, dr, dv = c["h"], c["heads"], c["d_nope"], c["d_rope"], c["d_v"]
    dqk = dn + dr
    for s in ([4096] if QUICK else [4096, 8192]):
        b = 1
        T = b * s
        for tp in ([1] if QUICK else [1, 2, 4, 8]):
            Hl = H // tp
            base = {"model": "deepseek-v3", "seq": s, "batch": b, "tp": tp, "heads": Hl}
            rows = []
            try:
                # Down projections are not split over TP in Megatron-Core's MLA (replicated);
                # up projections are column-parallel by head, the output projection row-parallel.
                if s == 4096 or tp == 1:
                    rows += gemm_rows(base, "q_down", T, c["q_rank"], h)
                    rows += gemm_rows(base, "kv_down", T, c["kv_rank"] + dr, h)
                    for name, dim in (("q_latent_rmsnorm", c["q_rank"]),
                                      ("kv_latent_rmsnorm", c["kv_rank"])):
                        xn = torch.randn(T, dim, device=dev, dtype=bf16, requires_grad=True)
                        wn = torch.ones(dim, device=dev, dtype=bf16, requires_grad=True)
                        rows += fwd_bwd(base, name, lambda: F.rms_norm(xn, (dim,), wn, 1e-6),
                                        (xn, wn), bytes_fwd=4 * T * dim, bytes_bwd=6 * T * dim)
                rows += gemm_rows(base, "q_up", T, Hl * dqk, c["q_rank"])
                rows += gemm_rows(base, "kv_up", T, Hl * (dn + dv), c["kv_rank"])
                rows += gemm_rows(base, "o_proj", T, h, Hl * dv)
                if s == 4096:
                    # MTP: concat(hidden, embedding) [2h] -> h projection (Megatron-Core eh_proj,
                    # column-parallel: n = h / tp)
                    rows += gemm_rows(base, "mtp_eh_proj", T, h // tp, 2 * h)
                # RoPE on the 64-wide parts and assembly of 192-wide q/k heads (k_rope shared)
                qu = torch.randn(T, Hl * dqk, device=dev, dtype=bf16, requires_grad=True)
                kvu = torch.randn(T, Hl * (dn + dv), device=dev, dtype=bf16, requires_grad=True)
                kr = torch.randn(T, dr, device=dev, dtype=bf16, requires_grad=True)
                ang = torch.arange(T, device=dev)[:, None].float() * torch.exp(
                    -math.log(10000.0) * torch.arange(0, dr, 2, device=dev).float() / dr)[None, :]
                cos = torch.cat((ang.cos(), ang.cos()), -1)[:, None, :].to(bf16)
                sin = torch.cat((ang.sin(), ang.sin()), -1)[:, None, :].to(bf16)

                def assemble():
                    q = qu.view(T, Hl, dqk)
                    kv = kvu.view(T, Hl, dn + dv)
                    qo = torch.cat((q[..., :dn], rope(q[..., dn:], cos, sin)), -1)
                    kpe = rope(kr.view(T, 1, dr), cos, sin)
                    ko = torch.cat((kv[..., :dn], kpe.expand(T, Hl, dr)), -1)
                    return qo, ko, kv[..., dn:].contiguous()
                nb = 2 * T * (Hl * dqk + Hl * (dn + dv) + dr + 2 * Hl * dqk + Hl * dv)
                rows += fwd_bwd(base, "rope_assemble_eager", assemble, (qu, kvu, kr),
                                bytes_fwd=nb, bytes_bwd=nb)
                del qu, kvu, kr
                # attention, 192-wide q/k, 128-wide v, causal
                q = torch.randn(b, Hl, s, dqk, device=dev, dtype=bf16, requires_grad=True)
                k = torch.randn(b, Hl, s, dqk, device=dev, dtype=bf16, requires_grad=True)
                v = torch.randn(b, Hl, s, dv, device=dev, dtype=bf16, requires_grad=True)
                vp = torch.randn(b, Hl, s, dqk, device=dev, dtype=bf16, requires_grad=True)
                fl = 2.0 * b * Hl * attn_pairs(s) * (dqk + dv)
                for impl, be, vv in (("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION, v),
                                     ("sdpa_flash_vpad192", SDPBackend.FLASH_ATTENTION, vp)):
                    def fa(be=be, vv=vv):
                        with sdpa_kernel([be]):
                            return F.scaled_dot_product_attention(q, k, vv, is_causal=True)
                    try:
                        rows += fwd_bwd(base, "attention_" + impl, fa, (q, k, vv), flops=fl,
                                        flops_bwd=2.5 * fl, reps=8,
                                        extra={"head_dim_qk": dqk, "head_dim_v": dv})
                    except Exception as ex:  # noqa: BLE001
                        err("mla attention %s s=%d tp=%d" % (impl, s, tp), ex)
                del q, k, v, vp
            except Exception as ex:  # noqa: BLE001
                err("mla s=%d tp=%d" % (s, tp), ex)
            res["mla"] += rows
            p("MLA s=%d tp=%d %s" % (s, tp, " ".join(
                "%s/%s=%s" % (r["op"], r["pass"][:5], fmt(r)) for r in rows)))
            torch.cuda.empty_cache()
            save()


# ---------------------------------------------------------------------------------------------
# Llama 4-style chunked attention


def chunked_attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    Hq, Hkv, d, ch = SCOUT["heads"], SCOUT["kv_heads"], SCOUT["d"], SCOUT["chunk"]
    b = 1
    seqs = [16384] if QUICK else [16384, 32768]
    for s in seqs:
        nC = s // ch
        # [b, s, heads, d] storage (the training layout); SDPA sees [b, heads, s, d] strides
        q = torch.randn(b, s, Hq, d, device=dev, dtype=bf16, requires_grad=True)
        k = torch.randn(b, s, Hkv, d, device=dev, dtype=bf16, requires_grad=True)
        v = torch.randn(b, s, Hkv, d, device=dev, dtype=bf16, requires_grad=True)
        for label, chunk in (("full_causal", None), ("chunked_8192", ch)):
            pairs = attn_pairs(s, chunk)
            fl = 2.0 * b * Hq * pairs * 2 * d
            base = {"model": "llama4-scout", "seq": s, "batch": b, "heads": Hq, "kv_heads": Hkv,
                    "head_dim": d, "mask": label, "chunk": chunk, "pairs": pairs}

            def fa(chunk=chunk, contig=False):
                if chunk is None:
                    qq, kk, vv = (t.transpose(1, 2) for t in (q, k, v))
                else:  # chunks as batch entries: causal attention inside each chunk
                    qq, kk, vv = (t.reshape(b * nC, ch, t.shape[2], d).transpose(1, 2)
                                  for t in (q, k, v))
                if contig:
                    qq, kk, vv = qq.contiguous(), kk.contiguous(), vv.contiguous()
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return F.scaled_dot_product_attention(qq, kk, vv, is_causal=True,
                                                          enable_gqa=True)
            for contig in (False, True):  # strided [b,s,h,d] views first, copies if refused
                try:
                    rows = fwd_bwd(dict(base, contiguous_copies=contig), "sdpa_cudnn",
                                   lambda contig=contig: fa(contig=contig), (q, k, v), flops=fl,
                                   flops_bwd=2.5 * fl, reps=6)
                    res["chunked_attention"] += rows
                    p("CHUNK s=%d %s cudnn %s" % (s, label, " ".join(
                        "%s=%s" % (r["pass"], fmt(r)) for r in rows)))
                    break
                except Exception as ex:  # noqa: BLE001
                    err("chunked attention cudnn s=%d %s contiguous=%s" % (s, label, contig), ex)
        save()
    # flex attention with block masks (compiles per shape and mask)
    if elapsed() > BUDGET_S - 150:
        res["errors"].append("flex chunked attention skipped: %.0f s elapsed" % elapsed())
        return
    try:
        from torch import _dynamo
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        for knob in ("recompile_limit", "cache_size_limit"):
            if hasattr(_dynamo.config, knob):
                setattr(_dynamo.config, knob, 64)
        flex = torch.compile(flex_attention, dynamic=False)
    except Exception as ex:  # noqa: BLE001
        err("flex_attention import", ex)
        return
    for s in seqs:
        if elapsed() > BUDGET_S - 90:
            res["errors"].append("flex s=%d skipped: %.0f s elapsed" % (s, elapsed()))
            break
        q = torch.randn(b, Hq, s, d, device=dev, dtype=bf16, requires_grad=True)
        k = torch.randn(b, Hkv, s, d, device=dev, dtype=bf16, requires_grad=True)
        v = torch.randn(b, Hkv, s, d, device=dev, dtype=bf16, requires_grad=True)
        for label, chunk in (("full_causal", None), ("chunked_8192", ch)):
            if chunk is None:
                def mask(b_, h_, qi, ki):
                    return qi >= ki
            else:
                def mask(b_, h_, qi, ki, chunk=chunk):
                    return (qi >= ki) & (qi // chunk == ki // chunk)
            pairs = attn_pairs(s, chunk)
            fl = 2.0 * b * Hq * pairs * 2 * d
            base = {"model": "llama4-scout", "seq": s, "batch": b, "heads": Hq, "kv_heads": Hkv,
                    "head_dim": d, "mask": label, "chunk": chunk, "pairs": pairs}
            try:
                tc = time.time()
                bm = create_block_mask(mask, None, None, s, s, device="cuda")
                fn = lambda bm=bm: flex(q, k, v, block_mask=bm, enable_gqa=True)  # noqa: E731
                fn()
                rows = fwd_bwd(dict(base, compile_and_first_call_s=time.time() - tc),
                               "flex", fn, (q, k, v), flops=fl, flops_bwd=2.5 * fl, reps=6)
                res["chunked_attention"] += rows
                p("CHUNK s=%d %s flex %s" % (s, label, " ".join(
                    "%s=%s" % (r["pass"], fmt(r)) for r in rows)))
            except Exception as ex:  # noqa: BLE001
                err("chunked attention flex s=%d %s" % (s, label), ex)
        del q, k, v
        torch.cuda.empty_cache()
        save()


# ---------------------------------------------------------------------------------------------
# torch.compile'd (Inductor-fused) variants: closer to fused production kernels than eager


def compiled():
    if elapsed() > BUDGET_S - 60:
        res["errors"].append("compiled section skipped: %.0f s elapsed" % elapsed())
        return
    norm_c = torch.compile(gated_rmsnorm, dynamic=True)
    for name, d, H, P, N, G in MAMBA:
        for s, b in ((4096, 1), (8192, 2)):
            if elapsed() > BUDGET_S - 45:
                res["errors"].append("compiled norm %s skipped" % name)
                break
            T = b * s
            di = H * P
            base = {"model": name, "seq": s, "batch": b, "tp": 1, "groups": G, "width": di}
            try:
                y = torch.randn(T, di, device=dev, dtype=bf16, requires_grad=True)
                z = torch.randn(T, di, device=dev, dtype=bf16, requires_grad=True)
                wn = torch.ones(di, device=dev, dtype=bf16, requires_grad=True)
                nb = T * di * 2
                tc = time.time()
                norm_c(y, z, wn, G)
                rows = fwd_bwd(dict(base, compile_and_first_call_s=time.time() - tc),
                               "gated_rmsnorm_compiled", lambda: norm_c(y, z, wn, G), (y, z, wn),
                               bytes_fwd=3 * nb, bytes_bwd=5 * nb)
                res["compiled"] += rows
                p("COMPILED %s s=%d b=%d %s" % (name, s, b, " ".join(
                    "%s/%s=%s" % (r["op"], r["pass"], fmt(r)) for r in rows)))
            except Exception as ex:  # noqa: BLE001
                err("compiled norm %s" % name, ex)
        save()
    # Inductor-fused chunked SSD for the 8B mixer at s = 8192, b = 1 (one compile)
    if elapsed() > BUDGET_S - 60:
        res["errors"].append("compiled ssd skipped: %.0f s elapsed" % elapsed())
        return
    ssd_c = torch.compile(ssd_chunked, dynamic=False)
    for name, d, H, P, N, G in MAMBA[1:2]:
        s, b = 8192, 1
        base = {"model": name, "seq": s, "batch": b, "tp": 1, "heads": H, "head_dim": P,
                "state": N, "groups": G, "chunk": CHUNK}
        try:
            ins = ssd_inputs(b, s, H, P, N, G, bf16)
            tc = time.time()
            y = ssd_c(*ins, CHUNK)
            torch.autograd.grad(y, ins, torch.randn_like(y))
            fl = 2.0 * b * s * (CHUNK * N * G + CHUNK * P * H + 2 * N * P * H)
            io = 2 * b * s * (2 * H * P + H + 2 * G * N)
            io_b = 2 * b * s * (3 * H * P + 2 * H + 4 * G * N)
            rows = fwd_bwd(dict(base, compile_and_first_call_s=time.time() - tc), "ssd_compiled",
                           lambda: ssd_c(*ins, CHUNK), ins, flops=fl, bytes_fwd=io,
                           bytes_bwd=io_b, reps=8)
            res["compiled"] += rows
            p("COMPILED ssd %s %s" % (name, " ".join("%s=%s" % (r["pass"], fmt(r)) for r in rows)))
        except Exception as ex:  # noqa: BLE001
            err("compiled ssd %s" % name, ex)
    save()


def main():
    os.makedirs(OUT, exist_ok=True)
    # The timing loops call compiled backwards repeatedly on one graph (retain_graph=True),
    # which donated buffers forbid.
    from torch._functorch import config as functorch_config
    functorch_config.donated_buffer = False
    env()
    for section in (ceilings, ssd_check, mamba, mla, chunked_attention, compiled):
        p("SECTION %s %.1f s (%.0f s elapsed)" % (section.__name__, timing.run_section(section, err),
                                                  elapsed()))
        save()
    p("DONE %.1f s, %d errors" % (elapsed(), len(res["errors"])))


if __name__ == "__main__":
    main()
