#include "simulator/lowering/mlp.h"

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
