// How one training job is laid out on the GPUs.
#ifndef LLMPLAN_SIMULATOR_PLAN_H_
#define LLMPLAN_SIMULATOR_PLAN_H_

#include <cstdint>
#include <string>

#include "simulator/model.h"
#include "simulator/status.h"

namespace llmplan::simulator {

enum class Schedule { kGpipe, kOneFOneB, kInterleaved };
enum class Recompute { kNone, kSelective, kFull };
enum class Precision { kBf16, kFp16, kFp8 };

const char* to_string(Schedule s);
const char* to_string(Recompute r);
const char* to_string(Precision p);

// The parallelism degrees, the batching of one optimizer step, and which
// memory savers are on. World size is t * p * d; ranks are ordered tensor
// fastest, then data, then pipeline (Megatron's order).
//
// A plain value: cheap to copy, comparable, safe to read from many threads.
struct Plan {
  // Largest values validate() accepts, chosen so that no count derived from
  // a valid plan can overflow an int and the simulator's work stays bounded:
  //  - kMaxGpus (2^20, about ten times the largest clusters built so far)
  //    bounds t, p, d and the world size t * p * d, which validate() forms
  //    in 64 bits before comparing; so world_size() fits an int.
  //  - kMaxGlobalBatch (2^24 sequences, thousands of times today's batches)
  //    bounds B, and with it d * b (which divides B) and the tokens per step
  //    B * s (< 2^44 with Model::kMaxSeqLength).
  //  - kMaxMicroBatchPasses (2^20) bounds m * p * v, the micro-batch passes
  //    of one step over all pipeline chunks. The simulator keeps a few tasks
  //    and schedule entries per pass (per stage, per chunk and micro-batch),
  //    so this bounds its memory (~100 MB) and time (~1 s) per iteration;
  //    Megatron-scale plans use a few thousand passes.
  //  - virtual stages are bounded by the model's layers (p * v <= layers,
  //    checked by validate(model, plan)); alone by Model::kMaxLayers.
  static constexpr int kMaxGpus = 1048576;
  static constexpr int kMaxGlobalBatch = 16777216;
  static constexpr int64_t kMaxMicroBatchPasses = 1048576;

  int tensor_parallel = 1;    // t: divides the heads (and kv heads)
  int pipeline_parallel = 1;  // p: pipeline stages
  int data_parallel = 1;      // d: replicas
  int micro_batch_size = 1;   // b: sequences per micro-batch
  int global_batch_size = 1;  // B: sequences per optimizer step; multiple of d*b
  int virtual_stages = 1;     // v: model chunks per pipeline rank (interleaved only)
  Schedule schedule = Schedule::kOneFOneB;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;  // ZeRO-1: optimizer state sharded over d
  // Sharding of the training state over the data-parallel group (ZeRO,
  // Rajbhandari et al. 2020): 0 none, 1 optimizer state (Megatron's
  // distributed optimizer), 2 also the gradients (reduce-scattered; FSDP
  // SHARD_GRAD_OP), 3 also the parameters (FSDP FULL_SHARD: each layer's
  // parameters all-gathered before its forward and again before its
  // backward). distributed_optimizer = true means at least stage 1; read the
  // effective stage with sharding_stage().
  int zero_stage = 0;
  // Hybrid sharding (FSDP HYBRID_SHARD): the state is sharded within groups
  // of this many consecutive data-parallel ranks (in-node first) and
  // replicated across the d / fsdp_group groups, whose gradients are
  // all-reduced. 0 = one group of all d ranks. Needs sharding_stage() >= 1
  // and must divide d.
  int fsdp_group = 0;
  // Tensor-parallel all-gather / reduce-scatter overlapped with the GEMMs
  // around them (Megatron-Core --tp-comm-overlap, Transformer Engine
  // userbuffers).
  bool tp_comm_overlap = false;
  // The data-parallel parameter all-gather overlapped with compute: after the
  // optimizer (stages 1-2) with the next forward, per layer (stage 3)
  // prefetched during the previous layer (Megatron --overlap-param-gather,
  // FSDP forward/backward prefetch).
  bool overlap_param_gather = false;
  bool flash_attention = true;
  // Dropout on (Megatron's default 0.1 on the attention and hidden outputs):
  // each layer stores two 1-byte masks per token and hidden unit. Off for
  // runs with dropout 0 (Llama, MPT), which store no masks.
  bool dropout = true;
  // The loss computes its gradient in place on the bf16 logits (flash-attn's
  // fused cross-entropy, llm-foundry's default): 2 bytes per logit at the
  // peak instead of the bf16 logits plus their fp32 copy (6 bytes).
  bool fused_cross_entropy = false;
  Precision precision = Precision::kBf16;
  // Data-parallel gradient reduction: bucket size (0 = one bucket for the
  // whole stage) and whether buckets overlap the last micro-batch's backward.
  int64_t grad_bucket_bytes = 0;
  bool overlap_grad_reduce = true;
  // Megatron's pipeline scatter/gather: with t > 1 a stage sends 1/t of the
  // activation and the receiver all-gathers it over NVLink.
  bool pipeline_scatter_gather = false;

  // The ZeRO stage in effect: zero_stage, at least 1 with distributed_optimizer.
  int sharding_stage() const { return zero_stage > 0 ? zero_stage : (distributed_optimizer ? 1 : 0); }
  // Data-parallel ranks the sharded state is split over (fsdp_group, or d).
  int shard_group_size() const { return fsdp_group > 0 ? fsdp_group : data_parallel; }

  // GPUs: t * p * d. REQUIRES: validate(*this).ok() (so it fits an int).
  int world_size() const { return tensor_parallel * pipeline_parallel * data_parallel; }
  // Micro-batches per replica per step: B / (d * b). REQUIRES: validate(*this).ok().
  int num_micro_batches() const {
    return global_batch_size / (data_parallel * micro_batch_size);
  }
  // Bytes of one gradient element in the data-parallel reduction (fp32
  // accumulation for bf16, fp16 otherwise -- Megatron's defaults).
  int grad_reduce_bytes() const { return precision == Precision::kBf16 ? 4 : 2; }

  friend bool operator==(const Plan&, const Plan&) = default;
};

// OK when every degree is >= 1 and within the Plan::kMax* bounds (world
// size, global batch, micro-batch passes per step), and the batch divides;
// the plan alone. InvalidArgument names the first field at fault.
Status validate(const Plan& plan);

// OK when `plan` can lay out `model`: t divides the heads, the kv heads and
// the FFN size, and is at most the vocabulary (each rank holds V/t rows);
// every one of the p*v pipeline chunks gets at least one layer (layers are
// split as evenly as possible, see layers_in_chunk); with sequence
// parallelism t divides the sequence. InvalidArgument otherwise.
Status validate(const Model& model, const Plan& plan);

// Layers held by pipeline chunk `chunk` (0 .. p*v-1, in model order): l/(p*v)
// each, and the last (l mod p*v) chunks one more.
// REQUIRES: validate(model, plan).ok().
int layers_in_chunk(const Model& model, const Plan& plan, int chunk);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PLAN_H_
