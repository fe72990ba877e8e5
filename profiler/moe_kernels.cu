// Device code of llmplan-profile's MoE kernels (moe_kernels.h).
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "profiler/device_util.cuh"
#include "profiler/moe_kernels.h"
#include "profiler/moe_limits.h"

namespace llmplan::profiler {
namespace {

using namespace device;  // NOLINT(build/namespaces): the shared device helpers
using bf16 = __nv_bfloat16;

constexpr int kPerLane = kMaxRouterExperts / 32;  // scores per lane
constexpr unsigned kAll = 0xffffffffU;

__device__ inline float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kAll, v, o));
  return v;
}

// The token's scores in registers: lane l holds experts l, l+32, ...;
// missing experts hold -1 (below any score). Also returns the softmax's
// maximum and sum (for the backward's recomputation of one score).
struct Scores {
  float s[kPerLane];
  float max = 0, sum = 1;
};

__device__ inline Scores load_scores(const bf16* row, int experts, bool sigmoid, int lane) {
  Scores sc;
  float mx = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int e = j * 32 + lane;
    sc.s[j] = e < experts ? to_f(row[e]) : -INFINITY;
    mx = fmaxf(mx, sc.s[j]);
  }
  if (sigmoid) {
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      sc.s[j] = j * 32 + lane < experts ? 1.f / (1.f + __expf(-sc.s[j])) : -1.f;
    }
    return sc;
  }
  sc.max = warp_max(mx);
  float sum = 0;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    sc.s[j] = j * 32 + lane < experts ? __expf(sc.s[j] - sc.max) : 0.f;
    sum += sc.s[j];
  }
  sc.sum = warp_sum(sum);
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    sc.s[j] = j * 32 + lane < experts ? sc.s[j] / sc.sum : -1.f;
  }
  return sc;
}

__global__ void router_topk_fwd_kernel(const bf16* logits, float* weights, int32_t* idx,
                                       int64_t tokens, int experts, int top_k, bool sigmoid) {
  const int64_t t = global_thread() / 32;
  const int lane = threadIdx.x & 31;
  if (t >= tokens) return;
  Scores sc = load_scores(logits + t * experts, experts, sigmoid, lane);
  float my_v = 0;
  int my_e = 0;
  for (int r = 0; r < top_k; ++r) {
    float v = -2.f;
    int e = 0;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      if (sc.s[j] > v) {
        v = sc.s[j];
        e = j * 32 + lane;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(kAll, v, o);
      const int oe = __shfl_xor_sync(kAll, e, o);
      if (ov > v || (ov == v && oe < e)) {
        v = ov;
        e = oe;
      }
    }
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      if (j * 32 + lane == e) sc.s[j] = -2.f;
    }
    if (lane == r) {
      my_v = v;
      my_e = e;
    }
  }
  const float total = warp_sum(lane < top_k ? my_v : 0.f);
  if (lane < top_k) {
    weights[t * top_k + lane] = my_v / total;
    idx[t * top_k + lane] = my_e;
  }
}

__global__ void router_topk_bwd_kernel(const bf16* logits, const int32_t* idx,
                                       const float* d_weights, bf16* d_logits, int64_t tokens,
                                       int experts, int top_k, bool sigmoid) {
  const int64_t t = global_thread() / 32;
  const int lane = threadIdx.x & 31;
  if (t >= tokens) return;
  const bf16* row = logits + t * experts;
  const Scores sc = load_scores(row, experts, sigmoid, lane);
  // Lane r < top_k: the r-th selected expert, its score and weight gradient.
  int e_r = 0;
  float s_r = 0, g_r = 0;
  if (lane < top_k) {
    e_r = idx[t * top_k + lane];
    g_r = d_weights[t * top_k + lane];
    const float l = to_f(row[e_r]);
    s_r = sigmoid ? 1.f / (1.f + __expf(-l)) : __expf(l - sc.max) / sc.sum;
  }
  const float total = warp_sum(s_r);
  // w_r = s_r / total: ds_r = (g_r - sum_i g_i w_i) / total.
  const float gw = warp_sum(g_r * s_r / total);
  const float ds_r = lane < top_k ? (g_r - gw) / total : 0.f;
  const float c = sigmoid ? 0.f : warp_sum(ds_r * s_r);  // softmax: sum_j ds_j p_j
  float ds[kPerLane];
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) ds[j] = 0.f;
  for (int r = 0; r < top_k; ++r) {
    const int e = __shfl_sync(kAll, e_r, r);
    const float d = __shfl_sync(kAll, ds_r, r);
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      if (j * 32 + lane == e) ds[j] = d;
    }
  }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int e = j * 32 + lane;
    if (e >= experts) continue;
    const float s = sc.s[j];
    const float dz = sigmoid ? ds[j] * s * (1.f - s) : s * (ds[j] - c);
    d_logits[t * experts + e] = __float2bfloat16(dz);
  }
}

__global__ void permute_kernel(const bf16* x, const int32_t* src, bf16* out, int64_t rows,
                               int64_t vecs) {
  const int64_t r = global_thread() / 32;
  if (r >= rows) return;
  const int64_t s = src[r];
  for (int64_t v = threadIdx.x & 31; v < vecs; v += 32) {
    store(out, r * vecs + v, load(x, s * vecs + v));
  }
}

// out[t] = sum_j w_j * in[pos[t, j]] (w_j = 1 without weights).
__global__ void combine_kernel(const bf16* in, const int32_t* pos, const float* weights, bf16* out,
                               int64_t tokens, int top_k, int64_t vecs) {
  const int64_t t = global_thread() / 32;
  if (t >= tokens) return;
  for (int64_t v = threadIdx.x & 31; v < vecs; v += 32) {
    float acc[kVec] = {};
    for (int j = 0; j < top_k; ++j) {
      const int64_t p = pos[t * top_k + j];
      const float w = weights != nullptr ? weights[t * top_k + j] : 1.f;
      const Pack<bf16> a = load(in, p * vecs + v);
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[i] += w * to_f(a.v[i]);
    }
    Pack<bf16> o;
#pragma unroll
    for (int i = 0; i < kVec; ++i) o.v[i] = __float2bfloat16(acc[i]);
    store(out, t * vecs + v, o);
  }
}

__global__ void unpermute_bwd_kernel(const bf16* dy, const bf16* expert_out, const int32_t* pos,
                                     const float* weights, bf16* d_expert_out, float* d_weights,
                                     int64_t tokens, int top_k, int64_t vecs) {
  const int64_t t = global_thread() / 32;
  const int lane = threadIdx.x & 31;
  if (t >= tokens) return;
  for (int j = 0; j < top_k; ++j) {
    const int64_t p = pos[t * top_k + j];
    const float w = weights[t * top_k + j];
    float dot = 0;
    for (int64_t v = lane; v < vecs; v += 32) {
      const Pack<bf16> g = load(dy, t * vecs + v);
      const Pack<bf16> e = load(expert_out, p * vecs + v);
      Pack<bf16> o;
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float gi = to_f(g.v[i]);
        dot += gi * to_f(e.v[i]);
        o.v[i] = __float2bfloat16(w * gi);
      }
      store(d_expert_out, p * vecs + v, o);
    }
    dot = warp_sum(dot);
    if (lane == 0) d_weights[t * top_k + j] = dot;
  }
}

// Blocks of kThreads threads for one warp per item; 0 when too many.
unsigned warp_blocks(int64_t items) {
  const int64_t blocks = (items * 32 + kThreads - 1) / kThreads;
  return blocks < 1 || blocks > INT32_MAX ? 0U : static_cast<unsigned>(blocks);
}

bool router_ok(int64_t tokens, int experts, int top_k) {
  return tokens >= 1 && experts >= 1 && experts <= kMaxRouterExperts && top_k >= 1 &&
         top_k <= kMaxRouterTopK && top_k <= experts && top_k <= 32;
}

const bf16* cb(const void* p) { return static_cast<const bf16*>(p); }
bf16* mb(void* p) { return static_cast<bf16*>(p); }

}  // namespace

cudaError_t router_topk_forward(const void* logits, float* weights, int32_t* idx, int64_t tokens,
                                int experts, int top_k, bool sigmoid, cudaStream_t stream) {
  const unsigned blocks = warp_blocks(tokens);
  if (!router_ok(tokens, experts, top_k) || blocks == 0) return cudaErrorInvalidValue;
  router_topk_fwd_kernel<<<blocks, kThreads, 0, stream>>>(cb(logits), weights, idx, tokens, experts,
                                                          top_k, sigmoid);
  return cudaGetLastError();
}

cudaError_t router_topk_backward(const void* logits, const int32_t* idx, const float* d_weights,
                                 void* d_logits, int64_t tokens, int experts, int top_k,
                                 bool sigmoid, cudaStream_t stream) {
  const unsigned blocks = warp_blocks(tokens);
  if (!router_ok(tokens, experts, top_k) || blocks == 0) return cudaErrorInvalidValue;
  router_topk_bwd_kernel<<<blocks, kThreads, 0, stream>>>(cb(logits), idx, d_weights, mb(d_logits),
                                                          tokens, experts, top_k, sigmoid);
  return cudaGetLastError();
}

cudaError_t permute_tokens(const void* x, const int32_t* src, void* out, int64_t rows,
                           int64_t hidden, cudaStream_t stream) {
  const unsigned blocks = warp_blocks(rows);
  if (hidden % kVec != 0 || blocks == 0) return cudaErrorInvalidValue;
  permute_kernel<<<blocks, kThreads, 0, stream>>>(cb(x), src, mb(out), rows, hidden / kVec);
  return cudaGetLastError();
}

cudaError_t permute_tokens_backward(const void* d_out, const int32_t* pos, void* dx, int64_t tokens,
                                    int top_k, int64_t hidden, cudaStream_t stream) {
  const unsigned blocks = warp_blocks(tokens);
  if (hidden % kVec != 0 || top_k < 1 || blocks == 0) return cudaErrorInvalidValue;
  combine_kernel<<<blocks, kThreads, 0, stream>>>(cb(d_out), pos, nullptr, mb(dx), tokens, top_k,
                                                  hidden / kVec);
  return cudaGetLastError();
}

cudaError_t unpermute_tokens(const void* expert_out, const int32_t* pos, const float* weights,
                             void* y, int64_t tokens, int top_k, int64_t hidden,
                             cudaStream_t stream) {
  const unsigned blocks = warp_blocks(tokens);
  if (hidden % kVec != 0 || top_k < 1 || blocks == 0) return cudaErrorInvalidValue;
  combine_kernel<<<blocks, kThreads, 0, stream>>>(cb(expert_out), pos, weights, mb(y), tokens,
                                                  top_k, hidden / kVec);
  return cudaGetLastError();
}

cudaError_t unpermute_tokens_backward(const void* dy, const void* expert_out, const int32_t* pos,
                                      const float* weights, void* d_expert_out, float* d_weights,
                                      int64_t tokens, int top_k, int64_t hidden,
                                      cudaStream_t stream) {
  const unsigned blocks = warp_blocks(tokens);
  if (hidden % kVec != 0 || top_k < 1 || blocks == 0) return cudaErrorInvalidValue;
  unpermute_bwd_kernel<<<blocks, kThreads, 0, stream>>>(cb(dy), cb(expert_out), pos, weights,
                                                        mb(d_expert_out), d_weights, tokens, top_k,
                                                        hidden / kVec);
  return cudaGetLastError();
}

}  // namespace llmplan::profiler
