// Device buffers of one op that llmplan-profile measures (kernel_bench.cc,
// moe_bench.cc). Host C++ against the CUDA runtime.
#ifndef LLMPLAN_PROFILER_JOB_BUFFERS_H_
#define LLMPLAN_PROFILER_JOB_BUFFERS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "profiler/cuda_util.h"
#include "profiler/memory_kernels.h"
#include "base/status.h"

namespace llmplan::profiler {

// The device buffers of one measured op, allocated and filled with random
// data on `stream`, freed together when the object goes. Not thread-safe.
class JobBuffers {
 public:
  JobBuffers(ElemType type, cudaStream_t stream) : type_(type), stream_(stream) {}

  // n 16-bit elements, uniform in [-1, 1].
  Result<void*> half(int64_t n) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n) * 2));
    LLMPLAN_CUDA_TRY(fill_uniform(type_, p, n, ++seed_, 1.0f, stream_));
    return p;
  }
  // n floats, uniform in [lo, hi].
  Result<float*> f32(int64_t n, float lo, float hi) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n) * 4));
    LLMPLAN_CUDA_TRY(fill_uniform_f32(static_cast<float*>(p), n, ++seed_, lo, hi, stream_));
    return static_cast<float*>(p);
  }
  // n FP8 elements, uniform in [-1, 1].
  Result<void*> fp8(int64_t n, Fp8Format f) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n)));
    LLMPLAN_CUDA_TRY(fill_uniform_fp8(f, p, n, ++seed_, 1.0f, stream_));
    return p;
  }
  // A copy of `bytes` bytes of host memory.
  Result<void*> copy_in(const void* host, size_t bytes) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(bytes));
    LLMPLAN_CUDA_TRY(cudaMemcpyAsync(p, host, bytes, cudaMemcpyHostToDevice, stream_));
    LLMPLAN_CUDA_TRY(cudaStreamSynchronize(stream_));  // `host` may go after the call
    return p;
  }
  // n bytes set to 1 (a dropout mask that keeps everything).
  Result<uint8_t*> mask(int64_t n) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n)));
    LLMPLAN_CUDA_TRY(cudaMemsetAsync(p, 1, static_cast<size_t>(n), stream_));
    return static_cast<uint8_t*>(p);
  }

 private:
  Result<void*> raw(size_t bytes) {
    LLMPLAN_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(bytes));
    void* p = b.get();
    owned_.push_back(std::move(b));
    return p;
  }
  ElemType type_;
  cudaStream_t stream_;
  uint64_t seed_ = 0;
  std::vector<DeviceBuffer> owned_;
};

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_JOB_BUFFERS_H_
