// Where a model's parameters sit on one device (memory.h): per layer (the
// routed experts over ep x etp, MLA's and latent MoE's duplicated parts on
// every TP rank, the rest over t), per MTP block and per pipeline stage.
#include <algorithm>
#include <vector>

#include "simulator/memory.h"
#include "simulator/schedule.h"

namespace llmplan::simulator {

double expert_parameters_per_device(const Model& model, const Plan& plan) {
  if (!model.is_moe()) return 0.0;
  return static_cast<double>(model.expert_parameters_per_layer()) /
         (static_cast<double>(plan.expert_parallel) * plan.expert_tensor_parallel);
}

double layer_parameters_per_device(const Model& model, const Plan& plan, int layer) {
  const double t = plan.tensor_parallel;
  // MLA's down-projections and latent norms are duplicated on every TP rank.
  double replicated = static_cast<double>(model.mla_replicated_parameters());
  if (!model.is_moe_layer(layer)) {
    return (static_cast<double>(model.layer_parameters(layer)) - replicated) / t + replicated;
  }
  // Latent MoE's projections are duplicated on every TP rank too.
  replicated += static_cast<double>(model.moe_latent_parameters());
  const double dense_part =
      static_cast<double>(model.layer_parameters(layer) - model.expert_parameters_per_layer());
  return (dense_part - replicated) / t + replicated + expert_parameters_per_device(model, plan);
}

double mtp_parameters_per_device(const Model& model, const Plan& plan) {
  if (model.mtp_layers == 0) return 0.0;
  const double h = model.hidden_size, t = plan.tensor_parallel;
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  double block = 0;
  for (const int i : model.mtp_block_layers()) block += layer_parameters_per_device(model, plan, i);
  // Once per module with its own weights (Model::mtp_shared_weights).
  double params = model.mtp_weight_copies() * (3.0 * h + 2.0 * h * h / t + block);
  if (chunks > 1) params += static_cast<double>(model.vocab_size) * h / t;
  return params;
}

int first_layer_of_chunk(const Model& model, const Plan& plan, int chunk) {
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  if (plan.pipeline_first_chunk_layers >= 0) {
    // The uneven layout (layers_in_chunk): the first chunk's layers, then
    // the middle chunks' even split (the last of them one more each).
    if (chunk == 0) return 0;
    const int middle =
        model.num_layers - plan.pipeline_first_chunk_layers - plan.pipeline_last_chunk_layers;
    const int m = chunks - 2, i = std::min(chunk - 1, m);  // middle chunks before `chunk`
    const int base = m > 0 ? middle / m : 0, extra = m > 0 ? middle % m : 0;
    return plan.pipeline_first_chunk_layers + i * base + std::max(0, i - (m - extra));
  }
  if (plan.account_for_embedding_in_pipeline_split || plan.account_for_loss_in_pipeline_split) {
    // The embedding- / loss-aware split (layers_in_chunk): equal chunks of
    // (l + e + o) / (p v), the first one e layers short.
    const int e = plan.account_for_embedding_in_pipeline_split ? 1 : 0;
    const int o = plan.account_for_loss_in_pipeline_split ? 1 : 0;
    const int per_chunk = (model.num_layers + e + o) / chunks;
    return chunk == 0 ? 0 : chunk * per_chunk - e;
  }
  const int base = model.num_layers / chunks;
  const int extra = model.num_layers % chunks;
  return chunk * base + std::max(0, chunk - (chunks - extra));
}

std::vector<double> stage_parameters_per_device(const Model& model, const Plan& plan) {
  const int p = plan.pipeline_parallel, chunks = p * plan.virtual_stages;
  const double t = plan.tensor_parallel, h = model.hidden_size;
  std::vector<double> out(p, 0.0);
  // A layer's count depends on the layer only through its kind and whether
  // it is an MoE layer (a registered kind's may depend on the layer itself),
  // so each such pair is counted once: the planner's memory estimate calls
  // this for every layout of an MoE shape.
  constexpr int kKinds = static_cast<int>(Model::LayerKind::kRegistered) + 1;
  double counted[kKinds][2] = {};
  bool have[kKinds][2] = {};
  auto per_device = [&](int i) {
    const Model::LayerKind kind = model.layer_kind(i);
    if (kind == Model::LayerKind::kRegistered) return layer_parameters_per_device(model, plan, i);
    const int k = static_cast<int>(kind), moe = model.is_moe_layer(i) ? 1 : 0;
    if (!have[k][moe]) {
      counted[k][moe] = layer_parameters_per_device(model, plan, i);
      have[k][moe] = true;
    }
    return counted[k][moe];
  };
  for (int c = 0; c < chunks; ++c) {
    const int first = first_layer_of_chunk(model, plan, c);
    const int layers = layers_in_chunk(model, plan, c);
    for (int i = first; i < first + layers; ++i) out[c % p] += per_device(i);
  }
  out[0] += static_cast<double>(model.vocab_size) * h / t;
  if (model.positions == PositionEmbedding::kLearned) {
    out[0] += static_cast<double>(model.seq_length) * h;
  }
  out[p - 1] += model.linear_bias ? 2.0 * h : h;
  if (!model.tied_embeddings || chunks > 1)
    out[p - 1] += static_cast<double>(model.vocab_size) * h / t;
  out[p - 1] += mtp_parameters_per_device(model, plan);
  return out;
}

}  // namespace llmplan::simulator
