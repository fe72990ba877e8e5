#include "profiler/gpu_info.h"

#include <unistd.h>

#include <ctime>

#include "profiler/cuda_util.h"

namespace llmplan::profiler {
namespace {

// "13.0" from CUDA's 1000*major + 10*minor encoding.
std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

Result<int> visible_gpu_count() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    return Status::failed_precondition(std::string("no CUDA GPU is visible (cudaGetDeviceCount: ") +
                                       cudaGetErrorString(e) + ")");
  }
  if (count <= 0) {
    return Status::failed_precondition(
        "no CUDA GPU is visible (cudaGetDeviceCount reports 0 devices)");
  }
  return count;
}

Result<simulator::ProfileGpu> describe_gpu(int device, int count) {
  cudaDeviceProp prop{};
  LLMPLAN_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  simulator::ProfileGpu g;
  g.name = prop.name;
  g.count = count;
  g.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  g.sm_count = prop.multiProcessorCount;
  g.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  int khz = 0;
  LLMPLAN_CUDA_TRY(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  g.sm_clock_mhz = khz / 1000.0;
  LLMPLAN_CUDA_TRY(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device));
  g.memory_clock_mhz = khz / 1000.0;
  LLMPLAN_CUDA_TRY(
      cudaDeviceGetAttribute(&g.memory_bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  return g;
}

simulator::ProfileSoftware software_versions() {
  simulator::ProfileSoftware s;
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) s.driver = cuda_version_string(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) s.cuda_runtime = cuda_version_string(v);
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    s.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
  if (ncclGetVersion(&v) == ncclSuccess) {
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    s.nccl = std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
             std::to_string(v % 100);
  }
  uint32_t cupti = 0;
  if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS) s.cupti = "api " + std::to_string(cupti);
  return s;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace llmplan::profiler
