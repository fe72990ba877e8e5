#include "simulator/memory.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "simulator/layers/attention.h"
#include "simulator/layers/layer_kind.h"
#include "simulator/layers/mla.h"
#include "simulator/schedule.h"

namespace llmplan::simulator {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kCudaContextBytes = 0.5 * kGiB;
constexpr double kCublasWorkspaceBytes = 2 * 32 * kMiB;
constexpr double kNcclBytesPerCommunicator = 0.5 * kGiB;
constexpr double kTpOverlapBufferBytes = 0.5 * kGiB;
// ZeRO 2-3's unsharded gradients in flight, in the compute precision.
constexpr double kShardedGradientBytes = 2.0;

// Bytes per parameter saved by a bf16 gradient buffer (Plan::
// grad_reduce_in_fp32 false: Megatron-Core's _ParamAndGradBuffer takes
// grad_dtype bf16 instead of fp32, and Megatron-FSDP's gradient shards are
// bf16): 4 - 2 = 2; 0 with the fp32 default. The fp32 main weights and Adam
// moments (12 bytes) are unchanged.
double bf16_gradient_saving_bytes(const Plan& plan) {
  return plan.grad_reduce_in_fp32 ? 0.0 : 2.0;
}

}  // namespace

double state_bytes_per_parameter(const Plan& plan) {
  const double shards = plan.shard_ranks();
  const double bf16_grad_saving = bf16_gradient_saving_bytes(plan);
  switch (plan.sharding_stage()) {
    case 0: return 18.0 - bf16_grad_saving;
    case 1: return 6.0 - bf16_grad_saving + 12.0 / shards;
    case 2: return 2.0 + (16.0 - bf16_grad_saving) / shards;
    default: return (16.0 - bf16_grad_saving) / shards;
  }
}

double expert_state_bytes_per_parameter(const Plan& plan) {
  const double shards = std::max(1.0, static_cast<double>(plan.expert_data_parallel()) *
                                          plan.shard_group_size() / plan.data_parallel);
  const double bf16_grad_saving = bf16_gradient_saving_bytes(plan);
  switch (plan.sharding_stage()) {
    case 0:
      return 18.0 - bf16_grad_saving;
    case 1:
      return 6.0 - bf16_grad_saving + 12.0 / shards;
    case 2:
      return 2.0 + (16.0 - bf16_grad_saving) / shards;
    default:
      return (16.0 - bf16_grad_saving) / shards;
  }
}

double sharded_working_bytes(const Plan& plan, double layer_parameters, int layers,
                             double root_parameters) {
  const int stage = plan.sharding_stage();
  if (stage < 2) return 0.0;
  const double unsharded = std::min(layers, 2) * layer_parameters + root_parameters;
  // Unsharded gradients in the compute precision (2 bytes), and at stage 3
  // the gathered 2-byte parameters.
  const double bytes_per_parameter =
      stage == 3 ? kShardedGradientBytes + 2.0 : kShardedGradientBytes;
  return unsharded * bytes_per_parameter;
}

double context_parallel_buffer_bytes(const Model& model, const Plan& plan) {
  const int cp = plan.context_parallel;
  if (cp <= 1) return 0.0;
  // K and V columns per token: 2 g d, or MLA's a (qk + v) up-projected ones.
  const double kv_cols = layers::context_parallel_kv_columns(model);
  const double chunk = static_cast<double>(plan.micro_batch_size) * (model.seq_length / cp) *
                       kv_cols / plan.tensor_parallel * 2.0;
  return plan.cp_comm == CpComm::kP2p ? 4.0 * chunk : 2.0 * cp * chunk;
}

double framework_buffer_bytes(const Plan& plan) {
  int communicators = 0;
  for (int degree : {plan.tensor_parallel, plan.pipeline_parallel, plan.grad_reduce_ranks(),
                     plan.context_parallel}) {
    if (degree > 1) ++communicators;
  }
  // MoE expert layers (ep x etp > 1, only valid for an MoE model): the
  // expert-parallel all-to-all group, the expert-data-parallel gradient
  // group and, with etp != t, the expert tensor-parallel group are
  // communicators of their own.
  if (static_cast<int64_t>(plan.expert_parallel) * plan.expert_tensor_parallel > 1) {
    if (plan.expert_parallel > 1) ++communicators;
    if (plan.expert_tensor_parallel > 1 && plan.expert_tensor_parallel != plan.tensor_parallel) {
      ++communicators;
    }
    // With etp x ep = t the expert-data-parallel group is the data x
    // context group (counted above).
    const int64_t expert_ranks =
        static_cast<int64_t>(plan.expert_parallel) * plan.expert_tensor_parallel;
    if (plan.expert_data_parallel() > 1 && expert_ranks != plan.tensor_parallel) ++communicators;
  }
  double bytes = kCudaContextBytes + kCublasWorkspaceBytes + communicators * kNcclBytesPerCommunicator;
  if (plan.tp_comm_overlap && plan.tensor_parallel > 1) bytes += kTpOverlapBufferBytes;
  return bytes;
}

namespace {

// What stage_memory works out once for every stage: one layer's figures.
struct LayerFigures {
  double t = 1;                  // tensor-parallel ranks
  bool sp = false;               // sequence parallelism (t > 1)
  double tokens = 0;             // tokens of one micro-batch on this rank
  double per_layer = 0;          // a dense layer's stored activations
  double full_layer = 0;         // the same without recompute (recompute_bytes)
  double layer_params = 0;       // a dense layer's parameters on the device (hybrid: the largest)
  bool moe = false;              // the model has experts
  double moe_per_layer = 0, moe_full_layer = 0;  // as above, an MoE layer
  double moe_layer_params = 0;
  double experts_per_layer = 0;  // an MoE layer's routed experts on the device
  // A bf16 layer's activations beyond per_layer (moe_per_layer).
  double bf16_extra = 0, moe_bf16_extra = 0;
};

// The bf16 layers of a low-precision plan (Plan::bf16_layers_at_*), dense and
// MoE: they keep bf16 GEMM inputs and no quantized weight copies. Their
// activations differ from per_layer (moe_per_layer) by bf16_extra
// (moe_bf16_extra) each.
struct Bf16Layers {
  int dense = 0, moe = 0;
};

// What one stage's activations sum: its layers, and the in-flight counts
// the later terms use.
struct StageCounts {
  int layers = 0;
  int moe_layers = 0;
  Bf16Layers bf16;                // the stage's bf16 layers
  int first_chunk_in_flight = 0;  // forwards in flight in the stage's first chunk
  int last_chunk_in_flight = 0;   // and in its last chunk (the MTP modules')
  double offload_in_transit = 0;  // the offloaded layer on the GPU (cpu_offload_v1)
};

LayerFigures layer_figures(const Model& model, const Plan& plan) {
  LayerFigures f;
  f.per_layer = layer_activation_bytes(model, plan);
  Plan full_plan = plan;
  full_plan.recompute = Recompute::kNone;
  f.full_layer = layer_activation_bytes(model, full_plan);
  f.t = plan.tensor_parallel;
  f.sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  f.tokens = layers::rank_tokens(model, plan);
  const double mla_replicated = static_cast<double>(model.mla_replicated_parameters());
  f.layer_params =
      (static_cast<double>(model.layer_parameters()) - mla_replicated) / f.t + mla_replicated;
  // MoE layers (none in a dense model, whose figures take the dense
  // expressions below unchanged).
  f.moe = model.is_moe();
  f.moe_per_layer = f.moe ? moe_layer_activation_bytes(model, plan) : 0.0;
  f.moe_full_layer = f.moe ? moe_layer_activation_bytes(model, full_plan) : 0.0;
  // A hybrid model's first MoE ('E') layer stands for its MoE layers; its
  // largest other layer for the rest (ZeRO's working unit, bf16 layers).
  int first_moe_layer = model.moe_first_dense;
  if (model.is_hybrid()) {
    const size_t e = model.layer_pattern.find('E');
    first_moe_layer = e == std::string::npos ? 0 : static_cast<int>(e);
    f.layer_params = 0;
    for (int i = 0; i < model.num_layers; ++i) {
      if (!model.is_moe_layer(i)) {
        f.layer_params = std::max(f.layer_params, layer_parameters_per_device(model, plan, i));
      }
    }
  }
  f.moe_layer_params = f.moe ? layer_parameters_per_device(model, plan, first_moe_layer) : 0.0;
  f.experts_per_layer = expert_parameters_per_device(model, plan);
  if (plan.has_bf16_layers()) {
    Plan bf16_plan = plan;
    bf16_plan.precision = Precision::kBf16;
    f.bf16_extra = layer_activation_bytes(model, bf16_plan) - f.per_layer;
    if (f.moe) f.moe_bf16_extra = moe_layer_activation_bytes(model, bf16_plan) - f.moe_per_layer;
  }
  return f;
}

// Hybrid models (Model::layer_pattern): what the `layers` layers of chunk
// `chunk` store beyond `per_layer` per non-MoE layer and `moe_per_layer`
// per MoE layer.
double hybrid_extra_in(const Model& model, const Plan& plan, const LayerFigures& f, int chunk,
                       int layers) {
  if (!model.is_hybrid()) return 0.0;
  const int first = first_layer_of_chunk(model, plan, chunk);
  double extra = 0;
  for (int i = first; i < first + layers; ++i) {
    extra += hybrid_layer_activation_bytes(model, plan, i) -
             (model.is_moe_layer(i) ? f.moe_per_layer : f.per_layer);
  }
  return extra;
}

// MoE layers among the `layers` layers of chunk `chunk`.
int moe_layers_in(const Model& model, const Plan& plan, const LayerFigures& f, int chunk,
                  int layers) {
  if (!f.moe) return 0;
  const int first = first_layer_of_chunk(model, plan, chunk);
  int n = 0;
  for (int i = first; i < first + layers; ++i) n += model.is_moe_layer(i) ? 1 : 0;
  return n;
}

// The bf16 layers among the `layers` layers of chunk `chunk`.
Bf16Layers bf16_layers_in(const Model& model, const Plan& plan, const LayerFigures& f, int chunk,
                          int layers) {
  Bf16Layers n;
  if (!plan.has_bf16_layers()) return n;
  const int first = first_layer_of_chunk(model, plan, chunk);
  for (int i = first; i < first + layers; ++i) {
    if (plan.low_precision_layer(i, model.num_layers)) continue;
    ++(f.moe && model.is_moe_layer(i) ? n.moe : n.dense);
  }
  return n;
}

// zb-h1 (v = 1): stage r's layers hold per_layer per forward in flight and
// weight_grad per deferred W; the peak of their sum.
void zb_h1_activations(const Model& model, const Plan& plan, const LayerFigures& f, int r,
                       MemoryBreakdown* mb, StageCounts* c) {
  const int layers = layers_in_chunk(model, plan, r);
  const int moe_layers = moe_layers_in(model, plan, f, r, layers);
  const double weight_grad = layer_weight_grad_bytes(model, plan);
  c->layers = layers;
  c->moe_layers = moe_layers;
  c->bf16 = bf16_layers_in(model, plan, f, r, layers);
  if (moe_layers == 0 && !model.is_hybrid()) {
    const SplitInFlight live = peak_in_flight_split(plan, r, f.per_layer, weight_grad);
    c->first_chunk_in_flight = live.forwards;
    mb->activation_bytes =
        layers * (live.forwards * f.per_layer + live.deferred_weight_grads * weight_grad);
    mb->in_flight_micro_batches = live.forwards + live.deferred_weight_grads;
  } else {
    const int dense_layers = layers - moe_layers;
    const double forward = dense_layers * f.per_layer + moe_layers * f.moe_per_layer +
                           hybrid_extra_in(model, plan, f, r, layers);
    const double deferred =
        dense_layers * weight_grad + moe_layers * moe_layer_weight_grad_bytes(model, plan);
    const SplitInFlight live = peak_in_flight_split(plan, r, forward, deferred);
    c->first_chunk_in_flight = live.forwards;
    mb->activation_bytes = live.forwards * forward + live.deferred_weight_grads * deferred;
    mb->in_flight_micro_batches = live.forwards + live.deferred_weight_grads;
  }
  mb->activation_bytes += c->first_chunk_in_flight * (c->bf16.dense * f.bf16_extra +
                                                      c->bf16.moe * f.moe_bf16_extra);
  c->last_chunk_in_flight = c->first_chunk_in_flight;
}

// Activation CPU offloading (Plan::cpu_offload_layers; validate() holds p =
// 1, so this is the only stage and layers 0 .. N-1 are its first ones):
// their stored activations live in host memory, but, with Transformer
// Engine's handler before its refactor (Plan::cpu_offload_v1), for the layer
// in transit -- it frees a layer's GPU copy only at a later layer's end and
// reloads one layer ahead in the backward -- which stays on the GPU: the
// largest offloaded layer, per micro-batch in flight. The refactored handler
// finishes layer i's offload before forward layer l - N + i starts and
// starts its reload after backward layer l - N + i: none of the N is on the
// GPU at the peak. `live0`: the micro-batches in flight in the first chunk.
void offload_activations(const Model& model, const Plan& plan, const LayerFigures& f, int live0,
                         MemoryBreakdown* mb, StageCounts* c) {
  double offloaded = 0, largest = 0;
  const int n = std::min(plan.cpu_offload_layers, model.num_layers);
  for (int i = 0; i < n; ++i) {
    double bytes = model.is_hybrid() ? hybrid_layer_activation_bytes(model, plan, i)
                   : model.is_moe_layer(i) ? f.moe_per_layer
                                           : f.per_layer;
    if (plan.has_bf16_layers() && !plan.low_precision_layer(i, model.num_layers)) {
      bytes += model.is_moe_layer(i) ? f.moe_bf16_extra : f.bf16_extra;
    }
    offloaded += bytes;
    largest = std::max(largest, bytes);
  }
  mb->activation_bytes -= live0 * (plan.cpu_offload_v1 ? offloaded - largest : offloaded);
  if (plan.cpu_offload_v1) c->offload_in_transit = live0 * largest;
}

// The other schedules: stage r's v chunks, each holding its layers per
// micro-batch in flight in it; then activation offloading.
void chunk_activations(const Model& model, const Plan& plan, const LayerFigures& f, int r,
                       MemoryBreakdown* mb, StageCounts* c) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const std::vector<int> live = peak_in_flight(plan, r);
  for (int ch = 0; ch < v; ++ch) {
    const int layers = layers_in_chunk(model, plan, ch * p + r);
    const int moe_layers = moe_layers_in(model, plan, f, ch * p + r, layers);
    c->layers += layers;
    c->moe_layers += moe_layers;
    if (moe_layers == 0) {
      mb->activation_bytes += live[ch] * layers * f.per_layer;
    } else {
      mb->activation_bytes += live[ch] * (layers - moe_layers) * f.per_layer +
                              live[ch] * moe_layers * f.moe_per_layer;
    }
    mb->activation_bytes += live[ch] * hybrid_extra_in(model, plan, f, ch * p + r, layers);
    const Bf16Layers bf16 = bf16_layers_in(model, plan, f, ch * p + r, layers);
    mb->activation_bytes += live[ch] * (bf16.dense * f.bf16_extra + bf16.moe * f.moe_bf16_extra);
    c->bf16.dense += bf16.dense;
    c->bf16.moe += bf16.moe;
    mb->in_flight_micro_batches += live[ch];
  }
  c->first_chunk_in_flight = live[0];
  c->last_chunk_in_flight = live[v - 1];
  if (plan.cpu_offload_layers > 0) offload_activations(model, plan, f, live[0], mb, c);
}

// The MTP modules (Model::mtp_layers) on the last stage: each a decoder
// layer like the model's mtp_layer_like() (MoE when the model has experts)
// plus its input's stored tensors per micro-batch of the last chunk in
// flight: the two RMSNorms' inputs (2 h bytes each) and eh_proj's input (2h
// in the GEMM input format), per sequence shard. Activations are per depth;
// with shared weights (Model::mtp_shared_weights) the layers' parameters
// count once. A hybrid model's "*E" block is taken as one MoE layer
// (attention + MoE).
void mtp_activations(const Model& model, const Plan& plan, const LayerFigures& f,
                     MemoryBreakdown* mb, StageCounts* c) {
  const int n = model.mtp_layers;
  const double input = f.tokens * model.hidden_size *
                       (4.0 + 2.0 * gemm_input_bytes_per_element(plan.precision)) /
                       (f.sp ? f.t : 1.0);
  mb->activation_bytes +=
      c->last_chunk_in_flight * n * ((f.moe ? f.moe_per_layer : f.per_layer) + input);
  const int copies = model.mtp_weight_copies();
  c->layers += copies * static_cast<int>(model.mtp_block_layers().size());
  c->moe_layers += copies * model.mtp_block_moe_layers();
}

// Stage r's layers' parameters on the device (routed experts included).
double stage_layer_parameters(const Model& model, const Plan& plan, const LayerFigures& f, int r,
                              const StageCounts& c) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const int stage_dense_layers = c.layers - c.moe_layers;
  double params = c.moe_layers == 0 ? c.layers * f.layer_params
                                    : stage_dense_layers * f.layer_params +
                                          c.moe_layers * f.moe_layer_params;
  if (model.is_hybrid()) {
    params = 0;
    for (int ch = 0; ch < v; ++ch) {
      const int first = first_layer_of_chunk(model, plan, ch * p + r);
      const int layers = layers_in_chunk(model, plan, ch * p + r);
      for (int i = first; i < first + layers; ++i) {
        params += layer_parameters_per_device(model, plan, i);
      }
    }
  }
  return params;
}

// The stage's weights, gradients and optimizer state (ZeRO-sharded, the
// routed experts over their own group), with the low-precision weight
// copies. `quantized_params`: the stage's layer parameters outside the bf16
// layers.
void weights_and_optimizer(const Plan& plan, double stage_parameters, double quantized_params,
                           const StageCounts& c, bool fp8_weight_transpose, MemoryBreakdown* mb) {
  if (c.moe_layers == 0) {
    mb->weights_and_optimizer_bytes = stage_parameters * state_bytes_per_parameter(plan);
  } else {
    // The dense part's state is sharded over the data-parallel group (x
    // cp), the experts' over the expert-data-parallel group.
    const double dense_params = std::max(0.0, stage_parameters - mb->expert_parameters);
    mb->weights_and_optimizer_bytes = dense_params * state_bytes_per_parameter(plan) +
                                      mb->expert_parameters * expert_state_bytes_per_parameter(plan);
  }
  // FP8: Transformer Engine caches each layer weight's fp8 copy and its
  // transpose across the micro-batches of a step (2 bytes per layer
  // parameter, routed experts included: the grouped GEMMs keep theirs);
  // at ZeRO-3 they are cast per layer after the gather (in the working
  // set's gathered layer). With the distributed optimizer (stage 1) the
  // weights themselves are fp8 (fp8_param_gather, NVIDIA's FP8 recipes):
  // data + transpose replace the bf16 weight, nothing is added.
  //
  // NVFP4: the cached copies are a rowwise and a columnwise NVFP4 weight
  // (2 x kNvfp4BytesPerElement per layer parameter) at ZeRO 0-2: the
  // weights stay bf16, as Megatron-Bridge has no FP4 parameters
  // (bf16_with_nvfp4_mixed sets fp8_param_gather False; Megatron-Bridge
  // src/megatron/bridge/training/mixed_precision.py refuses fp4_param);
  // at ZeRO-3 cast per layer after the gather, like FP8.
  // The bf16 layers of Plan::bf16_layers_at_* have no quantized copy.
  const int stage = plan.sharding_stage();
  if (plan.precision == Precision::kFp8 && (stage == 0 || stage == 2)) {
    mb->weights_and_optimizer_bytes += 2.0 * quantized_params;
  }
  // Blackwell, FP8 tensor scaling (stage_memory's fp8_weight_transpose
  // false): no transposed copy, one byte less per layer parameter -- at
  // ZeRO-1 the fp8 weight is 1 byte against the bf16 2 it replaces.
  if (plan.precision == Precision::kFp8 && plan.fp8_recipe != Fp8Recipe::kMxfp8 &&
      !fp8_weight_transpose && stage <= 2) {
    mb->weights_and_optimizer_bytes -= quantized_params;
  }
  if (plan.precision == Precision::kNvfp4 && stage <= 2) {
    mb->weights_and_optimizer_bytes += 2.0 * kNvfp4BytesPerElement * quantized_params;
  }
}

// ZeRO 2-3's working set on the stage's largest layer unit (an MoE layer, if
// any) and the root unit `root` (what the stage holds besides its layers:
// embedding, positions, final norm, output head); Megatron-FSDP's FP8
// parameters.
void sharded_working_set(const Model& model, const Plan& plan, const LayerFigures& f,
                         const StageCounts& c, double root, double quantized_params,
                         bool fp8_weight_transpose, MemoryBreakdown* mb) {
  const int stage = plan.sharding_stage();
  // ZeRO 2-3 work on the stage's largest layer unit (an MoE layer, if any).
  mb->sharded_working_bytes = sharded_working_bytes(
      plan, c.moe_layers == 0 ? f.layer_params : std::max(f.layer_params, f.moe_layer_params),
      c.layers, root);
  // ZeRO 2-3 with one pipeline stage: the word embedding's gradient is not
  // in the working set at the peak (sharded_working_bytes' root counts one
  // for every root parameter). The peak is at the turn from the forward to
  // the backward; the embedding's weight gradient is the backward's last
  // product, made after every layer's backward has freed its stored
  // activations, and -- as sharded_working_bytes already takes it -- each
  // micro-batch's gradients are reduce-scattered after its backward:
  // Megatron-FSDP reduces them "every bprop" under optim_grads and
  // optim_grads_params, the embedding's in its root post-backward hook
  // (it has no input that requires a gradient, so no per-module hook;
  // NVIDIA/Megatron-LM megatron/core/distributed/fsdp/src/megatron_fsdp/
  // megatron_fsdp.py, _register_fsdp_hooks: _post_backward,
  // _register_post_backward_hook, _root_post_backward). Its gathered
  // weight stays: Megatron-FSDP gathers a non-unit module's parameters in
  // its forward pre-hook and releases only the FSDP units' (the default
  // unit is the TransformerLayer) after their forward. With tied
  // embeddings the output layer's gradient is the same tensor, made at the
  // start of the backward; the MTP modules look the embedding up at the
  // forward's end, so their backward makes its gradient at the start too:
  // both keep it.
  if (stage >= 2 && plan.pipeline_parallel == 1 && !model.tied_embeddings && model.mtp_layers == 0) {
    double embedding = static_cast<double>(model.vocab_size) * model.hidden_size / f.t;
    if (model.positions == PositionEmbedding::kLearned) {
      embedding += static_cast<double>(model.seq_length) * model.hidden_size;
    }
    mb->sharded_working_bytes -= kShardedGradientBytes * std::min(embedding, root);
  }
  // Megatron-FSDP with FP8 parameters (ZeRO-3, FP8 delayed or current
  // scaling, Plan::fp8_param_gather; dense models): the transformer layers'
  // weights are Transformer Engine Float8Tensors, held in Megatron-FSDP's
  // weight buffer as uint8 -- sharded and gathered at 1 byte a parameter
  // instead of bf16's 2 -- with bf16 gradients (ParamAndGradBuffer.
  // _init_each_parameter_group_buffers: is_dtype_float8 gives param_dtype
  // torch.uint8 and grad_dtype torch.bfloat16; NVIDIA/Megatron-LM
  // megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py).
  // Megatron-Bridge's FP8 current-scaling recipe sets fp8_param_gather True
  // (src/megatron/bridge/training/mixed_precision.py,
  // bf16_with_fp8_current_scaling_mixed) and its performance scripts keep
  // it with Megatron-FSDP (scripts/performance/utils/overrides.py,
  // set_megatron_fsdp_overrides, changes only keep_fp8_transpose_cache to
  // False, average_in_collective and the meta-device init). The gathered
  // layers (fsdp_double_buffer: two buffers of each kind, FixedPoolAllocator)
  // hold the fp8 data, plus its transpose on GPUs whose FP8 GEMMs need one
  // (fp8_weight_transpose: Hopper; made after the gather and dropped after
  // use, keep_fp8_transpose_cache False) -- 1 or 2 bytes instead of 2. The
  // bf16 layers (Plan::bf16_layers_at_*) stay bf16 parameters; the root
  // (embedding, output layer, norms) is not a Transformer Engine module and
  // stays bf16. Memory only: the per-layer gathers' time in the lowering
  // still moves 2 bytes a parameter.
  if (stage == 3 && !f.moe && !model.is_hybrid() && plan.precision == Precision::kFp8 &&
      plan.fp8_recipe != Fp8Recipe::kMxfp8 && plan.fp8_param_gather) {
    mb->weights_and_optimizer_bytes -= quantized_params / plan.shard_ranks();
    const int gathered = std::min(c.layers, 2);
    const int gathered_fp8 = gathered - std::min(gathered, c.bf16.dense);
    mb->sharded_working_bytes -=
        gathered_fp8 * f.layer_params * (fp8_weight_transpose ? 0.0 : 1.0);
  }
}

// The stage's transient buffers (embedding dropout mask, recomputation,
// context-parallel and MoE buffers, logits), allocator fragmentation and
// the reserved framework memory.
void stage_buffers(const Model& model, const Plan& plan, const LayerFigures& f,
                   const StageCounts& c, int r, double reserved, MemoryBreakdown* mb) {
  // The embedding's output is the first layer's input, stored by that
  // layer's first norm (counted in layer_activation_bytes); the embedding's
  // backward reads only the token ids (torch.nn.functional.embedding).
  // With dropout the first stage also keeps the embedding dropout's 1-byte
  // mask per in-flight micro-batch of its first chunk (Korthikanti et al.
  // 2022, section 4.3: s b h p / f.t with SP; Megatron-Core
  // LanguageModelEmbedding.forward, embedding_dropout).
  if (r == 0 && plan.dropout) {
    mb->activation_bytes += c.first_chunk_in_flight * f.tokens * model.hidden_size / (f.sp ? f.t : 1.0);
  }
  if (plan.recompute == Recompute::kFull) {
    mb->recompute_bytes = c.moe_layers == 0     ? f.full_layer
                         : (c.layers - c.moe_layers) == 0 ? f.moe_full_layer
                                                   : std::max(f.full_layer, f.moe_full_layer);
  }
  // mla_up_proj recompute: one layer's q, k, v rebuilt for its backward.
  if (plan.recomputes(kRecomputeMlaUpProj) && model.is_mla()) {
    mb->recompute_bytes =
        std::max(mb->recompute_bytes, layers::mla_up_proj_recompute_bytes(model, plan, f.tokens));
  }
  mb->context_parallel_bytes = context_parallel_buffer_bytes(model, plan);
  if (c.moe_layers > 0) mb->moe_buffer_bytes = moe_buffer_bytes(model, plan);
  if (r == plan.pipeline_parallel - 1) {
    // Logits in bf16 plus their fp32 copy for the loss, one micro-batch;
    // a fused cross-entropy keeps the bf16 logits only.
    mb->logits_bytes = f.tokens * model.vocab_size / f.t * (plan.fused_cross_entropy ? 2.0 : 6.0);
    // Each MTP module's logits are kept for its loss's backward as well.
    mb->logits_bytes *= 1 + model.mtp_layers;
  }
  // The earlier offload handler's layer in transit and the logits are not
  // on the GPU at once. Transformer Engine's AsyncDoubleBufferGroupOffload
  // Handler (cpu_offload.py before pull request 1762, cpu_offload_v1.py
  // since: NVIDIA/TransformerEngine@047883f3e587, synchronize_on_group_
  // commit_forward and on_group_commit_backward; Megatron-Core leaves its
  // double_buffering off by default) frees offloaded group i's GPU copy at the commit of forward
  // layer layer_window_map[i] and reloads it at that layer's backward
  // commit; the last group's window is the model's last layer (l - 1 for
  // any N < l: (l / N) N - 1 plus the l % N spread over the first groups).
  // Megatron-Core commits after each layer of its TransformerBlock, so the
  // last offloaded layer leaves before the final norm, output layer and
  // loss run, and comes back after their backward has freed the logits:
  // the peak holds the larger of the two, not both.
  if (c.offload_in_transit > 0) {
    mb->activation_bytes -= std::min(c.offload_in_transit, mb->logits_bytes);
  }
  mb->fragmentation_bytes =
      kAllocatorFragmentation *
      (mb->activation_bytes + mb->recompute_bytes + mb->logits_bytes + mb->sharded_working_bytes +
       mb->context_parallel_bytes + mb->moe_buffer_bytes);
  mb->reserved_bytes = reserved;
}

}  // namespace

std::vector<MemoryBreakdown> stage_memory(const Model& model, const Plan& plan,
                                          const std::vector<double>& stage_parameters,
                                          double extra_reserved_bytes, bool fp8_weight_transpose) {
  const int p = plan.pipeline_parallel;
  const LayerFigures f = layer_figures(model, plan);
  const double reserved = framework_buffer_bytes(plan) + extra_reserved_bytes;
  std::vector<MemoryBreakdown> out(p);
  for (int r = 0; r < p; ++r) {
    MemoryBreakdown& mb = out[r];
    mb.parameters = stage_parameters[r];
    StageCounts c;
    if (plan.schedule == Schedule::kZbH1) {
      zb_h1_activations(model, plan, f, r, &mb, &c);
    } else {
      chunk_activations(model, plan, f, r, &mb, &c);
    }
    if (r == p - 1 && model.mtp_layers > 0) mtp_activations(model, plan, f, &mb, &c);
    // This stage's layers' parameters on the device, and its routed experts'.
    const double stage_layer_params = stage_layer_parameters(model, plan, f, r, c);
    mb.expert_parameters = c.moe_layers * f.experts_per_layer;
    // The bf16 layers of Plan::bf16_layers_at_* have no quantized copy.
    const double quantized_params = stage_layer_params - c.bf16.dense * f.layer_params -
                                    c.bf16.moe * f.moe_layer_params;
    weights_and_optimizer(plan, stage_parameters[r], quantized_params, c, fp8_weight_transpose, &mb);
    // The root unit: what the stage holds besides its layers (embedding,
    // positions, final norm, output head).
    const double root = std::max(0.0, stage_parameters[r] - stage_layer_params);
    sharded_working_set(model, plan, f, c, root, quantized_params, fp8_weight_transpose, &mb);
    stage_buffers(model, plan, f, c, r, reserved, &mb);
  }
  return out;
}

}  // namespace llmplan::simulator
