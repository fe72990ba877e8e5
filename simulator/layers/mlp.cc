#include "simulator/layers/mlp.h"

#include <cstdint>
#include <string>

namespace llmplan::simulator::layers {

int64_t mlp_parameters(const Model& m, int64_t f) {
  const int64_t h = m.hidden_size;
  const int64_t bias = m.linear_bias ? 1 : 0;
  return m.activation == Activation::kSwiglu ? 3 * h * f + bias * (2 * f + h)
                                             : 2 * h * f + bias * (f + h);
}

double fc1_output_bytes(const Model& model) {
  return model.activation == Activation::kSwiglu ? 4.0 : 2.0;
}

Status validate_activation_clamp(const Model& m) {
  if (!(m.activation_clamp >= 0 && m.activation_clamp <= 1e6)) {
    return bad_field("activation_clamp", "must be 0 (none) or in (0, 1e6], got " +
                                             std::to_string(m.activation_clamp));
  }
  if (m.activation_clamp > 0 && m.activation != Activation::kSwiglu) {
    return bad_field("activation_clamp", "needs the gated activation (swiglu)");
  }
  return Status();
}

}  // namespace llmplan::simulator::layers

namespace llmplan::simulator::lowering {

void DenseMlp::forward(std::vector<LoweredOp>* out, OpCategory cat) { core_forward(out, cat, f_); }

void DenseMlp::backward(std::vector<LoweredOp>* out) { core_backward(out, f_); }

void DenseMlp::core_forward(std::vector<LoweredOp>* out, OpCategory cat, int f) const {
  const double fc1_cols = (swiglu_ ? 2.0 : 1.0) * f / t_;
  cast(out, Pass::kForward, Tsp_ * h_, cat);
  sp_gather_quantized(out);
  gemm(out, KernelKind::kFc1Gemm, Pass::kForward, T_, fc1_cols, h_, 1, cat);
  mem(out, KernelKind::kActivation, Pass::kForward, T_ * f / t_ * kElem * (swiglu_ ? 3 : 2), cat);
  cast(out, Pass::kForward, T_ * f / t_, cat);
  gemm(out, KernelKind::kFc2Gemm, Pass::kForward, T_, h_, static_cast<double>(f) / t_, 1, cat);
  tp_reduce(out);
}

void DenseMlp::core_backward(std::vector<LoweredOp>* out, int f) const {
  const OpCategory c = OpCategory::kCompute;
  const double fc1_cols = (swiglu_ ? 2.0 : 1.0) * f / t_;
  sp_gather_quantized(out);
  cast(out, Pass::kBackward, T_ * h_, c);
  gemm_backward(out, KernelKind::kFc2Gemm, T_, h_, static_cast<double>(f) / t_, 1);
  mem(out, KernelKind::kActivation, Pass::kBackward, T_ * f / t_ * kElem * (swiglu_ ? 5 : 3), c);
  cast(out, Pass::kBackward, T_ * fc1_cols, c);
  gemm_backward(out, KernelKind::kFc1Gemm, T_, fc1_cols, h_, 1);
  tp_reduce(out);
}

}  // namespace llmplan::simulator::lowering
