// The transformer being trained: its shape, and the counts derived from it.
// The description is here (and in model.cc: layer kinds, validate()); the
// counts are defined where they belong: the sums over layers in
// model_size.cc, each layer kind's own parameters in simulator/layers/
// (<kind>.cc, see layers/layer_kind.h).
#ifndef LLMPLAN_SIMULATOR_MODEL_H_
#define LLMPLAN_SIMULATOR_MODEL_H_

#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "base/status.h"

namespace llmplan::simulator {

// kSquaredRelu: relu(x)^2, a non-gated MLP like GeLU (Nemotron-4, Nemotron-H;
// So et al. 2021, "Primer"); same GEMMs and parameters as GeLU.
enum class Activation { kGelu, kSwiglu, kSquaredRelu };
enum class PositionEmbedding { kLearned, kRotary };
// How a mixture-of-experts router scores experts: softmax over the experts
// (Mixtral, Qwen3, GPT-OSS) or independent sigmoids (DeepSeek-V3).
enum class MoeRouter { kSoftmax, kSigmoid };

// A decoder-only transformer (GPT, Llama, ...). A plain value: cheap to copy,
// comparable, safe to share between threads.
//
// Zero in num_kv_heads means "as many as num_heads" (no GQA); zero in
// ffn_hidden_size means 4 * hidden_size. GPT-style models (learned
// positions, LayerNorm with bias, biased linears) and Llama-style models
// (rotary, RMSNorm, no biases, SwiGLU) are both described by the flags.
struct Model {
  // Largest sizes validate() accepts. They are far above any model trained
  // so far (the largest have about 128 layers, hidden 25,600, 1 M tokens of
  // context and vocabularies of 256 K) and are chosen so that nothing derived
  // from a valid model can overflow or explode:
  //  - every count below fits an int, and 4 * kMaxHidden (the default FFN
  //    size) does too;
  //  - parameter_count() stays below 2^54, far inside int64_t: a layer has at
  //    most about 7 h^2 + 3 h f parameters (< 2^41 at the maxima), times
  //    kMaxLayers (2^12), plus embeddings (V h < 2^43);
  //  - the simulator lowers every layer of a pipeline chunk into about 45
  //    kernels, so kMaxLayers bounds one chunk's kernel list (~200 K ops);
  //  - per-token products (b s h, s^2 heads, V h) are formed in double.
  static constexpr int kMaxLayers = 4096;
  static constexpr int kMaxHidden = 262144;      // 2^18
  static constexpr int kMaxFfnHidden = 1048576;  // 2^20 (4 x kMaxHidden)
  static constexpr int kMaxSeqLength = 1048576;  // 2^20 tokens of context
  static constexpr int kMaxVocab = 16777216;     // 2^24
  // Routed experts per MoE layer (DeepSeek-V3 has 256; 4096 keeps a layer's
  // expert parameters, E x 3 h f_e, inside int64_t at every other maximum).
  static constexpr int kMaxExperts = 4096;
  // Most parameters (all experts) validate() accepts, checked in double
  // before any int64_t count is formed: with experts a model could otherwise
  // reach E x 3 h f_e x layers ~ 2^63. 2^56 (7 x 10^16) admits every dense
  // shape within the bounds above (at most ~2^52) and stays far inside
  // int64_t.
  static constexpr double kMaxParameters = 72057594037927936.0;  // 2^56

  std::string name;
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;      // 0: == num_heads
  int ffn_hidden_size = 0;   // 0: 4 * hidden_size
  int seq_length = 0;
  int vocab_size = 0;
  Activation activation = Activation::kGelu;
  PositionEmbedding positions = PositionEmbedding::kLearned;
  bool tied_embeddings = true;
  bool linear_bias = true;   // biases in linears and LayerNorm (GPT); false: RMSNorm, no bias
  // Width of one attention head; 0 = hidden / heads. When set, the heads need
  // not divide hidden: the query width is heads x head_dim (Qwen3, GPT-OSS)
  // and the output projection maps it back to hidden.
  int head_dim_size = 0;
  // Clamped gated activation (GPT-OSS: HF config swiglu_limit 7.0;
  // Megatron-Core activation_func_clamp_value): before the gated activation
  // the gate half of FC1's output is clamped to at most this value and the
  // linear half to [-value, value]; 0 = no clamp. Needs the SwiGLU (gated)
  // activation. Costed in the MoE experts, where Megatron-Core runs the
  // clamp in eager PyTorch outside its fused activation (layers/moe.cc);
  // a dense MLP's clamp is not costed.
  double activation_clamp = 0;
  // Share of each query and key head's width that the rotary embedding
  // rotates (positions kRotary only): Megatron-Core's rotary_percent, HF
  // partial_rotary_factor. 1 for Llama, Qwen3, GPT-OSS; 0.5 for Nemotron-3
  // 8B/22B and Nemotron-4 (NeMo NemotronConfig rotary_percent 0.5); 0 = no
  // position embedding is applied in attention at all (NoPE: the hybrid
  // Nemotron-H / Nemotron 3 models, whose Megatron providers set
  // position_embedding_type "none"). Costed as the RoPE kernel in the
  // attention lowering (layers/attention.h); latent attention (MLA) costs
  // its own RoPE on qk_rope_head_dim and ignores this.
  double rotary_fraction = 1.0;

  // Mixture of experts (Shazeer et al. 2017; Megatron-Core's MoE layer). 0
  // experts: a dense model, and every field below keeps its default. In an
  // MoE layer the MLP is replaced by a router ([h, E] GEMM, top-k), E routed
  // experts of moe_ffn_hidden() each (same activation as the dense MLP), of
  // which every token uses moe_top_k, plus moe_shared_experts always-on
  // experts of the same width (DeepSeek, Qwen2-MoE).
  int num_experts = 0;
  int moe_top_k = 0;
  int moe_ffn_hidden_size = 0;   // 0: ffn_hidden()
  int moe_shared_experts = 0;
  // Which layers are MoE: layer i (0-based) is when i >= moe_first_dense
  // and (i - moe_first_dense) % moe_layer_every == 0; the others are dense
  // layers with ffn_hidden(). Defaults: every layer.
  int moe_layer_every = 1;
  int moe_first_dense = 0;
  MoeRouter moe_router = MoeRouter::kSoftmax;
  // Tokens an expert takes per micro-batch, as a multiple of the balanced
  // share (tokens x top_k / E), padded to exactly that (Megatron-Core's
  // --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity;
  // tokens beyond it are dropped). 0: dropless, each expert takes what it is
  // routed.
  double moe_capacity_factor = 0;
  // Node-limited (group-limited) routing (DeepSeek-V3, section 2.1.2 of
  // arXiv:2412.19437: 256 experts in 8 groups, each token's top-8 chosen
  // within its top-4 groups, so it reaches at most 4 nodes): the routed
  // experts split into moe_router_groups equal groups and every token picks
  // its experts within moe_router_group_limit of them. 0 / 0: off. When set,
  // groups divide the experts and 1 <= limit <= groups. Effect: the
  // dispatch/combine all-to-all's inter-node bytes (layers/moe.h).
  int moe_router_groups = 0;
  int moe_router_group_limit = 0;
  // Latent MoE (Nemotron 3 Super; Megatron-Core moe_layer.py, MoELayer with
  // moe_latent_size; HF NemotronH config moe_latent_size): 0 = off. When
  // set (1 <= L <= hidden), an MoE layer projects each token from h down to
  // L after the router (fc1_latent_proj [h -> L]), dispatches, runs the
  // routed experts on L-wide rows (fc1 [L -> f_e], fc2 [f_e -> L]), combines
  // in L and projects back (fc2_latent_proj [L -> h]) before the shared
  // experts' output is added. The router and the shared experts keep the
  // hidden width. Both projections are TELinear with parallel_mode
  // "duplicated": every TP rank holds them whole and runs them on its
  // sequence-parallel token slice. The all-to-alls carry L-wide rows.
  int moe_latent_size = 0;

  // Sliding-window attention (Mistral, GPT-OSS): windowed layers attend to
  // the last sliding_window tokens only; 0 = no window. full_attention_every
  // = k > 0: layer i has full attention when i % k == k - 1 (GPT-OSS: 2,
  // alternating), the others are windowed; 0: every layer is windowed.
  int sliding_window = 0;
  int full_attention_every = 0;

  // Chunked local attention (Llama 4's "iRoPE"; HF Llama4TextConfig
  // attention_chunk_size, no_rope_layer_interval; Megatron-Core / NeMo
  // Llama4Config attention_chunk_size, nope_layer_interval): a chunked layer
  // splits the sequence into blocks of attention_chunk tokens and each query
  // attends causally within its block only; 0 = off. global_attention_every
  // = k > 0: layer i is a global full-causal-attention layer without rotary
  // (NoPE) when i % k == k - 1 (Llama 4: 4), the others are chunked; 0:
  // every layer is chunked. Cannot be combined with a sliding window.
  int attention_chunk = 0;
  int global_attention_every = 0;
  // Multi-head latent attention (DeepSeek-V2 arXiv:2405.04434 section 2.1;
  // DeepSeek-V3 arXiv:2412.19437 section 2.1.1; Megatron-Core
  // megatron/core/transformer/multi_latent_attention.py, MLASelfAttention).
  // kv_lora_rank > 0 turns it on for every layer: the queries go through a
  // down-projection [h -> q_lora_rank], an RMSNorm and an up-projection
  // [q_lora_rank -> heads x (qk_nope + qk_rope)] (q_lora_rank 0: one
  // projection [h -> heads x (qk_nope + qk_rope)]); keys and values through
  // a down-projection [h -> kv_lora_rank + qk_rope] (the latent and the
  // decoupled rotary key, shared by all heads), an RMSNorm on the latent and
  // an up-projection [kv_lora_rank -> heads x (qk_nope + v_head)]; attention
  // with qk_nope + qk_rope wide query/key heads and v_head wide values; the
  // output projection [heads x v_head -> h]. head_dim and kv_heads must stay
  // unset (MLA has its own widths, and every head its own key and value).
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Multi-token prediction depth (DeepSeek-V3 section 2.2; Megatron-Core
  // megatron/core/transformer/multi_token_prediction.py): mtp_layers modules
  // after the last layer, on the last pipeline stage, each RMSNorms of the
  // hidden state and of the next token's embedding, a [2h -> h] projection
  // of their concatenation, one decoder layer like the model's last (its
  // attention, its FFN: MoE when the model has experts), and the shared
  // output head and loss. 0: none.
  int mtp_layers = 0;
  // MTP with one module repeated over the mtp_layers depths (Megatron-Core
  // mtp_use_repeated_layer; Nemotron 3.5 Lightning): the module's weights
  // (norms, projection, decoder block) exist once and are used at every
  // depth, so parameters, gradients and optimizer state count once while
  // the compute, activations and logits count per depth. false: each depth
  // has its own module (DeepSeek-V3, Nemotron 3 Super).
  bool mtp_shared_weights = false;
  // A hybrid model's MTP decoder block (Megatron-Core
  // mtp_hybrid_override_pattern; "*E" for Nemotron 3 Super / Lightning):
  // one character per block layer as in layer_pattern, each costed like the
  // model's last layer of that kind. Empty: one layer like mtp_layer_like().
  std::string mtp_layer_pattern;
  // Hybrid state-space models (Nemotron-H, Nemotron 3; Megatron-Core's
  // MambaStack and its hybrid_override_pattern). layer_pattern empty: every
  // layer is attention + FFN as above. Otherwise one character per layer,
  // each layer a single pre-norm residual block: 'M' a Mamba-2 mixer, '*'
  // attention only, '-' a dense MLP only, 'E' an MoE block only; the 'E'
  // layers are the MoE layers (moe_every / moe_first_dense stay at their
  // defaults). The Mamba-2 mixer (Dao & Gu 2024, arXiv:2405.21060; Megatron-
  // Core megatron/core/ssm/mamba_mixer.py): in_proj h -> [z, x, B, C, dt] =
  // 2 d_inner + 2 G N + H (no bias), depthwise causal conv1d (kernel K, with
  // bias) over the x, B, C channels, the SSD chunked scan (chunk Q), per-head
  // dt_bias, A_log and D, the gated RMSNorm over d_inner, out_proj d_inner ->
  // h; d_inner = H x P (mamba_heads x mamba_head_dim), N = mamba_state_dim,
  // G = mamba_groups.
  std::string layer_pattern;
  int mamba_heads = 0;
  int mamba_head_dim = 0;
  int mamba_state_dim = 0;
  int mamba_groups = 0;
  int mamba_conv_kernel = 4;    // Megatron-Core MambaMixer d_conv default
  int mamba_chunk_size = 128;   // Megatron-Core MambaMixer chunk_size default

  // What one layer holds (layer_kind). kRegistered: a layer_pattern
  // character of a kind registered in simulator/layers/layer_kind.h (its
  // LayerKindSpec says what it holds).
  enum class LayerKind { kStandard, kMamba, kAttention, kMlp, kMoe, kRegistered };
  bool is_hybrid() const { return !layer_pattern.empty(); }
  LayerKind layer_kind(int layer) const;
  int mamba_inner() const { return mamba_heads * mamba_head_dim; }
  // Channels of the conv1d: x, B and C.
  int mamba_conv_channels() const { return mamba_inner() + 2 * mamba_groups * mamba_state_dim; }
  // Output columns of in_proj: z, x, B, C, dt.
  int mamba_in_proj_columns() const { return 2 * mamba_inner() + 2 * mamba_groups * mamba_state_dim + mamba_heads; }
  // Parameters of one Mamba layer (norm, in_proj, conv1d + bias, dt_bias,
  // A_log, D, the gated norm's weight, out_proj).
  int64_t mamba_layer_parameters() const;
  // Forward matmul FLOPs per token of the SSD scan (Dao & Gu 2024, section
  // 6): per chunk of Q tokens C B^T per group (2 Q^2 N), the masked scores
  // times x per head (2 Q^2 P), the chunk state B^T x (2 Q N P) and the
  // state-to-output C h (2 Q N P); per token 2 (Q N G + Q P H + 2 N P H).
  double ssd_flops_per_token() const;

  int kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  int ffn_hidden() const { return ffn_hidden_size > 0 ? ffn_hidden_size : 4 * hidden_size; }
  int head_dim() const {
    if (head_dim_size > 0) return head_dim_size;
    return num_heads > 0 ? hidden_size / num_heads : 0;
  }
  bool is_moe() const { return num_experts > 0; }
  int moe_ffn_hidden() const { return moe_ffn_hidden_size > 0 ? moe_ffn_hidden_size : ffn_hidden(); }
  // Width of the rows the routed experts take and the all-to-alls carry:
  // moe_latent_size with latent MoE, hidden otherwise.
  int moe_routed_width() const { return moe_latent_size > 0 ? moe_latent_size : hidden_size; }
  // The two latent projections of one MoE layer (2 h L, + L + h biases with
  // linear_bias), duplicated on every TP rank; 0 without latent MoE.
  int64_t moe_latent_parameters() const;
  // Whether layer `layer` (0-based) is an MoE layer (never for a dense model).
  bool is_moe_layer(int layer) const {
    if (is_hybrid()) return is_moe() && layer_pattern[static_cast<size_t>(layer)] == 'E';
    return is_moe() && layer >= moe_first_dense &&
           (layer - moe_first_dense) % moe_layer_every == 0;
  }
  int num_moe_layers() const;
  bool is_mla() const { return kv_lora_rank > 0; }
  // Query and key width of one MLA head: qk_nope + qk_rope.
  int mla_qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  // The layer an MTP module's decoder layer is built like: the model's last
  // layer of the kind the model's FFN has (its last MoE layer when it has
  // experts, its last layer otherwise).
  int mtp_layer_like() const;
  // The model layers an MTP module's decoder block is costed like, in
  // order: for each character of mtp_layer_pattern the model's last layer
  // of that kind; {mtp_layer_like()} without a pattern.
  std::vector<int> mtp_block_layers() const;
  // MoE layers in one MTP module's block.
  int mtp_block_moe_layers() const;
  // How many MTP modules hold their own weights: 1 with
  // mtp_shared_weights, mtp_layers otherwise.
  int mtp_weight_copies() const { return mtp_shared_weights ? std::min(mtp_layers, 1) : mtp_layers; }
  // Whether layer `layer` attends through a sliding window.
  bool is_windowed_layer(int layer) const {
    return sliding_window > 0 && (full_attention_every <= 0 ||
                                  layer % full_attention_every != full_attention_every - 1);
  }
  // Whether layer `layer` attends within chunks of attention_chunk tokens.
  bool is_chunked_layer(int layer) const {
    return attention_chunk > 0 && (global_attention_every <= 0 ||
                                   layer % global_attention_every != global_attention_every - 1);
  }
  // Keys per query of a chunked layer, every query-key pair of a block
  // counted (as for full attention: s x s): the s / c full blocks of c x c
  // pairs and the last partial block of r x r (r = s mod c), averaged over
  // the s queries and rounded; s when the chunk covers the sequence.
  int chunked_span() const;
  // Keys each query of layer `layer` attends to (the causal mask not
  // subtracted): min(s, window) for a windowed layer, chunked_span() for a
  // chunked layer, s otherwise.
  int attention_span(int layer) const {
    if (is_chunked_layer(layer)) return chunked_span();
    return is_windowed_layer(layer) && sliding_window < seq_length ? sliding_window : seq_length;
  }

  // The counts below are exact in int64_t for any model that validate()
  // accepts (REQUIRES: validate(*this).ok(); larger sizes could overflow).
  // Trainable parameters of one dense transformer layer (attention, norms,
  // the dense MLP of ffn_hidden()), whatever the model's experts.
  int64_t layer_parameters() const;
  // One MoE layer: attention, norms, the router (h x E, + E biases with
  // linear_bias), the shared experts and all E routed experts.
  int64_t moe_layer_parameters() const;
  // The E routed experts of one MoE layer (0 for a dense model).
  int64_t expert_parameters_per_layer() const;
  // Layer `layer`'s parameters: moe_layer_parameters() or layer_parameters().
  int64_t layer_parameters(int layer) const;
  // Input embedding (+ learned positions) parameters.
  int64_t embedding_parameters() const;
  // Output projection parameters (0 when tied) plus the final norm.
  int64_t head_parameters() const;
  // MLA's parameters that are duplicated on every tensor-parallel rank: the
  // down-projections and the RMSNorms of the latents (Megatron-Core builds
  // linear_q_down_proj / linear_kv_down_proj as TELinear with parallel_mode
  // "duplicated"; the norms are fused into the column-parallel up-
  // projections, TELayerNormColumnParallelLinear, whose norm weights are
  // replicated too). 0 without MLA.
  int64_t mla_replicated_parameters() const;
  // Parameters of the MTP modules: per module with its own weights
  // (mtp_weight_copies()) two RMSNorms (h each), the [2h -> h] projection,
  // the decoder block (mtp_block_layers()) and the output head's norm (h);
  // the embedding and output head are the main model's, shared (not
  // counted again).
  int64_t mtp_parameters() const;
  // All trainable parameters (every expert, the MTP modules). For a GPT with learned
  // positions and tied embeddings this equals 12 l h^2 (1 + 13/(12h) +
  // (V+s)/(12 l h)) plus the final LayerNorm's 2h.
  int64_t parameter_count() const;
  // Parameters one token uses: parameter_count() less, in each MoE layer, the
  // E - top_k routed experts it is not sent to. Equals parameter_count() for
  // a dense model. (Embeddings count in full, as parameter_count does.)
  int64_t active_parameter_count() const;

  // With MLA (is_mla()) the count is NeMo / Megatron-Bridge's `deepseekv3`
  // FLOPs formula (nemo/utils/flops_formulas.py; Megatron-Bridge
  // training/utils/flops_utils.py), so MFU compares with the published rows:
  // the attention core counts half the query-key pairs (causal), 2 x 0.5 x
  // s x heads x (qk + v) per token, the router GEMM is not counted, and each
  // MTP module adds its attention, MLA projections, MoE (or dense) FFN,
  // [2h -> h] projection and its logits.
  // Model FLOPs of one training step (forward + backward, no recompute) for
  // `global_batch` sequences, counting every matmul a token takes part in:
  // attention (QK^T and AV over the attention span, every query-key pair),
  // the logits, and in MoE layers the router GEMM and its top_k + shared
  // experts only (active FLOPs, as MFU counts them for MoE models). For a GPT
  // (f = 4h, no GQA) 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
  double model_flops_per_step(int64_t global_batch) const;

  // This model with its defaulted widths written out (num_kv_heads,
  // ffn_hidden_size and, for an MoE model, moe_ffn_hidden_size set to what
  // kv_heads(), ffn_hidden() and moe_ffn_hidden() return): the same model to
  // the simulator, and the Model that model_to_json's JSON reads back to.
  Model with_resolved_widths() const {
    Model m = *this;
    m.num_kv_heads = kv_heads();
    m.ffn_hidden_size = ffn_hidden();
    if (is_moe()) m.moe_ffn_hidden_size = moe_ffn_hidden();
    return m;
  }

  friend bool operator==(const Model&, const Model&) = default;
};

// OK when every size is positive and at most its Model::kMax* bound, heads
// divide hidden (unless head_dim is given), kv heads divide heads; for an
// MoE model 1 <= top_k <= experts <= kMaxExperts, shared experts and the
// layer pattern in range and at least one MoE layer; for a dense model no
// expert field is set; a sliding window or attention chunk within the sequence
// bound (not both). Otherwise InvalidArgument naming the
// first field at fault ("model.hidden: must be at most 262144, got ...").
Status validate(const Model& model);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_MODEL_H_
