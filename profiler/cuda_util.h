// Small helpers shared by llmplan-profile's CUDA host code: library error
// codes as Status values, and an owning device buffer.
//
// Host C++ only (compiled by the host compiler against the CUDA headers).
#ifndef LLMPLAN_PROFILER_CUDA_UTIL_H_
#define LLMPLAN_PROFILER_CUDA_UTIL_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <utility>

#include "base/status.h"

namespace llmplan::profiler {

// Each returns OK for success, else Internal "<what>: <library message>".
inline Status to_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status();
  return Status::internal(std::string(what) + ": " + cudaGetErrorString(e));
}
inline Status to_status(cublasStatus_t e, const char* what) {
  if (e == CUBLAS_STATUS_SUCCESS) return Status();
  return Status::internal(std::string(what) + ": " + cublasGetStatusString(e));
}
inline Status to_status(CUptiResult e, const char* what) {
  if (e == CUPTI_SUCCESS) return Status();
  const char* msg = nullptr;
  cuptiGetResultString(e, &msg);
  return Status::internal(std::string(what) + ": " + (msg != nullptr ? msg : "CUPTI error"));
}
inline Status to_status(ncclResult_t e, const char* what) {
  if (e == ncclSuccess) return Status();
  return Status::internal(std::string(what) + ": " + ncclGetErrorString(e));
}

// Returns from the enclosing function (which returns Status or Result<T>)
// when a CUDA, cuBLAS, CUPTI or NCCL call fails; the message quotes the call.
#define LLMPLAN_CUDA_TRY(call) \
  LLMPLAN_RETURN_IF_ERROR(::llmplan::profiler::to_status((call), #call))

// Device memory owned by one object: freed when it goes out of scope.
// Move-only. Not thread-safe (one owner).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_ != nullptr) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // cudaMalloc of `bytes` (at least 1) on the current device.
  static Result<DeviceBuffer> allocate(size_t bytes) {
    DeviceBuffer b;
    LLMPLAN_CUDA_TRY(cudaMalloc(&b.ptr_, bytes == 0 ? 1 : bytes));
    b.bytes_ = bytes;
    return b;
  }

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_CUDA_UTIL_H_
