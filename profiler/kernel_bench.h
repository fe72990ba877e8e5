// Measures one KernelJob on the current GPU.
//
// The job's buffers are allocated and filled with random data, the op is
// launched `warmup` times, then `repeats` times, each repetition followed by a
// stream synchronisation. CUPTI gives the GPU duration of every kernel; the
// kernels that started between the start of repetition r and the start of
// repetition r+1 belong to repetition r, and their durations are summed (an
// op may be several kernels: a split-K GEMM, layernorm's backward). The
// median over repetitions is the entry's time_s; a cudaEvent pair around
// each repetition gives event_time_s (median) as a cross-check that includes
// the gaps between an op's kernels.
#ifndef LLMPLAN_PROFILER_KERNEL_BENCH_H_
#define LLMPLAN_PROFILER_KERNEL_BENCH_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "profiler/cupti_timer.h"
#include "profiler/gemm_ops.h"
#include "profiler/kernel_plan.h"
#include "profiler/op_timing.h"
#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::profiler {

struct BenchSettings {
  int warmup = 5;
  int repeats = 20;
};

// What every measurement loop holds: a non-blocking stream, a GemmRunner
// bound to it and the CUPTI timer (so at most one session at a time).
// Released in reverse order. Used from one thread.
class BenchSession {
 public:
  // Internal for CUDA/cuBLAS/CUPTI errors; FailedPrecondition when another
  // CUPTI timer exists.
  static Result<std::unique_ptr<BenchSession>> start();
  ~BenchSession();
  BenchSession(const BenchSession&) = delete;
  BenchSession& operator=(const BenchSession&) = delete;

  cudaStream_t stream() const { return stream_; }
  GemmRunner* gemm() const { return gemm_.get(); }
  CuptiKernelTimer* timer() const { return timer_.get(); }

 private:
  BenchSession() = default;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<GemmRunner> gemm_;
  std::unique_ptr<CuptiKernelTimer> timer_;
};

// Times one op: `enqueue` (which launches the op's kernels on `stream`) is
// called settings.warmup times, then settings.repeats times with a stream
// synchronisation after each; CUPTI's kernel records of each repetition are
// summed (see above). `what` names the op in errors. Internal for
// CUDA/CUPTI errors, an error `enqueue` returns, or a repetition in which
// CUPTI recorded no kernel.
Result<OpTiming> time_op(const std::string& what, const std::function<Status()>& enqueue,
                         const BenchSettings& settings, cudaStream_t stream,
                         CuptiKernelTimer* timer);

// The measured entry, or nullopt with *skip_reason set when the job's
// buffers do not fit in free GPU memory. Internal for CUDA/cuBLAS/CUPTI
// errors, or when CUPTI's records do not match the launches.
Result<std::optional<simulator::ProfileKernel>> measure_kernel_job(
    const KernelJob& job, const BenchSettings& settings, cudaStream_t stream, GemmRunner* gemm,
    CuptiKernelTimer* timer, std::string* skip_reason);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_KERNEL_BENCH_H_
