# Reference measurements with PyTorch for checking llmplan-profile's numbers on one GPU
# (data/profiles/README.md). Run on the GPU: OUT=DIR python3 pytorch_reference.py
# Prints every figure and writes $OUT/torch_ref.json and $OUT/torch_kernels.txt.
import json
import math
import os
import statistics
import sys
import time
from importlib import metadata

import torch
import torch.nn as nn
import torch.nn.functional as F

from timing import event_times, gpu_env, p

OUT = os.environ.get("OUT", "/tmp/out")
dev = torch.device("cuda")
res = {"env": {}, "gemm": [], "copy": {}, "attention": [], "train": []}


def env():
    e = res["env"]
    gpu_env(e, cudnn=False)
    for pkg in ["nvidia-cublas", "nvidia-cuda-cupti", "nvidia-nccl-cu13", "nvidia-cuda-runtime",
                "nvidia-cudnn-cu13"]:
        try:
            e[pkg] = metadata.version(pkg)
        except Exception as ex:  # noqa: BLE001
            e[pkg] = "n/a (%s)" % type(ex).__name__
    p("ENV", json.dumps(e))


def time_fn(fn, warmup=5, reps=30):
    ts = event_times(fn, warmup, reps, sync_device=False)
    return statistics.median(ts), min(ts), max(ts)


def gemms():
    # (label, m, n, k): forward C[m,n] = A[m,k] . W[n,k]^T as nn.Linear does; the profile's keys.
    shapes = [
        ("square_8192", 8192, 8192, 8192),
        ("h4096_b1_qkv", 2048, 12288, 4096),
        ("h4096_b1_fc1", 2048, 16384, 4096),
        ("h4096_b1_fc2", 2048, 4096, 16384),
        ("h4096_b1_out_proj", 2048, 4096, 4096),
        ("h4096_b1_logits", 2048, 50304, 4096),
        ("h8192_b4_fc1", 8192, 32768, 8192),
        ("h12288_b4_fc1", 8192, 49152, 12288),
        ("h12288_b4_t8_out_proj", 8192, 12288, 1536),
    ]
    for label, m, n, k in shapes:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        dc = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
        flops = 2.0 * m * n * k
        row = {"label": label, "m": m, "n": n, "k": k, "flops": flops}
        for pas, fn in [("fwd", lambda: F.linear(a, w)),
                        ("bwd_data", lambda: torch.mm(dc, w)),
                        ("bwd_weight", lambda: torch.mm(dc.t(), a))]:
            med, lo, hi = time_fn(fn, 5, 30 if flops < 5e12 else 10)
            row[pas] = {"time_s": med, "min_s": lo, "max_s": hi, "tflops": flops / med / 1e12}
        res["gemm"].append(row)
        p("GEMM %-22s m=%5d n=%5d k=%5d  fwd %.4f ms %.0f TFLOP/s | bwd_data %.0f | bwd_weight %.0f"
          % (label, m, n, k, row["fwd"]["time_s"] * 1e3, row["fwd"]["tflops"],
             row["bwd_data"]["tflops"], row["bwd_weight"]["tflops"]))
        del a, w, dc
    # zeros vs random for the square one (the method notes: zeros run faster)
    z = torch.zeros(8192, 8192, device=dev, dtype=torch.bfloat16)
    med, _, _ = time_fn(lambda: torch.mm(z, z), 5, 10)
    res["gemm_square_zeros_tflops"] = 2 * 8192**3 / med / 1e12
    p("GEMM square_8192 on zeros: %.0f TFLOP/s" % res["gemm_square_zeros_tflops"])
    del z


def copy_bw():
    n = 1 << 30  # 2 GiB of bf16
    x = torch.randn(n, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    med, _, _ = time_fn(lambda: y.copy_(x), 3, 20)
    bw = 2 * 2 * n / med
    res["copy"] = {"bytes_read_plus_written": 4 * n, "time_s": med, "bytes_per_s": bw}
    p("COPY d2d %.0f GB/s (read+write, 4 GiB moved, %.3f ms)" % (bw / 1e9, med * 1e3))
    del x, y


def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for b, a, s, d in [(1, 32, 2048, 128), (2, 32, 2048, 128)]:
        q, k, v = (torch.randn(b, a, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        go = torch.randn(b, a, s, d, device=dev, dtype=torch.bfloat16)
        row = {"b": b, "a": a, "s": s, "d": d}
        for drop in (0.0, 0.1):
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                fwd = lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
                med_f, _, _ = time_fn(fwd, 5, 30)
                o = fwd()
                med_b, _, _ = time_fn(lambda: torch.autograd.grad(o, (q, k, v), go, retain_graph=True), 5, 30)
            row["dropout%.1f" % drop] = {"fwd_s": med_f, "bwd_s": med_b}
            # causal attention FLOPs: fwd 2 GEMMs of 2*b*a*s*s*d, halved by the mask
            ff = 4.0 * b * a * s * s * d / 2
            p("FLASH b=%d a=%d s=%d d=%d dropout=%.1f: fwd %.4f ms (%.0f TFLOP/s causal), bwd %.4f ms (%.0f TFLOP/s)"
              % (b, a, s, d, drop, med_f * 1e3, ff / med_f / 1e12, med_b * 1e3, 2.5 * ff / med_b / 1e12))
        res["attention"].append(row)


class Block(nn.Module):
    def __init__(self, h, a, flash, pdrop):
        super().__init__()
        self.h, self.a, self.flash, self.pdrop = h, a, flash, pdrop
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x, mask):
        b, s, h = x.shape
        a, d = self.a, h // self.a
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, a, d).permute(2, 0, 3, 1, 4)
        if self.flash:
            from torch.nn.attention import SDPBackend, sdpa_kernel
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o = F.scaled_dot_product_attention(q, k, v, dropout_p=self.pdrop, is_causal=True)
        else:
            sc = torch.matmul(q * (1.0 / math.sqrt(d)), k.transpose(-2, -1))
            sc = sc.masked_fill(mask, float("-inf"))
            pr = F.dropout(torch.softmax(sc, dim=-1), self.pdrop, True)
            o = torch.matmul(pr, v)
        o = o.transpose(1, 2).reshape(b, s, h)
        x = x + F.dropout(self.proj(o), self.pdrop, True)
        x = x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh")), self.pdrop, True)
        return x


class GPT(nn.Module):
    def __init__(self, layers, h, a, vocab, seq, flash, pdrop=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, a, flash, pdrop) for _ in range(layers))
        self.lnf = nn.LayerNorm(h)

    def forward(self, idx, mask):
        x = self.wte(idx) + self.wpe.weight[: idx.shape[1]]
        for blk in self.blocks:
            x = blk(x, mask)
        logits = F.linear(self.lnf(x), self.wte.weight)  # tied
        return logits


def train(layers, h, a, seq, mb, vocab, flash, steps=20, warmup=5, prof_file=None):
    torch.manual_seed(0)
    model = GPT(layers, h, a, vocab, seq, flash).to(dev, torch.bfloat16)
    params = [q for q in model.parameters()]
    nparam = sum(q.numel() for q in params)
    # Mixed precision as Megatron does it: bf16 model, fp32 master weights and Adam state.
    master = [q.detach().float().requires_grad_(True) for q in params]
    opt = torch.optim.AdamW(master, lr=1e-4, weight_decay=0.01, fused=True)
    mask = torch.ones(seq, seq, device=dev, dtype=torch.bool).triu(1)
    idx = torch.randint(0, vocab, (mb, seq), device=dev)
    tgt = torch.randint(0, vocab, (mb, seq), device=dev)

    def step(evs):
        evs[0].record()
        logits = model(idx, mask)
        loss = F.cross_entropy(logits.view(-1, vocab), tgt.view(-1))
        evs[1].record()
        loss.backward()
        evs[2].record()
        for m_, q in zip(master, params):
            m_.grad = q.grad.float()
            q.grad = None
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_copy_(params, master)
        evs[3].record()
        return loss

    times = []
    losses = []
    torch.cuda.reset_peak_memory_stats()
    for i in range(warmup + steps):
        evs = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        loss = step(evs)
        evs[3].synchronize()
        losses.append(float(loss))
        if i >= warmup:
            times.append((evs[0].elapsed_time(evs[1]) * 1e-3, evs[1].elapsed_time(evs[2]) * 1e-3,
                          evs[2].elapsed_time(evs[3]) * 1e-3, evs[0].elapsed_time(evs[3]) * 1e-3))
    med = [statistics.median(t[i] for t in times) for i in range(4)]
    row = {"layers": layers, "hidden": h, "heads": a, "seq": seq, "micro_batch": mb, "vocab": vocab,
           "flash": flash, "params": nparam, "steps": steps, "fwd_s": med[0], "bwd_s": med[1],
           "opt_s": med[2], "step_s": med[3], "step_min_s": min(t[3] for t in times),
           "step_max_s": max(t[3] for t in times), "peak_mem_bytes": torch.cuda.max_memory_allocated(),
           "loss_first": losses[0], "loss_last": losses[-1]}
    res["train"].append(row)
    p("TRAIN layers=%d h=%d a=%d s=%d b=%d flash=%s params=%.3fB: step %.2f ms (min %.2f max %.2f) = fwd %.2f + bwd %.2f + opt %.2f ms; peak %.1f GiB; loss %.3f->%.3f"
      % (layers, h, a, seq, mb, flash, nparam / 1e9, med[3] * 1e3, row["step_min_s"] * 1e3,
         row["step_max_s"] * 1e3, med[0] * 1e3, med[1] * 1e3, med[2] * 1e3,
         row["peak_mem_bytes"] / 2**30, losses[0], losses[-1]))
    if prof_file is not None:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as pf:
            evs = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            step(evs)
            torch.cuda.synchronize()
        prof_file.write("\n==== one step: layers=%d h=%d b=%d flash=%s ====\n" % (layers, h, mb, flash))
        prof_file.write(pf.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=90))
        prof_file.flush()
    del model, master, opt, params
    torch.cuda.empty_cache()


def main():
    t0 = time.time()
    env()
    gemms()
    copy_bw()
    attention()
    with open(os.path.join(OUT, "torch_kernels.txt"), "w") as pf:
        for mb in (1, 2):
            for flash in (True, False):
                try:
                    train(4, 4096, 32, 2048, mb, 50304, flash, prof_file=pf if mb == 1 else None)
                except Exception as ex:  # noqa: BLE001
                    p("TRAIN b=%d flash=%s FAILED: %r" % (mb, flash, ex))
    with open(os.path.join(OUT, "torch_ref.json"), "w") as f:
        json.dump(res, f, indent=1)
    p("torch_ref done in %.1f s" % (time.time() - t0))


if __name__ == "__main__":
    sys.exit(main())
