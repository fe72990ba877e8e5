#include "simulator/layers/mla.h"

#include <algorithm>
#include <string>

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

namespace llmplan::simulator::layers {

int64_t mla_attention_parameters(const Model& m) {
  const int64_t h = m.hidden_size, a = m.num_heads;
  const int64_t ql = m.q_lora_rank, kvl = m.kv_lora_rank;
  const int64_t qk = m.mla_qk_head_dim(), v = m.v_head_dim;
  const int64_t q = ql > 0 ? h * ql + ql + ql * a * qk : h * a * qk;
  const int64_t kv = h * (kvl + m.qk_rope_head_dim) + kvl + kvl * a * (m.qk_nope_head_dim + v);
  return q + kv + a * v * h;
}

// Multi-head latent attention (Model::kv_lora_rank; Megatron-Core
// MLASelfAttention with Transformer Engine), per token in units of h bytes.
// Not split by TP (unless SP: the down-projections run on the rank's
// sequence shard): both norm inputs (4), the down-projections' input (one
// bf16 tensor both read; in FP8 each keeps its own quantized copy; with
// q_lora_rank 0 the direct q projection's input instead of q_down's), the
// FC1 input of a dense MLP, the dropout masks, and the latents: the latent
// RMSNorms' inputs (2 (ql + kl)) and the up-projections' inputs (ql + kl
// in the GEMM input format; TE's column-parallel linears save their
// sequence-parallel shard). Split by TP: what fused attention saves (TE
// FusedAttnFunc: q and k of a (qk) columns, v of a v, out of a v, bf16,
// after RoPE and the head assembly, whose inputs are not kept), the output
// projection's input (out, or its fp8 copy too) and the fp32 softmax
// statistics (4 a). The up-projections' outputs are not kept (RoPE and
// the split are linear; Megatron-Core's fused MLA RoPE saves no input).
// DeepSeek-V3 (arXiv:2412.19437 section 3.2.3) recomputes the latent norms
// and up-projections in the backward; Megatron-Core's "mla_up_proj"
// selective recompute is not modelled here.
AttentionActivations mla_activations(const Model& model, const Plan& plan, bool mlp_input) {
  const double h = model.hidden_size, a = model.num_heads;
  const double ql = model.q_lora_rank, kl = model.kv_lora_rank;
  const double qk = model.mla_qk_head_dim(), v = model.v_head_dim;
  const double gemm_in = gemm_input_bytes_per_element(plan.precision);
  const double down_inputs = gemm_in < 2.0 ? 2.0 * gemm_in : 2.0;
  AttentionActivations act;
  act.replicated = 4.0 + down_inputs + (mlp_input ? gemm_in : 0.0) + (plan.dropout ? 2.0 : 0.0) +
                   (2.0 + gemm_in) * (ql + kl) / h;
  const double out = (gemm_in < 2.0 ? 2.0 + gemm_in : 2.0) * a * v;
  // Plan::recompute_modules mla_up_proj (Megatron-Core MLASelfAttention's
  // qkv_up_checkpoint, a CheckpointWithoutOutput around the up-projections
  // and RoPE): the q, k, v they produce are freed once core attention has
  // run and rebuilt before its backward, so fused attention's saved q, k, v
  // are not held; the up-projections' inputs (the checkpoint's inputs) are.
  const double qkv = plan.recomputes(kRecomputeMlaUpProj) ? 0.0 : 2.0 * 2.0 * a * qk + 2.0 * a * v;
  act.split = (qkv + out) / h;
  if (plan.flash_attention) act.split += 4.0 * a / h;
  return act;
}

double mla_weight_grad_per_token(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size, a = model.num_heads;
  const double ql = model.q_lora_rank, kl = model.kv_lora_rank, r = model.qk_rope_head_dim;
  const double q_down = ql > 0 ? h + ql : 0.0;
  const double q_up = (ql > 0 ? ql : h) + a * model.mla_qk_head_dim() / t;
  const double kv = (h + kl + r) + (kl + a * (model.qk_nope_head_dim + model.v_head_dim) / t);
  return q_down + q_up + kv + (a * model.v_head_dim / t + h);
}

double mla_up_proj_recompute_bytes(const Model& model, const Plan& plan, double tokens) {
  const double a = model.num_heads, t = plan.tensor_parallel;
  return tokens * 2.0 * (2.0 * a * model.mla_qk_head_dim() + a * model.v_head_dim) / t;
}

Status validate_mla_sizes(const Model& m) {
  LLMPLAN_RETURN_IF_ERROR(field_in_range("q_lora_rank", m.q_lora_rank, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("kv_lora_rank", m.kv_lora_rank, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("qk_nope_head_dim", m.qk_nope_head_dim, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("qk_rope_head_dim", m.qk_rope_head_dim, 0, Model::kMaxHidden));
  return field_in_range("v_head_dim", m.v_head_dim, 0, Model::kMaxHidden);
}

Status validate_mla(const Model& m) {
  if (!m.is_mla()) {
    const char* off = "needs kv_lora_rank > 0 (MLA is off)";
    if (m.q_lora_rank != 0) return bad_field("q_lora_rank", off);
    if (m.qk_nope_head_dim != 0) return bad_field("qk_nope_head_dim", off);
    if (m.qk_rope_head_dim != 0) return bad_field("qk_rope_head_dim", off);
    if (m.v_head_dim != 0) return bad_field("v_head_dim", off);
    return Status();
  }
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("qk_nope_head_dim", m.qk_nope_head_dim, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("qk_rope_head_dim", m.qk_rope_head_dim, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("v_head_dim", m.v_head_dim, 1, Model::kMaxHidden));
  if (m.head_dim_size != 0) return bad_field("head_dim", "must be unset with MLA (kv_lora_rank > 0): its widths are qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
  if (m.num_kv_heads != 0 && m.num_kv_heads != m.num_heads) {
    return bad_field("kv_heads", "must be unset with MLA (kv_lora_rank > 0): every head has its own key and value");
  }
  if (m.linear_bias) return bad_field("linear_bias", "must be false with MLA (kv_lora_rank > 0)");
  if (m.positions != PositionEmbedding::kRotary) {
    return bad_field("positions", "must be rotary with MLA (kv_lora_rank > 0)");
  }
  const int64_t widest = static_cast<int64_t>(m.num_heads) *
                         (std::max(m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim));
  if (widest > Model::kMaxFfnHidden) {
    return bad_field("heads", "heads x MLA head width must be at most " +
                                  std::to_string(Model::kMaxFfnHidden) + ", got " +
                                  std::to_string(widest));
  }
  return Status();
}

}  // namespace llmplan::simulator::layers

namespace llmplan::simulator {

int64_t Model::mla_replicated_parameters() const {
  if (!is_mla()) return 0;
  const int64_t h = hidden_size;
  const int64_t q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank : 0;
  return q + h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank;
}

}  // namespace llmplan::simulator
