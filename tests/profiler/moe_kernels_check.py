# GPU check of llmplan-profile's MoE kernels (profiler/moe_kernels.cu) against PyTorch in fp32: builds
# the .cu file as a PyTorch extension and compares each kernel's output on random inputs.
# Not part of ctest (it needs a GPU, nvcc and PyTorch). Run from the repository root on the GPU:
#   python3 tests/profiler/moe_kernels_check.py        (exit 0 when every check passes)
import os
import sys

import torch
from torch.utils.cpp_extension import load

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WRAPPER = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include "profiler/moe_kernels.h"
using namespace llmplan::profiler;
static void ok(cudaError_t e) { TORCH_CHECK(e == cudaSuccess, cudaGetErrorString(e)); }
static cudaStream_t st() { return at::cuda::getCurrentCUDAStream(); }
void topk_fwd(torch::Tensor l, torch::Tensor w, torch::Tensor i, int64_t k, bool sig) {
  ok(router_topk_forward(l.data_ptr(), w.data_ptr<float>(), i.data_ptr<int32_t>(), l.size(0),
                         l.size(1), k, sig, st())); }
void topk_bwd(torch::Tensor l, torch::Tensor i, torch::Tensor dw, torch::Tensor dl, int64_t k,
              bool sig) {
  ok(router_topk_backward(l.data_ptr(), i.data_ptr<int32_t>(), dw.data_ptr<float>(), dl.data_ptr(),
                          l.size(0), l.size(1), k, sig, st())); }
void perm_fwd(torch::Tensor x, torch::Tensor src, torch::Tensor out) {
  ok(permute_tokens(x.data_ptr(), src.data_ptr<int32_t>(), out.data_ptr(), out.size(0), x.size(1),
                    st())); }
void perm_bwd(torch::Tensor dout, torch::Tensor pos, torch::Tensor dx) {
  ok(permute_tokens_backward(dout.data_ptr(), pos.data_ptr<int32_t>(), dx.data_ptr(), pos.size(0),
                             pos.size(1), dx.size(1), st())); }
void unperm_fwd(torch::Tensor eo, torch::Tensor pos, torch::Tensor w, torch::Tensor y) {
  ok(unpermute_tokens(eo.data_ptr(), pos.data_ptr<int32_t>(), w.data_ptr<float>(), y.data_ptr(),
                      pos.size(0), pos.size(1), y.size(1), st())); }
void unperm_bwd(torch::Tensor dy, torch::Tensor eo, torch::Tensor pos, torch::Tensor w,
                torch::Tensor deo, torch::Tensor dw) {
  ok(unpermute_tokens_backward(dy.data_ptr(), eo.data_ptr(), pos.data_ptr<int32_t>(),
                               w.data_ptr<float>(), deo.data_ptr(), dw.data_ptr<float>(),
                               pos.size(0), pos.size(1), dy.size(1), st())); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("topk_fwd", &topk_fwd); m.def("topk_bwd", &topk_bwd); m.def("perm_fwd", &perm_fwd);
  m.def("perm_bwd", &perm_bwd); m.def("unperm_fwd", &unperm_fwd); m.def("unperm_bwd", &unperm_bwd);
}
"""

failures = []


def check(name, got, ref, tol):
    got, ref = got.double(), ref.double()
    err = ((got - ref).norm() / ref.norm().clamp_min(1e-30)).item()
    good = err <= tol and torch.isfinite(got).all().item()
    print("%-48s rel. error %.2e (limit %.0e) %s" % (name, err, tol, "ok" if good else "FAIL"))
    if not good:
        failures.append(name)


def main():
    build = os.path.join(os.environ.get("TMPDIR", "/tmp"), "llmplan_moe_check")
    os.makedirs(build, exist_ok=True)
    with open(os.path.join(build, "wrapper.cpp"), "w") as f:
        f.write(WRAPPER)
    ext = load("llmplan_moe_check", [os.path.join(build, "wrapper.cpp"),
                                     os.path.join(ROOT, "profiler", "moe_kernels.cu")],
               extra_include_paths=[ROOT], build_directory=build, verbose=False)
    dev = "cuda"
    torch.manual_seed(0)
    for T, E, k, sig in [(1000, 128, 8, False), (777, 256, 8, True), (513, 8, 2, False),
                         (300, 512, 16, True), (64, 40, 3, False)]:
        what = "T=%d E=%d k=%d %s" % (T, E, k, "sigmoid" if sig else "softmax")
        logits = torch.randn(T, E, device=dev).to(torch.bfloat16)
        w = torch.full((T, k), float("nan"), device=dev)
        idx = torch.full((T, k), -1, device=dev, dtype=torch.int32)
        ext.topk_fwd(logits, w, idx, k, sig)
        lf = logits.float().requires_grad_()
        s = torch.sigmoid(lf) if sig else torch.softmax(lf, -1)
        v, _ = torch.topk(s, k, -1)
        # Ties (bf16 logits repeat) may pick other experts of equal score: compare the scores of
        # the experts the kernel chose with PyTorch's top-k values, both sorted.
        mine = s.detach().gather(1, idx.long()).sort(-1, descending=True).values
        check("router_topk fwd selected scores " + what, mine, v.detach(), 1e-6)
        distinct = (idx.long().sort(-1).values.diff(dim=-1) > 0).all().item()
        check("router_topk fwd weights " + what, w, (mine / mine.sum(-1, keepdim=True)), 1e-5)
        if not distinct:
            failures.append("router_topk fwd repeated expert " + what)
        sel = s.gather(1, idx.long())
        wr = sel / sel.sum(-1, keepdim=True)
        dw = torch.randn(T, k, device=dev)
        (g,) = torch.autograd.grad(wr, lf, dw)
        dl = torch.full((T, E), float("nan"), device=dev, dtype=torch.bfloat16)
        ext.topk_bwd(logits, idx, dw, dl, k, sig)
        check("router_topk bwd " + what, dl, g, 1e-2)
    for T, k, h in [(1000, 8, 2048), (333, 4, 2880), (64, 2, 7168)]:
        what = "T=%d k=%d h=%d" % (T, k, h)
        x = torch.randn(T, h, device=dev).to(torch.bfloat16)
        expert = torch.stack([torch.randperm(64, device=dev)[:k] for _ in range(T)])
        order = torch.argsort(expert.reshape(-1), stable=True)
        src = (order // k).int()
        pos = torch.empty(T * k, device=dev, dtype=torch.int32)
        pos[order] = torch.arange(T * k, device=dev, dtype=torch.int32)
        pos = pos.view(T, k)
        out = torch.full((T * k, h), float("nan"), device=dev, dtype=torch.bfloat16)
        ext.perm_fwd(x, src, out)
        check("permute fwd " + what, out, x[src.long()], 0)
        dout = torch.randn(T * k, h, device=dev).to(torch.bfloat16)
        dx = torch.full((T, h), float("nan"), device=dev, dtype=torch.bfloat16)
        ext.perm_bwd(dout, pos, dx)
        ref = torch.zeros(T, h, device=dev).index_add_(0, src.long(), dout.float())
        check("permute bwd " + what, dx, ref, 1e-2)
        w = torch.rand(T, k, device=dev)
        y = torch.full((T, h), float("nan"), device=dev, dtype=torch.bfloat16)
        ext.unperm_fwd(dout, pos, w, y)
        ref = (dout.float()[pos.long()] * w[..., None]).sum(1)
        check("unpermute fwd " + what, y, ref, 1e-2)
        dy = torch.randn(T, h, device=dev).to(torch.bfloat16)
        deo = torch.full((T * k, h), float("nan"), device=dev, dtype=torch.bfloat16)
        dw = torch.full((T, k), float("nan"), device=dev)
        ext.unperm_bwd(dy, dout, pos, w, deo, dw)
        ref_deo = torch.empty(T * k, h, device=dev)
        ref_deo[pos.long().reshape(-1)] = (dy.float()[:, None, :] * w[..., None]).reshape(T * k, h)
        check("unpermute bwd d_expert_out " + what, deo, ref_deo, 1e-2)
        check("unpermute bwd d_weights " + what, dw,
              (dy.float()[:, None, :] * dout.float()[pos.long()]).sum(-1), 1e-3)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
