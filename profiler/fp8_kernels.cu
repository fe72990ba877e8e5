// Device code of llmplan-profile's FP8 kernels (declared in memory_kernels.h):
// the FP8 fill and Transformer Engine's fused cast + transpose + amax.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "profiler/device_util.cuh"
#include "profiler/memory_kernels.h"

namespace llmplan::profiler {
namespace {

using namespace device;  // NOLINT(build/namespaces): the shared device helpers

template <Fp8Format F>
__device__ inline uint8_t to_fp8(float v) {
  return static_cast<uint8_t>(
      __nv_cvt_float_to_fp8(v, __NV_SATFINITE, F == Fp8Format::kE4M3 ? __NV_E4M3 : __NV_E5M2));
}

template <Fp8Format F>
__global__ void fill_fp8_kernel(uint8_t* p, int64_t n, uint64_t seed, float scale) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    p[i] = to_fp8<F>((hash_uniform(i, seed) * 2.0f - 1.0f) * scale);
  }
}

constexpr int kCtTile = 64;  // cast-transpose tile: 64 x 64 elements, 256 threads

// One block per 64 x 64 tile. Loads 8 bf16 per thread-access (16 bytes),
// writes y rows as 8-byte stores and y_t rows (tile columns) likewise.
template <Fp8Format F>
__global__ void __launch_bounds__(256)
    cast_transpose_kernel(const __nv_bfloat16* x, const float* scale_p, uint8_t* y, uint8_t* y_t,
                          float* amax, int64_t rows, int64_t cols) {
  __shared__ uint8_t tile[kCtTile][kCtTile + 8];
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kCtTile;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kCtTile;
  const float scale = *scale_p;
  const bool full =
      r0 + kCtTile <= rows && c0 + kCtTile <= cols && cols % kVec == 0 && rows % kVec == 0;
  float local_max = 0.f;
  // 64 rows x 8 vectors of 8 columns: two per thread.
  for (int v = threadIdx.x; v < kCtTile * kCtTile / kVec; v += blockDim.x) {
    const int r = v / (kCtTile / kVec), c = (v % (kCtTile / kVec)) * kVec;
    const int64_t gr = r0 + r, gc = c0 + c;
    uint8_t out[kVec];
    if (full) {
      const Pack<__nv_bfloat16> p = load(x + gr * cols + gc, 0);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float f = to_f(p.v[i]);
        local_max = fmaxf(local_max, fabsf(f));
        out[i] = to_fp8<F>(f * scale);
      }
      *reinterpret_cast<uint2*>(y + gr * cols + gc) = *reinterpret_cast<const uint2*>(out);
    } else {
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        out[i] = 0;
        if (gr < rows && gc + i < cols) {
          const float f = to_f(x[gr * cols + gc + i]);
          local_max = fmaxf(local_max, fabsf(f));
          out[i] = to_fp8<F>(f * scale);
          y[gr * cols + gc + i] = out[i];
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kVec; ++i) tile[r][c + i] = out[i];
  }
  __syncthreads();
  // y_t: 64 tile columns (rows of y_t) x 8 vectors of 8 tile rows.
  for (int v = threadIdx.x; v < kCtTile * kCtTile / kVec; v += blockDim.x) {
    const int c = v / (kCtTile / kVec), r = (v % (kCtTile / kVec)) * kVec;
    const int64_t gc = c0 + c, gr = r0 + r;
    uint8_t out[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) out[i] = tile[r + i][c];
    if (full) {
      *reinterpret_cast<uint2*>(y_t + gc * rows + gr) = *reinterpret_cast<const uint2*>(out);
    } else {
      for (int i = 0; i < kVec; ++i) {
        if (gc < cols && gr + i < rows) y_t[gc * rows + gr + i] = out[i];
      }
    }
  }
  // amax: warp maximum, then one atomic per warp (non-negative floats order
  // like their bit patterns).
  for (int o = 16; o > 0; o >>= 1) {
    local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffU, local_max, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(reinterpret_cast<unsigned int*>(amax), __float_as_uint(local_max));
  }
}

}  // namespace

cudaError_t fill_uniform_fp8(Fp8Format f, void* p, int64_t n, uint64_t seed, float scale,
                             cudaStream_t stream) {
  uint8_t* q = static_cast<uint8_t*>(p);
  if (f == Fp8Format::kE4M3) {
    fill_fp8_kernel<Fp8Format::kE4M3><<<blocks_for(n), kThreads, 0, stream>>>(q, n, seed, scale);
  } else {
    fill_fp8_kernel<Fp8Format::kE5M2><<<blocks_for(n), kThreads, 0, stream>>>(q, n, seed, scale);
  }
  return cudaGetLastError();
}

cudaError_t fp8_cast_transpose(Fp8Format f, const void* x, const float* scale, void* y, void* y_t,
                               float* amax, int64_t rows, int64_t cols, cudaStream_t stream) {
  const int64_t tiles_r = (rows + kCtTile - 1) / kCtTile, tiles_c = (cols + kCtTile - 1) / kCtTile;
  if (rows < 1 || cols < 1 || tiles_r > 65535 || tiles_c > INT32_MAX) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(tiles_c), static_cast<unsigned>(tiles_r));
  const auto* in = static_cast<const __nv_bfloat16*>(x);
  auto* out = static_cast<uint8_t*>(y);
  auto* out_t = static_cast<uint8_t*>(y_t);
  if (f == Fp8Format::kE4M3) {
    cast_transpose_kernel<Fp8Format::kE4M3>
        <<<grid, 256, 0, stream>>>(in, scale, out, out_t, amax, rows, cols);
  } else {
    cast_transpose_kernel<Fp8Format::kE5M2>
        <<<grid, 256, 0, stream>>>(in, scale, out, out_t, amax, rows, cols);
  }
  return cudaGetLastError();
}

}  // namespace llmplan::profiler
