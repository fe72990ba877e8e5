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
enum class Precision { kBf16, kFp16 };

const char* to_string(Schedule s);
const char* to_string(Recompute r);
const char* to_string(Precision p);

// The parallelism degrees, the batching of one optimizer step, and which
// memory savers are on. World size is t * p * d; ranks are ordered tensor
// fastest, then data, then pipeline (Megatron's order).
//
// A plain value: cheap to copy, comparable, safe to read from many threads.
struct Plan {
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
  bool flash_attention = true;
  Precision precision = Precision::kBf16;
  // Data-parallel gradient reduction: bucket size (0 = one bucket for the
  // whole stage) and whether buckets overlap the last micro-batch's backward.
  int64_t grad_bucket_bytes = 0;
  bool overlap_grad_reduce = true;
  // Megatron's pipeline scatter/gather: with t > 1 a stage sends 1/t of the
  // activation and the receiver all-gathers it over NVLink.
  bool pipeline_scatter_gather = false;

  int world_size() const { return tensor_parallel * pipeline_parallel * data_parallel; }
  // Micro-batches per replica per step: B / (d * b).
  int num_micro_batches() const {
    return global_batch_size / (data_parallel * micro_batch_size);
  }
  // Bytes of one gradient element in the data-parallel reduction (fp32
  // accumulation for bf16, fp16 otherwise -- Megatron's defaults).
  int grad_reduce_bytes() const { return precision == Precision::kBf16 ? 4 : 2; }

  friend bool operator==(const Plan&, const Plan&) = default;
};

// OK when every degree is >= 1 and the batch divides; the plan alone.
// InvalidArgument names the first field at fault.
Status validate(const Plan& plan);

// OK when `plan` can lay out `model`: t divides the heads, the kv heads and
// the FFN size; every one of the p*v pipeline chunks gets at least one layer
// (layers are split as evenly as possible, see layers_in_chunk); with
// sequence parallelism t divides the sequence. InvalidArgument otherwise.
Status validate(const Model& model, const Plan& plan);

// Layers held by pipeline chunk `chunk` (0 .. p*v-1, in model order): l/(p*v)
// each, and the last (l mod p*v) chunks one more.
// REQUIRES: validate(model, plan).ok().
int layers_in_chunk(const Model& model, const Plan& plan, int chunk);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PLAN_H_
