// Device helpers shared by llmplan-profile's CUDA files (memory_kernels.cu,
// fp8_kernels.cu, moe_kernels.cu): 16-byte packs of 16-bit elements,
// conversions, a counter-based hash for fills and dropout, grid sizing and
// a warp sum. Included by .cu files only.
#ifndef LLMPLAN_PROFILER_DEVICE_UTIL_CUH_
#define LLMPLAN_PROFILER_DEVICE_UTIL_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

namespace llmplan::profiler::device {

constexpr int kThreads = 256;
constexpr int kVec = 8;  // 16-bit elements per 16-byte access

__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float to_f(__half v) { return __half2float(v); }
template <typename T>
__device__ inline T from_f(float v);
template <>
__device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ inline __half from_f<__half>(float v) {
  return __float2half(v);
}

// Eight 16-bit elements moved as one 16-byte access.
template <typename T>
struct alignas(16) Pack {
  T v[kVec];
};
template <typename T>
__device__ inline Pack<T> load(const T* p, int64_t vec) {
  return reinterpret_cast<const Pack<T>*>(p)[vec];
}
template <typename T>
__device__ inline void store(T* p, int64_t vec, const Pack<T>& x) {
  reinterpret_cast<Pack<T>*>(p)[vec] = x;
}

// A 32-bit integer hash (lowbias32); four dropout decisions per hash.
__device__ inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
__device__ inline uint8_t keep_bit(uint64_t seed, int64_t i, uint32_t threshold) {
  const uint32_t h = hash32(static_cast<uint32_t>(i >> 2) ^ static_cast<uint32_t>(seed) ^
                            (static_cast<uint32_t>(seed >> 32) * 0x9e3779b9U));
  return ((h >> (8 * (i & 3))) & 0xffU) >= threshold ? 1 : 0;
}

// A value uniform in [0, 1) from element index i and seed: the fills' hash.
__device__ inline float hash_uniform(int64_t i, uint64_t seed) {
  const uint32_t h =
      hash32(static_cast<uint32_t>(i) ^ static_cast<uint32_t>(seed * 0x9e3779b97f4a7c15ULL));
  return static_cast<float>(h) * (1.0f / 4294967296.0f);
}

inline int blocks_for(int64_t work, int threads = kThreads) {
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>((work + threads - 1) / threads, int64_t{1} << 20)));
}

__device__ inline int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffU, v, o);
  return v;
}

}  // namespace llmplan::profiler::device

#endif  // LLMPLAN_PROFILER_DEVICE_UTIL_CUH_
