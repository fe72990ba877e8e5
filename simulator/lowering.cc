#include "simulator/lowering.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmplan::simulator {

const char* to_string(StreamKind s) {
  switch (s) {
    case StreamKind::kCompute: return "compute";
    case StreamKind::kTensorComm: return "tp-comm";
    case StreamKind::kPipeForward: return "pp-send-fwd";
    case StreamKind::kPipeBackward: return "pp-send-bwd";
    case StreamKind::kDataComm: return "dp-comm";
    case StreamKind::kContextComm: return "cp-comm";
    case StreamKind::kExpertComm: return "ep-comm";
  }
  return "?";
}

double fp8_cast_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kDelayed: return 4.0;
    case Fp8Recipe::kCurrent: return 6.0;
    case Fp8Recipe::kMxfp8: return 4.0 + 2.0 / 32.0;
  }
  return 4.0;
}

Placement place(const Plan& plan, const Cluster& cluster) {
  const int t = plan.tensor_parallel, d = plan.data_parallel, p = plan.pipeline_parallel;
  const int cp = plan.context_parallel;
  const int G = cluster.gpus_per_node;
  // Ranks t apart, `n` consecutive of them in one group: how many share a node.
  auto stride_t = [&](int n) { return t >= G ? 1 : std::max(1, std::min(n, G / t)); };
  Placement pl;
  pl.tensor = {t, std::min(t, G)};
  // CP peers of a rank are t apart, inside the node first.
  pl.context = {cp, stride_t(cp)};
  // The gradient-reduction group: the d * cp ranks (t apart) of one
  // (tensor, pipeline) position, contiguous since CP and DP are adjacent in
  // the rank order.
  pl.data = {d * cp, stride_t(d * cp)};
  // Shard groups are S * cp consecutive ranks (t apart); the replicas of a
  // shard S * cp * t apart.
  const int S = plan.shard_ranks();
  pl.shard = {S, stride_t(S)};
  const int R = std::max(1, d / plan.shard_group_size());
  const int64_t replica_stride = static_cast<int64_t>(S) * t;
  pl.replica = {R, replica_stride >= G ? 1 : std::max(1, std::min<int>(R, G / replica_stride))};
  const int64_t stage_ranks = static_cast<int64_t>(t) * cp * d;
  pl.pipe_crosses_node.assign(p, false);
  for (int r = 0; r < p; ++r) {
    const int next = (r + 1) % p;
    bool crosses = stage_ranks >= G;
    for (int64_t i = 0; !crosses && i < stage_ranks; ++i) {
      crosses = (stage_ranks * r + i) / G != (stage_ranks * next + i) / G;
    }
    pl.pipe_crosses_node[r] = crosses;
  }
  const bool emb_cross = p > 1 && (stage_ranks * (p - 1)) / G != 0;
  pl.embedding = {2, emb_cross ? 1 : 2};
  // Expert layers: the stage's t * cp * d ranks as etp x ep x edp, etp
  // fastest. `n` ranks `stride` apart: how many share a node.
  auto per_node = [&](int64_t stride, int n) {
    return stride >= G ? 1 : std::max(1, static_cast<int>(std::min<int64_t>(n, G / stride)));
  };
  const int etp = plan.expert_tensor_parallel, ep = plan.expert_parallel;
  const int edp = std::max<int64_t>(1, stage_ranks / (static_cast<int64_t>(etp) * ep));
  pl.expert_tensor = {etp, per_node(1, etp)};
  pl.expert = {ep, per_node(etp, ep)};
  pl.expert_data = {edp, per_node(static_cast<int64_t>(etp) * ep, edp)};
  return pl;
}

namespace {

// Emits the ops of one chunk; all shapes are per tensor-parallel rank.
class Lowerer {
 public:
  Lowerer(const Model& model, const Plan& plan, const Placement& placement, const CostModel& cost)
      : m_(model), p_(plan), pl_(placement), cost_(cost) {
    t_ = plan.tensor_parallel;
    b_ = plan.micro_batch_size;
    s_ = model.seq_length;
    h_ = model.hidden_size;
    a_ = model.num_heads;
    g_ = model.kv_heads();
    d_ = model.head_dim();
    f_ = model.ffn_hidden();
    V_ = model.vocab_size;
    cp_ = plan.context_parallel;
    sl_ = s_ / cp_;  // validate(model, plan): 2 * cp divides s
    T_ = static_cast<double>(b_) * sl_;
    layer_params_ = static_cast<double>(model.layer_parameters()) / t_;
    sp_ = plan.sequence_parallel && t_ > 1;
    Tsp_ = sp_ ? T_ / t_ : T_;
    swiglu_ = model.activation == Activation::kSwiglu;
    // Megatron's FusedScaleMaskSoftmax runs its one-kernel CUDA softmax only
    // when 16 < s <= 4096, s % 4 == 0 and the attention batches of a rank
    // (b * a / t) are a multiple of the kernel's 4 batches per block (for
    // s > 128; 8 below); otherwise it falls back to PyTorch ops in fp32.
    const int64_t attn_batches = static_cast<int64_t>(b_) * a_ / t_;
    const int per_block = s_ > 128 ? 4 : 8;
    fused_softmax_ = s_ > 16 && s_ <= 4096 && s_ % 4 == 0 && attn_batches % per_block == 0;
    fp8_ = plan.precision == Precision::kFp8;
    p16_ = fp8_ ? Precision::kBf16 : plan.precision;
    cast_bytes_ = fp8_cast_bytes_per_element(plan.fp8_recipe);
    unit_params_ = layer_params_;
    span_ = s_;
    if (model.is_moe()) init_moe();
  }

  // Layer `layer` (0-based, in the model) is the next to be lowered: its
  // kind (dense or MoE) and attention span.
  void begin_layer(int layer) {
    moe_layer_ = m_.is_moe_layer(layer);
    span_ = m_.attention_span(layer);
    unit_params_ = moe_layer_ ? moe_dense_params_ + moe_expert_params_ : layer_params_;
  }
  bool moe_layer() const { return moe_layer_; }

  // The GEMMs of the linear layers, which run in FP8 in FP8 training.
  static bool is_linear(KernelKind k) {
    return k == KernelKind::kQkvGemm || k == KernelKind::kOutProjGemm ||
           k == KernelKind::kFc1Gemm || k == KernelKind::kFc2Gemm;
  }

  // FP8 training: the cast (with transpose and amax) of a GEMM operand of
  // `elements` elements to fp8 -- an input of a linear GEMM in the forward,
  // the output gradient entering its backward, or (ZeRO-3) a layer's
  // gathered weights. Nothing otherwise.
  void cast(std::vector<LoweredOp>* out, Pass pass, double elements, OpCategory cat) {
    if (!fp8_) return;
    KernelDesc desc;  // looked up under fp8 (the profile's key)
    desc.kind = KernelKind::kFp8CastTranspose;
    desc.pass = pass == Pass::kForward ? pass : Pass::kBackward;
    desc.bytes = elements * cast_bytes_;
    desc.precision = Precision::kFp8;
    push_kernel(out, desc, cat == OpCategory::kCompute ? OpCategory::kFp8Cast : cat);
  }

  void gemm(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double m, double n, double k,
            double batch, OpCategory cat) {
    KernelDesc desc;
    desc.kind = kind;
    desc.pass = pass;
    desc.gemm = {static_cast<int64_t>(m), static_cast<int64_t>(n), static_cast<int64_t>(k),
                 static_cast<int64_t>(batch)};
    desc.flops = 2.0 * m * n * k * batch;
    desc.precision = fp8_ && is_linear(kind) ? Precision::kFp8 : p16_;
    push_kernel(out, desc, cat);
  }

  void mem(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double bytes, OpCategory cat) {
    KernelDesc desc;
    desc.kind = kind;
    desc.pass = pass;
    desc.bytes = bytes;
    desc.precision = p16_;
    push_kernel(out, desc, cat);
  }

  // Flash attention over the rank's queries. Without context parallelism one
  // kernel over the whole sequence. With cp > 1, cp blocks of the rank's
  // s/cp queries against one s/cp-token KV chunk each (see lowering.h), and
  // the KV exchange of cp_comm.
  void flash(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) {
    KernelDesc desc;
    desc.kind = KernelKind::kFlashAttention;
    desc.pass = pass;
    const double heads = static_cast<double>(b_) * a_ / t_;
    // Keys per query of a block: the rank's s/cp, or with a sliding window
    // the window spread over the cp blocks (span / cp).
    const double keys = span_ < s_ ? static_cast<double>(span_) / cp_ : sl_;
    desc.gemm = {sl_, std::max<int64_t>(1, std::llround(keys)), d_, static_cast<int64_t>(heads)};
    // Matmul FLOPs of QK^T and AV over every query-key pair (the causal mask
    // is not subtracted, as in the model-FLOPs formula, Model::
    // model_flops_per_step); the backward recomputes QK^T: 2.5x.
    const double fwd = 4.0 * heads * sl_ * keys * d_;
    desc.flops = pass == Pass::kForward ? fwd : 2.5 * fwd;
    desc.precision = p16_;
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

  // Bytes of K and V of the rank's s/cp tokens per CP exchange.
  double cp_kv_bytes() const { return T_ * 2.0 * g_ * d_ / t_ * kElem; }

  // Collective time hidden under attention blocks so far (ring only).
  double cp_hidden_s() const { return cp_hidden_s_; }

  void tp(std::vector<LoweredOp>* out, CollectiveKind kind, double bytes) {
    if (t_ <= 1) return;
    CollectiveDesc c;
    c.kind = kind;
    c.bytes = bytes;
    c.group = pl_.tensor;
    LoweredOp op;
    op.stream = StreamKind::kTensorComm;
    op.category = OpCategory::kTensorComm;
    op.duration_s = cost_.collective_time_s(c);
    op.name = collective_kind_name(kind);
    op.tp_pair = kind == CollectiveKind::kAllGather ? 1 : -1;
    out->push_back(op);
  }

  // The TP collective after a row-parallel GEMM (forward) or before a
  // column-parallel one's input gradient leaves (backward).
  void tp_reduce(std::vector<LoweredOp>* out) {
    tp(out, sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, T_ * h_ * kElem);
  }
  void sp_gather(std::vector<LoweredOp>* out) {
    if (sp_) tp(out, CollectiveKind::kAllGather, T_ * h_ * kElem);
  }

  // Scale, causal mask and softmax over `scores` elements. Fused: one kernel
  // (forward reads x and writes y; backward reads y and dy and writes dx).
  // Megatron's fallback (with its default softmax in fp32, forced by query-
  // key layer scaling) runs five: to fp32, scale, masked fill, softmax, to
  // half; its backward the five gradients of those.
  void softmax(std::vector<LoweredOp>* out, Pass pass, double scores, OpCategory cat) {
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

  void attention_core_forward(std::vector<LoweredOp>* out, OpCategory cat) {
    const double heads = static_cast<double>(b_) * a_ / t_;
    if (p_.flash_attention) {
      flash(out, Pass::kForward, cat);
      return;
    }
    const double scores = heads * s_ * s_;
    gemm(out, KernelKind::kAttnScoreGemm, Pass::kForward, s_, s_, d_, heads, cat);
    softmax(out, Pass::kForward, scores, cat);
    mem(out, KernelKind::kAttnDropout, Pass::kForward, scores * (kElem * 2 + 1), cat);
    gemm(out, KernelKind::kAttnValueGemm, Pass::kForward, s_, d_, s_, heads, cat);
  }

  // The layer begun by begin_layer: attention, then the dense MLP or the MoE block.
  void layer_forward(std::vector<LoweredOp>* out, OpCategory cat) {
    attention_forward(out, cat);
    if (moe_layer_) {
      moe_forward(out, cat);
    } else {
      mlp_forward(out, cat, f_);
    }
  }

  void attention_forward(std::vector<LoweredOp>* out, OpCategory cat) {
    const double q_cols = static_cast<double>(a_ + 2 * g_) * d_ / t_;
    mem(out, KernelKind::kLayerNorm, Pass::kForward, Tsp_ * h_ * kElem * 2, cat);
    if (fp8_ && p_.sharding_stage() >= 3) cast(out, Pass::kForward, unit_params_, cat);
    cast(out, Pass::kForward, Tsp_ * h_, cat);
    sp_gather(out);
    gemm(out, KernelKind::kQkvGemm, Pass::kForward, T_, q_cols, h_, 1, cat);
    attention_core_forward(out, cat);
    cast(out, Pass::kForward, T_ * a_ * d_ / t_, cat);
    gemm(out, KernelKind::kOutProjGemm, Pass::kForward, T_, h_, static_cast<double>(a_) * d_ / t_,
         1, cat);
    tp_reduce(out);
    mem(out, KernelKind::kDropoutResidual, Pass::kForward, Tsp_ * h_ * (kElem * 3 + 1), cat);
  }

  // The dense MLP block of width f (TP-sharded): the layer's MLP, or the
  // shared experts of an MoE layer (without their norm and residual).
  void mlp_forward(std::vector<LoweredOp>* out, OpCategory cat, int f) {
    mem(out, KernelKind::kLayerNorm, Pass::kForward, Tsp_ * h_ * kElem * 2, cat);
    mlp_core_forward(out, cat, f);
    mem(out, KernelKind::kDropoutResidual, Pass::kForward, Tsp_ * h_ * (kElem * 3 + 1), cat);
  }

  void mlp_core_forward(std::vector<LoweredOp>* out, OpCategory cat, int f) {
    const double fc1_cols = (swiglu_ ? 2.0 : 1.0) * f / t_;
    cast(out, Pass::kForward, Tsp_ * h_, cat);
    sp_gather(out);
    gemm(out, KernelKind::kFc1Gemm, Pass::kForward, T_, fc1_cols, h_, 1, cat);
    mem(out, KernelKind::kActivation, Pass::kForward, T_ * f / t_ * kElem * (swiglu_ ? 3 : 2), cat);
    cast(out, Pass::kForward, T_ * f / t_, cat);
    gemm(out, KernelKind::kFc2Gemm, Pass::kForward, T_, h_, static_cast<double>(f) / t_, 1, cat);
    tp_reduce(out);
  }

  // The MoE block of an MoE layer (Megatron-Core's MoELayer with the
  // all-to-all token dispatcher; see lowering.h).
  void moe_forward(std::vector<LoweredOp>* out, OpCategory cat) {
    const Pass f = Pass::kForward;
    mem(out, KernelKind::kLayerNorm, f, Tsp_ * h_ * kElem * 2, cat);
    if (fs_ > 0) mlp_core_forward(out, cat, fs_);
    // Router: bf16 scores (never fp8), then softmax/sigmoid, top-k and the
    // auxiliary loss over the fp32 scores.
    gemm(out, KernelKind::kRouterGemm, f, Tmoe_, E_, h_, 1, cat);
    mem(out, KernelKind::kMoeRouting, f, routing_bytes(f), cat);
    mem(out, KernelKind::kMoePermute, f, 2.0 * Tmoe_ * k_ * h_ * kElem, cat);
    a2a(out, "moe dispatch all_to_all");
    etp(out, CollectiveKind::kAllGather);
    const double rows = me_ * etp_;
    const double fc1_cols = (swiglu_ ? 2.0 : 1.0) * fe_ / etp_;
    const double fe_local = static_cast<double>(fe_) / etp_;
    cast(out, f, local_experts_ * rows * h_, cat);
    grouped_gemm(out, KernelKind::kExpertFc1Gemm, f, rows, fc1_cols, h_, cat);
    mem(out, KernelKind::kActivation, f,
        local_experts_ * rows * fe_local * kElem * (swiglu_ ? 3 : 2), cat);
    cast(out, f, local_experts_ * rows * fe_local, cat);
    grouped_gemm(out, KernelKind::kExpertFc2Gemm, f, rows, h_, fe_local, cat);
    etp(out, CollectiveKind::kReduceScatter);
    a2a(out, "moe combine all_to_all");
    // Unpermute: the k expert outputs of each token read, weighted, summed.
    mem(out, KernelKind::kMoePermute, f, Tmoe_ * k_ * h_ * kElem + Tmoe_ * h_ * kElem, cat);
    mem(out, KernelKind::kDropoutResidual, f, Tsp_ * h_ * (kElem * 3 + 1), cat);
  }

  // Data- and weight-gradient GEMMs of a forward GEMM [m,k]x[k,n].
  // The weight-gradient GEMM of a parameter GEMM is marked weight_grad; the
  // attention GEMMs' second operand is an activation, whose gradient B needs.
  void gemm_backward(std::vector<LoweredOp>* out, KernelKind kind, double m, double n, double k,
                     double batch) {
    gemm(out, kind, Pass::kBackwardData, m, n, k, batch, OpCategory::kCompute);
    gemm(out, kind, Pass::kBackwardWeight, m, n, k, batch, OpCategory::kCompute);
    out->back().weight_grad = kind != KernelKind::kAttnScoreGemm && kind != KernelKind::kAttnValueGemm;
  }

  // The layer begun by begin_layer, backward (with its recomputation).
  // `layer_grad_bytes` of gradients over Placement::data and
  // `expert_grad_bytes` over Placement::expert_data are final after it.
  void layer_backward(std::vector<LoweredOp>* out, double layer_grad_bytes,
                      double expert_grad_bytes = 0) {
    const OpCategory c = OpCategory::kCompute;
    if (p_.recompute == Recompute::kFull) layer_forward(out, OpCategory::kRecompute);
    const double q_cols = static_cast<double>(a_ + 2 * g_) * d_ / t_;
    const double heads = static_cast<double>(b_) * a_ / t_;
    if (fp8_ && p_.sharding_stage() >= 3) cast(out, Pass::kBackward, unit_params_, c);
    // MLP or MoE block.
    mem(out, KernelKind::kDropoutResidual, Pass::kBackward, Tsp_ * h_ * (kElem * 2 + 1), c);
    if (moe_layer_) {
      moe_backward(out);
    } else {
      mlp_core_backward(out, f_);
    }
    mem(out, KernelKind::kLayerNorm, Pass::kBackward, Tsp_ * h_ * kElem * 3, c);
    // Attention block.
    mem(out, KernelKind::kDropoutResidual, Pass::kBackward, Tsp_ * h_ * (kElem * 2 + 1), c);
    sp_gather(out);
    cast(out, Pass::kBackward, T_ * h_, c);
    gemm_backward(out, KernelKind::kOutProjGemm, T_, h_, static_cast<double>(a_) * d_ / t_, 1);
    if (p_.flash_attention) {
      flash(out, Pass::kBackward, c);
    } else {
      if (p_.recompute == Recompute::kSelective) {
        attention_core_forward(out, OpCategory::kRecompute);
      }
      const double scores = heads * s_ * s_;
      gemm_backward(out, KernelKind::kAttnValueGemm, s_, d_, s_, heads);
      mem(out, KernelKind::kAttnDropout, Pass::kBackward, scores * (kElem * 2 + 1), c);
      softmax(out, Pass::kBackward, scores, c);
      gemm_backward(out, KernelKind::kAttnScoreGemm, s_, s_, d_, heads);
    }
    cast(out, Pass::kBackward, T_ * q_cols, c);
    gemm_backward(out, KernelKind::kQkvGemm, T_, q_cols, h_, 1);
    tp_reduce(out);
    mem(out, KernelKind::kLayerNorm, Pass::kBackward, Tsp_ * h_ * kElem * 3, c);
    out->back().grad_ready_bytes += layer_grad_bytes;
    out->back().expert_grad_ready_bytes += expert_grad_bytes;
  }

  // Backward of mlp_core_forward (from the output gradient's SP gather to
  // the input gradient's reduction).
  void mlp_core_backward(std::vector<LoweredOp>* out, int f) {
    const OpCategory c = OpCategory::kCompute;
    const double fc1_cols = (swiglu_ ? 2.0 : 1.0) * f / t_;
    sp_gather(out);
    cast(out, Pass::kBackward, T_ * h_, c);
    gemm_backward(out, KernelKind::kFc2Gemm, T_, h_, static_cast<double>(f) / t_, 1);
    mem(out, KernelKind::kActivation, Pass::kBackward, T_ * f / t_ * kElem * (swiglu_ ? 5 : 3), c);
    cast(out, Pass::kBackward, T_ * fc1_cols, c);
    gemm_backward(out, KernelKind::kFc1Gemm, T_, fc1_cols, h_, 1);
    tp_reduce(out);
  }

  // Backward of moe_forward between the residual and the norm.
  void moe_backward(std::vector<LoweredOp>* out) {
    const OpCategory c = OpCategory::kCompute;
    const Pass b = Pass::kBackward;
    // Unpermute: dy scattered to the k rows of each token; the k expert
    // outputs read again for the routing weights' gradient.
    mem(out, KernelKind::kMoePermute, b, Tmoe_ * h_ * kElem + 2.0 * Tmoe_ * k_ * h_ * kElem, c);
    a2a(out, "moe combine all_to_all (backward)");
    etp(out, CollectiveKind::kAllGather);
    const double rows = me_ * etp_;
    const double fc1_cols = (swiglu_ ? 2.0 : 1.0) * fe_ / etp_;
    const double fe_local = static_cast<double>(fe_) / etp_;
    cast(out, b, local_experts_ * rows * h_, c);
    grouped_gemm_backward(out, KernelKind::kExpertFc2Gemm, rows, h_, fe_local);
    mem(out, KernelKind::kActivation, b,
        local_experts_ * rows * fe_local * kElem * (swiglu_ ? 5 : 3), c);
    cast(out, b, local_experts_ * rows * fc1_cols, c);
    grouped_gemm_backward(out, KernelKind::kExpertFc1Gemm, rows, fc1_cols, h_);
    etp(out, CollectiveKind::kReduceScatter);
    a2a(out, "moe dispatch all_to_all (backward)");
    // Permute: the k gradient rows of each token summed back into it.
    mem(out, KernelKind::kMoePermute, b, Tmoe_ * k_ * h_ * kElem + Tmoe_ * h_ * kElem, c);
    mem(out, KernelKind::kMoeRouting, b, routing_bytes(b), c);
    gemm_backward(out, KernelKind::kRouterGemm, Tmoe_, E_, h_, 1);
    if (fs_ > 0) mlp_core_backward(out, fs_);
  }

  // A grouped GEMM over the rank's local experts: `rows` token rows each
  // (fractional when the tokens do not split evenly: FLOPs exact, the shape
  // rounded, at least one row).
  void grouped_gemm(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double rows, double n,
                    double k, OpCategory cat) {
    KernelDesc desc;
    desc.kind = kind;
    desc.pass = pass;
    desc.gemm = {std::max<int64_t>(1, std::llround(rows)), static_cast<int64_t>(n),
                 static_cast<int64_t>(k), static_cast<int64_t>(local_experts_)};
    desc.flops = 2.0 * rows * n * k * local_experts_;
    desc.precision = fp8_ ? Precision::kFp8 : p16_;  // Transformer Engine's grouped linear
    push_kernel(out, desc, cat);
  }

  void grouped_gemm_backward(std::vector<LoweredOp>* out, KernelKind kind, double rows, double n,
                             double k) {
    grouped_gemm(out, kind, Pass::kBackwardData, rows, n, k, OpCategory::kCompute);
    grouped_gemm(out, kind, Pass::kBackwardWeight, rows, n, k, OpCategory::kCompute);
    out->back().weight_grad = true;
  }

  // HBM bytes of the routing kernels over the rank's T_moe x E fp32 scores.
  // Forward: softmax/sigmoid reads the logits and writes the probabilities
  // (8 B per score), top-k reads them (4), the auxiliary load-balancing loss
  // reads them again (4) and writes the routing map (1); the k chosen
  // weights and indices per token (8 B each). Backward: the probabilities
  // and their gradient read, the logits' gradient written, the aux loss's
  // gradient added (16 B per score).
  double routing_bytes(Pass pass) const {
    const double scores = Tmoe_ * E_;
    return pass == Pass::kForward ? scores * 17.0 + Tmoe_ * k_ * 8.0 : scores * 16.0;
  }

  // A dispatch or combine all-to-all over the expert-parallel group: each
  // rank sends its T_moe x k token rows (bf16); the busiest rank receives
  // moe_imbalance x that (dropless), or every rank exchanges the padded
  // capacity buffers (capacity factor). Exposed on the pass (see lowering.h
  // for moe_a2a_overlap).
  void a2a(std::vector<LoweredOp>* out, const char* name) {
    if (ep_ <= 1) return;
    CollectiveDesc c;
    c.kind = CollectiveKind::kAllToAll;
    c.bytes = a2a_bytes_;
    c.group = pl_.expert;
    LoweredOp op;
    op.stream = StreamKind::kExpertComm;
    op.category = OpCategory::kMoeA2a;
    op.duration_s = cost_.collective_time_s(c);
    op.name = name;
    out->push_back(op);
  }

  // Expert tensor parallelism: the local experts' token rows all-gathered
  // over the etp group before the expert GEMMs, their outputs reduce-scattered
  // after (Megatron-Core's alltoall dispatcher). Exposed (userbuffers do
  // not cover them).
  void etp(std::vector<LoweredOp>* out, CollectiveKind kind) {
    if (etp_ <= 1) return;
    CollectiveDesc c;
    c.kind = kind;
    c.bytes = local_experts_ * me_ * etp_ * h_ * kElem;
    c.group = pl_.expert_tensor;
    LoweredOp op;
    op.stream = StreamKind::kTensorComm;
    op.category = OpCategory::kTensorComm;
    op.duration_s = cost_.collective_time_s(c);
    op.name = kind == CollectiveKind::kAllGather ? "etp all_gather" : "etp reduce_scatter";
    out->push_back(op);
  }

  // Per MoE layer on this device: the parameters outside the routed experts
  // (TP-sharded) and the routed experts' (over ep x etp).
  double moe_dense_params() const { return moe_dense_params_; }
  double moe_expert_params() const { return moe_expert_params_; }

  void embedding_forward(std::vector<LoweredOp>* out) {
    const double pos = m_.positions == PositionEmbedding::kLearned ? 1.0 : 0.0;
    mem(out, KernelKind::kEmbedding, Pass::kForward, T_ * h_ * kElem * (2 + pos),
        OpCategory::kCompute);
    tp_reduce(out);  // vocab-parallel embedding: partial rows summed over TP
  }

  void embedding_backward(std::vector<LoweredOp>* out, double grad_bytes) {
    sp_gather(out);
    mem(out, KernelKind::kEmbedding, Pass::kBackward, T_ * h_ * kElem * 2, OpCategory::kCompute);
    out->back().grad_ready_bytes += grad_bytes;
    out->back().weight_grad = true;  // the gradient scatter into the table
  }

  void head_forward(std::vector<LoweredOp>* out) {
    const OpCategory c = OpCategory::kCompute;
    mem(out, KernelKind::kLayerNorm, Pass::kForward, Tsp_ * h_ * kElem * 2, c);
    sp_gather(out);
    gemm(out, KernelKind::kLogitsGemm, Pass::kForward, T_, static_cast<double>(V_) / t_, h_, 1, c);
    // Vocab-parallel cross-entropy: fp32 logits, three small TP all-reduces
    // (max, sum of exponentials, target logit).
    mem(out, KernelKind::kCrossEntropy, Pass::kForward, T_ * V_ / t_ * (kElem + 4) * 2, c);
    for (int i = 0; i < 3; ++i) tp(out, CollectiveKind::kAllReduce, T_ * 4);
  }

  void head_backward(std::vector<LoweredOp>* out, double grad_bytes) {
    const OpCategory c = OpCategory::kCompute;
    mem(out, KernelKind::kCrossEntropy, Pass::kBackward, T_ * V_ / t_ * (kElem + 4), c);
    gemm_backward(out, KernelKind::kLogitsGemm, T_, static_cast<double>(V_) / t_, h_, 1);
    tp_reduce(out);
    mem(out, KernelKind::kLayerNorm, Pass::kBackward, Tsp_ * h_ * kElem * 3, c);
    out->back().grad_ready_bytes += grad_bytes;
  }

  void overhead(std::vector<LoweredOp>* out) {
    const double s = cost_.microbatch_overhead_s();
    if (s <= 0) return;
    LoweredOp op;
    op.category = OpCategory::kHostOverhead;
    op.duration_s = s;
    op.name = "host_overhead";
    out->push_back(op);
  }

  double tokens() const { return T_; }

 private:
  double collective_s(CollectiveKind kind, double bytes) const {
    CollectiveDesc c;
    c.kind = kind;
    c.bytes = bytes;
    c.group = pl_.context;
    return cost_.collective_time_s(c);
  }

  // One step of the ring: every rank sends to the next and receives from the
  // previous at once; a ring that spans nodes waits for its slowest hop,
  // over the NIC.
  double ring_hop_s(double bytes) const {
    CollectiveDesc c;
    c.kind = CollectiveKind::kSendRecv;
    c.bytes = bytes;
    c.group = {2, pl_.context.nodes() > 1 ? 1 : 2};
    return cost_.collective_time_s(c);
  }

  static LoweredOp cp_op(double seconds, const char* name) {
    LoweredOp op;
    op.stream = StreamKind::kContextComm;
    op.category = OpCategory::kContextComm;
    op.duration_s = seconds;
    op.name = name;
    return op;
  }

 public:

  static constexpr double kElem = 2.0;  // bf16 / fp16 activations

 private:
  void init_moe() {
    E_ = m_.num_experts;
    k_ = m_.moe_top_k;
    fe_ = m_.moe_ffn_hidden();
    fs_ = m_.moe_shared_experts * fe_;
    ep_ = p_.expert_parallel;
    etp_ = p_.expert_tensor_parallel;
    local_experts_ = static_cast<double>(E_) / ep_;
    // Megatron-Core runs MoE with TP under sequence parallelism: each TP rank
    // routes its 1/t of the tokens.
    Tmoe_ = t_ > 1 ? T_ / t_ : T_;
    const double routed = Tmoe_ * k_;  // token rows a rank sends
    const double c = m_.moe_capacity_factor;
    if (c > 0) {
      // Padded to capacity: every rank sends each expert ceil(c x its share) rows.
      const double capacity = std::ceil(c * routed / E_);
      me_ = ep_ * capacity;
      a2a_bytes_ = E_ * capacity * h_ * kElem;
    } else {
      me_ = routed * ep_ / E_ * p_.moe_imbalance;
      a2a_bytes_ = routed * h_ * kElem * p_.moe_imbalance;
    }
    const double experts = static_cast<double>(m_.expert_parameters_per_layer());
    moe_expert_params_ = experts / (static_cast<double>(ep_) * etp_);
    moe_dense_params_ = (static_cast<double>(m_.moe_layer_parameters()) - experts) / t_;
  }

  void push_kernel(std::vector<LoweredOp>* out, const KernelDesc& desc, OpCategory cat) {
    LoweredOp op;
    op.stream = StreamKind::kCompute;
    op.category = cat;
    op.duration_s = cost_.kernel_time_s(desc);
    op.flops = desc.flops;
    op.name = kernel_kind_name(desc.kind);
    op.gemm = is_gemm(desc.kind);
    op.expert = desc.kind == KernelKind::kRouterGemm || desc.kind == KernelKind::kMoeRouting ||
                desc.kind == KernelKind::kMoePermute || desc.kind == KernelKind::kExpertFc1Gemm ||
                desc.kind == KernelKind::kExpertFc2Gemm;
    out->push_back(op);
  }

  const Model& m_;
  const Plan& p_;
  const Placement& pl_;
  const CostModel& cost_;
  int t_, b_, s_, h_, a_, g_, d_, f_, V_;
  int cp_ = 1, sl_ = 0;  // context parallelism; tokens of a sequence on this rank
  double T_, Tsp_;
  double cp_hidden_s_ = 0;
  bool sp_, swiglu_;
  bool fp8_ = false;                    // precision fp8 (linear GEMMs in FP8)
  Precision p16_ = Precision::kBf16;    // precision of everything else
  double cast_bytes_ = 4.0;             // fp8_cast_transpose bytes per element
  double layer_params_ = 0;             // one layer's parameters on this TP rank
  bool fused_softmax_ = true;  // Megatron's CUDA softmax applies (see the constructor)
  // The layer being lowered (begin_layer): its parameters on this device,
  // whether it is an MoE layer, its attention span.
  double unit_params_ = 0;
  bool moe_layer_ = false;
  int span_ = 0;
  // MoE (init_moe): experts, top-k, expert and shared-expert widths, ep,
  // etp, local experts, tokens routed per rank (T_moe), token rows per local
  // expert on this rank before the etp gather, dispatch bytes, parameters.
  int E_ = 0, k_ = 0, fe_ = 0, fs_ = 0, ep_ = 1, etp_ = 1;
  double local_experts_ = 0, Tmoe_ = 0, me_ = 0, a2a_bytes_ = 0;
  double moe_dense_params_ = 0, moe_expert_params_ = 0;
};

// tp_comm_overlap: pipelines each TP collective with its paired GEMM (see
// lowering.h); returns the collective time hidden.
double overlap_tp(int chunks, double slowdown, std::vector<LoweredOp>* ops) {
  double hidden = 0;
  const double n = chunks;
  for (size_t k = 0; k < ops->size(); ++k) {
    LoweredOp& op = (*ops)[k];
    if (op.category != OpCategory::kTensorComm || op.tp_pair == 0) continue;
    const int64_t q = static_cast<int64_t>(k) + op.tp_pair;
    if (q < 0 || q >= static_cast<int64_t>(ops->size())) continue;
    LoweredOp& g = (*ops)[static_cast<size_t>(q)];
    if (!g.gemm) continue;
    const double c = op.duration_s;
    const double exposed = c / n + (n - 1) / n * std::max(0.0, c - g.duration_s);
    const double hid = c - exposed;
    op.duration_s = exposed;
    g.duration_s += slowdown * hid;
    g.slowdown_s += slowdown * hid;
    hidden += hid;
  }
  return hidden;
}

// A run of ops of one pass that holds one unit's parameters (the embedding,
// a layer, the head): [begin, end) in the pass, with its parameters on this
// TP rank.
struct Unit {
  size_t begin = 0, end = 0;
  double parameters = 0;         // sharded over the shard group
  double expert_parameters = 0;  // routed experts: sharded over Placement::expert_data
};

// ZeRO-2/3 data-parallel collectives of one pass (see lowering.h): each
// unit's parameter all-gather before it (`gather`), its gradient
// reduce-scatter after it (`scatter`). Rebuilds `ops` with the exposed parts
// inserted between units, appends what the pass issues to `issued` (when not
// null), and returns the time hidden.
double shard_pass(const Plan& plan, const CommGroup& group, const CommGroup& expert_group,
                  const CostModel& cost, bool gather, bool scatter, const std::vector<Unit>& units,
                  std::vector<LoweredOp>* ops, std::vector<PassCollective>* issued) {
  const bool prefetch = plan.overlap_param_gather;
  const bool overlap_rs = plan.overlap_grad_reduce;
  if (!gather && !scatter) return 0;
  const double slowdown = cost.comm_compute_slowdown();
  const size_t n = units.size();
  auto time = [&](CollectiveKind kind, double bytes) {
    CollectiveDesc c;
    c.kind = kind;
    c.bytes = bytes;
    c.group = group;
    return cost.collective_time_s(c);
  };
  std::vector<double> gather_s(n, 0.0), scatter_s(n, 0.0);
  // A unit's routed-expert parameters go over the expert-data group, back
  // to back with the rest on the network.
  auto expert_time = [&](CollectiveKind kind, double bytes) {
    CollectiveDesc c;
    c.kind = kind;
    c.bytes = bytes;
    c.group = expert_group;
    return cost.collective_time_s(c);
  };
  for (size_t u = 0; u < n; ++u) {
    const double experts = units[u].expert_parameters;
    if (gather) {
      const double bytes = units[u].parameters * 2.0;
      gather_s[u] = time(CollectiveKind::kAllGather, bytes);
      if (issued != nullptr) issued->push_back({CollectiveKind::kAllGather, bytes, gather_s[u]});
      if (experts > 0) {
        const double s = expert_time(CollectiveKind::kAllGather, experts * 2.0);
        gather_s[u] += s;
        if (issued != nullptr) issued->push_back({CollectiveKind::kAllGather, experts * 2.0, s});
      }
    }
    if (scatter) {
      const double bytes = units[u].parameters * plan.grad_reduce_bytes();
      scatter_s[u] = time(CollectiveKind::kReduceScatter, bytes);
      if (issued != nullptr) {
        issued->push_back({CollectiveKind::kReduceScatter, bytes, scatter_s[u]});
      }
      if (experts > 0) {
        const double eb = experts * plan.grad_reduce_bytes();
        const double s = expert_time(CollectiveKind::kReduceScatter, eb);
        scatter_s[u] += s;
        if (issued != nullptr) issued->push_back({CollectiveKind::kReduceScatter, eb, s});
      }
    }
  }
  auto exposed_op = [](OpCategory cat, double s, const char* name) {
    LoweredOp op;
    op.stream = StreamKind::kDataComm;
    op.category = cat;
    op.duration_s = s;
    op.name = name;
    return op;
  };
  std::vector<LoweredOp> out;
  out.reserve(ops->size() + 3 * n + 2);
  out.insert(out.end(), ops->begin(), ops->begin() + static_cast<int64_t>(units[0].begin));
  double hidden = 0;
  for (size_t u = 0; u < n; ++u) {
    // Before the unit: its gather when not prefetched (always for unit 0),
    // and the previous unit's reduce-scatter when it does not overlap.
    if (gather_s[u] > 0 && (u == 0 || !prefetch)) {
      out.push_back(exposed_op(OpCategory::kFsdpGather, gather_s[u], "fsdp all_gather"));
    }
    if (u > 0 && scatter_s[u - 1] > 0 && !overlap_rs) {
      out.push_back(
          exposed_op(OpCategory::kFsdpReduceScatter, scatter_s[u - 1], "fsdp reduce_scatter"));
    }
    // During the unit: the next unit's gather and the previous unit's
    // reduce-scatter, back to back on the network.
    const double g = u + 1 < n && prefetch ? gather_s[u + 1] : 0.0;
    const double r = u > 0 && overlap_rs ? scatter_s[u - 1] : 0.0;
    double compute = 0;
    for (size_t k = units[u].begin; k < units[u].end; ++k) compute += (*ops)[k].duration_s;
    const double concurrent = g + r;
    const double hid = std::min(concurrent, compute);
    const size_t first = out.size();
    out.insert(out.end(), ops->begin() + static_cast<int64_t>(units[u].begin),
               ops->begin() + static_cast<int64_t>(units[u].end));
    if (hid > 0) {
      // SM contention on the unit's last kernel.
      for (size_t k = out.size(); k > first; --k) {
        LoweredOp& op = out[k - 1];
        if (op.stream != StreamKind::kCompute || op.category == OpCategory::kHostOverhead) continue;
        op.duration_s += slowdown * hid;
        op.slowdown_s += slowdown * hid;
        break;
      }
      hidden += hid;
    }
    const double exposed = concurrent - hid;
    if (exposed > 0) {
      // Split in proportion to what was queued.
      if (g > 0) {
        out.push_back(exposed_op(OpCategory::kFsdpGather, exposed * g / concurrent,
                                 "fsdp all_gather (prefetch not hidden)"));
      }
      if (r > 0) {
        out.push_back(exposed_op(OpCategory::kFsdpReduceScatter, exposed * r / concurrent,
                                 "fsdp reduce_scatter (not hidden)"));
      }
    }
  }
  // After the last unit: its reduce-scatter.
  if (scatter_s[n - 1] > 0) {
    out.push_back(
        exposed_op(OpCategory::kFsdpReduceScatter, scatter_s[n - 1], "fsdp reduce_scatter"));
  }
  out.insert(out.end(), ops->begin() + static_cast<int64_t>(units[n - 1].end), ops->end());
  *ops = std::move(out);
  return hidden;
}

// Splits a backward pass into its B ops (`input`) and W ops (`weight`, the
// weight_grad kernels), unit by unit, with the units of each. A unit's ready
// gradient bytes move to its last W op (it has one whenever it holds
// parameters whose gradient a GEMM or the embedding computes); ops outside
// the units (host overhead, the pipeline all-gather) stay in B.
void split_backward(const std::vector<LoweredOp>& ops, const std::vector<Unit>& units,
                    std::vector<LoweredOp>* input, std::vector<Unit>* input_units,
                    std::vector<LoweredOp>* weight, std::vector<Unit>* weight_units) {
  input->reserve(ops.size());
  size_t k = 0;
  for (const Unit& u : units) {
    for (; k < u.begin; ++k) input->push_back(ops[k]);
    const size_t input_begin = input->size(), weight_begin = weight->size();
    double ready = 0, expert_ready = 0;
    for (; k < u.end; ++k) {
      ready += ops[k].grad_ready_bytes;
      expert_ready += ops[k].expert_grad_ready_bytes;
      (ops[k].weight_grad ? weight : input)->push_back(ops[k]);
    }
    // Every unit with a gradient has a W op (a weight-gradient GEMM or the
    // embedding's scatter), so the data-parallel buckets of W see it all.
    LLMPLAN_CHECK((ready == 0 && expert_ready == 0) || weight->size() > weight_begin);
    if (weight->size() > weight_begin) {
      for (size_t q = input_begin; q < input->size(); ++q) {
        (*input)[q].grad_ready_bytes = 0;
        (*input)[q].expert_grad_ready_bytes = 0;
      }
      for (size_t q = weight_begin; q < weight->size(); ++q) {
        (*weight)[q].grad_ready_bytes = 0;
        (*weight)[q].expert_grad_ready_bytes = 0;
      }
      weight->back().grad_ready_bytes = ready;
      weight->back().expert_grad_ready_bytes = expert_ready;
    }
    input_units->push_back({input_begin, input->size(), u.parameters, u.expert_parameters});
    weight_units->push_back({weight_begin, weight->size(), u.parameters, u.expert_parameters});
  }
  for (; k < ops.size(); ++k) input->push_back(ops[k]);
}

// moe_a2a_overlap (see lowering.h): the all-to-alls of ops[begin, end) (one
// MoE layer of a pass) hidden under that layer's compute; the exposed rest
// split over them in proportion, SM contention on the layer's last kernel.
// Returns the time hidden.
double overlap_a2a(double slowdown, size_t begin, std::vector<LoweredOp>* ops) {
  double a2a = 0, compute = 0;
  for (size_t k = begin; k < ops->size(); ++k) {
    const LoweredOp& op = (*ops)[k];
    if (op.category == OpCategory::kMoeA2a) {
      a2a += op.duration_s;
    } else if (op.stream == StreamKind::kCompute && op.category != OpCategory::kHostOverhead) {
      compute += op.duration_s;
    }
  }
  const double hidden = std::min(a2a, compute);
  if (hidden <= 0) return 0;
  const double exposed_share = (a2a - hidden) / a2a;
  LoweredOp* last = nullptr;
  for (size_t k = begin; k < ops->size(); ++k) {
    LoweredOp& op = (*ops)[k];
    if (op.category == OpCategory::kMoeA2a) {
      op.duration_s *= exposed_share;
    } else if (op.stream == StreamKind::kCompute && op.category != OpCategory::kHostOverhead) {
      last = &op;
    }
  }
  last->duration_s += slowdown * hidden;
  last->slowdown_s += slowdown * hidden;
  return hidden;
}

}  // namespace

void apply_launch_queue(double launch_interval_s, double run_ahead_s,
                        std::vector<LoweredOp>* ops) {
  double host = 0, gpu = 0;  // when the host is free; when the GPU is
  for (LoweredOp& op : *ops) {
    double end;
    if (op.category == OpCategory::kHostOverhead) {
      host += op.duration_s;
      end = std::max(gpu, host);
    } else {
      host = std::max(host, gpu - run_ahead_s) + launch_interval_s;
      end = std::max(host, gpu) + op.duration_s;
    }
    op.duration_s = end - gpu;
    gpu = end;
  }
}

ChunkProgram lower_chunk(const Model& model, const Plan& plan, const Placement& placement,
                         const CostModel& cost, int chunk) {
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  LLMPLAN_CHECK(chunk >= 0 && chunk < chunks);
  const int t = plan.tensor_parallel;
  const bool first = chunk == 0;
  const bool last = chunk == chunks - 1;
  const double grad_elem = plan.grad_reduce_bytes();

  ChunkProgram prog;
  prog.chunk = chunk;
  prog.layers = layers_in_chunk(model, plan, chunk);
  // The chunk's first layer in the model: chunks hold consecutive layers.
  int first_layer = 0;
  for (int j = 0; j < chunk; ++j) first_layer += layers_in_chunk(model, plan, j);
  const double layer_params = static_cast<double>(model.layer_parameters()) / t;
  double embedding_params = 0, head_params = 0;
  if (first) {
    embedding_params = static_cast<double>(model.vocab_size) * model.hidden_size / t;
    if (model.positions == PositionEmbedding::kLearned) {
      embedding_params += static_cast<double>(model.seq_length) * model.hidden_size;
    }
  }
  if (last) {
    head_params = model.linear_bias ? 2.0 * model.hidden_size : model.hidden_size;
    // Untied: the output projection. Tied across stages: the last stage keeps
    // its own copy of the word embeddings (synchronised by an all-reduce).
    if (!model.tied_embeddings || chunks > 1) {
      head_params += static_cast<double>(model.vocab_size) * model.hidden_size / t;
    }
  }
  Lowerer low(model, plan, placement, cost);
  if (!model.is_moe()) {
    prog.layer_parameters = prog.layers * static_cast<double>(model.layer_parameters()) / t;
    prog.parameters = prog.layers * layer_params + embedding_params + head_params;
  } else {
    // Dense layers as above; an MoE layer's routed experts over ep x etp.
    double dense = 0, experts = 0;
    for (int l = 0; l < prog.layers; ++l) {
      if (model.is_moe_layer(first_layer + l)) {
        dense += low.moe_dense_params();
        experts += low.moe_expert_params();
      } else {
        dense += layer_params;
      }
    }
    prog.layer_parameters = dense + experts;
    prog.expert_parameters = experts;
    prog.parameters = dense + experts + embedding_params + head_params;
  }
  prog.grad_bytes = (prog.parameters - prog.expert_parameters) * grad_elem;
  prog.expert_grad_bytes = prog.expert_parameters * grad_elem;
  const double act_bytes = low.tokens() * model.hidden_size * Lowerer::kElem;
  // With sequence parallelism (or Megatron's scatter/gather) a stage sends
  // only its 1/t slice of the activation.
  const bool sliced = t > 1 && (plan.sequence_parallel || plan.pipeline_scatter_gather);
  prog.activation_send_bytes = sliced ? act_bytes / t : act_bytes;

  // Units (embedding, layers, head) as they are emitted, for ZeRO-2/3.
  std::vector<Unit> forward_units, backward_units;
  auto unit = [](std::vector<Unit>* units, const std::vector<LoweredOp>& ops, size_t begin,
                 double params, double expert_params = 0) {
    units->push_back({begin, ops.size(), params, expert_params});
  };
  // The parameters of the layer begun last (outside its routed experts; the experts').
  auto layer_units = [&]() -> std::pair<double, double> {
    if (!low.moe_layer()) return {layer_params, 0.0};
    return {low.moe_dense_params(), low.moe_expert_params()};
  };
  const bool a2a_overlap = plan.moe_a2a_overlap && model.is_moe();
  const double slowdown = cost.comm_compute_slowdown();

  // Forward.
  low.overhead(&prog.forward);
  if (plan.pipeline_scatter_gather && !first && t > 1 && !plan.sequence_parallel) {
    low.tp(&prog.forward, CollectiveKind::kAllGather, act_bytes);
  }
  if (first) {
    const size_t b = prog.forward.size();
    low.embedding_forward(&prog.forward);
    unit(&forward_units, prog.forward, b, embedding_params);
  }
  for (int l = 0; l < prog.layers; ++l) {
    const size_t b = prog.forward.size();
    low.begin_layer(first_layer + l);
    low.layer_forward(&prog.forward, OpCategory::kCompute);
    if (a2a_overlap && low.moe_layer()) {
      prog.moe_a2a_hidden_s += overlap_a2a(slowdown, b, &prog.forward);
    }
    const auto [dense, experts] = layer_units();
    unit(&forward_units, prog.forward, b, dense, experts);
  }
  if (last) {
    const size_t b = prog.forward.size();
    low.head_forward(&prog.forward);
    unit(&forward_units, prog.forward, b, head_params);
  }

  // Backward (reverse order).
  low.overhead(&prog.backward);
  if (plan.pipeline_scatter_gather && !last && t > 1 && !plan.sequence_parallel) {
    low.tp(&prog.backward, CollectiveKind::kAllGather, act_bytes);
  }
  if (last) {
    const size_t b = prog.backward.size();
    low.head_backward(&prog.backward, head_params * grad_elem);
    unit(&backward_units, prog.backward, b, head_params);
  }
  for (int l = prog.layers - 1; l >= 0; --l) {
    const size_t b = prog.backward.size();
    low.begin_layer(first_layer + l);
    const auto [dense, experts] = layer_units();
    low.layer_backward(&prog.backward, dense * grad_elem, experts * grad_elem);
    if (a2a_overlap && low.moe_layer()) {
      prog.moe_a2a_hidden_s += overlap_a2a(slowdown, b, &prog.backward);
    }
    unit(&backward_units, prog.backward, b, dense, experts);
  }
  if (first) {
    const size_t b = prog.backward.size();
    low.embedding_backward(&prog.backward, embedding_params * grad_elem);
    unit(&backward_units, prog.backward, b, embedding_params);
  }

  prog.cp_hidden_s = low.cp_hidden_s();
  // Split backward (zb-h1): B and W cut from the raw backward, then lowered
  // like the other passes.
  prog.split_backward = plan.schedule == Schedule::kZbH1;
  std::vector<Unit> input_units, weight_units;
  if (prog.split_backward) {
    split_backward(prog.backward, backward_units, &prog.backward_input, &input_units,
                   &prog.backward_weight, &weight_units);
  }

  if (plan.tp_comm_overlap && t > 1) {
    const double forward = overlap_tp(t, slowdown, &prog.forward);
    const double backward = overlap_tp(t, slowdown, &prog.backward);
    prog.tp_hidden_s = forward + backward;
    if (prog.split_backward) {
      prog.tp_hidden_s = forward + overlap_tp(t, slowdown, &prog.backward_input) +
                         overlap_tp(t, slowdown, &prog.backward_weight);
    }
  }
  const bool shard_experts = prog.expert_parameters > 0 && placement.expert_data.size > 1;
  if (plan.sharding_stage() >= 2 && (placement.shard.size > 1 || shard_experts)) {
    const bool gather = plan.sharding_stage() >= 3;
    const CommGroup& group = placement.shard;
    const CommGroup& experts = placement.expert_data;
    const double forward = shard_pass(plan, group, experts, cost, gather, false, forward_units,
                                      &prog.forward, &prog.forward_collectives);
    const double backward = shard_pass(plan, group, experts, cost, gather, true, backward_units,
                                       &prog.backward, &prog.backward_collectives);
    prog.fsdp_hidden_s = forward + backward;
    if (prog.split_backward) {
      prog.fsdp_hidden_s = forward +
                           shard_pass(plan, group, experts, cost, gather, false, input_units,
                                      &prog.backward_input, nullptr) +
                           shard_pass(plan, group, experts, cost, false, true, weight_units,
                                      &prog.backward_weight, nullptr);
    }
  }

  const double interval = cost.launch_interval_s(), run_ahead = cost.host_run_ahead_s();
  apply_launch_queue(interval, run_ahead, &prog.forward);
  apply_launch_queue(interval, run_ahead, &prog.backward);
  for (const LoweredOp& op : prog.forward) prog.forward_s += op.duration_s;
  for (const LoweredOp& op : prog.backward) prog.backward_s += op.duration_s;
  if (prog.split_backward) {
    apply_launch_queue(interval, run_ahead, &prog.backward_input);
    apply_launch_queue(interval, run_ahead, &prog.backward_weight);
    for (const LoweredOp& op : prog.backward_input) prog.backward_input_s += op.duration_s;
    for (const LoweredOp& op : prog.backward_weight) prog.backward_weight_s += op.duration_s;
  }
  return prog;
}

}  // namespace llmplan::simulator
