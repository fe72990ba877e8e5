#include "simulator/memory.h"

#include <algorithm>

#include "simulator/schedule.h"

namespace llmplan::simulator {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kCudaContextBytes = 0.5 * kGiB;
constexpr double kCublasWorkspaceBytes = 2 * 32 * kMiB;
constexpr double kNcclBytesPerCommunicator = 0.5 * kGiB;
constexpr double kTpOverlapBufferBytes = 0.5 * kGiB;
}  // namespace

double layer_activation_bytes(const Model& model, const Plan& plan) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size;
  const double a = model.num_heads, t = plan.tensor_parallel;
  const double kv_ratio = static_cast<double>(model.kv_heads()) / model.num_heads;
  const double f_over_h = static_cast<double>(model.ffn_hidden()) / model.hidden_size;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  // FP8 training keeps the inputs of the four linear GEMMs (QKV, output
  // projection, FC1, FC2) as the fp8 copies their weight-gradient GEMMs read
  // (Transformer Engine): 1 byte per element instead of 2.
  const double gemm_in = plan.precision == Precision::kFp8 ? 1.0 : 2.0;
  // Not split by TP (unless SP): both LayerNorm inputs (4), the QKV and FC1
  // inputs (2 + 2), the two dropout masks (1 + 1) when dropout is on.
  const double replicated = 4.0 + 2.0 * gemm_in + (plan.dropout ? 2.0 : 0.0);
  // Split by TP: Q (2), K and V (2 each, scaled by kv/heads), the output
  // projection input (2), FC1 output and activation output = FC2 input
  // (GeLU 2f+2f, SwiGLU 4f+2f, per h).
  const double fc1_out = model.activation == Activation::kSwiglu ? 4.0 : 2.0;
  const double mlp = (fc1_out + gemm_in) * f_over_h;
  const double split = 2.0 + 4.0 * kv_ratio + gemm_in + mlp;
  double per_token_h = (sp ? replicated / t : replicated) + split / t;
  const bool keep_scores = plan.recompute == Recompute::kNone && !plan.flash_attention;
  if (keep_scores) per_token_h += 5.0 * a * s / (h * t);
  return s * b * h * per_token_h;
}

double layer_weight_grad_bytes(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const double qkv_cols = static_cast<double>(model.num_heads + 2 * model.kv_heads()) *
                          model.head_dim() / t;
  const double attn_cols = static_cast<double>(model.num_heads) * model.head_dim() / t;
  const double ffn = static_cast<double>(model.ffn_hidden()) / t;
  const double fc1_cols = model.activation == Activation::kSwiglu ? 2.0 * ffn : ffn;
  const double per_token = (h + qkv_cols) + (attn_cols + h) + (h + fc1_cols) + (ffn + h);
  return static_cast<double>(model.seq_length) * plan.micro_batch_size * per_token * 2.0;
}

double state_bytes_per_parameter(const Plan& plan) {
  const double shards = plan.shard_ranks();
  switch (plan.sharding_stage()) {
    case 0: return 18.0;
    case 1: return 6.0 + 12.0 / shards;
    case 2: return 2.0 + 16.0 / shards;
    default: return 16.0 / shards;
  }
}

double sharded_working_bytes(const Plan& plan, double layer_parameters, int layers,
                             double root_parameters) {
  const int stage = plan.sharding_stage();
  if (stage < 2) return 0.0;
  const double unsharded = std::min(layers, 2) * layer_parameters + root_parameters;
  // Unsharded gradients in the compute precision (2 bytes), and at stage 3
  // the gathered 2-byte parameters.
  const double bytes_per_parameter = stage == 3 ? 4.0 : 2.0;
  return unsharded * bytes_per_parameter;
}

double context_parallel_buffer_bytes(const Model& model, const Plan& plan) {
  const int cp = plan.context_parallel;
  if (cp <= 1) return 0.0;
  const double chunk = static_cast<double>(plan.micro_batch_size) * (model.seq_length / cp) * 2.0 *
                       model.kv_heads() * model.head_dim() / plan.tensor_parallel * 2.0;
  return plan.cp_comm == CpComm::kP2p ? 4.0 * chunk : 2.0 * cp * chunk;
}

double framework_buffer_bytes(const Plan& plan) {
  int communicators = 0;
  for (int degree : {plan.tensor_parallel, plan.pipeline_parallel, plan.grad_reduce_ranks(),
                     plan.context_parallel}) {
    if (degree > 1) ++communicators;
  }
  double bytes = kCudaContextBytes + kCublasWorkspaceBytes + communicators * kNcclBytesPerCommunicator;
  if (plan.tp_comm_overlap && plan.tensor_parallel > 1) bytes += kTpOverlapBufferBytes;
  return bytes;
}

std::vector<MemoryBreakdown> stage_memory(const Model& model, const Plan& plan,
                                          const std::vector<double>& stage_parameters,
                                          double extra_reserved_bytes) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const double per_layer = layer_activation_bytes(model, plan);
  Plan full_plan = plan;
  full_plan.recompute = Recompute::kNone;
  const double full_layer = layer_activation_bytes(model, full_plan);
  const double t = plan.tensor_parallel;
  // Tokens of one micro-batch on this rank (s/cp of each sequence).
  const double tokens =
      static_cast<double>(plan.micro_batch_size) * model.seq_length / plan.context_parallel;
  const double layer_params = static_cast<double>(model.layer_parameters()) / t;
  const double reserved = framework_buffer_bytes(plan) + extra_reserved_bytes;
  std::vector<MemoryBreakdown> out(p);
  for (int r = 0; r < p; ++r) {
    MemoryBreakdown& mb = out[r];
    mb.parameters = stage_parameters[r];
    mb.weights_and_optimizer_bytes = stage_parameters[r] * state_bytes_per_parameter(plan);
    int stage_layers = 0;
    int forwards_in_flight = 0;  // micro-batches holding all their activations
    if (plan.schedule == Schedule::kZbH1) {
      // v = 1: the stage's layers hold per_layer per forward in flight and
      // weight_grad per deferred W; the peak of their sum.
      const int layers = layers_in_chunk(model, plan, r);
      const double weight_grad = layer_weight_grad_bytes(model, plan);
      const SplitInFlight live = peak_in_flight_split(plan, r, per_layer, weight_grad);
      stage_layers = layers;
      forwards_in_flight = live.forwards;
      mb.activation_bytes = layers * (live.forwards * per_layer +
                                      live.deferred_weight_grads * weight_grad);
      mb.in_flight_micro_batches = live.forwards + live.deferred_weight_grads;
    } else {
      const std::vector<int> live = peak_in_flight(plan, r);
      for (int c = 0; c < v; ++c) {
        const int layers = layers_in_chunk(model, plan, c * p + r);
        stage_layers += layers;
        mb.activation_bytes += live[c] * layers * per_layer;
        mb.in_flight_micro_batches += live[c];
      }
      forwards_in_flight = mb.in_flight_micro_batches;
    }
    // The root unit: what the stage holds besides its layers (embedding,
    // positions, final norm, output head).
    const double root = std::max(0.0, stage_parameters[r] - stage_layers * layer_params);
    // FP8: Transformer Engine caches each layer weight's fp8 copy and its
    // transpose across the micro-batches of a step (2 bytes per layer
    // parameter); at ZeRO-3 they are cast per layer after the gather
    // (in the working set's gathered layer).
    if (plan.precision == Precision::kFp8 && plan.sharding_stage() < 3) {
      mb.weights_and_optimizer_bytes += 2.0 * stage_layers * layer_params;
    }
    mb.sharded_working_bytes = sharded_working_bytes(plan, layer_params, stage_layers, root);
    // The first stage also keeps the embedding output per in-flight micro-batch.
    if (r == 0) mb.activation_bytes += forwards_in_flight * tokens * model.hidden_size * 2.0;
    if (plan.recompute == Recompute::kFull) mb.recompute_bytes = full_layer;
    mb.context_parallel_bytes = context_parallel_buffer_bytes(model, plan);
    if (r == p - 1) {
      // Logits in bf16 plus their fp32 copy for the loss, one micro-batch;
      // a fused cross-entropy keeps the bf16 logits only.
      mb.logits_bytes = tokens * model.vocab_size / t * (plan.fused_cross_entropy ? 2.0 : 6.0);
    }
    mb.fragmentation_bytes =
        kAllocatorFragmentation * (mb.activation_bytes + mb.recompute_bytes + mb.logits_bytes +
                                   mb.sharded_working_bytes + mb.context_parallel_bytes);
    mb.reserved_bytes = reserved;
  }
  return out;
}

}  // namespace llmplan::simulator
