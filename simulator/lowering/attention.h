// Internal to the lowering: the attention block's core (layer_part.h), from
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
// pairs 0.50 / 0.25). Rotary is not costed on its own (fused into the
// projections' epilogue in Transformer Engine), so NoPE layers differ from
// chunked ones only in their span.
#ifndef LLMPLAN_SIMULATOR_LOWERING_ATTENTION_H_
#define LLMPLAN_SIMULATOR_LOWERING_ATTENTION_H_

#include <vector>

#include "simulator/lowering/layer_part.h"

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

 protected:
  // The attention core: flash attention, or QK^T, softmax, dropout, AV.
  void core_forward(std::vector<LoweredOp>* out, OpCategory cat);
  // Flash attention over the rank's queries. Without context parallelism one
  // kernel over the whole sequence. With cp > 1, cp blocks of the rank's
  // s/cp queries against one s/cp-token KV chunk each, and the KV exchange
  // of cp_comm (see the file comment).
  void flash(std::vector<LoweredOp>* out, Pass pass, OpCategory cat);
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
  double cp_hidden_s_ = 0;     // ring transfers hidden under blocks so far
};

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_ATTENTION_H_
