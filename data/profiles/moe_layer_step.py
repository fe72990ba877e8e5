# One MoE layer's local work on one GPU, forward + backward, timed whole against the sum of its
# kernels (#27): where the time of an expert-parallel rank goes besides the kernels the simulator
# costs one by one (router GEMM, score + top-k, token permutation, grouped expert GEMMs, the
# activation, un-permutation and the weighted combine).
#
# Run on the GPU:  OUT=DIR python3 moe_layer_step.py      (writes DIR/moe_layer_step.json)
#
# What one rank does after the all-to-all is emulated without the all-to-all (one GPU): the rank's
# T tokens are routed over E experts (balanced exactly, as the published runs force-balance), the
# T*k routed rows are gathered (the permutation), re-labelled to the rank's E/ep local experts (so
# the rank receives T*k rows, as under balanced expert parallelism), sorted by local expert, run
# through FC1 -> activation -> FC2 per expert, un-sorted and combined into T rows with the router
# weights. Variants of the expert GEMMs:
#   loop      one torch.mm per local expert on CPU-known split sizes (what a grouped linear with a
#             Python list of split sizes does; needs the counts on the host: a device->host sync)
#   grouped   torch._grouped_mm with device offsets (one kernel per GEMM; no sync)
#   bmm       torch.bmm over [e, m, .] (balanced only; cuBLAS strided-batched; no sync)
#   single    one GEMM over all T*k rows with one expert's weights (same FLOPs; its backward also
#             writes a full-size gradient of the stacked weights, so it is not a lower bound)
# Each variant runs a stack of LAYERS layers (the per-layer figure divides by LAYERS), with and
# without an explicit tokens-per-expert .tolist() sync per layer (Megatron-Core's all-to-all token
# dispatcher moves the split sizes to the host), eager. Figures per step: the CUDA-event time, the
# sum of kernel times from torch.profiler, and the GPU idle time between them.
import json
import os
import statistics
import traceback

import torch

from timing import error_line, event_times, p, short_env

OUT = os.environ.get("OUT", "/tmp/out")
dev = torch.device("cuda")
bf16 = torch.bfloat16
LAYERS = 4
res = {"kind": "llmplan-moe-layer-step", "format_version": 1, "env": {}, "rows": [], "errors": []}

# name, hidden, experts, top-k, expert FFN, ep of the published H100 layout, tokens per micro-batch,
# activation. Shapes: presets/models.json; layouts: data/h100/published_runs.csv.
MODELS = [
    ("qwen3-30b-a3b", 2048, 128, 8, 768, 16, 4096, "swiglu"),
    ("qwen3-235b-a22b", 4096, 128, 8, 1536, 32, 4096, "swiglu"),
    ("gpt-oss-120b", 2880, 128, 4, 2880, 8, 4096, "gptoss"),
    ("gpt-oss-120b/swiglu", 2880, 128, 4, 2880, 8, 4096, "swiglu"),
]


def err(where, ex):
    msg = error_line(where, ex)
    res["errors"].append(msg)
    p("ERROR", msg)
    traceback.print_exc()


def activation(kind, h1, b1=None):
    if b1 is not None:
        h1 = h1 + b1
    g, u = h1.chunk(2, dim=-1)
    if kind == "swiglu":
        return torch.nn.functional.silu(g) * u
    # GPT-OSS (Megatron-Bridge GPTOSSProvider): quick_gelu gate x*sigmoid(1.702x), clamp 7.0,
    # linear offset 1.0 on the up half
    g = g.clamp(max=7.0)
    u = u.clamp(min=-7.0, max=7.0)
    return g * torch.sigmoid(1.702 * g) * (u + 1.0)


class Layer:
    def __init__(self, h, E, k, f, ep, kind):
        self.h, self.E, self.k, self.f, self.e = h, E, k, f, E // ep
        self.kind = kind
        s = 0.02
        self.wr = (torch.randn(E, h, device=dev, dtype=bf16) * s).requires_grad_()
        # stored [e, N, K] so that the [e, K, N] operand is K-contiguous (the layout
        # torch._grouped_mm takes for its second operand)
        self.w1p = (torch.randn(self.e, 2 * f, h, device=dev, dtype=bf16) * s).requires_grad_()
        self.w2p = (torch.randn(self.e, h, f, device=dev, dtype=bf16) * s).requires_grad_()
        if kind == "gptoss":
            self.b1 = torch.zeros(self.e, 2 * f, device=dev, dtype=bf16).requires_grad_()
            self.b2 = torch.zeros(self.e, h, device=dev, dtype=bf16).requires_grad_()
        else:
            self.b1 = self.b2 = None
        # the loop variant's own per-expert tensors: slicing one stacked parameter per expert would
        # make each slice's backward materialise a full-size gradient of the stack
        self.w1s = [t.detach().clone().requires_grad_() for t in self.w1p.transpose(1, 2)]
        self.w2s = [t.detach().clone().requires_grad_() for t in self.w2p.transpose(1, 2)]
        self.b1s = None if self.b1 is None else [t.detach().clone().requires_grad_() for t in self.b1]
        self.b2s = None if self.b2 is None else [t.detach().clone().requires_grad_() for t in self.b2]
        self.params = [t for t in (self.wr, self.w1p, self.w2p, self.b1, self.b2) if t is not None]
        self.params += self.w1s + self.w2s + (self.b1s or []) + (self.b2s or [])

    def forward(self, x, variant, sync):
        T = x.shape[0]
        k, E, e = self.k, self.E, self.e
        self.w1 = self.w1p.transpose(1, 2)
        self.w2 = self.w2p.transpose(1, 2)
        logits = x @ self.wr.t()
        scores = torch.softmax(logits.float(), dim=-1)
        # balanced routing as in the published runs (force-balanced): token t picks experts
        # (t*k + j) mod E; the top-k of the real scores is still computed (its kernels are real)
        _, _ = torch.topk(scores, k, dim=-1)
        ids = (torch.arange(T, device=dev).unsqueeze(1) * k + torch.arange(k, device=dev)) % E
        probs = torch.gather(scores, 1, ids).to(bf16)
        flat = ids.reshape(-1)
        token_of_row = torch.arange(T * k, device=dev) // k
        local = flat % e                       # the rank's local expert of each received row
        order = torch.argsort(local, stable=True)
        counts = torch.bincount(local, minlength=e)
        if sync or variant == "loop":
            splits = counts.tolist()           # device -> host: split sizes on the CPU
        else:
            splits = None
        xs = x.index_select(0, token_of_row.index_select(0, order))   # permute + sort
        if variant == "single":
            h1 = xs @ self.w1[0]
            a = activation(self.kind, h1, None if self.b1 is None else self.b1[0])
            y = a @ self.w2[0]
            if self.b2 is not None:
                y = y + self.b2[0]
        elif variant == "bmm":
            m = xs.shape[0] // e
            h1 = torch.bmm(xs.view(e, m, self.h), self.w1)
            a = activation(self.kind, h1, None if self.b1 is None else self.b1.unsqueeze(1))
            y = torch.bmm(a, self.w2)
            if self.b2 is not None:
                y = y + self.b2.unsqueeze(1)
            y = y.reshape(-1, self.h)
        elif variant == "grouped":
            offs = torch.cumsum(counts, 0).to(torch.int32)
            h1 = torch._grouped_mm(xs, self.w1, offs=offs)
            if self.b1 is not None:
                h1 = h1 + self.b1.repeat_interleave(counts, dim=0, output_size=xs.shape[0])
            a = activation(self.kind, h1)
            y = torch._grouped_mm(a, self.w2, offs=offs)
            if self.b2 is not None:
                y = y + self.b2.repeat_interleave(counts, dim=0, output_size=xs.shape[0])
        else:  # loop
            outs = []
            start = 0
            for i, n in enumerate(splits):
                xi = xs[start:start + n]
                start += n
                h1 = xi @ self.w1s[i]
                a = activation(self.kind, h1, None if self.b1s is None else self.b1s[i])
                yi = a @ self.w2s[i]
                if self.b2s is not None:
                    yi = yi + self.b2s[i]
                outs.append(yi)
            y = torch.cat(outs, 0)
        # un-sort + weighted combine back to the T tokens
        rows = order                                   # y[j] belongs to received row order[j]
        w = probs.reshape(-1).index_select(0, rows).unsqueeze(1)
        out = torch.zeros_like(x).index_add(0, token_of_row.index_select(0, rows), y * w)
        return out


def time_step(fn, warmup=3, reps=12):
    ts = event_times(fn, warmup, reps, sync_device=True)
    return statistics.median(ts), min(ts)


def kernel_sum(fn):
    from torch.profiler import profile, ProfilerActivity
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    total_us = 0.0
    n = 0
    by_name = {}
    for ev in prof.events():
        dt = getattr(ev, "device_type", None)
        if dt is not None and "CUDA" in str(dt):
            d = getattr(ev, "device_time", None)
            if d is None:
                d = getattr(ev, "cuda_time", 0.0)
            total_us += d
            n += 1
            by_name[ev.name] = by_name.get(ev.name, 0.0) + d * 1e-6
    return total_us * 1e-6, n, by_name


def run_model(spec):
    name, h, E, k, f, ep, T, kind = spec
    layers = [Layer(h, E, k, f, ep, kind) for _ in range(LAYERS)]
    x0 = torch.randn(T, h, device=dev, dtype=bf16)
    e = E // ep
    m = T * k // e
    flops = LAYERS * 3 * 2 * T * k * (h * 2 * f + f * h)   # expert GEMMs, fwd + 2 bwd
    for variant in ("loop", "grouped", "bmm", "single"):
        for sync in (False, True):
            if variant == "loop" and not sync:
                continue
            if variant == "grouped" and not hasattr(torch, "_grouped_mm"):
                continue

            def step():
                x = x0.clone().requires_grad_()
                y = x
                for L in layers:
                    y = L.forward(y, variant, sync)
                y.backward(torch.ones_like(y))
                for L in layers:
                    for t in L.params:
                        t.grad = None
            try:
                med, mn = time_step(step)
                ks, nk, by_name = kernel_sum(step)
                row = {"model": name, "hidden": h, "experts": E, "top_k": k, "expert_ffn": f,
                       "ep": ep, "local_experts": e, "tokens": T, "rows_per_expert": m,
                       "activation": kind, "variant": variant, "host_sync": sync,
                       "layers": LAYERS, "step_s": med, "step_min_s": mn, "kernel_sum_s": ks,
                       "kernels": nk, "idle_s": med - ks, "per_layer_s": med / LAYERS,
                       "per_layer_kernel_s": ks / LAYERS, "expert_gemm_flops": flops,
                       "step_tflops_expert_gemms": flops / med / 1e12,
                       "kernels_by_name_s": dict(sorted(by_name.items(), key=lambda kv: -kv[1]))}
                res["rows"].append(row)
                p("%-20s %-7s sync=%d  per layer %.3f ms (kernels %.3f ms, %d kernels/step, idle %.0f %%)"
                  % (name, variant, sync, med / LAYERS * 1e3, ks / LAYERS * 1e3, nk,
                     100 * (med - ks) / med))
                if variant == "grouped" and not sync:
                    for kn, kt in sorted(by_name.items(), key=lambda kv: -kv[1])[:14]:
                        p("    %8.3f ms/layer  %s" % (kt / LAYERS * 1e3, kn[:110]))
            except Exception as ex:  # noqa: BLE001
                err("%s %s sync=%d" % (name, variant, sync), ex)
    del layers
    torch.cuda.empty_cache()


def main():
    os.makedirs(OUT, exist_ok=True)
    res["env"] = short_env(has_grouped_mm=hasattr(torch, "_grouped_mm"))
    p(res["env"])
    for spec in MODELS:
        try:
            run_model(spec)
        except Exception as ex:  # noqa: BLE001
            err(spec[0], ex)
        with open(os.path.join(OUT, "moe_layer_step.json"), "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
