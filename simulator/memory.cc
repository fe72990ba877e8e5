#include "simulator/memory.h"

#include "simulator/schedule.h"

namespace llmplan::simulator {

double layer_activation_bytes(const Model& model, const Plan& plan) {
  const double s = model.seq_length, b = plan.micro_batch_size, h = model.hidden_size;
  const double a = model.num_heads, t = plan.tensor_parallel;
  const double kv_ratio = static_cast<double>(model.kv_heads()) / model.num_heads;
  const double f_over_h = static_cast<double>(model.ffn_hidden()) / model.hidden_size;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  // Not split by TP (unless SP): both LayerNorm inputs (4), the QKV and FC1
  // inputs (2 + 2), the two dropout masks (1 + 1).
  const double replicated = 10.0;
  // Split by TP: Q (2), K and V (2 each, scaled by kv/heads), the output
  // projection input (2), FC1 output and activation output (GeLU 2f+2f,
  // SwiGLU 4f+2f, per h).
  const double mlp = model.activation == Activation::kSwiglu ? 6.0 * f_over_h : 4.0 * f_over_h;
  const double split = 2.0 + 4.0 * kv_ratio + 2.0 + mlp;
  double per_token_h = (sp ? replicated / t : replicated) + split / t;
  const bool keep_scores = plan.recompute == Recompute::kNone && !plan.flash_attention;
  if (keep_scores) per_token_h += 5.0 * a * s / (h * t);
  return s * b * h * per_token_h;
}

double state_bytes_per_parameter(const Plan& plan) {
  return plan.distributed_optimizer ? 6.0 + 12.0 / plan.data_parallel : 18.0;
}

std::vector<MemoryBreakdown> stage_memory(const Model& model, const Plan& plan,
                                          const std::vector<double>& stage_parameters,
                                          double reserved_bytes) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const double per_layer = layer_activation_bytes(model, plan);
  Plan full_plan = plan;
  full_plan.recompute = Recompute::kNone;
  const double full_layer = layer_activation_bytes(model, full_plan);
  const double t = plan.tensor_parallel;
  const double tokens = static_cast<double>(plan.micro_batch_size) * model.seq_length;
  std::vector<MemoryBreakdown> out(p);
  for (int r = 0; r < p; ++r) {
    MemoryBreakdown& mb = out[r];
    mb.parameters = stage_parameters[r];
    mb.weights_and_optimizer_bytes = stage_parameters[r] * state_bytes_per_parameter(plan);
    const std::vector<int> live = peak_in_flight(plan, r);
    for (int c = 0; c < v; ++c) {
      const int layers = layers_in_chunk(model, plan, c * p + r);
      mb.activation_bytes += live[c] * layers * per_layer;
      mb.in_flight_micro_batches += live[c];
    }
    // The first stage also keeps the embedding output per in-flight micro-batch.
    if (r == 0) mb.activation_bytes += mb.in_flight_micro_batches * tokens * model.hidden_size * 2.0;
    if (plan.recompute == Recompute::kFull) mb.recompute_bytes = full_layer;
    if (r == p - 1) {
      // Logits in bf16 plus their fp32 copy for the loss, one micro-batch.
      mb.logits_bytes = tokens * model.vocab_size / t * (2.0 + 4.0);
    }
    mb.reserved_bytes = reserved_bytes;
  }
  return out;
}

}  // namespace llmplan::simulator
