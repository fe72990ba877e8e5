#include "simulator/layers/mamba.h"

#include <string>

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

namespace llmplan::simulator::layers {

double mamba_split_activation_bytes(const Model& model, double gemm_in) {
  const double di = model.mamba_inner();
  return 2.0 * model.mamba_in_proj_columns() + 2.0 * model.mamba_conv_channels() + 2.0 * di +
         8.0 * model.mamba_heads + gemm_in * di;
}

Status validate_mamba(const Model& m, bool has_mamba) {
  if (!has_mamba) {
    // No Mamba layer: no Mamba field may be set (it would be silently ignored).
    const char* why = "needs Mamba layers (M in layer_pattern)";
    if (m.mamba_heads != 0) return bad_field("mamba_heads", why);
    if (m.mamba_head_dim != 0) return bad_field("mamba_head_dim", why);
    if (m.mamba_state_dim != 0) return bad_field("mamba_state_dim", why);
    if (m.mamba_groups != 0) return bad_field("mamba_groups", why);
    if (m.mamba_conv_kernel != 4) return bad_field("mamba_conv_kernel", why);
    if (m.mamba_chunk_size != 128) return bad_field("mamba_chunk_size", why);
    return Status();
  }
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mamba_heads", m.mamba_heads, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mamba_head_dim", m.mamba_head_dim, 1, 4096));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mamba_state_dim", m.mamba_state_dim, 1, 4096));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mamba_groups", m.mamba_groups, 1, m.mamba_heads));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mamba_conv_kernel", m.mamba_conv_kernel, 1, 64));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("mamba_chunk_size", m.mamba_chunk_size, 1, 4096));
  if (m.mamba_heads % m.mamba_groups != 0) {
    return bad_field("mamba_groups", std::to_string(m.mamba_groups) + " groups do not divide " +
                                         std::to_string(m.mamba_heads) + " mamba_heads");
  }
  if (static_cast<int64_t>(m.mamba_heads) * m.mamba_head_dim > Model::kMaxFfnHidden ||
      static_cast<int64_t>(m.mamba_groups) * m.mamba_state_dim > Model::kMaxFfnHidden) {
    return bad_field("mamba_heads", "mamba_heads x mamba_head_dim and mamba_groups x "
                                    "mamba_state_dim must be at most " +
                                        std::to_string(Model::kMaxFfnHidden));
  }
  return Status();
}

}  // namespace llmplan::simulator::layers

namespace llmplan::simulator {

int64_t Model::mamba_layer_parameters() const {
  const int64_t h = hidden_size, di = mamba_inner(), heads = mamba_heads;
  // Megatron-Core MambaMixer: in_proj and out_proj without bias, conv1d with
  // bias (conv_bias=True), dt_bias, A_log and D per head (D_has_hdim False),
  // the RMSNormGated weight over d_inner.
  return layers::norm_parameters(*this) + h * mamba_in_proj_columns() +
         static_cast<int64_t>(mamba_conv_channels()) * (mamba_conv_kernel + 1) + 3 * heads + di +
         di * h;
}

double Model::ssd_flops_per_token() const {
  const double Q = mamba_chunk_size, N = mamba_state_dim, P = mamba_head_dim;
  const double H = mamba_heads, G = mamba_groups;
  return 2.0 * (Q * N * G + Q * P * H + 2.0 * N * P * H);
}

}  // namespace llmplan::simulator
