// What llmplan-profile measures: the kernels of one transformer layer for a
// list of layer shapes, described with the simulator's vocabulary
// (KernelDesc, cost_model.h) so that every measured entry is exactly the key
// the simulator's lowering looks up (conventions in simulator/profile_table.h).
//
// Plain C++ with no CUDA: it builds on every machine, `llmplan-profile
// --list` prints it without a GPU, and the tests cover it.
#ifndef LLMPLAN_PROFILER_KERNEL_PLAN_H_
#define LLMPLAN_PROFILER_KERNEL_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/cost_model.h"
#include "simulator/plan.h"
#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::profiler {

// One op to measure: the simulator's key plus the tensor geometry the device
// code needs. For GEMMs the geometry is desc.gemm (the forward shape; the
// pass says which of the three GEMMs runs). For memory-bound kernels the main
// tensor is rows x cols elements (elementwise kernels too, so that rows stay
// meaningful for layernorm and softmax); optimizer_step has rows = 1 and
// cols = parameters. `swiglu` selects the gated activation.
struct KernelJob {
  simulator::KernelDesc desc;
  int64_t rows = 0;
  int64_t cols = 0;
  bool swiglu = false;
  std::string origin;  // the first shape that needs it, e.g. "h=4096 a=32 s=2048 b=1 t=2"

  int64_t elements() const { return rows * cols; }
};

// OK when the shape is a layer llmplan can lower: sizes >= 1, heads divide
// hidden, kv heads divide heads, tp divides heads, kv heads, ffn and (when
// given) the vocabulary. InvalidArgument names the field.
Status validate_shape(const simulator::ProfileShape& shape);

// Short description, e.g. "h=4096 a=32 g=32 f=16384 s=2048 b=1 t=2 gelu".
std::string describe_shape(const simulator::ProfileShape& shape);

// The kernels of one layer of `shape` at `precision`, forward and backward
// (dgrad and wgrad per GEMM), plus the Adam step over the layer's parameter
// shard and, when shape.vocab > 0, the logits GEMM. Attention is listed both
// ways the lowering can run it: one fused flash-attention op (causal, fwd
// and bwd) and the unfused path (score GEMM, softmax, dropout, value GEMM).
// With tp > 1 the memory-bound kernels that sequence parallelism shrinks
// (layernorm, dropout_residual) are listed at both row counts (b*s and
// b*s/t).
//
// Precision::kFp8 lists what FP8 training runs (Transformer Engine's
// recipe, the simulator's lowering): the linear GEMMs (qkv, out_proj, fc1,
// fc2; all three passes) under fp8, fp8_cast_transpose (fwd and bwd) for
// every tensor a linear GEMM reads or whose gradient it receives, under
// fp8, and every other kernel (attention, logits, norms, activation,
// dropout, Adam) under bf16, exactly as a bf16 layer lists them.
// REQUIRES: validate_shape(shape).ok().
std::vector<KernelJob> layer_kernel_jobs(const simulator::ProfileShape& shape,
                                         simulator::Precision precision);

// All jobs of all shapes and precisions with duplicates removed (same kind,
// pass, precision and GEMM shape, or bytes for memory-bound kinds), in the
// order first met. REQUIRES: every shape valid.
std::vector<KernelJob> plan_kernel_jobs(const std::vector<simulator::ProfileShape>& shapes,
                                        const std::vector<simulator::Precision>& precisions);

// Kernel kinds the profiler never measures (the ProfileTable falls back for
// them), with the reason, one line each.
std::vector<std::string> unmeasured_kernel_notes();

// Collective buffer sizes: min_bytes, 2*min_bytes, ... up to max_bytes.
// REQUIRES: 0 < min_bytes <= max_bytes.
std::vector<double> collective_sizes(double min_bytes, double max_bytes);

// Group sizes measured on `gpus` GPUs: 2, 4, 8, ... <= gpus, plus gpus
// itself when it is not a power of two. Empty for fewer than 2 GPUs.
std::vector<int> collective_group_sizes(int gpus);

// The text `llmplan-profile --list` prints: shapes, kernels (one line each)
// and the collective sweep.
std::string format_plan(const std::vector<simulator::ProfileShape>& shapes,
                        const std::vector<KernelJob>& jobs,
                        const std::vector<double>& collective_bytes, bool collectives);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_KERNEL_PLAN_H_
