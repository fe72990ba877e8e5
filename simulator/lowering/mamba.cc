#include "simulator/lowering/mamba.h"

namespace llmplan::simulator::lowering {

KernelDesc Mamba::scan(Pass pass) const {
  const double di = m_.mamba_inner(), H = m_.mamba_heads, P = m_.mamba_head_dim;
  const double N = m_.mamba_state_dim, G = m_.mamba_groups, Q = m_.mamba_chunk_size;
  // Per token of the rank, before the split over t (mamba.h).
  const double bf16_bytes = kElem * (2.0 * di + 2.0 * G * N);  // x, B, C in; y out
  const double fp32_bytes = 8.0 * H;                           // dt, cumulative decay
  const double state_bytes = 4.0 * 4.0 * H * P * N / Q;        // 4 fp32 copies of the chunk states
  const double scale = pass == Pass::kForward ? 1.0 : 2.0;
  KernelDesc desc;
  desc.kind = KernelKind::kSsdScan;
  desc.pass = pass;
  desc.flops = scale * T_ * m_.ssd_flops_per_token() / t_;
  desc.bytes = scale * T_ * (bf16_bytes + fp32_bytes + state_bytes) / t_;
  desc.precision = formats_.p16;
  return desc;
}

void Mamba::forward(std::vector<LoweredOp>* out, OpCategory cat) {
  const double cols = static_cast<double>(m_.mamba_in_proj_columns()) / t_;
  const double conv = static_cast<double>(m_.mamba_conv_channels()) / t_;
  const double di = static_cast<double>(m_.mamba_inner()) / t_;
  cast(out, Pass::kForward, Tsp_ * h_, cat);
  sp_gather_quantized(out);
  gemm(out, KernelKind::kMambaInProjGemm, Pass::kForward, T_, cols, h_, 1, cat);
  mem(out, KernelKind::kMambaConv, Pass::kForward, T_ * conv * kElem * 2, cat);
  push_kernel(out, scan(Pass::kForward), cat);
  mem(out, KernelKind::kMambaGatedNorm, Pass::kForward, T_ * di * kElem * 3, cat);
  cast(out, Pass::kForward, T_ * di, cat);
  gemm(out, KernelKind::kMambaOutProjGemm, Pass::kForward, T_, h_, di, 1, cat);
  tp_reduce(out);
}

void Mamba::backward(std::vector<LoweredOp>* out) {
  const OpCategory c = OpCategory::kCompute;
  const double cols = static_cast<double>(m_.mamba_in_proj_columns()) / t_;
  const double conv = static_cast<double>(m_.mamba_conv_channels()) / t_;
  const double di = static_cast<double>(m_.mamba_inner()) / t_;
  sp_gather_quantized(out);
  cast(out, Pass::kBackward, T_ * h_, c);
  gemm_backward(out, KernelKind::kMambaOutProjGemm, T_, h_, di, 1);
  mem(out, KernelKind::kMambaGatedNorm, Pass::kBackward, T_ * di * kElem * 5, c);
  push_kernel(out, scan(Pass::kBackward), c);
  mem(out, KernelKind::kMambaConv, Pass::kBackward, T_ * conv * kElem * 3, c);
  cast(out, Pass::kBackward, T_ * cols, c);
  gemm_backward(out, KernelKind::kMambaInProjGemm, T_, cols, h_, 1);
  tp_reduce(out);
}

}  // namespace llmplan::simulator::lowering
