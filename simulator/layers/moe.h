// A layer kind (layer_kind.h): its parameters, checks and memory (the
// layers:: functions at the end) and its kernels:
// the mixture-of-experts block's core
// (layer_part.h) for the layers Model::is_moe_layer picks: Megatron-Core's
// MoE layer with the alltoall token dispatcher.
//
// Per rank: the shared experts (if any) as a dense TP-sharded MLP of width
// shared x f_e (mlp.h); the router GEMM [T_moe, h] x [h, E] (bf16, never
// fp8) on T_moe = b s/cp / t tokens (Megatron-Core runs MoE with TP under
// sequence parallelism: each TP rank routes its 1/t slice; T_moe = b s/cp
// for t = 1); moe_routing (softmax/sigmoid, top-k, aux loss; 17 B per fp32
// score + 8 B per chosen expert forward, 16 B per score backward);
// moe_permute (2 T_moe k h x 2 bytes); the dispatch all-to-all over
// Placement::expert (CollectiveDesc::bytes S = T_moe k h x 2, x
// moe_imbalance for the busiest rank's receive side); with etp > 1 an
// all-gather of the local experts' rows over Placement::expert_tensor; the
// grouped expert GEMMs, batch E/ep local experts of m_e x etp rows, m_e =
// T_moe k ep / E x moe_imbalance (with a capacity factor c > 0: ep x
// ceil(c T_moe k / E), padded, and the all-to-all carries the padded
// buffers, E x ceil(c T_moe k / E) rows; no imbalance beyond capacity):
// fc1 [m_e etp, h] x [h, (2 for SwiGLU) f_e/etp], activation, fc2; with
// etp > 1 the reduce-scatter; the combine all-to-all (with node-limited
// routing, Model::moe_router_groups, their inter-node bytes scaled as in the
// constructor); unpermute (the k rows
// of each token read and summed, (k + 1) T_moe h x 2 bytes). The norm before
// and the residual after are the driver's, as for every block. In FP8 the
// expert GEMMs run in FP8 (Transformer Engine's grouped linear) with their
// input and output-gradient casts; the router stays bf16 (precision.h). The
// backward mirrors it (data- and weight-gradient GEMMs, the weight ones
// marked weight_grad; two all-to-alls); recomputation as for dense layers
// (full recomputation re-runs the all-to-alls too). With moe_imbalance > 1
// the simulated device is the busiest one (its expert GEMMs and receives
// scaled); the hardware FLOPs count it for every rank. The expert-TP
// collectives are exposed (tp_comm_overlap does not cover them). MoE with
// t > 1 and no sequence parallelism is lowered as if each TP rank routed
// its 1/t slice (Megatron-Core requires SP there).
//
// Latent MoE (Model::moe_latent_size L > 0; Megatron-Core MoELayer's
// fc1_latent_proj / fc2_latent_proj): after the routing, a [T_moe, h] x
// [h, L] GEMM projects the rank's tokens down (duplicated weights, so no TP
// collective); the permute, both all-to-alls, the etp collectives and the
// expert GEMMs then work on L-wide rows in place of h (fc1 [m_e etp, L] x
// [L, f_e/etp], fc2 back to L); after the unpermute a [T_moe, L] x [L, h]
// GEMM projects back. The router and the shared experts stay on h.
//
// moe_a2a_overlap (Megatron-Core's EP communication overlap, which runs one
// micro-batch's dispatch/combine under another micro-batch's compute): see
// overlap_a2a() below, applied by the driver to each MoE layer of a pass.
//
// Parameters (lowering.cc): the routed experts of an MoE layer are split
// over ep x etp ranks (ChunkProgram::expert_parameters), the rest of the
// layer over t. Their gradients are reduced (ZeRO: sharded) over
// Placement::expert_data (edp ranks), the others over `data` / `shard` as
// for dense models; the ZeRO-2/3 collectives of a unit carry both, back to
// back (sharding.h).
#ifndef LLMPLAN_SIMULATOR_LAYERS_MOE_H_
#define LLMPLAN_SIMULATOR_LAYERS_MOE_H_

#include <cstddef>
#include <vector>

#include "simulator/layers/layer_part.h"
#include "simulator/layers/mlp.h"
#include "simulator/layers/layer_kind.h"

namespace llmplan::simulator::lowering {

// The feed-forward block of MoE layers (LayerPartKind::kMoe), with the
// routing shapes of the plan worked out once per chunk (the constructor).
class Moe : public LayerPart {
 public:
  // REQUIRES: model.is_moe() for forward() and backward().
  Moe(const Model& model, const Plan& plan, const Placement& placement, const CostModel& cost);

  // From the shared experts to the unpermute (the block between its norm
  // and its residual); backward from the unpermute's gradient to the shared
  // experts'.
  void forward(std::vector<LoweredOp>* out, OpCategory cat) override;
  void backward(std::vector<LoweredOp>* out) override;

 private:
  // A grouped GEMM over the rank's local experts: `rows` token rows each
  // (fractional when the tokens do not split evenly: FLOPs exact, the shape
  // rounded, at least one row).
  void grouped_gemm(std::vector<LoweredOp>* out, KernelKind kind, Pass pass, double rows, double n,
                    double k, OpCategory cat) const;
  void grouped_gemm_backward(std::vector<LoweredOp>* out, KernelKind kind, double rows, double n,
                             double k) const;
  // HBM bytes of the routing kernels over the rank's T_moe x E fp32 scores.
  double routing_bytes(Pass pass) const;
  // FC2's per-expert bias scaled by the routing weights (experts with
  // biases only; see moe.cc).
  void expert_bias(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const;
  // Model::activation_clamp: the unfused clamp before the gated activation.
  void activation_clamp(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const;
  // A dispatch or combine all-to-all over the expert-parallel group.
  void a2a(std::vector<LoweredOp>* out, const char* name) const;
  // Expert tensor parallelism: the gather before / reduce-scatter after the experts.
  void etp(std::vector<LoweredOp>* out, CollectiveKind kind) const;

  DenseMlp shared_;  // the shared experts' core
  // Experts, top-k, expert and shared-expert widths, ep, etp, local experts,
  // tokens routed per rank (T_moe), token rows per local expert on this rank
  // before the etp gather, dispatch bytes.
  int E_ = 0, k_ = 0, fe_ = 0, fs_ = 0, ep_ = 1, etp_ = 1;
  // Width of the routed rows (Model::moe_routed_width()) and the latent
  // size (0: no latent projections).
  int w_ = 0, latent_ = 0;
  double local_experts_ = 0, Tmoe_ = 0, me_ = 0, a2a_bytes_ = 0;
  // The expert GEMMs' shapes: token rows per local expert after the etp
  // gather, FC1's output columns and the expert width on this etp rank.
  double rows_ = 0, fc1_cols_ = 0, fe_local_ = 0;
  // Share of the all-to-all's uniform inter-node bytes that node-limited
  // routing or the flex dispatcher's one copy per node leaves
  // (CollectiveDesc::off_node_scale; 1: no limit).
  double off_node_scale_ = 1.0;
  // Factor on the all-to-all's in-node bytes: the flex dispatcher's NVLink
  // forwarding across nodes (CollectiveDesc::in_node_scale; 1 otherwise).
  double in_node_scale_ = 1.0;
};

// moe_a2a_overlap: per MoE layer and pass, the layer's all-to-alls (sum A,
// among the layer's ops, ops[begin, end of ops)) are hidden under the layer's compute kernels
// (sum C, recomputation and casts included): exposed max(0, A - C), split
// over the all-to-alls in proportion; hidden min(A, C) goes to
// ChunkProgram::moe_a2a_hidden_s and costs `slowdown` (comm_compute_
// slowdown()) x itself on the layer's last kernel. The layer's own compute
// stands for the other micro-batch's, which is the same layer's in the
// steady state. Returns the time hidden.
double overlap_a2a(double slowdown, size_t begin, std::vector<LoweredOp>* ops);

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

// One routed expert: an MLP of width f_e on moe_routed_width()-wide rows.
int64_t expert_parameters(const Model& model);
// An MoE layer without its routed experts: attention, norms, router, shared
// experts, latent projections.
int64_t moe_layer_dense_parameters(const Model& model);

// Tokens an MoE layer's router and dispatcher see on this rank: T / t with
// tensor parallelism (sequence-parallel MoE).
double moe_tokens(const Model& model, const Plan& plan);
// Rows reaching this rank's experts: k T_moe etp q.
double expert_rows(const Model& model, const Plan& plan);

// What an MoE block stores beyond its layer's attention and shared
// experts, per micro-batch on this rank (bytes): the router's input and
// scores, latent MoE's projection inputs, the routed experts' rows.
struct MoeActivations {
  double router = 0, latent_inputs = 0, routed = 0;
};
MoeActivations moe_activations(const Model& model, const Plan& plan);

// An MoE block's GEMM inputs and output gradients for zb-h1's deferred
// weight-gradient GEMMs, in elements, for `tokens` (s b) tokens: the shared
// experts' per token (shared_experts_weight_grad_per_token; 0 without
// shared experts), and the router's, routed experts' and latent
// projections' over the block's tokens and rows.
double shared_experts_weight_grad_per_token(const Model& model, const Plan& plan);
struct MoeWeightGrads {
  double router = 0, routed = 0, projections = 0;
};
MoeWeightGrads moe_weight_grads(const Model& model, const Plan& plan, double tokens);

// validate(Model)'s checks of the expert fields: none set on a dense model;
// in range, node-limited routing consistent and latent MoE within hidden on
// an MoE model.
Status validate_moe(const Model& model);

}  // namespace llmplan::simulator::layers

#endif  // LLMPLAN_SIMULATOR_LAYERS_MOE_H_
