// A layer kind (layer_kind.h): its parameters, checks and memory (the
// layers:: functions at the end) and its kernels:
// the attention block's core (layer_part.h), from
// the QKV input's cast to the output projection's tensor-parallel reduction.
//
// Dense and grouped-query attention (Model::kv_heads): the QKV GEMM of
// (a + 2g) d / t columns, the attention core, the output projection. The
// core is one flash-attention kernel (Plan::flash_attention) or QK^T,
// softmax, dropout and AV; selective recomputation re-runs that unfused core
// in the backward (not needed with flash attention).
//
// Context parallelism (cp > 1; Megatron-Core / Transformer Engine): every
// per-token op (LN, GEMMs, activations, TP collectives, embedding, logits,
// the pipeline message) runs on the rank's b * s / cp tokens. Attention is
// cp flash-attention blocks, each of the rank's s/cp queries (its chunks i
// and 2cp-1-i of 2cp) against one s/cp-token KV chunk: with the load-
// balanced chunks every block does the work of causal attention over s/cp
// tokens, so a block is the kernel of shape {s/cp, s/cp, d, b*a/t} and the
// rank's attention FLOPs are the full sequence's / cp (FLOPs counted as for
// cp = 1: every query-key pair, as the model-FLOPs formula does). The cp
// blocks are one op, followed by one kContextComm op with the exchange's
// exposed time:
//  - kP2p (ring attention): transfer i of the rank's KV chunk to the next CP
//    rank (send_recv of b * s/cp * 2 * g * d / t * 2 bytes; over the NIC when
//    the CP group spans nodes) runs during block i. Forward: cp - 1 transfers
//    of KV; backward (Transformer Engine): KV with block 0, KV + dKV (twice
//    the bytes) with blocks 1 .. cp-2, dKV with block cp-1. Exposed =
//    sum over transfers of max(0, transfer - block) (so the forward takes
//    the first block + sum over the next cp-1 of max(transfer, block));
//    the hidden rest is ChunkProgram::cp_hidden_s and costs
//    comm_compute_slowdown() x itself on the attention op.
//  - kAllGather: the KV all-gathered over the CP group (cp x the chunk)
//    before the blocks, in the forward and again in the backward, and the
//    dKV reduce-scattered after the backward blocks; all exposed.
//
// Sliding-window attention (Model::attention_span): a windowed layer's
// flash-attention kernel is {s, span, d, b*a/t} with 4 (b*a/t) s span d
// forward FLOPs; with cp > 1 each of the cp blocks gets span/cp keys (the
// window spread evenly over the blocks; the ring still runs every block).
// The non-flash path ignores windows (it computes the full s x s scores).
// Chunked attention (Llama 4) takes the same path with span =
// Model::chunked_span(): cuDNN's attention over a chunked mask runs at the
// full-causal kernel's rate on the pairs it keeps (H100 profile
// data/profiles/h100-sxm-2026-11-26-ssm-mla.pytorch.json, "chunked_attention":
// chunk 8192 at s 16384 / 32768 takes 0.54 / 0.24 of full causal forward,
// pairs 0.50 / 0.25). NoPE layers (Llama 4's global layers) differ from
// chunked ones in their span and in having no RoPE kernel.
//
// Rotary position embedding (Model::positions kRotary, rotary_fraction r
// of each head rotated; not for latent attention, whose RoPE mla.h costs):
// after the QKV GEMM, Megatron-Core applies RoPE to the query and the key
// separately (megatron/core/transformer/attention.py, apply_rotary_pos_emb
// once per tensor), and in the backward to their gradients, before the
// QKV GEMM's backward. Costed per tensor of E = T x heads/t x d elements
// (bf16), in bytes per element (kernel kRope, memory-bound, one mem() op
// per kernel launched):
//  - fused (Plan::rope_fusion; Transformer Engine's fused_apply_rotary_pos_emb,
//    one kernel): forward reads t and writes the output, the unrotated part
//    copied through: 4 B; backward reads the gradient and writes dx: 4 B.
//  - unfused (Megatron-Core rope_utils.py _apply_rotary_pos_emb_bshd, eager
//    PyTorch; NVIDIA/Megatron-LM @00c51e132476): forward, per call, cos and
//    sin of the fp32 freqs [s/cp, r d] (cos 8, x mscale 8, to bf16 6 B per
//    element, the same for sin: six kernels; freqs are not per head, so this
//    is small), then over the rotated r E elements t * cos (4 B), the
//    rotate_half chunk's neg of one half (2), its cat (4), x sin (4), the add
//    (6), and the final torch.cat((t, t_pass)) over all E (4): 20 r + 4 B.
//    Backward (autograd): grad x sin (4), the neg (2), the chunk's gradient
//    cat (4), grad x cos (4), the two gradients of t summed (6): 20 r; the
//    empty t_pass slice's SliceBackward writes zeros over E (2) and its
//    gradient is added to t's (6); with r < 1 the rotated slice is a slice
//    too (zeros 2, copy 4 r) and t_pass's copy moves 4 (1 - r): 20 r + 8 at
//    r = 1 (PyTorch returns a full-range slice as the tensor itself), 20 r +
//    14 below.
// Each tensor's RoPE is one op per pass (the eager path's dozen kernels
// summed): the host launch interval the GPU presets fit (kernel_overhead_s)
// is a cost per modelled kernel, fitted with RoPE folded into the other
// kernels' launches, so the eager path's extra launches are not costed
// (they are when the host queue is the bottleneck, a lower bound here).
// The RoPE output replaces the pre-RoPE q and k that core attention saves,
// so nothing is added to memory; full recomputation runs the forward
// again, selective recomputation (core_attn) starts after it.
#ifndef LLMPLAN_SIMULATOR_LAYERS_ATTENTION_H_
#define LLMPLAN_SIMULATOR_LAYERS_ATTENTION_H_

#include <vector>

#include "simulator/layers/layer_part.h"
#include "simulator/layers/layer_kind.h"

namespace llmplan::simulator::lowering {

// The token mixer of every layer today (LayerPartKind::kAttention). Keeps
// the layer's attention span (begin_layer) and the ring transfers it hid.
class Attention : public LayerPart {
 public:
  Attention(const Model& model, const Plan& plan, const Placement& placement,
            const CostModel& cost);

  void begin_layer(int layer) override;
  void forward(std::vector<LoweredOp>* out, OpCategory cat) override;
  void backward(std::vector<LoweredOp>* out) override;
  double cp_hidden_s() const override { return cp_hidden_s_; }
  // HBM bytes per element of a query or key tensor that RoPE moves in
  // `pass` (kForward or kBackward), fused or not (file comment), without
  // the eager path's cos/sin of the freqs.
  static double rope_bytes_per_element(const Model& model, Pass pass, bool fused);

 protected:
  // The attention core: flash attention, or QK^T, softmax, dropout, AV.
  void core_forward(std::vector<LoweredOp>* out, OpCategory cat);
  // Flash attention over the rank's queries. Without context parallelism one
  // kernel over the whole sequence. With cp > 1, cp blocks of the rank's
  // s/cp queries against one s/cp-token KV chunk each, and the KV exchange
  // of cp_comm (see the file comment).
  void flash(std::vector<LoweredOp>* out, Pass pass, OpCategory cat);
  // The RoPE kernels on the rank's query and key heads (file comment), in
  // `pass` (kForward or kBackward); nothing for a layer without RoPE.
  void rope(std::vector<LoweredOp>* out, Pass pass, OpCategory cat) const;
  // Scale, causal mask and softmax over `scores` elements.
  void softmax(std::vector<LoweredOp>* out, Pass pass, double scores, OpCategory cat) const;
  // Bytes of K and V of the rank's s/cp tokens per CP exchange.
  double cp_kv_bytes() const { return T_ * kv_heads_ * (qk_dim_ + v_dim_) / t_ * kElem; }
  // A collective over the CP group.
  double collective_s(CollectiveKind kind, double bytes) const;
  // One step of the ring: every rank sends to the next and receives from the
  // previous at once; a ring that spans nodes waits for its slowest hop,
  // over the NIC.
  double ring_hop_s(double bytes) const;
  static LoweredOp cp_op(double seconds, const char* name);

  // The core's head widths and key/value heads: d, d and kv_heads for
  // dense and grouped-query attention; latent attention (mla.h) sets its own.
  double qk_dim_ = 0, v_dim_ = 0, kv_heads_ = 0;
  bool fused_softmax_ = true;  // Megatron's CUDA softmax applies (see the constructor)
  int span_ = 0;               // the layer's attention span (begin_layer)
  bool chunked_ = false;       // the layer attends within chunks (Model::is_chunked_layer)
  bool rope_ = false;          // the layer applies RoPE to q and k (begin_layer)
  double cp_hidden_s_ = 0;     // ring transfers hidden under blocks so far
};

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator::layers {

// Attention's parameters (QKV, output projection, their biases) and the two
// norms of a standard layer; MLA's projections and latent norms with MLA.
int64_t attention_and_norms_parameters(const Model& model);

// Attention (and norms, masks) activations of one layer per token of the
// rank, in units of h bytes: the `replicated` part (split by t only with
// SP) and the `split` part (split by t). `mlp_input` adds the FC1 input of a
// dense MLP to the replicated part. MLA's (mla.h) with MLA.
struct AttentionActivations {
  double replicated = 0;
  double split = 0;
};
AttentionActivations attention_activations(const Model& model, const Plan& plan, bool mlp_input);

// What attention keeps per token for zb-h1's deferred weight-gradient GEMMs:
// the inputs and output gradients of QKV and the output projection (MLA's
// five GEMMs with MLA), in elements.
double attention_weight_grad_per_token(const Model& model, const Plan& plan);

// K and V columns per token that context parallelism exchanges: 2 g d, or
// MLA's a (qk + v) up-projected ones.
double context_parallel_kv_columns(const Model& model);

// validate(Model)'s checks of the position embedding and attention windows
// (rotary_fraction, full_attention_every, attention_chunk,
// global_attention_every), in its order.
Status validate_attention_windows(const Model& model);
// validate(Model)'s last checks: heads x head_dim, heads dividing hidden,
// kv heads dividing heads.
Status validate_attention_heads(const Model& model);

}  // namespace llmplan::simulator::layers

#endif  // LLMPLAN_SIMULATOR_LAYERS_ATTENTION_H_
