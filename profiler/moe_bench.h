// Measures one MoeJob (moe_plan.h) on the current GPU, with the timing of
// kernel_bench.h (CUPTI kernel durations, median over repetitions).
//
// Grouped expert GEMMs run through cuBLAS, bf16 in and out, fp32
// accumulation, beta = 0, on tokens stored contiguously in expert order and
// weights stored [e, k, n] (Megatron-Core's GroupedMLP layout):
//   strided_batched  cublasGemmStridedBatchedEx over the e experts (balanced)
//   grouped_batched  cublasGemmGroupedBatchedEx, one group per expert
//   loop             one cublasGemmEx per expert (Megatron's SequentialMLP)
// Experts given no tokens (small m, skewed split) are left out of the call.
// The router GEMM runs as an nn.Linear GEMM (GemmRunner); routing and
// permutation run llmplan-profile's kernels (moe_kernels.h) on a random
// top-k assignment (distinct experts per token, fixed seed).
#ifndef LLMPLAN_PROFILER_MOE_BENCH_H_
#define LLMPLAN_PROFILER_MOE_BENCH_H_

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <vector>

#include "profiler/cupti_timer.h"
#include "profiler/gemm_ops.h"
#include "profiler/kernel_bench.h"
#include "profiler/moe_plan.h"
#include "profiler/moe_profile_json.h"
#include "profiler/op_timing.h"
#include "base/status.h"

namespace llmplan::profiler {

// The timing, or nullopt with *skip_reason set when the job's buffers do
// not fit in free GPU memory or cuBLAS does not run the call (e.g.
// CUBLAS_STATUS_NOT_SUPPORTED for a grouped GEMM). Internal for other
// CUDA/CUPTI errors.
Result<std::optional<OpTiming>> measure_moe_job(const MoeJob& job, const BenchSettings& settings,
                                                cudaStream_t stream, GemmRunner* gemm,
                                                CuptiKernelTimer* timer, std::string* skip_reason);

// Measures every job of `jobs` on the current GPU in order, printing one
// line per job on stderr, and appends the timings to profile->entries and a
// note per skipped job to profile->notes. Internal for CUDA/cuBLAS/CUPTI
// errors other than a refused call.
Status measure_moe_jobs(const std::vector<MoeJob>& jobs, const BenchSettings& settings,
                        MoeProfile* profile);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_MOE_BENCH_H_
