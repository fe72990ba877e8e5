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

// OK when every size is positive, heads divide hidden, kv heads divide
// heads. Otherwise InvalidArgument naming the first field at fault.
Status validate(const Model& model);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_MODEL_H_
