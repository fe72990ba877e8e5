// The per-layer figures of memory.h: what one layer of each kind stores for
// its backward (activations, zb-h1's deferred weight-gradient inputs) and
// the MoE buffers, summed over the layer's blocks from their own figures in
// simulator/layers/. memory.cc sums these over a pipeline stage.
#include <cstddef>

#include "simulator/layers/attention.h"
#include "simulator/layers/layer_kind.h"
#include "simulator/layers/mamba.h"
#include "simulator/layers/mlp.h"
#include "simulator/layers/moe.h"
#include "simulator/memory.h"

namespace llmplan::simulator {

using layers::fc1_output_bytes;

double layer_activation_bytes(const Model& model, const Plan& plan) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size;
  const double a = model.num_heads, t = plan.tensor_parallel;
  const double f_over_h = static_cast<double>(model.ffn_hidden()) / model.hidden_size;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  const double gemm_in = gemm_input_bytes_per_element(plan.precision);
  const layers::AttentionActivations attn =
      layers::attention_activations(model, plan, /*mlp_input=*/true);
  // Split by TP as well: FC1 output and activation output = FC2 input
  // (GeLU 2f+2f, SwiGLU 4f+2f, per h).
  const double mlp = (fc1_output_bytes(model) + gemm_in) * f_over_h;
  const double split = attn.split + mlp;
  double per_token_h = (sp ? attn.replicated / t : attn.replicated) + split / t;
  const bool keep_scores = plan.recompute == Recompute::kNone && !plan.flash_attention;
  if (keep_scores) per_token_h += 5.0 * a * s / (h * t);
  return s * b * h * per_token_h;
}

double moe_layer_activation_bytes(const Model& model, const Plan& plan) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size;
  const double a = model.num_heads, t = plan.tensor_parallel;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  const double gemm_in = gemm_input_bytes_per_element(plan.precision);
  const double fe = model.moe_ffn_hidden();
  const layers::AttentionActivations attn =
      layers::attention_activations(model, plan, /*mlp_input=*/false);
  double per_token_h = (sp ? attn.replicated / t : attn.replicated) + attn.split / t;
  const bool keep_scores = plan.recompute == Recompute::kNone && !plan.flash_attention;
  if (keep_scores) per_token_h += 5.0 * a * s / (h * t);
  const double mlp_unit = fc1_output_bytes(model) + gemm_in;  // FC1 out + FC2 in per FFN unit
  // Shared experts: a dense MLP of width n_s f_e, split by t.
  per_token_h += mlp_unit * model.moe_shared_experts * fe / (h * t);
  const double attention_part = s * b * h * per_token_h;
  // The router, latent MoE's projections and the routed experts (moe.h).
  const layers::MoeActivations moe = layers::moe_activations(model, plan);
  return attention_part + moe.router + moe.latent_inputs + moe.routed;
}

double hybrid_layer_activation_bytes(const Model& model, const Plan& plan, int layer) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size, t = plan.tensor_parallel;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  const double gemm_in = gemm_input_bytes_per_element(plan.precision);
  const double tsp = sp ? t : 1.0;
  // One block's own norm input (2), its first GEMM's input and its dropout
  // mask, per token per h: not split by TP unless SP.
  const double block_in = 2.0 + gemm_in + (plan.dropout ? 1.0 : 0.0);
  // A standard dense layer less both blocks' replicated part and the MLP's
  // split part: attention's split part (and kept scores).
  const double standard_in = 4.0 + 2.0 * gemm_in + (plan.dropout ? 2.0 : 0.0);
  const double mlp_split = (fc1_output_bytes(model) + gemm_in) * model.ffn_hidden() / h;
  const double attention_only = layer_activation_bytes(model, plan) +
                                s * b * h * ((block_in - standard_in) / tsp - mlp_split / t);
  switch (model.layer_kind(layer)) {
    case Model::LayerKind::kStandard:
      return model.is_moe_layer(layer) ? moe_layer_activation_bytes(model, plan)
                                       : layer_activation_bytes(model, plan);
    case Model::LayerKind::kAttention: return attention_only;
    case Model::LayerKind::kMlp: return layer_activation_bytes(model, plan) - attention_only;
    case Model::LayerKind::kMoe: return moe_layer_activation_bytes(model, plan) - attention_only;
    case Model::LayerKind::kRegistered:
      return layers::find_layer_kind(model.layer_pattern[static_cast<size_t>(layer)])
          ->activation_bytes(model, plan, layer);
    case Model::LayerKind::kMamba: break;
  }
  // Mamba-2 mixer (Megatron-Core MambaMixer with mamba_ssm's kernels): its
  // block input, and split by TP what mamba.h lists.
  const double split = layers::mamba_split_activation_bytes(model, gemm_in);
  return s * b * (h * block_in / tsp + split / t);
}

double moe_buffer_bytes(const Model& model, const Plan& plan) {
  if (!model.is_moe()) return 0.0;
  const double rows = layers::expert_rows(model, plan);
  const double back = model.moe_top_k * layers::moe_tokens(model, plan);
  // With etp > 1 the reduce-scatter's output is a buffer of its own; with
  // etp = 1 FC2's output is what the all-to-all sends.
  const double etp = plan.expert_tensor_parallel;
  const double scattered = etp > 1 ? rows / etp : 0.0;
  return 2.0 * model.moe_routed_width() * (rows + scattered + back);
}

double layer_weight_grad_bytes(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const double ffn = static_cast<double>(model.ffn_hidden()) / t;
  const double fc1_cols = model.activation == Activation::kSwiglu ? 2.0 * ffn : ffn;
  const double attention = layers::attention_weight_grad_per_token(model, plan);
  const double per_token = attention + (h + fc1_cols) + (ffn + h);
  return static_cast<double>(model.seq_length) * plan.micro_batch_size * per_token * 2.0;
}

double moe_layer_weight_grad_bytes(const Model& model, const Plan& plan) {
  const double tokens = static_cast<double>(model.seq_length) * plan.micro_batch_size;
  double per_token = layers::attention_weight_grad_per_token(model, plan);
  const double shared = layers::shared_experts_weight_grad_per_token(model, plan);
  if (shared > 0) per_token += shared;
  // The router, the routed experts and latent MoE's projections (moe.h).
  const layers::MoeWeightGrads moe = layers::moe_weight_grads(model, plan, tokens);
  return (tokens * per_token + moe.router + moe.routed + moe.projections) * 2.0;
}

}  // namespace llmplan::simulator
