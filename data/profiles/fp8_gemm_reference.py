# FP8 GEMM ceilings on one GPU (#26/#27: bounds for the fitted fp8_gemm_efficiency and the FP8 expert
# GEMMs of the MoE rows), beside BF16 on the same shapes.
#
# Run on the GPU:  OUT=DIR python3 fp8_gemm_reference.py      (writes DIR/fp8_gemm_reference.json)
#
# dense: torch._scaled_mm (cuBLASLt), E4M3 inputs, BF16 output, per-tensor and row-wise scales, with
#        and without fast accumulation (Transformer Engine runs the forward GEMM with fast
#        accumulation and the backward GEMMs with split accumulation), on square sizes and on the
#        GEMMs of training layers (tokens x hidden shapes of presets/models.json models);
# grouped: torch._scaled_grouped_mm (row-wise scales) on the expert GEMMs of the published H100 MoE
#        layouts, against torch._grouped_mm in BF16;
# casts: amax + scale + cast to E4M3 of a BF16 activation, eager (what a current-scaling recipe runs
#        per GEMM input when it is not fused into the previous kernel).
import json
import os
import statistics
import traceback

import torch

from timing import error_line, event_times, p, short_env

OUT = os.environ.get("OUT", "/tmp/out")
dev = torch.device("cuda")
bf16 = torch.bfloat16
f8 = torch.float8_e4m3fn
PEAK_BF16 = 989e12   # H100 SXM dense, datasheet
PEAK_FP8 = 1979e12
res = {"kind": "llmplan-fp8-gemm-reference", "format_version": 1, "env": {}, "dense": [],
       "grouped": [], "casts": [], "errors": []}


def err(where, ex):
    msg = error_line(where, ex)
    res["errors"].append(msg)
    p("ERROR", msg)


def time_fn(fn, warmup=5, reps=20):
    ts = event_times(fn, warmup, reps, sync_device=True)
    return statistics.median(ts), min(ts)


def dense_shapes():
    out = [("square", n, n, n) for n in (2048, 4096, 8192, 16384)]
    # (label, M tokens, N, K): qkv / fc1 / fc2 of a few presets at 4096 and 8192 tokens
    for name, h, ffn in (("llama3-8b", 4096, 14336), ("llama3-70b", 8192, 28672),
                         ("qwen3-30b-a3b", 2048, 6144)):
        for m in (4096, 8192):
            out += [("%s fc1 m%d" % (name, m), m, 2 * ffn, h),
                    ("%s fc2 m%d" % (name, m), m, h, ffn)]
    return out


def dense():
    for label, M, N, K in dense_shapes():
        flops = 2.0 * M * N * K
        a = torch.randn(M, K, device=dev, dtype=bf16)
        w = torch.randn(N, K, device=dev, dtype=bf16)
        try:
            t, tmin = time_fn(lambda: a @ w.t())
            res["dense"].append({"label": label, "m": M, "n": N, "k": K, "dtype": "bf16",
                                 "time_s": t, "tflops": flops / t / 1e12,
                                 "of_peak": flops / t / PEAK_BF16})
            p("dense %-24s bf16            %7.1f TFLOP/s (%.1f %% of 989)" % (label, flops / t / 1e12,
                                                                        100 * flops / t / PEAK_BF16))
        except Exception as ex:  # noqa: BLE001
            err("dense bf16 " + label, ex)
        a8 = a.to(f8)
        w8 = w.to(f8)
        one = torch.tensor(1.0, device=dev)
        sa = torch.ones(M, 1, device=dev)
        sb = torch.ones(1, N, device=dev)
        for scaling, fast in (("tensor", True), ("tensor", False), ("row", True), ("row", False)):
            try:
                if scaling == "tensor":
                    fn = lambda: torch._scaled_mm(a8, w8.t(), one, one, out_dtype=bf16,  # noqa: E731
                                                  use_fast_accum=fast)
                else:
                    fn = lambda: torch._scaled_mm(a8, w8.t(), sa, sb, out_dtype=bf16,  # noqa: E731
                                                  use_fast_accum=fast)
                t, tmin = time_fn(fn)
                res["dense"].append({"label": label, "m": M, "n": N, "k": K, "dtype": "e4m3",
                                     "scaling": scaling, "fast_accum": fast, "time_s": t,
                                     "min_time_s": tmin, "tflops": flops / t / 1e12,
                                     "of_peak": flops / t / PEAK_FP8})
                p("dense %-24s e4m3 %-6s fast=%d %7.1f TFLOP/s (%.1f %% of 1979)"
                  % (label, scaling, fast, flops / t / 1e12, 100 * flops / t / PEAK_FP8))
            except Exception as ex:  # noqa: BLE001
                err("dense fp8 %s %s fast=%d" % (label, scaling, fast), ex)
        del a, w, a8, w8
    torch.cuda.empty_cache()


# name, hidden, expert FFN, local experts, rows per expert (published H100 layouts, T = 4096)
MOE = [("qwen3-30b-a3b", 2048, 768, 8, 4096), ("qwen3-235b-a22b", 4096, 1536, 4, 8192),
       ("gpt-oss-120b", 2880, 2880, 16, 1024)]


def grouped():
    for name, h, f, e, m in MOE:
        for gemm, K, N in (("fc1", h, 2 * f), ("fc2", f, h)):
            flops = 2.0 * e * m * K * N
            x = torch.randn(e * m, K, device=dev, dtype=bf16)
            w = torch.randn(e, N, K, device=dev, dtype=bf16)      # [e, N, K]: operand [e, K, N] K-major
            offs = torch.arange(1, e + 1, device=dev, dtype=torch.int32) * m
            try:
                t, _ = time_fn(lambda: torch._grouped_mm(x, w.transpose(1, 2), offs=offs))
                res["grouped"].append({"model": name, "gemm": gemm, "local_experts": e, "m": m,
                                       "n": N, "k": K, "dtype": "bf16", "time_s": t,
                                       "tflops": flops / t / 1e12})
                p("grouped %-16s %s e%-2d m%-5d bf16      %7.1f TFLOP/s" % (name, gemm, e, m, flops / t / 1e12))
            except Exception as ex:  # noqa: BLE001
                err("grouped bf16 %s %s" % (name, gemm), ex)
            x8 = x.to(f8)
            w8 = w.to(f8)
            sa = torch.ones(e * m, device=dev)
            sb = torch.ones(e, N, device=dev)
            for fast in (True, False):
                try:
                    fn = lambda: torch._scaled_grouped_mm(x8, w8.transpose(1, 2), sa, sb,  # noqa: E731
                                                          offs=offs, out_dtype=bf16,
                                                          use_fast_accum=fast)
                    t, _ = time_fn(fn)
                    res["grouped"].append({"model": name, "gemm": gemm, "local_experts": e, "m": m,
                                           "n": N, "k": K, "dtype": "e4m3", "scaling": "row",
                                           "fast_accum": fast, "time_s": t,
                                           "tflops": flops / t / 1e12, "of_peak": flops / t / PEAK_FP8})
                    p("grouped %-16s %s e%-2d m%-5d e4m3 fast=%d %7.1f TFLOP/s (%.1f %% of 1979)"
                      % (name, gemm, e, m, fast, flops / t / 1e12, 100 * flops / t / PEAK_FP8))
                except Exception as ex:  # noqa: BLE001
                    err("grouped fp8 %s %s fast=%d" % (name, gemm, fast), ex)
            del x, w, x8, w8
    torch.cuda.empty_cache()


def casts():
    for rows, cols in ((4096, 4096), (8192, 8192), (16384, 14336)):
        x = torch.randn(rows, cols, device=dev, dtype=bf16)
        nbytes = rows * cols * 3     # read bf16 twice? counted once: read 2 B, write 1 B

        def cast():
            amax = x.abs().amax()
            scale = 448.0 / amax.float().clamp(min=1e-12)
            return (x.float() * scale).to(f8)

        def cast_t():
            return cast().t().contiguous()
        try:
            for label, fn, b in (("amax+cast", cast, nbytes), ("amax+cast+transpose", cast_t, nbytes + 2 * rows * cols)):
                t, _ = time_fn(fn)
                res["casts"].append({"rows": rows, "cols": cols, "op": label, "time_s": t,
                                     "min_bytes": b, "gbps_of_min_bytes": b / t / 1e9})
                p("cast %5dx%-5d %-20s %.3f ms (%.0f GB/s of the minimum %d bytes)" % (rows, cols, label, t * 1e3, b / t / 1e9, b))
        except Exception as ex:  # noqa: BLE001
            err("casts %dx%d" % (rows, cols), ex)
        del x
    torch.cuda.empty_cache()


def main():
    os.makedirs(OUT, exist_ok=True)
    res["env"] = short_env(cublas=getattr(torch.backends.cuda, "cublas_version", lambda: None)()
                           if callable(getattr(torch.backends.cuda, "cublas_version", None)) else None)
    p(res["env"])
    for section in (dense, grouped, casts):
        try:
            section()
        except Exception as ex:  # noqa: BLE001
            err(section.__name__, ex)
            traceback.print_exc()
        with open(os.path.join(OUT, "fp8_gemm_reference.json"), "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
