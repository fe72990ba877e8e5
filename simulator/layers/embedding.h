// A layer kind (layer_kind.h): its parameters, checks and memory (the
// layers:: functions at the end) and its kernels:
// the ends of the model -- the embedding on the
// first chunk, the final norm, logits and loss on the last -- and the
// parameters each holds on one device.
//
// The embedding is vocabulary-parallel: each TP rank looks up its rows of
// the table (and the learned positions) and the partial rows are summed over
// TP. The head is the final LayerNorm, the logits GEMM [T, h] x [h, V/t] and
// the vocabulary-parallel cross-entropy (fp32 logits, three small TP
// all-reduces: max, sum of exponentials, target logit).
#ifndef LLMPLAN_SIMULATOR_LAYERS_EMBEDDING_H_
#define LLMPLAN_SIMULATOR_LAYERS_EMBEDDING_H_

#include <vector>

#include "simulator/lowering/emitter.h"

namespace llmplan::simulator::lowering {

// The first chunk's embedding and the last chunk's head, forward and backward.
class EmbeddingAndHead : public Emitter {
 public:
  using Emitter::Emitter;

  void embedding_forward(std::vector<LoweredOp>* out) const;
  // `grad_bytes` of gradients are final after it (on its last op, the
  // gradient scatter into the table, a weight_grad kernel).
  void embedding_backward(std::vector<LoweredOp>* out, double grad_bytes) const;
  void head_forward(std::vector<LoweredOp>* out) const;
  // `grad_bytes` of gradients are final after it.
  void head_backward(std::vector<LoweredOp>* out, double grad_bytes) const;
  // An MTP module's input (Model::mtp_layers; DeepSeek-V3 section 2.2,
  // Megatron-Core multi_token_prediction.py), on the last chunk: the
  // shared embedding's lookup of the next tokens, the two RMSNorms (of
  // the embedding and of the hidden state), eh_proj [2h -> h / t]
  // column-parallel on the gathered concatenation and the all-gather of its
  // output columns over TP. Its decoder layer and its logits and loss are
  // the layer's and head's ops, emitted by the driver.
  void mtp_input_forward(std::vector<LoweredOp>* out) const;
  // `grad_bytes` of gradients are final after it.
  void mtp_input_backward(std::vector<LoweredOp>* out, double grad_bytes) const;
};

// Parameters of the embedding on one device (the first chunk's): this TP
// rank's rows of the word embeddings, and the learned positions (whole).
double embedding_parameters(const Model& model, const Plan& plan);
// Parameters of the head on one device (the last chunk's): the final norm,
// and the output projection when the embeddings are untied or the first and
// last chunk differ (then the last stage keeps its own copy of the word
// embeddings, synchronised by an all-reduce).
double head_parameters(const Model& model, const Plan& plan);
// Parameters of the MTP modules on one device (the last chunk's) besides
// their decoder layers: per module the two input norms, eh_proj's 2h h / t
// and the head's norm; and, when the first and last chunk differ, the last
// stage's copy of this TP rank's word-embedding rows for the modules'
// lookups (Megatron-Core's GPTModel builds the embedding on the MTP stage).
double mtp_input_parameters(const Model& model, const Plan& plan);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LAYERS_EMBEDDING_H_
