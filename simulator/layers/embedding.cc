#include "simulator/layers/embedding.h"

namespace llmplan::simulator::lowering {

void EmbeddingAndHead::embedding_forward(std::vector<LoweredOp>* out) const {
  const double pos = m_.positions == PositionEmbedding::kLearned ? 1.0 : 0.0;
  mem(out, KernelKind::kEmbedding, Pass::kForward, T_ * h_ * kElem * (2 + pos),
      OpCategory::kCompute);
  tp_reduce(out);  // vocab-parallel embedding: partial rows summed over TP
}

void EmbeddingAndHead::embedding_backward(std::vector<LoweredOp>* out, double grad_bytes) const {
  sp_gather(out);
  mem(out, KernelKind::kEmbedding, Pass::kBackward, T_ * h_ * kElem * 2, OpCategory::kCompute);
  out->back().grad_ready_bytes += grad_bytes;
  out->back().weight_grad = true;  // the gradient scatter into the table
}

void EmbeddingAndHead::head_forward(std::vector<LoweredOp>* out) const {
  const OpCategory c = OpCategory::kCompute;
  layer_norm(out, Pass::kForward, c);
  sp_gather(out);
  gemm(out, KernelKind::kLogitsGemm, Pass::kForward, T_, static_cast<double>(V_) / t_, h_, 1, c);
  // Vocab-parallel cross-entropy: fp32 logits, three small TP all-reduces
  // (max, sum of exponentials, target logit).
  mem(out, KernelKind::kCrossEntropy, Pass::kForward, T_ * V_ / t_ * (kElem + 4) * 2, c);
  for (int i = 0; i < 3; ++i) tp(out, CollectiveKind::kAllReduce, T_ * 4);
}

void EmbeddingAndHead::head_backward(std::vector<LoweredOp>* out, double grad_bytes) const {
  const OpCategory c = OpCategory::kCompute;
  mem(out, KernelKind::kCrossEntropy, Pass::kBackward, T_ * V_ / t_ * (kElem + 4), c);
  gemm_backward(out, KernelKind::kLogitsGemm, T_, static_cast<double>(V_) / t_, h_, 1);
  tp_reduce(out);
  layer_norm(out, Pass::kBackward, c);
  out->back().grad_ready_bytes += grad_bytes;
}

void EmbeddingAndHead::mtp_input_forward(std::vector<LoweredOp>* out) const {
  const OpCategory c = OpCategory::kCompute;
  const Pass f = Pass::kForward;
  embedding_forward(out);
  layer_norm(out, f, c);
  layer_norm(out, f, c);
  if (sp_) tp(out, CollectiveKind::kAllGather, T_ * 2.0 * h_ * kElem);
  cast(out, f, T_ * 2.0 * h_, c);
  gemm(out, KernelKind::kQkvGemm, f, T_, static_cast<double>(h_) / t_, 2.0 * h_, 1, c);
  tp(out, CollectiveKind::kAllGather, T_ * h_ * kElem);
}

void EmbeddingAndHead::mtp_input_backward(std::vector<LoweredOp>* out, double grad_bytes) const {
  const OpCategory c = OpCategory::kCompute;
  const Pass b = Pass::kBackward;
  cast(out, b, T_ * h_ / t_, c);
  gemm_backward(out, KernelKind::kQkvGemm, T_, static_cast<double>(h_) / t_, 2.0 * h_, 1);
  tp(out, sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
     T_ * 2.0 * h_ * kElem);
  layer_norm(out, b, c);
  layer_norm(out, b, c);
  embedding_backward(out, grad_bytes);
}

double mtp_input_parameters(const Model& model, const Plan& plan) {
  if (model.mtp_layers == 0) return 0.0;
  const double h = model.hidden_size, t = plan.tensor_parallel;
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  // Once per module with its own weights (Model::mtp_shared_weights).
  double params = model.mtp_weight_copies() * (3.0 * h + 2.0 * h * h / t);
  if (chunks > 1) params += static_cast<double>(model.vocab_size) * h / t;
  return params;
}

double embedding_parameters(const Model& model, const Plan& plan) {
  const int t = plan.tensor_parallel;
  double params = static_cast<double>(model.vocab_size) * model.hidden_size / t;
  if (model.positions == PositionEmbedding::kLearned) {
    params += static_cast<double>(model.seq_length) * model.hidden_size;
  }
  return params;
}

double head_parameters(const Model& model, const Plan& plan) {
  const int t = plan.tensor_parallel;
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  double params = model.linear_bias ? 2.0 * model.hidden_size : model.hidden_size;
  // Untied: the output projection. Tied across stages: the last stage keeps
  // its own copy of the word embeddings (synchronised by an all-reduce).
  if (!model.tied_embeddings || chunks > 1) {
    params += static_cast<double>(model.vocab_size) * model.hidden_size / t;
  }
  return params;
}

}  // namespace llmplan::simulator::lowering

namespace llmplan::simulator {

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

}  // namespace llmplan::simulator
