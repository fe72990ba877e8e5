#include "simulator/lowering/mla.h"

namespace llmplan::simulator::lowering {

Mla::Mla(const Model& model, const Plan& plan, const Placement& placement, const CostModel& cost)
    : Attention(model, plan, placement, cost) {
  ql_ = model.q_lora_rank;
  kl_ = model.kv_lora_rank;
  r_ = model.qk_rope_head_dim;
  n_ = model.qk_nope_head_dim;
  v_ = model.v_head_dim;
  qk_dim_ = n_ + r_;
  v_dim_ = v_;
  kv_heads_ = a_;  // every head its own up-projected key and value
  q_cols_ = static_cast<double>(a_) * qk_dim_ / t_;
  kv_cols_ = static_cast<double>(a_) * (n_ + v_) / t_;
}

double Mla::latent_bytes() const { return T_ * (ql_ + kl_ + r_) * kElem; }

double Mla::rope_bytes() const {
  // Forward: read q (a qk / t) and kv (a (n + v) / t) and the rotary key
  // (r), write q, k (a qk / t each) and v (a v / t). The backward reads the
  // three gradients and writes those of q, kv and the rotary key: the same.
  const double read = q_cols_ + kv_cols_ + r_;
  const double written = 2.0 * q_cols_ + static_cast<double>(a_) * v_ / t_;
  return T_ * (read + written) * kElem;
}

void Mla::forward(std::vector<LoweredOp>* out, OpCategory cat) {
  const Pass f = Pass::kForward;
  cast(out, f, Tsp_ * h_, cat);
  // Down-projections on the rank's Tsp tokens (duplicated weights).
  if (ql_ > 0) gemm(out, KernelKind::kQkvGemm, f, Tsp_, ql_, h_, 1, cat);
  gemm(out, KernelKind::kQkvGemm, f, Tsp_, kl_ + r_, h_, 1, cat);
  mem(out, KernelKind::kLayerNorm, f, Tsp_ * (ql_ + kl_) * kElem * 2, cat);
  // SP: the latents gathered for the column-parallel up-projections (and
  // the hidden state for a direct q projection).
  if (sp_) tp(out, CollectiveKind::kAllGather, latent_bytes() + (ql_ > 0 ? 0.0 : T_ * h_ * kElem));
  cast(out, f, T_ * (ql_ > 0 ? ql_ + kl_ : h_ + kl_), cat);
  gemm(out, KernelKind::kQkvGemm, f, T_, q_cols_, ql_ > 0 ? ql_ : h_, 1, cat);
  gemm(out, KernelKind::kQkvGemm, f, T_, kv_cols_, kl_, 1, cat);
  mem(out, KernelKind::kActivation, f, rope_bytes(), cat);
  core_forward(out, cat);
  const double o_cols = static_cast<double>(a_) * v_ / t_;
  cast(out, f, T_ * o_cols, cat);
  gemm(out, KernelKind::kOutProjGemm, f, T_, h_, o_cols, 1, cat);
  tp_reduce(out);
}

void Mla::backward(std::vector<LoweredOp>* out) {
  const OpCategory c = OpCategory::kCompute;
  const Pass b = Pass::kBackward;
  const double o_cols = static_cast<double>(a_) * v_ / t_;
  sp_gather_quantized(out);
  cast(out, b, T_ * h_, c);
  gemm_backward(out, KernelKind::kOutProjGemm, T_, h_, o_cols, 1);
  // Plan::recompute_modules mla_up_proj: the up-projections and RoPE run
  // again (on the latents the checkpoint kept; with SP the gathered
  // latents are kept as its input) to rebuild q, k, v for attention's
  // backward.
  if (p_.recomputes(kRecomputeMlaUpProj)) {
    const OpCategory r = OpCategory::kRecompute;
    const Pass f = Pass::kForward;
    cast(out, f, T_ * (ql_ > 0 ? ql_ + kl_ : h_ + kl_), r);
    gemm(out, KernelKind::kQkvGemm, f, T_, q_cols_, ql_ > 0 ? ql_ : h_, 1, r);
    gemm(out, KernelKind::kQkvGemm, f, T_, kv_cols_, kl_, 1, r);
    mem(out, KernelKind::kActivation, f, rope_bytes(), r);
  }
  // Selective recompute reruns the attention core's forward, fused or not
  // (Attention::backward).
  if (p_.recompute == Recompute::kSelective) core_forward(out, OpCategory::kRecompute);
  if (p_.flash_attention) {
    flash(out, Pass::kBackward, c);
  } else {
    const double heads = static_cast<double>(b_) * a_ / t_;
    const double scores = heads * s_ * s_;
    gemm_backward(out, KernelKind::kAttnValueGemm, s_, v_dim_, s_, heads);
    mem(out, KernelKind::kAttnDropout, b, scores * (kElem * 2 + 1), c);
    softmax(out, b, scores, c);
    gemm_backward(out, KernelKind::kAttnScoreGemm, s_, s_, qk_dim_, heads);
  }
  mem(out, KernelKind::kActivation, b, rope_bytes(), c);
  cast(out, b, T_ * (q_cols_ + kv_cols_), c);
  gemm_backward(out, KernelKind::kQkvGemm, T_, kv_cols_, kl_, 1);
  gemm_backward(out, KernelKind::kQkvGemm, T_, q_cols_, ql_ > 0 ? ql_ : h_, 1);
  // The latents' (and rotary key's) gradients summed over TP:
  // reduce-scattered to the sequence shards with SP, all-reduced without.
  tp(out, sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
     latent_bytes() + (ql_ > 0 ? 0.0 : T_ * h_ * kElem));
  mem(out, KernelKind::kLayerNorm, b, Tsp_ * (ql_ + kl_) * kElem * 3, c);
  cast(out, b, Tsp_ * (ql_ + kl_ + r_), c);
  gemm_backward(out, KernelKind::kQkvGemm, Tsp_, kl_ + r_, h_, 1);
  if (ql_ > 0) gemm_backward(out, KernelKind::kQkvGemm, Tsp_, ql_, h_, 1);
}

}  // namespace llmplan::simulator::lowering
