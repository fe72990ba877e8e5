// The sums over a model's layers: its parameters (Model::layer_parameters,
// parameter_count, ...) and model FLOPs, from each layer kind's own counts
// in simulator/layers/.
#include <cstdint>

#include "simulator/layers/attention.h"
#include "simulator/layers/layer_kind.h"
#include "simulator/layers/mla.h"
#include "simulator/layers/mlp.h"
#include "simulator/layers/moe.h"
#include "simulator/model.h"

namespace llmplan::simulator {

int64_t Model::layer_parameters() const {
  return layers::attention_and_norms_parameters(*this) +
         layers::mlp_parameters(*this, ffn_hidden());
}

int64_t Model::moe_layer_parameters() const {
  return layers::moe_layer_dense_parameters(*this) + expert_parameters_per_layer();
}

int64_t Model::layer_parameters(int layer) const {
  // A hybrid layer is one block: its part of a standard layer plus one norm.
  switch (layer_kind(layer)) {
    case LayerKind::kStandard: break;
    case LayerKind::kMamba: return mamba_layer_parameters();
    case LayerKind::kAttention:
      return layers::attention_and_norms_parameters(*this) - layers::norm_parameters(*this);
    case LayerKind::kMlp:
      return layers::norm_parameters(*this) + layers::mlp_parameters(*this, ffn_hidden());
    case LayerKind::kMoe:
      return moe_layer_parameters() - layers::attention_and_norms_parameters(*this) +
             layers::norm_parameters(*this);
    case LayerKind::kRegistered:
      return layers::find_layer_kind(layer_pattern[static_cast<size_t>(layer)])->parameters(*this, layer);
  }
  return is_moe_layer(layer) ? moe_layer_parameters() : layer_parameters();
}

int64_t Model::mtp_parameters() const {
  const int64_t h = hidden_size;
  int64_t block = 0;
  for (const int i : mtp_block_layers()) block += layer_parameters(i);
  return static_cast<int64_t>(mtp_weight_copies()) * (3 * h + 2 * h * h + block);
}

int64_t Model::parameter_count() const {
  if (is_hybrid()) {
    int64_t p = embedding_parameters() + head_parameters();
    for (int i = 0; i < num_layers; ++i) p += layer_parameters(i);
    return p + mtp_parameters();
  }
  const int64_t moe = num_moe_layers();
  return (num_layers - moe) * layer_parameters() + moe * moe_layer_parameters() +
         embedding_parameters() + head_parameters() + mtp_parameters();
}

int64_t Model::active_parameter_count() const {
  // MTP modules: their MoE layers, once per module with its own weights.
  const int64_t moe =
      num_moe_layers() + static_cast<int64_t>(mtp_weight_copies()) * mtp_block_moe_layers();
  const int64_t idle =
      is_moe() ? static_cast<int64_t>(num_experts - moe_top_k) * layers::expert_parameters(*this)
               : 0;
  return parameter_count() - moe * idle;
}

double Model::model_flops_per_step(int64_t global_batch) const {
  const double B = static_cast<double>(global_batch);
  const double s = seq_length, h = hidden_size, V = vocab_size;
  const double d = head_dim();
  const double q = num_heads * d, kv = kv_heads() * d, f = ffn_hidden();
  const double mlp_mats = activation == Activation::kSwiglu ? 3.0 : 2.0;
  // Forward matmul FLOPs per token per layer: QKV, attention (QK^T and AV
  // over the layer's span), output projection, MLP (dense) or router + the
  // top_k and shared experts (MoE).
  const double projections = 2.0 * h * (q + 2 * kv) + 2.0 * q * h;
  const double dense_mlp = 2.0 * mlp_mats * h * f;
  // Latent MoE: the routed experts on L-wide rows and the two [h <-> L]
  // projections; the shared experts on h.
  const double w = moe_routed_width();
  const double moe_mlp =
      is_moe() ? 2.0 * h * num_experts +
                     2.0 * mlp_mats * moe_ffn_hidden() * (w * moe_top_k + h * moe_shared_experts) +
                     2.0 * 2.0 * h * moe_latent_size
               : 0.0;
  // MLA (NeMo's deepseekv3 formula, see model.h): the projections' weights
  // (latent norms excluded) x 2, the core over half the pairs, no router.
  const double mla_projections =
      is_mla() ? 2.0 * static_cast<double>(layers::mla_attention_parameters(*this) - q_lora_rank - kv_lora_rank)
               : 0.0;
  const double mla_core_per_key =
      static_cast<double>(num_heads) * (mla_qk_head_dim() + v_head_dim);
  const double router = is_mla() ? 0.0 : 2.0 * h * num_experts;
  const double moe_mlp_mla = is_moe() ? moe_mlp - 2.0 * h * num_experts + router : 0.0;
  auto attention_flops = [&](int i) {
    if (is_mla()) return mla_projections + attention_span(i) * mla_core_per_key;
    return projections + 2.0 * 2.0 * attention_span(i) * q;
  };
  // A standard layer: attention and its feed-forward block.
  auto layer_flops = [&](int i) {
    return attention_flops(i) + (is_moe_layer(i) ? moe_mlp_mla : dense_mlp);
  };
  // Hybrid layers: one block each; a Mamba layer's in_proj, out_proj and
  // SSD matmuls (the conv1d and gating are not matmuls).
  const double mamba = is_hybrid() ? 2.0 * h * mamba_in_proj_columns() +
                                         2.0 * mamba_inner() * h + ssd_flops_per_token()
                                   : 0.0;
  // Layer i's forward FLOPs per token, by its kind.
  auto any_layer_flops = [&](int i) {
    switch (layer_kind(i)) {
      case LayerKind::kStandard: break;
      case LayerKind::kMamba: return mamba;
      case LayerKind::kAttention: return attention_flops(i);
      case LayerKind::kMlp: return dense_mlp;
      case LayerKind::kMoe: return moe_mlp_mla;
      case LayerKind::kRegistered:
        return layers::find_layer_kind(layer_pattern[static_cast<size_t>(i)])->flops_per_token(*this, i);
    }
    return layer_flops(i);
  };
  double per_token = 0;
  for (int i = 0; i < num_layers; ++i) per_token += any_layer_flops(i);
  const double logits = 2.0 * h * V;
  // MTP modules, every depth (shared weights or not): the [2h -> h]
  // projection, the decoder block, the logits.
  double block = 0;
  for (const int i : mtp_block_layers()) block += any_layer_flops(i);
  const double mtp = mtp_layers * (2.0 * 2.0 * h * h + block + logits);
  return 3.0 * B * s * (per_token + logits + mtp);  // forward + 2x backward
}

}  // namespace llmplan::simulator
