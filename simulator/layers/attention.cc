#include "simulator/layers/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "simulator/layers/mla.h"

namespace llmplan::simulator::lowering {

Attention::Attention(const Model& model, const Plan& plan, const Placement& placement,
                     const CostModel& cost)
    : LayerPart(model, plan, placement, cost) {
  // Megatron's FusedScaleMaskSoftmax runs its one-kernel CUDA softmax only
  // when 16 < s <= 4096, s % 4 == 0 and the attention batches of a rank
  // (b * a / t) are a multiple of the kernel's 4 batches per block (for
  // s > 128; 8 below); otherwise it falls back to PyTorch ops in fp32.
  const int64_t attn_batches = static_cast<int64_t>(b_) * a_ / t_;
  const int per_block = s_ > 128 ? 4 : 8;
  fused_softmax_ = s_ > 16 && s_ <= 4096 && s_ % 4 == 0 && attn_batches % per_block == 0;
  span_ = s_;
  qk_dim_ = d_;
  v_dim_ = d_;
  kv_heads_ = g_;
}

void Attention::begin_layer(int layer) {
  span_ = m_.attention_span(layer);
  chunked_ = span_ < s_ && m_.is_chunked_layer(layer);
  // Llama 4's global layers (chunked attention off for the layer) are NoPE.
  const bool nope = m_.attention_chunk > 0 && !m_.is_chunked_layer(layer);
  rope_ = m_.positions == PositionEmbedding::kRotary && m_.rotary_fraction > 0 && !nope &&
          !m_.is_mla();
}

void Attention::forward(std::vector<LoweredOp>* out, OpCategory cat) {
  const double q_cols = static_cast<double>(a_ + 2 * g_) * d_ / t_;
  cast(out, Pass::kForward, Tsp_ * h_, cat);
  sp_gather_quantized(out);
  gemm(out, KernelKind::kQkvGemm, Pass::kForward, T_, q_cols, h_, 1, cat);
  rope(out, Pass::kForward, cat);
  core_forward(out, cat);
  cast(out, Pass::kForward, T_ * a_ * d_ / t_, cat);
  gemm(out, KernelKind::kOutProjGemm, Pass::kForward, T_, h_, static_cast<double>(a_) * d_ / t_,
       1, cat);
  tp_reduce(out);
}

void Attention::backward(std::vector<LoweredOp>* out) {
  const OpCategory c = OpCategory::kCompute;
  const double q_cols = static_cast<double>(a_ + 2 * g_) * d_ / t_;
  const double heads = static_cast<double>(b_) * a_ / t_;
  sp_gather_quantized(out);
  cast(out, Pass::kBackward, T_ * h_, c);
  gemm_backward(out, KernelKind::kOutProjGemm, T_, h_, static_cast<double>(a_) * d_ / t_, 1);
  if (p_.flash_attention) {
    // Selective recompute checkpoints the attention core whatever its
    // kernel (Megatron-Core SelfAttention: checkpoint_core_attention when
    // recompute_granularity is "selective" and "core_attn" is among
    // recompute_modules, its default): the fused forward runs again first.
    if (p_.recompute == Recompute::kSelective) core_forward(out, OpCategory::kRecompute);
    flash(out, Pass::kBackward, c);
  } else {
    if (p_.recompute == Recompute::kSelective) {
      core_forward(out, OpCategory::kRecompute);
    }
    const double scores = heads * s_ * s_;
    gemm_backward(out, KernelKind::kAttnValueGemm, s_, v_dim_, s_, heads);
    mem(out, KernelKind::kAttnDropout, Pass::kBackward, scores * (kElem * 2 + 1), c);
    softmax(out, Pass::kBackward, scores, c);
    gemm_backward(out, KernelKind::kAttnScoreGemm, s_, s_, qk_dim_, heads);
  }
  rope(out, Pass::kBackward, c);
  cast(out, Pass::kBackward, T_ * q_cols, c);
  gemm_backward(out, KernelKind::kQkvGemm, T_, q_cols, h_, 1);
  tp_reduce(out);
}

void Attention::core_forward(std::vector<LoweredOp>* out, OpCategory cat) {
  const double heads = static_cast<double>(b_) * a_ / t_;
  if (p_.flash_attention) {
    flash(out, Pass::kForward, cat);
    return;
  }
  const double scores = heads * s_ * s_;
  gemm(out, KernelKind::kAttnScoreGemm, Pass::kForward, s_, s_, qk_dim_, heads, cat);
  softmax(out, Pass::kForward, scores, cat);
  mem(out, KernelKind::kAttnDropout, Pass::kForward, scores * (kElem * 2 + 1), cat);
  gemm(out, KernelKind::kAttnValueGemm, Pass::kForward, s_, v_dim_, s_, heads, cat);
}

void Attention::flash(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) {
  KernelDesc desc;
  desc.kind = KernelKind::kFlashAttention;
  desc.pass = pass;
  const double heads = static_cast<double>(b_) * a_ / t_;
  // Keys per query of a block: the rank's s/cp, or with a sliding window
  // the window spread over the cp blocks (span / cp).
  const double keys = span_ < s_ ? static_cast<double>(span_) / cp_ : sl_;
  desc.gemm = {sl_, std::max<int64_t>(1, std::llround(keys)), std::llround(qk_dim_),
               static_cast<int64_t>(heads)};
  if (chunked_) {
    // Chunked attention runs as independent causal blocks of `keys` queries
    // and keys each (the full kernel's shape per block, so no sliding-window
    // factor: Roofline::windowed_attention_factor).
    const int64_t block = std::max<int64_t>(1, std::llround(keys));
    desc.gemm = {block, block, std::llround(qk_dim_),
                 std::max<int64_t>(1, std::llround(heads * sl_ / static_cast<double>(block)))};
  }
  // Matmul FLOPs of QK^T and AV over every query-key pair (the causal mask
  // is not subtracted, as in the model-FLOPs formula, Model::
  // model_flops_per_step); the backward recomputes QK^T: 2.5x. 2 (qk + v)
  // per pair: 4 d for dense heads.
  const double fwd = 2.0 * heads * sl_ * keys * (qk_dim_ + v_dim_);
  desc.flops = pass == Pass::kForward ? fwd : 2.5 * fwd;
  desc.precision = formats_.p16;
  if (cp_ == 1) {
    push_kernel(out, desc, cat);
    return;
  }
  // The cp blocks, one op: cp x the block (FLOPs and time).
  const double block_s = cost_.kernel_time_s(desc);
  LoweredOp op;
  op.stream = StreamKind::kCompute;
  op.category = cat;
  op.duration_s = cp_ * block_s;
  op.flops = cp_ * desc.flops;
  op.name = kernel_kind_name(desc.kind);
  const bool backward = pass != Pass::kForward;
  // K and V of the rank's s/cp tokens, this TP rank's kv heads, 2 bytes.
  const double kv_bytes = cp_kv_bytes();
  if (p_.cp_comm == CpComm::kAllGather) {
    // KV gathered over the CP group before the blocks (again in the
    // backward), dKV reduce-scattered after them; nothing overlaps.
    out->push_back(cp_op(collective_s(CollectiveKind::kAllGather, cp_ * kv_bytes),
                         "cp all_gather kv"));
    out->push_back(op);
    if (backward) {
      out->push_back(cp_op(collective_s(CollectiveKind::kReduceScatter, cp_ * kv_bytes),
                           "cp reduce_scatter dkv"));
    }
    return;
  }
  // Ring: transfer i runs during block i. Forward: the KV for the next
  // block, cp - 1 transfers. Backward (Transformer Engine): KV only with
  // block 0, KV and the dKV accumulated so far with blocks 1 .. cp-2, the
  // dKV alone with block cp-1: cp transfers.
  const double kv_s = ring_hop_s(kv_bytes);
  const double both_s = ring_hop_s(2 * kv_bytes);
  std::vector<double> transfers;
  if (!backward) {
    transfers.assign(cp_ - 1, kv_s);
  } else {
    transfers.assign(cp_, both_s);
    transfers.front() = kv_s;
    transfers.back() = kv_s;
  }
  double exposed = 0, hidden = 0;
  for (double x : transfers) {
    exposed += std::max(0.0, x - block_s);
    hidden += std::min(x, block_s);
  }
  const double slowdown = cost_.comm_compute_slowdown() * hidden;
  op.duration_s += slowdown;
  op.slowdown_s = slowdown;
  out->push_back(op);
  cp_hidden_s_ += hidden;
  if (exposed > 0) out->push_back(cp_op(exposed, "cp ring kv send_recv (not hidden)"));
}

double Attention::rope_bytes_per_element(const Model& model, Pass pass, bool fused) {
  if (fused) return 2 * kElem;
  const double r = model.rotary_fraction;
  if (pass == Pass::kForward) return 20 * r + 4;
  return r < 1 ? 20 * r + 14 : 20 * r + 8;
}

void Attention::rope(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const {
  if (!rope_) return;
  const double per_element = rope_bytes_per_element(m_, pass, p_.rope_fusion);
  // cos and sin of the fp32 freqs, per call of the eager path's forward:
  // (cos 8, x mscale 8, to bf16 6) x 2 bytes per freqs element.
  const double freqs_bytes = !p_.rope_fusion && pass == Pass::kForward
                                 ? 44.0 * sl_ * m_.rotary_fraction * d_
                                 : 0.0;
  for (const double heads : {static_cast<double>(a_), static_cast<double>(g_)}) {
    const double elements = T_ * heads / t_ * d_;
    mem(out, KernelKind::kRope, pass, elements * per_element + freqs_bytes, cat);
  }
}

// Fused: one kernel (forward reads x and writes y; backward reads y and dy
// and writes dx). Megatron's fallback (with its default softmax in fp32,
// forced by query-key layer scaling) runs five: to fp32, scale, masked
// fill, softmax, to half; its backward the five gradients of those.
void Attention::softmax(std::vector<LoweredOp>* out, Pass pass, double scores,
                        OpCategory cat) const {
  if (fused_softmax_) {
    mem(out, KernelKind::kSoftmax, pass, scores * kElem * (pass == Pass::kForward ? 2 : 3), cat);
    return;
  }
  constexpr double kF32 = 4;
  const double forward[] = {kElem + kF32, 2 * kF32, 2 * kF32, 2 * kF32, kF32 + kElem};
  const double backward[] = {kElem + kF32, 3 * kF32, 2 * kF32, 2 * kF32, kF32 + kElem};
  for (double per : pass == Pass::kForward ? forward : backward) {
    mem(out, KernelKind::kSoftmax, pass, scores * per, cat);
  }
}

double Attention::collective_s(CollectiveKind kind, double bytes) const {
  CollectiveDesc c;
  c.kind = kind;
  c.bytes = bytes;
  c.group = pl_.context;
  return cost_.collective_time_s(c);
}

double Attention::ring_hop_s(double bytes) const {
  CollectiveDesc c;
  c.kind = CollectiveKind::kSendRecv;
  c.bytes = bytes;
  c.group = {2, pl_.context.nodes() > 1 ? 1 : 2};
  return cost_.collective_time_s(c);
}

LoweredOp Attention::cp_op(double seconds, const char* name) {
  LoweredOp op;
  op.stream = StreamKind::kContextComm;
  op.category = OpCategory::kContextComm;
  op.duration_s = seconds;
  op.name = name;
  return op;
}

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

int64_t attention_and_norms_parameters(const Model& m) {
  const int64_t h = m.hidden_size;
  if (m.is_mla()) return mla_attention_parameters(m) + 2 * h;
  const int64_t d = m.head_dim();
  const int64_t q = static_cast<int64_t>(m.num_heads) * d;
  const int64_t kv = static_cast<int64_t>(m.kv_heads()) * d;
  const int64_t bias = m.linear_bias ? 1 : 0;
  const int64_t attn = h * (q + 2 * kv) + q * h + bias * (q + 2 * kv + h);
  const int64_t norms = 2 * (m.linear_bias ? 2 * h : h);
  return attn + norms;
}

AttentionActivations attention_activations(const Model& model, const Plan& plan, bool mlp_input) {
  if (model.is_mla()) return mla_activations(model, plan, mlp_input);
  const double h = model.hidden_size;
  const double q_ratio = static_cast<double>(model.num_heads) * model.head_dim() / h;
  const double kv_ratio = static_cast<double>(model.kv_heads()) * model.head_dim() / h;
  const double gemm_in = gemm_input_bytes_per_element(plan.precision);
  AttentionActivations a;
  // Not split by TP (unless SP): both norm inputs (4), the QKV input (and
  // the FC1 input of a dense MLP), the two dropout masks (1 + 1) when
  // dropout is on.
  a.replicated = 4.0 + (mlp_input ? 2.0 : 1.0) * gemm_in + (plan.dropout ? 2.0 : 0.0);
  // Split by TP: Q (2), K and V (2 each), the attention output O = the
  // output projection's input. Fused (flash) attention saves q, k, v, out
  // and the softmax statistics (Transformer Engine
  // transformer_engine/pytorch/attention (FusedAttnFunc.forward:
  // ctx.save_for_backward(q, k, v, out, softmax_lse / aux_ctx_tensors)), all
  // in bf16; the output projection (TE linear.py, _Linear.forward) saves its
  // input: the same tensor as O in bf16, its own fp8 copy in FP8 (2 + 1).
  a.split = 2.0 * q_ratio + 4.0 * kv_ratio + (gemm_in < 2.0 ? 2.0 + gemm_in : 2.0) * q_ratio;
  // The fp32 log-sum-exp per head and token (flash attention's softmax
  // statistics), a d-th of a head's width: 4 a / h bytes per token per h.
  if (plan.flash_attention) a.split += 4.0 * model.num_heads / h;
  return a;
}

double attention_weight_grad_per_token(const Model& model, const Plan& plan) {
  if (model.is_mla()) return mla_weight_grad_per_token(model, plan);
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const double qkv_cols =
      static_cast<double>(model.num_heads + 2 * model.kv_heads()) * model.head_dim() / t;
  const double attn_cols = static_cast<double>(model.num_heads) * model.head_dim() / t;
  return (h + qkv_cols) + (attn_cols + h);
}

double context_parallel_kv_columns(const Model& model) {
  return model.is_mla() ? static_cast<double>(model.num_heads) *
                              (model.mla_qk_head_dim() + model.v_head_dim)
                        : 2.0 * model.kv_heads() * model.head_dim();
}

Status validate_attention_windows(const Model& m) {
  if (!(m.rotary_fraction >= 0 && m.rotary_fraction <= 1)) {
    return bad_field("rotary_fraction",
                     "must be in [0, 1], got " + std::to_string(m.rotary_fraction));
  }
  if (m.rotary_fraction != 1.0 && m.positions != PositionEmbedding::kRotary) {
    return bad_field("rotary_fraction", "needs rotary positions");
  }
  if (m.full_attention_every > 0 && m.sliding_window == 0) {
    return bad_field("full_attention_every", "needs a sliding_window");
  }
  // Chunked attention (Llama 4).
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("attention_chunk", m.attention_chunk, 0, Model::kMaxSeqLength));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("global_attention_every", m.global_attention_every, 0, Model::kMaxLayers));
  if (m.global_attention_every > 0 && m.attention_chunk == 0) {
    return bad_field("global_attention_every", "needs an attention_chunk");
  }
  if (m.attention_chunk > 0 && m.sliding_window > 0) {
    return bad_field("attention_chunk",
                     "cannot be combined with sliding_window (give one of them)");
  }
  return Status();
}

Status validate_attention_heads(const Model& m) {
  if (m.head_dim_size > 0 &&
      static_cast<int64_t>(m.num_heads) * m.head_dim_size > Model::kMaxFfnHidden) {
    return bad_field("head_dim", "heads x head_dim must be at most " +
                                     std::to_string(Model::kMaxFfnHidden) + ", got " +
                                     std::to_string(static_cast<int64_t>(m.num_heads) *
                                                    m.head_dim_size));
  }
  if (!m.is_mla() && m.head_dim_size == 0 && m.hidden_size % m.num_heads != 0) {
    return bad_field("heads", std::to_string(m.num_heads) + " heads do not divide hidden size " +
                                  std::to_string(m.hidden_size));
  }
  if (m.num_heads % m.kv_heads() != 0) {
    return bad_field("kv_heads", std::to_string(m.kv_heads()) + " kv heads do not divide " +
                                     std::to_string(m.num_heads) + " heads");
  }
  return Status();
}

}  // namespace llmplan::simulator::layers
