// The transformer being trained: its shape, and the counts derived from it.
#ifndef LLMPLAN_SIMULATOR_MODEL_H_
#define LLMPLAN_SIMULATOR_MODEL_H_

#include <cstdint>
#include <string>

#include "simulator/status.h"

namespace llmplan::simulator {

enum class Activation { kGelu, kSwiglu };
enum class PositionEmbedding { kLearned, kRotary };

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

  int kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  int ffn_hidden() const { return ffn_hidden_size > 0 ? ffn_hidden_size : 4 * hidden_size; }
  int head_dim() const { return num_heads > 0 ? hidden_size / num_heads : 0; }

  // The counts below are exact in int64_t for any model that validate()
  // accepts (REQUIRES: validate(*this).ok(); larger sizes could overflow).
  // Trainable parameters of one transformer layer.
  int64_t layer_parameters() const;
  // Input embedding (+ learned positions) parameters.
  int64_t embedding_parameters() const;
  // Output projection parameters (0 when tied) plus the final norm.
  int64_t head_parameters() const;
  // All trainable parameters. For a GPT with learned positions and tied
  // embeddings this equals 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) plus the
  // final LayerNorm's 2h.
  int64_t parameter_count() const;

  // Model FLOPs of one training step (forward + backward, no recompute) for
  // `global_batch` sequences, counting every matmul including attention and
  // the logits: for a GPT (f = 4h, no GQA) 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
  double model_flops_per_step(int64_t global_batch) const;

  friend bool operator==(const Model&, const Model&) = default;
};

// OK when every size is positive and at most its Model::kMax* bound, heads
// divide hidden, kv heads divide heads. Otherwise InvalidArgument naming the
// first field at fault ("model.hidden: must be at most 262144, got ...").
Status validate(const Model& model);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_MODEL_H_
