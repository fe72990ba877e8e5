// GPU kernel durations from the CUPTI Activity API.
//
// While a CuptiKernelTimer exists, CUPTI records every kernel that runs
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) with its GPU start and end
// timestamps; flush() hands over the records completed so far. Timestamps are
// in CUPTI's clock (nanoseconds), the same clock as now_ns(), so a caller can
// attribute kernels to the launches it made between two now_ns() readings.
//
// CUPTI's activity API is process-wide and its buffer callbacks take no user
// argument, so the records pass through one file-local sink guarded by a
// mutex; for that reason at most one CuptiKernelTimer may exist at a time
// (start() refuses a second one). Its methods are called from one thread.
#ifndef LLMPLAN_PROFILER_CUPTI_TIMER_H_
#define LLMPLAN_PROFILER_CUPTI_TIMER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace llmplan::profiler {

// One kernel execution as CUPTI saw it.
struct KernelRecord {
  std::string name;  // mangled kernel name
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
};

class CuptiKernelTimer {
 public:
  // Enables kernel activity recording. FailedPrecondition if another timer
  // exists; Internal with CUPTI's message if CUPTI refuses (e.g. no
  // permission to profile: NVreg_RestrictProfilingToAdminUsers).
  static Result<std::unique_ptr<CuptiKernelTimer>> start();
  ~CuptiKernelTimer();  // disables recording and drops unread records
  CuptiKernelTimer(const CuptiKernelTimer&) = delete;
  CuptiKernelTimer& operator=(const CuptiKernelTimer&) = delete;

  // Forces CUPTI to deliver every completed record and appends them to
  // *out (in no particular order). Internal if CUPTI dropped records (its
  // buffers overflowed), since times would then be missing.
  Status flush(std::vector<KernelRecord>* out);

  // CUPTI's current timestamp (ns).
  static uint64_t now_ns();

 private:
  CuptiKernelTimer() = default;
};

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_CUPTI_TIMER_H_
