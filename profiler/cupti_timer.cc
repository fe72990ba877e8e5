#include "profiler/cupti_timer.h"

#include <cupti.h>

#include <cstdlib>
#include <mutex>

#include "profiler/cuda_util.h"

namespace llmplan::profiler {
namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kAlign = 8;

// The one place CUPTI's callbacks can reach (see the header).
struct Sink {
  std::mutex mu;
  bool active = false;
  std::vector<KernelRecord> records;
  size_t dropped = 0;
};
Sink& sink() {
  static Sink s;
  return s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<KernelRecord> got;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    got.push_back({k->name != nullptr ? k->name : "?", k->start, k->end, k->deviceId, k->streamId});
  }
  std::free(buffer);
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.active) s.records.insert(s.records.end(), got.begin(), got.end());
}

}  // namespace

Result<std::unique_ptr<CuptiKernelTimer>> CuptiKernelTimer::start() {
  {
    Sink& s = sink();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.active) return Status::failed_precondition("a CUPTI kernel timer is already running");
    s.active = true;
    s.records.clear();
    s.dropped = 0;
  }
  std::unique_ptr<CuptiKernelTimer> timer(new CuptiKernelTimer());
  LLMPLAN_CUDA_TRY(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  LLMPLAN_CUDA_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  return timer;
}

CuptiKernelTimer::~CuptiKernelTimer() {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  s.active = false;
  s.records.clear();
}

Status CuptiKernelTimer::flush(std::vector<KernelRecord>* out) {
  LLMPLAN_CUDA_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  size_t dropped = 0;
  LLMPLAN_CUDA_TRY(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  out->insert(out->end(), s.records.begin(), s.records.end());
  s.records.clear();
  if (dropped > 0) {
    return Status::internal("CUPTI dropped " + std::to_string(dropped) +
                            " kernel records (activity buffers overflowed)");
  }
  return Status();
}

uint64_t CuptiKernelTimer::now_ns() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

}  // namespace llmplan::profiler
