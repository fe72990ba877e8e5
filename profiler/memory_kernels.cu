// Device code of llmplan-profile's memory-bound kernels (memory_kernels.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "profiler/device_util.cuh"
#include "profiler/memory_kernels.h"

namespace llmplan::profiler {
namespace {

using namespace device;  // NOLINT(build/namespaces): the shared device helpers

// ---- fills ---------------------------------------------------------------

template <typename T>
__global__ void fill_kernel(T* p, int64_t n, uint64_t seed, float scale) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    p[i] = from_f<T>((hash_uniform(i, seed) * 2.0f - 1.0f) * scale);
  }
}
__global__ void fill_f32_kernel(float* p, int64_t n, uint64_t seed, float lo, float hi) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    p[i] = lo + (hi - lo) * hash_uniform(i, seed);
  }
}

// ---- reductions ----------------------------------------------------------

// Sums a and b over the block (blockDim.x a multiple of 32, <= 1024).
__device__ inline void block_sum2(float* a, float* b) {
  __shared__ float sa[32], sb[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  float x = warp_sum(*a), y = warp_sum(*b);
  __syncthreads();
  if (lane == 0) {
    sa[warp] = x;
    sb[warp] = y;
  }
  __syncthreads();
  x = lane < warps ? sa[lane] : 0.f;
  y = lane < warps ? sb[lane] : 0.f;
  *a = warp_sum(x);
  *b = warp_sum(y);
}

// ---- layernorm -------------------------------------------------------------
// One block per row; cols % 8 == 0 (checked by the launcher). Two reads of
// the row (statistics, then output), as Apex does.

template <typename T>
__global__ void layernorm_fwd_kernel(const T* x, const T* gamma, const T* beta, T* y, float* mean,
                                     float* rstd, int64_t cols) {
  const int64_t row = blockIdx.x;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const int64_t vecs = cols / kVec;
  float s = 0.f, ss = 0.f;
  for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
    Pack<T> p = load(xr, v);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const float f = to_f(p.v[i]);
      s += f;
      ss += f * f;
    }
  }
  block_sum2(&s, &ss);
  const float mu = s / static_cast<float>(cols);
  const float r = rsqrtf(fmaxf(ss / static_cast<float>(cols) - mu * mu, 0.f) + 1e-5f);
  for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
    Pack<T> p = load(xr, v), g = load(gamma, v), b = load(beta, v), o;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      o.v[i] = from_f<T>((to_f(p.v[i]) - mu) * r * to_f(g.v[i]) + to_f(b.v[i]));
    }
    store(yr, v, o);
  }
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = r;
  }
}

template <typename T>
__global__ void layernorm_dx_kernel(const T* dy, const T* x, const T* gamma, const float* mean,
                                    const float* rstd, T* dx, int64_t cols) {
  const int64_t row = blockIdx.x;
  const T* dyr = dy + row * cols;
  const T* xr = x + row * cols;
  const float mu = mean[row], r = rstd[row];
  const int64_t vecs = cols / kVec;
  float s1 = 0.f, s2 = 0.f;  // sum(dy*g), sum(dy*g*xhat)
  for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
    Pack<T> d = load(dyr, v), p = load(xr, v), g = load(gamma, v);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const float dg = to_f(d.v[i]) * to_f(g.v[i]);
      s1 += dg;
      s2 += dg * (to_f(p.v[i]) - mu) * r;
    }
  }
  block_sum2(&s1, &s2);
  const float inv = 1.f / static_cast<float>(cols);
  for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
    Pack<T> d = load(dyr, v), p = load(xr, v), g = load(gamma, v), o;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const float xhat = (to_f(p.v[i]) - mu) * r;
      o.v[i] = from_f<T>(r * (to_f(d.v[i]) * to_f(g.v[i]) - (s1 + xhat * s2) * inv));
    }
    store(dx + row * cols, v, o);
  }
}

// Block (32, 8): 32 columns, rows of chunk blockIdx.y strided by 8.
template <typename T>
__global__ void layernorm_partial_kernel(const T* dy, const T* x, const float* mean,
                                         const float* rstd, float* partial, int64_t rows,
                                         int64_t cols, int64_t chunks) {
  __shared__ float sg[8][33], sb[8][33];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = rows * chunk / chunks, r1 = rows * (chunk + 1) / chunks;
  float g = 0.f, b = 0.f;
  if (col < cols) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) {
      const float d = to_f(dy[r * cols + col]);
      g += d * (to_f(x[r * cols + col]) - mean[r]) * rstd[r];
      b += d;
    }
  }
  sg[threadIdx.y][threadIdx.x] = g;
  sb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    for (int i = 1; i < 8; ++i) {
      g += sg[i][threadIdx.x];
      b += sb[i][threadIdx.x];
    }
    partial[chunk * cols + col] = g;
    partial[(chunks + chunk) * cols + col] = b;
  }
}

template <typename T>
__global__ void layernorm_final_kernel(const float* partial, T* dgamma, T* dbeta, int64_t cols,
                                       int64_t chunks) {
  for (int64_t c = global_thread(); c < cols; c += grid_threads()) {
    float g = 0.f, b = 0.f;
    for (int64_t k = 0; k < chunks; ++k) {
      g += partial[k * cols + c];
      b += partial[(chunks + k) * cols + c];
    }
    dgamma[c] = from_f<T>(g);
    dbeta[c] = from_f<T>(b);
  }
}

// ---- softmax (causal, scaled) ---------------------------------------------
// One warp per row: an online max/sum pass, then the output pass.

// Row whose columns > last are masked (causal).
template <typename T>
__device__ void softmax_fwd_row(const T* xr, T* yr, int64_t last, int64_t cols, float scale,
                                int lane) {
  const int64_t vecs = cols / kVec;
  float m = -INFINITY, s = 0.f;
  for (int64_t v = lane; v * kVec <= last; v += 32) {
    Pack<T> p = load(xr, v);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      if (v * kVec + i > last) break;
      const float f = to_f(p.v[i]) * scale;
      const float nm = fmaxf(m, f);
      s = s * __expf(m - nm) + __expf(f - nm);
      m = nm;
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffU, m, o);
    const float os = __shfl_xor_sync(0xffffffffU, s, o);
    const float nm = fmaxf(m, om);
    s = (m == -INFINITY ? 0.f : s * __expf(m - nm)) +
        (om == -INFINITY ? 0.f : os * __expf(om - nm));
    m = nm;
  }
  const float inv = 1.f / s;
  for (int64_t v = lane; v < vecs; v += 32) {
    Pack<T> o;
    if (v * kVec <= last) {
      Pack<T> p = load(xr, v);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        o.v[i] = from_f<T>(v * kVec + i > last ? 0.f : __expf(to_f(p.v[i]) * scale - m) * inv);
      }
    } else {
#pragma unroll
      for (int i = 0; i < kVec; ++i) o.v[i] = from_f<T>(0.f);
    }
    store(yr, v, o);
  }
}

template <typename T>
__device__ void softmax_bwd_row(const T* y, const T* dy, T* dx, int64_t cols, float scale,
                                int lane) {
  const int64_t vecs = cols / kVec;
  float dot = 0.f;
  for (int64_t v = lane; v < vecs; v += 32) {
    Pack<T> a = load(y, v), b = load(dy, v);
#pragma unroll
    for (int i = 0; i < kVec; ++i) dot += to_f(a.v[i]) * to_f(b.v[i]);
  }
  dot = warp_sum(dot);
  for (int64_t v = lane; v < vecs; v += 32) {
    Pack<T> a = load(y, v), b = load(dy, v), o;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      o.v[i] = from_f<T>(scale * to_f(a.v[i]) * (to_f(b.v[i]) - dot));
    }
    store(dx, v, o);
  }
}

// One warp per row, the warps striding over the rows.
template <typename T>
__global__ void softmax_fwd_kernel(const T* x, T* y, int64_t rows, int64_t cols, float scale) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = global_thread() >> 5; row < rows; row += grid_threads() >> 5) {
    softmax_fwd_row(x + row * cols, y + row * cols, row % cols, cols, scale, lane);
  }
}

template <typename T>
__global__ void softmax_bwd_kernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                                   float scale) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = global_thread() >> 5; row < rows; row += grid_threads() >> 5) {
    softmax_bwd_row(y + row * cols, dy + row * cols, dx + row * cols, cols, scale, lane);
  }
}

// ---- elementwise -----------------------------------------------------------
// Vectorised over n / 8 packs, then a scalar tail.

struct alignas(8) MaskPack {
  uint8_t v[kVec];
};

template <typename T>
__global__ void dropout_fwd_kernel(const T* x, const T* residual, T* y, uint8_t* mask, int64_t n,
                                   uint32_t threshold, float scale, uint64_t seed) {
  const int64_t vecs = n / kVec;
  for (int64_t v = global_thread(); v < vecs; v += grid_threads()) {
    Pack<T> p = load(x, v), o;
    Pack<T> r;
    if (residual != nullptr) r = load(residual, v);
    MaskPack mk;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      mk.v[i] = keep_bit(seed, v * kVec + i, threshold);
      const float f = mk.v[i] ? to_f(p.v[i]) * scale : 0.f;
      o.v[i] = from_f<T>(residual != nullptr ? f + to_f(r.v[i]) : f);
    }
    store(y, v, o);
    reinterpret_cast<MaskPack*>(mask)[v] = mk;
  }
  for (int64_t i = vecs * kVec + global_thread(); i < n; i += grid_threads()) {
    mask[i] = keep_bit(seed, i, threshold);
    const float f = mask[i] ? to_f(x[i]) * scale : 0.f;
    y[i] = from_f<T>(residual != nullptr ? f + to_f(residual[i]) : f);
  }
}

template <typename T>
__global__ void dropout_bwd_kernel(const T* dy, const uint8_t* mask, T* dx, int64_t n,
                                   float scale) {
  const int64_t vecs = n / kVec;
  for (int64_t v = global_thread(); v < vecs; v += grid_threads()) {
    Pack<T> d = load(dy, v), o;
    const MaskPack mk = reinterpret_cast<const MaskPack*>(mask)[v];
#pragma unroll
    for (int i = 0; i < kVec; ++i) o.v[i] = from_f<T>(mk.v[i] ? to_f(d.v[i]) * scale : 0.f);
    store(dx, v, o);
  }
  for (int64_t i = vecs * kVec + global_thread(); i < n; i += grid_threads()) {
    dx[i] = from_f<T>(mask[i] ? to_f(dy[i]) * scale : 0.f);
  }
}

__device__ inline float gelu(float x) {
  return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}
__device__ inline float gelu_grad(float x) {
  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  const float t = tanhf(u);
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * 0.7978845608f * (1.f + 0.134145f * x * x);
}
__device__ inline float silu(float x) { return x / (1.f + __expf(-x)); }

// Elementwise kernel over up to three 16-bit inputs and two outputs; `op`
// maps the inputs of one element to its outputs.
template <typename T, int kIn, int kOut, typename Op>
__global__ void map_kernel(const T* in0, const T* in1, const T* in2, T* out0, T* out1, int64_t n,
                           Op op) {
  const T* in[3] = {in0, in1, in2};
  T* out[2] = {out0, out1};
  const int64_t vecs = n / kVec;
  for (int64_t v = global_thread(); v < vecs; v += grid_threads()) {
    Pack<T> a[kIn], o[kOut];
#pragma unroll
    for (int j = 0; j < kIn; ++j) a[j] = load(in[j], v);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      float f[3] = {0.f, 0.f, 0.f}, g[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < kIn; ++j) f[j] = to_f(a[j].v[i]);
      op(f, g);
#pragma unroll
      for (int j = 0; j < kOut; ++j) o[j].v[i] = from_f<T>(g[j]);
    }
#pragma unroll
    for (int j = 0; j < kOut; ++j) store(out[j], v, o[j]);
  }
  for (int64_t i = vecs * kVec + global_thread(); i < n; i += grid_threads()) {
    float f[3] = {0.f, 0.f, 0.f}, g[2] = {0.f, 0.f};
    for (int j = 0; j < kIn; ++j) f[j] = to_f(in[j][i]);
    op(f, g);
    for (int j = 0; j < kOut; ++j) out[j][i] = from_f<T>(g[j]);
  }
}

struct GeluFwd {
  __device__ void operator()(const float* f, float* g) const { g[0] = gelu(f[0]); }
};
struct GeluBwd {  // in: x, dy
  __device__ void operator()(const float* f, float* g) const { g[0] = f[1] * gelu_grad(f[0]); }
};
struct SwigluFwd {  // in: gate, up
  __device__ void operator()(const float* f, float* g) const { g[0] = silu(f[0]) * f[1]; }
};
struct SwigluBwd {  // in: gate, up, dy; out: dgate, dup
  __device__ void operator()(const float* f, float* g) const {
    const float sig = 1.f / (1.f + __expf(-f[0]));
    const float s = f[0] * sig;
    g[0] = f[2] * f[1] * sig * (1.f + f[0] * (1.f - sig));
    g[1] = f[2] * s;
  }
};

// ---- Adam --------------------------------------------------------------------

template <typename T>
__global__ void adam_kernel(float* master, float* m, float* v, const float* grad, T* param,
                            int64_t n, AdamHyper h, float bc1, float bc2) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float g = grad[i];
    const float mi = h.beta1 * m[i] + (1.f - h.beta1) * g;
    const float vi = h.beta2 * v[i] + (1.f - h.beta2) * g * g;
    float w = master[i];
    w -= h.lr * ((mi / bc1) / (sqrtf(vi / bc2) + h.eps) + h.weight_decay * w);
    m[i] = mi;
    v[i] = vi;
    master[i] = w;
    param[i] = from_f<T>(w);
  }
}

// Runs f.template operator()<T>() with T the element type of `t`.
template <typename F>
cudaError_t dispatch(ElemType t, F&& f) {
  if (t == ElemType::kBf16) return f(static_cast<__nv_bfloat16*>(nullptr));
  return f(static_cast<__half*>(nullptr));
}

template <typename T>
const T* cp(const void* p) {
  return static_cast<const T*>(p);
}
template <typename T>
T* mp(void* p) {
  return static_cast<T*>(p);
}

int row_threads(int64_t cols) {
  const int64_t want = (cols / kVec + 31) / 32 * 32;
  return static_cast<int>(std::clamp<int64_t>(want, 32, 1024));
}

}  // namespace

cudaError_t fill_uniform(ElemType t, void* p, int64_t n, uint64_t seed, float scale,
                         cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(mp<T>(p), n, seed, scale);
    return cudaGetLastError();
  });
}

cudaError_t fill_uniform_f32(float* p, int64_t n, uint64_t seed, float lo, float hi,
                             cudaStream_t stream) {
  fill_f32_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, n, seed, lo, hi);
  return cudaGetLastError();
}

cudaError_t layernorm_forward(ElemType t, const void* x, const void* gamma, const void* beta,
                              void* y, float* mean, float* rstd, int64_t rows, int64_t cols,
                              cudaStream_t stream) {
  if (cols % kVec != 0 || rows < 1 || rows > INT32_MAX) return cudaErrorInvalidValue;
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    layernorm_fwd_kernel<T><<<static_cast<unsigned>(rows), row_threads(cols), 0, stream>>>(
        cp<T>(x), cp<T>(gamma), cp<T>(beta), mp<T>(y), mean, rstd, cols);
    return cudaGetLastError();
  });
}

int64_t layernorm_partial_rows(int64_t rows) { return std::clamp<int64_t>(rows / 32, 1, 128); }

cudaError_t layernorm_backward(ElemType t, const void* dy, const void* x, const void* gamma,
                               const float* mean, const float* rstd, void* dx, float* partial,
                               void* dgamma, void* dbeta, int64_t rows, int64_t cols,
                               cudaStream_t stream) {
  if (cols % kVec != 0 || rows < 1 || rows > INT32_MAX) return cudaErrorInvalidValue;
  const int64_t chunks = layernorm_partial_rows(rows);
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    layernorm_dx_kernel<T><<<static_cast<unsigned>(rows), row_threads(cols), 0, stream>>>(
        cp<T>(dy), cp<T>(x), cp<T>(gamma), mean, rstd, mp<T>(dx), cols);
    const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>(chunks));
    layernorm_partial_kernel<T><<<grid, dim3(32, 8), 0, stream>>>(cp<T>(dy), cp<T>(x), mean, rstd,
                                                                  partial, rows, cols, chunks);
    layernorm_final_kernel<T><<<blocks_for(cols), kThreads, 0, stream>>>(
        partial, mp<T>(dgamma), mp<T>(dbeta), cols, chunks);
    return cudaGetLastError();
  });
}

cudaError_t softmax_forward(ElemType t, const void* x, void* y, int64_t rows, int64_t cols,
                            float scale, cudaStream_t stream) {
  if (cols % kVec != 0) return cudaErrorInvalidValue;
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    softmax_fwd_kernel<T>
        <<<blocks_for(rows * 32), kThreads, 0, stream>>>(cp<T>(x), mp<T>(y), rows, cols, scale);
    return cudaGetLastError();
  });
}

cudaError_t softmax_backward(ElemType t, const void* y, const void* dy, void* dx, int64_t rows,
                             int64_t cols, float scale, cudaStream_t stream) {
  if (cols % kVec != 0) return cudaErrorInvalidValue;
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    softmax_bwd_kernel<T><<<blocks_for(rows * 32), kThreads, 0, stream>>>(
        cp<T>(y), cp<T>(dy), mp<T>(dx), rows, cols, scale);
    return cudaGetLastError();
  });
}

namespace {
uint32_t dropout_threshold(float p) {
  return static_cast<uint32_t>(std::clamp(p, 0.f, 1.f) * 256.f + 0.5f);
}
}  // namespace

cudaError_t dropout_forward(ElemType t, const void* x, void* y, uint8_t* mask, int64_t n, float p,
                            uint64_t seed, cudaStream_t stream) {
  return dropout_residual_forward(t, x, nullptr, y, mask, n, p, seed, stream);
}

cudaError_t dropout_residual_forward(ElemType t, const void* x, const void* residual, void* y,
                                     uint8_t* mask, int64_t n, float p, uint64_t seed,
                                     cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    dropout_fwd_kernel<T><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(
        cp<T>(x), cp<T>(residual), mp<T>(y), mask, n, dropout_threshold(p), 1.f / (1.f - p), seed);
    return cudaGetLastError();
  });
}

cudaError_t dropout_backward(ElemType t, const void* dy, const uint8_t* mask, void* dx, int64_t n,
                             float p, cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    dropout_bwd_kernel<T><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(
        cp<T>(dy), mask, mp<T>(dx), n, 1.f / (1.f - p));
    return cudaGetLastError();
  });
}

cudaError_t gelu_forward(ElemType t, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    map_kernel<T, 1, 1><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(
        cp<T>(x), nullptr, nullptr, mp<T>(y), nullptr, n, GeluFwd{});
    return cudaGetLastError();
  });
}

cudaError_t gelu_backward(ElemType t, const void* x, const void* dy, void* dx, int64_t n,
                          cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    map_kernel<T, 2, 1><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(
        cp<T>(x), cp<T>(dy), nullptr, mp<T>(dx), nullptr, n, GeluBwd{});
    return cudaGetLastError();
  });
}

cudaError_t swiglu_forward(ElemType t, const void* gate, const void* up, void* y, int64_t n,
                           cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    map_kernel<T, 2, 1><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(
        cp<T>(gate), cp<T>(up), nullptr, mp<T>(y), nullptr, n, SwigluFwd{});
    return cudaGetLastError();
  });
}

cudaError_t swiglu_backward(ElemType t, const void* gate, const void* up, const void* dy,
                            void* dgate, void* dup, int64_t n, cudaStream_t stream) {
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    map_kernel<T, 3, 2><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(
        cp<T>(gate), cp<T>(up), cp<T>(dy), mp<T>(dgate), mp<T>(dup), n, SwigluBwd{});
    return cudaGetLastError();
  });
}

cudaError_t adam_step(ElemType t, float* master, float* m, float* v, const float* grad, void* param,
                      int64_t n, const AdamHyper& hyper, cudaStream_t stream) {
  const float bc1 = 1.f - std::pow(hyper.beta1, static_cast<float>(hyper.step));
  const float bc2 = 1.f - std::pow(hyper.beta2, static_cast<float>(hyper.step));
  return dispatch(t, [&](auto tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    adam_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(master, m, v, grad, mp<T>(param), n,
                                                           hyper, bc1, bc2);
    return cudaGetLastError();
  });
}

}  // namespace llmplan::profiler
