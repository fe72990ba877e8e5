#include "simulator/layers/moe.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "simulator/layers/attention.h"
#include "simulator/layers/mlp.h"
#include "simulator/layers/moe_dispatch.h"

namespace llmplan::simulator::lowering {

Moe::Moe(const Model& model, const Plan& plan, const Placement& placement, const CostModel& cost)
    : LayerPart(model, plan, placement, cost), shared_(model, plan, placement, cost) {
  if (!model.is_moe()) return;
  E_ = m_.num_experts;
  k_ = m_.moe_top_k;
  fe_ = m_.moe_ffn_hidden();
  fs_ = m_.moe_shared_experts * fe_;
  w_ = m_.moe_routed_width();
  latent_ = m_.moe_latent_size;
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
    a2a_bytes_ = E_ * capacity * w_ * kElem;
  } else {
    me_ = routed * ep_ / E_ * p_.moe_imbalance;
    a2a_bytes_ = routed * w_ * kElem * p_.moe_imbalance;
    // The flex dispatcher (DeepEP / HybridEP) sends a token once per
    // destination rank, not once per expert (moe_dispatch.h).
    if (p_.moe_flex_dispatcher) {
      a2a_bytes_ *= flex_dispatch_byte_scale(E_, k_, ep_, m_.moe_router_groups,
                                             m_.moe_router_group_limit);
    }
  }
  // Node-limited routing (Model::moe_router_groups): with G groups of
  // experts laid out in order over the EP group's N nodes, a token whose
  // experts lie in L groups reaches at most R = min(N, L max(1, N / G))
  // nodes, and a dispatcher that sends each token once per destination node
  // (DeepEP's NVLink forwarding, which DeepSeek-V3 trains with) moves
  // min(k, R) of its k rows between nodes: the off-node bytes scale by
  // min(1, R / k). Without a limit (or inside one node) the scale is 1.
  // That estimate is kept for the alltoall dispatcher; the flex dispatcher's
  // own per-node count (moe_dispatch.h) replaces it below.
  const int nodes = pl_.expert.nodes();
  const bool flex_across_nodes = p_.moe_flex_dispatcher && !(c > 0) && nodes > 1;
  if (flex_across_nodes) {
    // The flex dispatcher sends a token once per destination node over the
    // NIC and forwards it over NVLink inside that node (moe_dispatch.h):
    // D (nodes - 1) / nodes rows per token leave the node instead of the
    // uniform (n - k_n) / n of its R rank copies, and NVLink carries
    // `nodes` times the direct all-to-all's in-node bytes.
    const double n = pl_.expert.size;
    const double kn = std::min(pl_.expert.ranks_per_node, pl_.expert.size);
    const double ranks = flex_dispatch_ranks_per_token(E_, k_, ep_, m_.moe_router_groups,
                                                       m_.moe_router_group_limit);
    const double node_count = flex_dispatch_nodes_per_token(E_, k_, nodes, m_.moe_router_groups,
                                                           m_.moe_router_group_limit);
    const double remote = node_count * (nodes - 1.0) / nodes;
    off_node_scale_ = std::min(1.0, remote / (ranks * (n - kn) / n));
    in_node_scale_ = static_cast<double>(nodes);
  } else if (m_.moe_router_groups > 0 && nodes > 1) {
    const double n = nodes, g = m_.moe_router_groups, l = m_.moe_router_group_limit;
    const double reached = std::min(n, l * std::max(1.0, n / g));
    off_node_scale_ = std::min(1.0, reached / k_);
  }
  rows_ = me_ * etp_;
  fc1_cols_ = (swiglu_ ? 2.0 : 1.0) * fe_ / etp_;
  fe_local_ = static_cast<double>(fe_) / etp_;
}

void Moe::forward(std::vector<LoweredOp>* out, OpCategory cat) {
  const Pass f = Pass::kForward;
  if (fs_ > 0) shared_.core_forward(out, cat, fs_);
  // Router: bf16 scores (never fp8), then softmax/sigmoid, top-k and the
  // auxiliary loss over the fp32 scores.
  gemm(out, KernelKind::kRouterGemm, f, Tmoe_, E_, h_, 1, cat);
  mem(out, KernelKind::kMoeRouting, f, routing_bytes(f), cat);
  // Latent MoE: fc1_latent_proj [h -> L] on the rank's tokens before the
  // permute (duplicated weights, no TP collective).
  if (latent_ > 0) {
    cast(out, f, Tmoe_ * h_, cat);
    gemm(out, KernelKind::kFc1Gemm, f, Tmoe_, latent_, h_, 1, cat);
  }
  mem(out, KernelKind::kMoePermute, f, 2.0 * Tmoe_ * k_ * w_ * kElem, cat);
  a2a(out, "moe dispatch all_to_all");
  etp(out, CollectiveKind::kAllGather);
  cast(out, f, local_experts_ * rows_ * w_, cat);
  grouped_gemm(out, KernelKind::kExpertFc1Gemm, f, rows_, fc1_cols_, w_, cat);
  activation_clamp(out, f, cat);
  mem(out, KernelKind::kActivation, f,
      local_experts_ * rows_ * fe_local_ * kElem * (swiglu_ ? 3 : 2), cat);
  cast(out, f, local_experts_ * rows_ * fe_local_, cat);
  grouped_gemm(out, KernelKind::kExpertFc2Gemm, f, rows_, w_, fe_local_, cat);
  expert_bias(out, f, cat);
  etp(out, CollectiveKind::kReduceScatter);
  a2a(out, "moe combine all_to_all");
  // Unpermute: the k expert outputs of each token read, weighted, summed.
  mem(out, KernelKind::kMoePermute, f, Tmoe_ * k_ * w_ * kElem + Tmoe_ * w_ * kElem, cat);
  // Latent MoE: fc2_latent_proj [L -> h] after the combine.
  if (latent_ > 0) {
    cast(out, f, Tmoe_ * latent_, cat);
    gemm(out, KernelKind::kFc2Gemm, f, Tmoe_, h_, latent_, 1, cat);
  }
}

void Moe::backward(std::vector<LoweredOp>* out) {
  const OpCategory c = OpCategory::kCompute;
  const Pass b = Pass::kBackward;
  // Unpermute: dy scattered to the k rows of each token; the k expert
  // outputs read again for the routing weights' gradient.
  if (latent_ > 0) {
    cast(out, b, Tmoe_ * h_, c);
    gemm_backward(out, KernelKind::kFc2Gemm, Tmoe_, h_, latent_, 1);
  }
  mem(out, KernelKind::kMoePermute, b, Tmoe_ * w_ * kElem + 2.0 * Tmoe_ * k_ * w_ * kElem, c);
  a2a(out, "moe combine all_to_all (backward)");
  etp(out, CollectiveKind::kAllGather);
  expert_bias(out, b, c);
  // Plan::recompute_modules moe_act: FC2's input rebuilt from FC1's output
  // (the activation's forward again, and its cast in fp8 / nvfp4) before
  // FC2's backward reads it.
  if (p_.recomputes(kRecomputeMoeAct)) {
    const OpCategory r = OpCategory::kRecompute;
    activation_clamp(out, Pass::kForward, r);
    mem(out, KernelKind::kActivation, Pass::kForward,
        local_experts_ * rows_ * fe_local_ * kElem * (swiglu_ ? 3 : 2), r);
    cast(out, Pass::kForward, local_experts_ * rows_ * fe_local_, r);
  }
  cast(out, b, local_experts_ * rows_ * w_, c);
  grouped_gemm_backward(out, KernelKind::kExpertFc2Gemm, rows_, w_, fe_local_);
  mem(out, KernelKind::kActivation, b,
      local_experts_ * rows_ * fe_local_ * kElem * (swiglu_ ? 5 : 3), c);
  activation_clamp(out, b, c);
  cast(out, b, local_experts_ * rows_ * fc1_cols_, c);
  grouped_gemm_backward(out, KernelKind::kExpertFc1Gemm, rows_, fc1_cols_, w_);
  etp(out, CollectiveKind::kReduceScatter);
  a2a(out, "moe dispatch all_to_all (backward)");
  // Permute: the k gradient rows of each token summed back into it.
  mem(out, KernelKind::kMoePermute, b, Tmoe_ * k_ * w_ * kElem + Tmoe_ * w_ * kElem, c);
  if (latent_ > 0) {
    cast(out, b, Tmoe_ * latent_, c);
    gemm_backward(out, KernelKind::kFc1Gemm, Tmoe_, latent_, h_, 1);
  }
  mem(out, KernelKind::kMoeRouting, b, routing_bytes(b), c);
  gemm_backward(out, KernelKind::kRouterGemm, Tmoe_, E_, h_, 1);
  if (fs_ > 0) shared_.core_backward(out, fs_);
}

void Moe::grouped_gemm(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double rows,
                       double n, double k, OpCategory cat) const {
  KernelDesc desc;
  desc.kind = kind;
  desc.pass = pass;
  desc.gemm = {std::max<int64_t>(1, std::llround(rows)), static_cast<int64_t>(n),
               static_cast<int64_t>(k), static_cast<int64_t>(local_experts_)};
  desc.flops = 2.0 * rows * n * k * local_experts_;
  desc.precision = gemm_precision(formats_, kind);  // Transformer Engine's grouped linear
  desc.fp8_block_scaled = formats_.mxfp8 && desc.precision == Precision::kFp8;
  push_kernel(out, desc, cat);
}

void Moe::grouped_gemm_backward(std::vector<LoweredOp>* out, KernelKind kind, double rows,
                                double n, double k) const {
  grouped_gemm(out, kind, Pass::kBackwardData, rows, n, k, OpCategory::kCompute);
  grouped_gemm(out, kind, Pass::kBackwardWeight, rows, n, k, OpCategory::kCompute);
  out->back().weight_grad = true;
}

// Experts with biases (Model::linear_bias; GPT-OSS): Megatron-Core's
// TEGroupedMLP adds FC1's bias in the grouped GEMM, but returns FC2's and
// adds it after the GEMM scaled by each row's routing weight, in eager
// PyTorch (TEGroupedMLP._apply_bias: per local expert t + b * p over
// torch.split of the rows, then torch.cat; read in NVIDIA/Megatron-LM
// megatron/core/transformer/moe/experts.py). Over the E_local x m_e x w
// bf16 elements of FC2's output: b * p writes 2 B, t + (b * p) reads 4 and
// writes 2, the concatenation reads and writes 2 each (12 B). Backward: the
// bias's and the routing weights' gradients each read the output gradient
// and write a product that a sum reads again (12 B), and the split's
// backward concatenates the slices' gradients (4 B). Two kernels each way
// stand for the 2 E_local + 1 forward and about 4 E_local + 1 backward
// eager kernels; the host time of that per-expert loop is not modelled.
// The routing weights are assumed bf16 (moe_router_dtype unset, as in the
// GPT-OSS recipes read); fp32 weights would promote the sums to fp32.
void Moe::expert_bias(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const {
  if (!m_.linear_bias) return;
  const double elements = local_experts_ * rows_ * w_;
  if (pass == Pass::kForward) {
    mem(out, KernelKind::kMoeExpertBias, pass, 8.0 * elements, cat);
    mem(out, KernelKind::kMoeExpertBias, pass, 4.0 * elements, cat);
  } else {
    mem(out, KernelKind::kMoeExpertBias, pass, 12.0 * elements, cat);
    mem(out, KernelKind::kMoeExpertBias, pass, 4.0 * elements, cat);
  }
}

// Clamped gated activation (Model::activation_clamp; GPT-OSS). With
// bias_activation_fusion (set by Megatron-Bridge's GPT-OSS bridge),
// TEGroupedMLP calls weighted_bias_quick_geglu_impl, which clamps before the
// fused (jit) activation in eager PyTorch: input.chunk(2), x_glu.clamp(max=v)
// and x_linear.clamp(-v, v), then torch.cat of the two halves (read in
// NVIDIA/Megatron-LM megatron/core/fusions/fused_bias_geglu.py and
// megatron/core/transformer/moe/experts.py). Over the E = E_local x m_e x
// (2 f_e / etp) bf16 elements of FC1's output, forward: each clamp reads
// and writes its half (2 E B each), the concatenation reads and writes the
// whole (4 E B): 8 B per element, 3 kernels. Backward, as PyTorch's
// clamp_backward runs it (where(mask, grad, 0), the mask built by
// comparisons with the saved input): the gate half's self <= v (reads 2 B,
// writes a 1 B mask) and where (reads the mask and the gradient, writes
// 2 B); the linear half's self >= -v, self <= v, their logical_and and the
// where; then the chunk's backward concatenates the two gradients (4 E B):
// 15 B per element, 7 kernels. With moe_act recomputation the forward part
// runs again before the backward (Moe::backward). The chunks are strided
// views, which PyTorch's elementwise kernels read below their contiguous
// rate; that, and the host-to-device copy of the linear offset each call
// (torch.tensor(linear_offset, device=...)), are not modelled. Applies only
// with the gated (SwiGLU-type) activation; validate() refuses a clamp
// without it.
void Moe::activation_clamp(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const {
  if (!(m_.activation_clamp > 0) || !swiglu_) return;
  const double e = local_experts_ * rows_ * fc1_cols_;
  if (pass == Pass::kForward) {
    for (const double bytes : {2.0 * e, 2.0 * e, 4.0 * e}) {  // clamp, clamp, cat
      mem(out, KernelKind::kMoeActClamp, pass, bytes, cat);
    }
  } else {
    // gate: <=, where; linear: >=, <=, and, where; chunk backward: cat.
    for (const double bytes : {1.5 * e, 2.5 * e, 1.5 * e, 1.5 * e, 1.5 * e, 2.5 * e, 4.0 * e}) {
      mem(out, KernelKind::kMoeActClamp, pass, bytes, cat);
    }
  }
}

// Forward: softmax/sigmoid reads the logits and writes the probabilities
// (8 B per score), top-k reads them (4), the auxiliary load-balancing loss
// reads them again (4) and writes the routing map (1); the k chosen weights
// and indices per token (8 B each). Backward: the probabilities and their
// gradient read, the logits' gradient written, the aux loss's gradient
// added (16 B per score).
double Moe::routing_bytes(Pass pass) const {
  const double scores = Tmoe_ * E_;
  return pass == Pass::kForward ? scores * 17.0 + Tmoe_ * k_ * 8.0 : scores * 16.0;
}

// Each rank sends its T_moe x k token rows (bf16); the busiest rank receives
// moe_imbalance x that (dropless), or every rank exchanges the padded
// capacity buffers (capacity factor). Exposed on the pass (see overlap_a2a
// for moe_a2a_overlap).
void Moe::a2a(std::vector<LoweredOp>* out, const char* name) const {
  if (ep_ <= 1) return;
  CollectiveDesc c;
  c.kind = CollectiveKind::kAllToAll;
  c.bytes = a2a_bytes_;
  c.group = pl_.expert;
  c.off_node_scale = off_node_scale_;
  c.in_node_scale = in_node_scale_;
  LoweredOp op;
  op.stream = StreamKind::kExpertComm;
  op.category = OpCategory::kMoeA2a;
  op.duration_s = cost_.collective_time_s(c);
  op.name = name;
  out->push_back(op);
}

// The local experts' token rows all-gathered over the etp group before the
// expert GEMMs, their outputs reduce-scattered after (Megatron-Core's
// alltoall dispatcher). Exposed (userbuffers do not cover them).
void Moe::etp(std::vector<LoweredOp>* out, CollectiveKind kind) const {
  if (etp_ <= 1) return;
  out->push_back(collective_op(
      kind, local_experts_ * me_ * etp_ * w_ * kElem, pl_.expert_tensor, StreamKind::kTensorComm,
      OpCategory::kTensorComm,
      kind == CollectiveKind::kAllGather ? "etp all_gather" : "etp reduce_scatter"));
}

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

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

int64_t expert_parameters(const Model& m) {
  const int64_t w = m.moe_routed_width(), f = m.moe_ffn_hidden();
  const int64_t bias = m.linear_bias ? 1 : 0;
  return m.activation == Activation::kSwiglu ? 3 * w * f + bias * (2 * f + w)
                                             : 2 * w * f + bias * (f + w);
}

int64_t moe_layer_dense_parameters(const Model& m) {
  const int64_t h = m.hidden_size, e = m.num_experts;
  const int64_t router = h * e + (m.linear_bias ? e : 0);
  return attention_and_norms_parameters(m) + router +
         static_cast<int64_t>(m.moe_shared_experts) * mlp_parameters(m, m.moe_ffn_hidden()) +
         m.moe_latent_parameters();
}

double moe_tokens(const Model& model, const Plan& plan) {
  const double tokens = rank_tokens(model, plan);
  return plan.tensor_parallel > 1 ? tokens / plan.tensor_parallel : tokens;
}

double expert_rows(const Model& model, const Plan& plan) {
  const double q = model.moe_capacity_factor > 0 ? model.moe_capacity_factor : plan.moe_imbalance;
  return model.moe_top_k * moe_tokens(model, plan) * plan.expert_tensor_parallel * q;
}

MoeActivations moe_activations(const Model& model, const Plan& plan) {
  const double h = model.hidden_size;
  const double gemm_in = gemm_input_bytes_per_element(plan.precision);
  const double fe = model.moe_ffn_hidden(), experts = model.num_experts;
  const double etp = plan.expert_tensor_parallel;
  MoeActivations act;
  // Plan::recompute_modules layernorm: the MoE block's norm (Megatron-Core's
  // pre_mlp_layernorm, a TENorm of its own) is checkpointed without its
  // output, so the router's bf16 input (the norm output) is not held.
  const double router_input = plan.recomputes(kRecomputeLayernorm) ? 0.0 : 2.0 * h;
  act.router = moe_tokens(model, plan) * (router_input + 9.0 * experts);
  // Latent MoE: the routed rows are L wide; fc1_latent_proj keeps its input
  // in the GEMM format (the norm output's own bf16 copy when that is the
  // format) and fc2_latent_proj its L-wide input.
  const double w = model.moe_routed_width(), latent = model.moe_latent_size;
  act.latent_inputs =
      latent > 0 ? moe_tokens(model, plan) * ((gemm_in < 2.0 ? gemm_in * h : 0.0) + gemm_in * latent)
                 : 0.0;
  // Plan::recompute_modules moe_act: the routed experts' activation is
  // checkpointed without its output, so FC2's input is not held (rebuilt
  // from FC1's output before FC2's backward). Assumption for FP8 / NVFP4:
  // FC2 keeps no quantized copy of its own either (Megatron-Core's grouped
  // MLP asks Transformer Engine to save the original input when moe_act is
  // recomputed), so the whole g f_e / etp per row goes.
  const double fc2_input = plan.recomputes(kRecomputeMoeAct) ? 0.0 : gemm_in;
  // Model::activation_clamp (GPT-OSS): the clamps keep FC1's output for
  // their backward and the fused activation saves the clamped, concatenated
  // copy (layers/moe.cc), a second FC1-output-sized tensor; with moe_act
  // recomputed neither is held beyond FC1's output.
  const double clamp_copy = model.activation_clamp > 0 && !plan.recomputes(kRecomputeMoeAct)
                                ? fc1_output_bytes(model)
                                : 0.0;
  act.routed =
      expert_rows(model, plan) *
      (gemm_in * w + (fc1_output_bytes(model) + clamp_copy + fc2_input) * fe / etp + 4.0);
  return act;
}

double shared_experts_weight_grad_per_token(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const bool swiglu = model.activation == Activation::kSwiglu;
  const double shared = static_cast<double>(model.moe_shared_experts) * model.moe_ffn_hidden() / t;
  return shared > 0 ? (h + (swiglu ? 2.0 : 1.0) * shared) + (shared + h) : 0.0;
}

MoeWeightGrads moe_weight_grads(const Model& model, const Plan& plan, double tokens) {
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const bool swiglu = model.activation == Activation::kSwiglu;
  MoeWeightGrads g;
  // The router and the experts see T_moe tokens (T / t) and R rows; here T =
  // s b as above.
  const double moe_tok = t > 1 ? tokens / t : tokens;
  g.router = moe_tok * (h + model.num_experts);
  const double q = model.moe_capacity_factor > 0 ? model.moe_capacity_factor : plan.moe_imbalance;
  const double rows = model.moe_top_k * moe_tok * plan.expert_tensor_parallel * q;
  const double fe = static_cast<double>(model.moe_ffn_hidden()) / plan.expert_tensor_parallel;
  const double w = model.moe_routed_width(), latent = model.moe_latent_size;
  g.routed = rows * ((w + (swiglu ? 2.0 : 1.0) * fe) + (fe + w));
  // Latent MoE's two projections: inputs and output gradients.
  g.projections = latent > 0 ? moe_tok * 2.0 * (h + latent) : 0.0;
  return g;
}

namespace {

// A dense model: no expert field may be set (it would be silently ignored).
Status validate_dense_has_no_experts(const Model& m) {
  if (m.moe_top_k != 0) return bad_field("top_k", "needs experts (the model is dense)");
  if (m.moe_ffn_hidden_size != 0) {
    return bad_field("expert_ffn_hidden", "needs experts (the model is dense)");
  }
  if (m.moe_shared_experts != 0) {
    return bad_field("shared_experts", "needs experts (the model is dense)");
  }
  if (m.moe_layer_every != 1) return bad_field("moe_every", "needs experts (the model is dense)");
  if (m.moe_first_dense != 0) {
    return bad_field("moe_first_dense", "needs experts (the model is dense)");
  }
  if (m.moe_capacity_factor != 0) {
    return bad_field("capacity_factor", "needs experts (the model is dense)");
  }
  if (m.moe_router != MoeRouter::kSoftmax) {
    return bad_field("router", "needs experts (the model is dense)");
  }
  if (m.moe_router_groups != 0) {
    return bad_field("router_groups", "needs experts (the model is dense)");
  }
  if (m.moe_router_group_limit != 0) {
    return bad_field("router_group_limit", "needs experts (the model is dense)");
  }
  return Status();
}

// An MoE model's expert fields in range and its node-limited routing.
Status validate_expert_fields(const Model& m) {
  LLMPLAN_RETURN_IF_ERROR(field_in_range("top_k", m.moe_top_k, 1, m.num_experts));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("expert_ffn_hidden", m.moe_ffn_hidden_size, 0, Model::kMaxFfnHidden));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("shared_experts", m.moe_shared_experts, 0, Model::kMaxExperts));
  LLMPLAN_RETURN_IF_ERROR(field_in_range("moe_every", m.moe_layer_every, 1, Model::kMaxLayers));
  LLMPLAN_RETURN_IF_ERROR(
      field_in_range("moe_first_dense", m.moe_first_dense, 0, m.num_layers - 1));
  if (!(m.moe_capacity_factor == 0 || (m.moe_capacity_factor >= 1 && m.moe_capacity_factor <= 64))) {
    return bad_field("capacity_factor", "must be 0 (dropless) or in [1, 64], got " +
                                            std::to_string(m.moe_capacity_factor));
  }
  // Node-limited routing: both 0 (off), or groups dividing the experts
  // and a limit in [1, groups].
  LLMPLAN_RETURN_IF_ERROR(field_in_range("router_groups", m.moe_router_groups, 0, m.num_experts));
  if (m.moe_router_groups > 0 && m.num_experts % m.moe_router_groups != 0) {
    return bad_field("router_groups", "must divide experts (" + std::to_string(m.num_experts) +
                                          "), got " + std::to_string(m.moe_router_groups));
  }
  if (m.moe_router_groups == 0 && m.moe_router_group_limit != 0) {
    return bad_field("router_group_limit", "needs router_groups");
  }
  if (m.moe_router_groups > 0) {
    LLMPLAN_RETURN_IF_ERROR(
        field_in_range("router_group_limit", m.moe_router_group_limit, 1, m.moe_router_groups));
  }
  return Status();
}

}  // namespace

Status validate_moe(const Model& m) {
  LLMPLAN_RETURN_IF_ERROR(field_in_range("experts", m.num_experts, 0, Model::kMaxExperts));
  LLMPLAN_RETURN_IF_ERROR(m.is_moe() ? validate_expert_fields(m) : validate_dense_has_no_experts(m));
  // Latent MoE.
  LLMPLAN_RETURN_IF_ERROR(field_in_range("moe_latent_size", m.moe_latent_size, 0, m.hidden_size));
  if (m.moe_latent_size > 0 && !m.is_moe()) {
    return bad_field("moe_latent_size", "needs experts (the model is dense)");
  }
  return Status();
}

}  // namespace llmplan::simulator::layers

namespace llmplan::simulator {

int64_t Model::expert_parameters_per_layer() const {
  return static_cast<int64_t>(num_experts) * layers::expert_parameters(*this);
}

int64_t Model::moe_latent_parameters() const {
  if (moe_latent_size <= 0) return 0;
  const int64_t h = hidden_size, l = moe_latent_size;
  return 2 * h * l + (linear_bias ? l + h : 0);
}

}  // namespace llmplan::simulator
