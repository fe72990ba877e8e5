# What the PyTorch reference scripts of this folder share: a flushed print, the one-line form of an
# error, the GPU's description and the CUDA-event timings. Each script imports it from beside itself
# (`python3 data/profiles/NAME.py` puts this folder first on sys.path); none of it is run alone.
import statistics
import time
import traceback

import torch


def p(*a):
    print(*a, flush=True)


def error_line(where, ex):
    """`where: ExceptionType: first line of the message` (at most 300 characters of it)."""
    return "%s: %s: %s" % (where, type(ex).__name__, str(ex).splitlines()[0][:300] if str(ex) else "")


def gpu_env(e, cudnn):
    """Writes torch's and the GPU's description into the dict e (with the cuDNN version if cudnn)."""
    e["torch"] = torch.__version__
    e["torch_cuda"] = torch.version.cuda
    if cudnn:
        e["cudnn"] = torch.backends.cudnn.version()
    e["gpu"] = torch.cuda.get_device_name(0)
    pr = torch.cuda.get_device_properties(0)
    e["sm_count"] = pr.multi_processor_count
    e["memory_bytes"] = pr.total_memory
    return pr


def time_batched(fn, warmup, reps):
    """Median/min/max seconds per call, CUDA events. Short ops run `inner` times back to back
    between two events (launch gaps hidden as in a training step); each repetition is separated
    by a sync."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    one = a.elapsed_time(b) * 1e-3
    inner = max(1, min(20, int(100e-6 / max(one, 1e-7))))
    ts = []
    for _ in range(reps):
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3 / inner)
    return {"time_s": statistics.median(ts), "min_time_s": min(ts), "max_time_s": max(ts),
            "calls_per_timing": inner, "repeats": reps}


def event_times(fn, warmup, reps, sync_device):
    """Seconds of each of `reps` single calls after `warmup` calls, each between two fresh CUDA
    events; waits on the end event, or on the whole device when sync_device."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        if sync_device:
            torch.cuda.synchronize()
        else:
            b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3)
    return ts


def ceilings(time_fn, dev, out):
    """Writes into out the bf16 TFLOP/s of an 8192^3 GEMM and the GB/s of a 2 GiB copy on dev,
    timed by time_fn (fn, warmup, reps) -> {"time_s": ...}."""
    n = 8192
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    t = time_fn(lambda: torch.mm(a, b), 5, 20)
    out["gemm_8192_tflops"] = 2 * n ** 3 / t["time_s"] / 1e12
    x = torch.empty(1 << 30, device=dev, dtype=torch.bfloat16).normal_()
    y = torch.empty_like(x)
    t = time_fn(lambda: y.copy_(x), 3, 20)
    out["copy_2gib_gbps"] = 2 * x.numel() * 2 / t["time_s"] / 1e9
    del a, b, x, y


def short_env(**more):
    """torch's version, its CUDA, the GPU's name and SM count, then the entries of more."""
    props = torch.cuda.get_device_properties(0)
    e = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": props.name,
         "sm_count": props.multi_processor_count}
    e.update(more)
    return e


def run_section(section, err):
    """Runs section(); an exception goes to err(section's name, exception) and its traceback is
    printed. Returns the seconds it took."""
    ts = time.time()
    try:
        section()
    except Exception as ex:  # noqa: BLE001
        err(section.__name__, ex)
        traceback.print_exc()
    return time.time() - ts
