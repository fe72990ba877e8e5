// A layer kind (layer_kind.h): its parameters, checks and memory (the
// layers:: functions at the end) and its kernels:
// multi-head latent attention (DeepSeek-V2/V3,
// Kimi K2; Model::kv_lora_rank > 0) as Megatron-Core's MLASelfAttention
// (megatron/core/transformer/multi_latent_attention.py) runs it, from the
// input's cast to the output projection's tensor-parallel reduction.
//
// Per tensor-parallel rank, with ql = q_lora_rank, kl = kv_lora_rank, r =
// qk_rope, n = qk_nope, v = v_head, qk = n + r, a heads:
//  - the down-projections [h -> ql] and [h -> kl + r] are duplicated on
//    every TP rank (TELinear, parallel_mode "duplicated"): they run on the
//    rank's Tsp tokens (s/t with sequence parallelism, all of them without);
//  - the latents' RMSNorms (fused into the up-projections' TE
//    LayerNormColumnParallelLinear) on the same tokens;
//  - with SP the latents and the rotary key are all-gathered over TP
//    (ql + kl + r columns instead of attention's h: Megatron-Core gathers
//    inside the column-parallel up-projections and gathers k_pos_emb with
//    gather_from_sequence_parallel_region); in the backward their
//    gradients are reduce-scattered (all-reduced without SP);
//  - the up-projections [ql -> a qk / t] and [kl -> a (n + v) / t] are
//    column-parallel over heads (q_lora_rank 0: one column-parallel [h ->
//    a qk / t] on the gathered input, as attention's QKV);
//  - RoPE on the 64-wide parts and the assembly of the qk-wide query and
//    key heads (one memory-bound kernel, Megatron-Core's fused MLA RoPE:
//    it reads q and kv and writes q, k and a contiguous v);
//  - the attention core over a / t heads of qk-wide queries and keys and
//    v-wide values (Attention's core: FLOPs 2 (qk + v) per query-key pair
//    forward, cuDNN; context parallelism exchanges the up-projected K and V,
//    a (qk + v) columns per token, as Transformer Engine's ring does);
//  - the output projection [a v / t -> h], row-parallel, and its reduction.
// Left out: the once-per-step TP all-reduce of the duplicated down-
// projections' gradients (Megatron's finalize_model_grads, once per step).
#ifndef LLMPLAN_SIMULATOR_LAYERS_MLA_H_
#define LLMPLAN_SIMULATOR_LAYERS_MLA_H_

#include <vector>

#include "simulator/layers/attention.h"

namespace llmplan::simulator::lowering {

// LayerPartKind::kMla. Shares the attention core (and its context-parallel
// exchange and sliding windows) with Attention; the projections are its own.
class Mla : public Attention {
 public:
  Mla(const Model& model, const Plan& plan, const Placement& placement, const CostModel& cost);

  void forward(std::vector<LoweredOp>* out, OpCategory cat) override;
  void backward(std::vector<LoweredOp>* out) override;

 private:
  // Bytes of the latents (and rotary key) the ranks exchange per micro-batch
  // with SP, and of the direct q projection's input without q_lora_rank.
  double latent_bytes() const;
  // RoPE and the assembly of the heads: bytes read and written.
  double rope_bytes() const;

  double ql_ = 0, kl_ = 0, r_ = 0, n_ = 0, v_ = 0;  // the model's MLA widths
  double q_cols_ = 0, kv_cols_ = 0;                 // the up-projections' columns on this rank
};

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

// MLA's projections and latent norms (Model::q_lora_rank ...): q down +
// norm + up (or the direct q projection), kv down (latent + rotary key) +
// norm + up, output projection. No biases (validate() refuses linear_bias).
int64_t mla_attention_parameters(const Model& model);

// MLA's attention activations per token in units of h bytes (as
// attention_activations, attention.h; see mla.cc).
AttentionActivations mla_activations(const Model& model, const Plan& plan, bool mlp_input);

// MLA's GEMMs for the deferred weight-gradient GEMMs (zb-h1), per token: the
// inputs and output gradients of q_down (h, ql), kv_down (h, kl + r), q_up
// (ql or h, a qk / t), kv_up (kl, a (n + v) / t) and o_proj (a v / t, h).
double mla_weight_grad_per_token(const Model& model, const Plan& plan);

// mla_up_proj recompute (Plan::recompute_modules): one layer's q, k, v
// rebuilt for its backward, for `tokens` tokens of the rank.
double mla_up_proj_recompute_bytes(const Model& model, const Plan& plan, double tokens);

// validate(Model)'s range checks of the MLA widths (every one may be 0).
Status validate_mla_sizes(const Model& model);
// validate(Model)'s checks of MLA on (kv_lora_rank > 0: its widths set,
// head_dim and kv_heads unset, no biases, rotary) or off (no MLA field set).
Status validate_mla(const Model& model);

}  // namespace llmplan::simulator::layers

#endif  // LLMPLAN_SIMULATOR_LAYERS_MLA_H_
