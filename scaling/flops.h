// Training FLOPs of a dense decoder-only transformer, counted two ways:
//
//  - kSixND: C = 6 N D, the count the Chinchilla laws (and their
//    compute-optimal allocation, scaling/optimal.h) are stated in. It counts
//    the weight matmuls (2 FLOPs per parameter per token forward, 4 backward)
//    and ignores attention scores and the gap between N and the matmul
//    parameters.
//  - kDetailed: every matmul, including attention scores (QK^T and AV) and
//    the logits, with no recomputation (Narayanan et al. 2021, "Efficient
//    Large-Scale Language Model Training on GPU Clusters using Megatron-LM",
//    eq. 3): per token 72 l h^2 (1 + s/(6h) + V/(12 l h)). This is the count
//    simulator::Model::model_flops_per_step uses for a GPT with a 4h FFN.
//
// All functions are pure and thread-safe.
#ifndef LLMPLAN_SCALING_FLOPS_H_
#define LLMPLAN_SCALING_FLOPS_H_

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace llmplan::scaling {

enum class FlopCount { kSixND, kDetailed };

// "6nd" or "detailed".
const char* to_string(FlopCount count);
// Parses "6nd" / "detailed"; InvalidArgument listing the spellings otherwise.
Result<FlopCount> parse_flop_count(std::string_view text);

// The shape of a GPT-style transformer (learned positions, tied embeddings,
// 4h GeLU FFN, no GQA) as plain numbers; enough to count its FLOPs.
struct TransformerShape {
  int64_t num_layers = 0;   // l
  int64_t hidden_size = 0;  // h
  int64_t seq_length = 0;   // s
  int64_t vocab_size = 0;   // V
  friend bool operator==(const TransformerShape&, const TransformerShape&) = default;
};

// OK when every field is positive; InvalidArgument naming the field otherwise.
Status validate(const TransformerShape& shape);

// P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)): weights, biases, LayerNorms
// and embeddings (tied), as in DESIGN.md section 3. REQUIRES: valid shape.
double parameter_count(const TransformerShape& shape);

// 6 * n_params * n_tokens.
double flops_6nd(double n_params, double n_tokens);

// Forward + backward FLOPs per training token, every matmul counted:
// 72 l h^2 (1 + s/(6h) + V/(12 l h)). REQUIRES: valid shape.
double detailed_flops_per_token(const TransformerShape& shape);

// Training FLOPs for `n_tokens` tokens of `shape`, counted as `count`
// (kSixND uses parameter_count(shape) for N). InvalidArgument for an invalid
// shape or a negative or non-finite token count.
Result<double> training_flops(const TransformerShape& shape, double n_tokens, FlopCount count);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_FLOPS_H_
