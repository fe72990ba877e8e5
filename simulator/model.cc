#include "simulator/model.h"

namespace llmplan::simulator {

int64_t Model::layer_parameters() const {
  const int64_t h = hidden_size;
  const int64_t d = head_dim();
  const int64_t q = static_cast<int64_t>(num_heads) * d;
  const int64_t kv = static_cast<int64_t>(kv_heads()) * d;
  const int64_t f = ffn_hidden();
  const int64_t bias = linear_bias ? 1 : 0;
  int64_t attn = h * (q + 2 * kv) + q * h + bias * (q + 2 * kv + h);
  int64_t mlp = activation == Activation::kSwiglu ? 3 * h * f + bias * (2 * f + h)
                                                  : 2 * h * f + bias * (f + h);
  int64_t norms = 2 * (linear_bias ? 2 * h : h);
  return attn + mlp + norms;
}

int64_t Model::embedding_parameters() const {
  int64_t p = static_cast<int64_t>(vocab_size) * hidden_size;
  if (positions == PositionEmbedding::kLearned) p += static_cast<int64_t>(seq_length) * hidden_size;
  return p;
}

int64_t Model::head_parameters() const {
  int64_t p = linear_bias ? 2LL * hidden_size : hidden_size;  // final norm
  if (!tied_embeddings) p += static_cast<int64_t>(vocab_size) * hidden_size;
  return p;
}

int64_t Model::parameter_count() const {
  return num_layers * layer_parameters() + embedding_parameters() + head_parameters();
}

double Model::model_flops_per_step(int64_t global_batch) const {
  const double B = static_cast<double>(global_batch);
  const double s = seq_length, h = hidden_size, l = num_layers, V = vocab_size;
  const double d = head_dim();
  const double q = num_heads * d, kv = kv_heads() * d, f = ffn_hidden();
  const double mlp_mats = activation == Activation::kSwiglu ? 3.0 : 2.0;
  // Forward matmul FLOPs per token per layer: QKV, attention (QK^T and AV),
  // output projection, MLP.
  const double per_layer = 2.0 * h * (q + 2 * kv) + 2.0 * 2.0 * s * q + 2.0 * q * h +
                           2.0 * mlp_mats * h * f;
  const double logits = 2.0 * h * V;
  return 3.0 * B * s * (l * per_layer + logits);  // forward + 2x backward
}

Status validate(const Model& m) {
  auto bad = [](const char* field, const std::string& why) {
    return Status::invalid_argument(std::string("model.") + field + ": " + why);
  };
  // A count in [lo, hi]; the message names the field and the bound.
  auto in_range = [&](const char* field, int v, int lo, int hi) {
    if (v < lo) {
      return bad(field, std::string(lo == 0 ? "must not be negative" : "must be positive") +
                            ", got " + std::to_string(v));
    }
    if (v > hi) {
      return bad(field, "must be at most " + std::to_string(hi) + ", got " + std::to_string(v));
    }
    return Status();
  };
  LLMPLAN_RETURN_IF_ERROR(in_range("layers", m.num_layers, 1, Model::kMaxLayers));
  LLMPLAN_RETURN_IF_ERROR(in_range("hidden", m.hidden_size, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("heads", m.num_heads, 1, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("kv_heads", m.num_kv_heads, 0, Model::kMaxHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("ffn_hidden", m.ffn_hidden_size, 0, Model::kMaxFfnHidden));
  LLMPLAN_RETURN_IF_ERROR(in_range("seq", m.seq_length, 1, Model::kMaxSeqLength));
  LLMPLAN_RETURN_IF_ERROR(in_range("vocab", m.vocab_size, 1, Model::kMaxVocab));
  if (m.hidden_size % m.num_heads != 0) {
    return bad("heads", std::to_string(m.num_heads) + " heads do not divide hidden size " +
                            std::to_string(m.hidden_size));
  }
  if (m.num_heads % m.kv_heads() != 0) {
    return bad("kv_heads", std::to_string(m.kv_heads()) + " kv heads do not divide " +
                               std::to_string(m.num_heads) + " heads");
  }
  return Status();
}

}  // namespace llmplan::simulator
