// Device code of llmplan-profile's flash attention (attention_kernels.h).
#include <cuda_bf16.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "profiler/attention_kernels.h"

namespace llmplan::profiler {
namespace {

using bf16 = __nv_bfloat16;
namespace wmma = nvcuda::wmma;

constexpr int kBlock = 64;  // queries (forward) or keys (backward) per block
constexpr int kWarps = 4;   // 16 of the block's rows each
constexpr int kThreads = kWarps * 32;
constexpr int kPad = 16;              // bf16 row padding: rows stay 32-byte aligned for WMMA
constexpr int kRowP = kBlock + kPad;  // row stride of the probability / dS tiles
constexpr int kScratch = 128;         // floats per scratch row (>= 64 + 64 and >= d)

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragAt = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::col_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>;
using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

struct alignas(16) Bf16x8 {
  bf16 v[8];
};

// out (a 16 x 16 float tile, row stride kScratch) = A B, the 16 x K by
// K x 16 product of two shared-memory bf16 operands: A's k-th 16-wide slice
// at a + k * a_step (leading dimension lda), B's at b + k * b_step (ldb).
template <class FragAType, class FragBType, int K>
__device__ __forceinline__ void store_tile_product(float* out, const bf16* a, int lda, int a_step,
                                                   const bf16* b, int ldb, int b_step) {
  FragC c;
  wmma::fill_fragment(c, 0.f);
#pragma unroll
  for (int kk = 0; kk < K; kk += 16) {
    FragAType fa;
    FragBType fb;
    wmma::load_matrix_sync(fa, a + kk * a_step, lda);
    wmma::load_matrix_sync(fb, b + kk * b_step, ldb);
    wmma::mma_sync(c, fa, fb, c);
  }
  wmma::store_matrix_sync(out, c, kScratch, wmma::mem_row_major);
}

// Rows [row0, row0 + 64) of a [seq, D] matrix into a [64][D + kPad] tile,
// zeros past seq. 16-byte accesses (D is a multiple of 16).
template <int D>
__device__ void load_tile(bf16* tile, const bf16* src, int64_t row0, int64_t seq) {
  constexpr int kVecs = D / 8;
  for (int i = threadIdx.x; i < kBlock * kVecs; i += blockDim.x) {
    const int r = i / kVecs, c = (i % kVecs) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + r < seq) v = *reinterpret_cast<const uint4*>(src + (row0 + r) * D + c);
    *reinterpret_cast<uint4*>(tile + r * (D + kPad) + c) = v;
  }
}

template <int D>
constexpr size_t forward_smem_bytes() {
  return sizeof(bf16) * 3 * kBlock * (D + kPad) + sizeof(float) * kWarps * 16 * kScratch +
         sizeof(bf16) * kWarps * 16 * kRowP;
}
template <int D>
constexpr size_t backward_smem_bytes() {
  return sizeof(bf16) * 4 * kBlock * (D + kPad) + sizeof(float) * 2 * kBlock +
         sizeof(float) * kWarps * 16 * kScratch + sizeof(bf16) * kWarps * 16 * kRowP +
         sizeof(bf16) * kBlock * kRowP;
}

// One block per (64-query tile, head), longest (last) tiles first. Each warp
// owns 16 query rows; lane pairs own one row (lane / 2), each lane half its
// columns.
template <int D>
__global__ void __launch_bounds__(kThreads)
    flash_fwd_kernel(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, int64_t seq,
                     float scale_log2) {
  extern __shared__ __align__(128) unsigned char smem[];
  constexpr int ld = D + kPad;
  bf16* sq = reinterpret_cast<bf16*>(smem);
  bf16* sk = sq + kBlock * ld;
  bf16* sv = sk + kBlock * ld;
  float* scratch = reinterpret_cast<float*>(sv + kBlock * ld);
  bf16* probs = reinterpret_cast<bf16*>(scratch + kWarps * 16 * kScratch);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* scr = scratch + warp * 16 * kScratch;
  bf16* sp = probs + warp * 16 * kRowP;
  const int64_t head = blockIdx.y;
  const int64_t tiles = (seq + kBlock - 1) / kBlock;
  const int64_t qt = tiles - 1 - blockIdx.x;
  const int64_t q0 = qt * kBlock;
  const int64_t base = head * seq * D;
  load_tile<D>(sq, q + base, q0, seq);
  const int r = lane / 2, half = lane % 2;
  const int64_t qrow = q0 + warp * 16 + r;
  float m = -INFINITY, l = 0.f;
  float acc[D / 2];
#pragma unroll
  for (int j = 0; j < D / 2; ++j) acc[j] = 0.f;

  for (int64_t kt = 0; kt <= qt; ++kt) {
    const int64_t k0 = kt * kBlock;
    __syncthreads();  // the previous K and V tiles are consumed
    load_tile<D>(sk, k + base, k0, seq);
    load_tile<D>(sv, v + base, k0, seq);
    __syncthreads();
    // Scores of the warp's 16 queries against the 64 keys.
#pragma unroll
    for (int n = 0; n < kBlock / 16; ++n)
      store_tile_product<FragA, FragBt, D>(scr + n * 16, sq + warp * 16 * ld, ld, 1,
                                           sk + n * 16 * ld, ld, 1);
    __syncwarp();
    // Online softmax (base 2) over the lane's 32 columns of row r.
    float s[32];
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int col = half * 32 + j;
      const int64_t key = k0 + col;
      float x = scr[r * kScratch + col] * scale_log2;
      if (key > qrow || key >= seq) x = -INFINITY;
      s[j] = x;
      mx = fmaxf(mx, x);
    }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffU, mx, 1));
    const float m_new = fmaxf(m, mx);
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    const float alpha = exp2f(m - m_use);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const float p = exp2f(s[j] - m_use);
      sum += p;
      sp[r * kRowP + half * 32 + j] = __float2bfloat16(p);
    }
    sum += __shfl_xor_sync(0xffffffffU, sum, 1);
    l = l * alpha + sum;
    m = m_new;
    __syncwarp();
    // P V for the warp's rows, then O = O * alpha + P V.
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      store_tile_product<FragA, FragB, kBlock>(scr + n * 16, sp, kRowP, 1, sv + n * 16, ld, ld);
    __syncwarp();
#pragma unroll
    for (int j = 0; j < D / 2; ++j)
      acc[j] = acc[j] * alpha + scr[r * kScratch + half * (D / 2) + j];
    __syncwarp();  // scr is rewritten by the next tile's scores
  }
  if (qrow < seq) {
    const float inv = l > 0.f ? 1.f / l : 0.f;
    bf16* dst = o + base + qrow * D + half * (D / 2);
#pragma unroll
    for (int j = 0; j < D / 2; j += 8) {
      Bf16x8 pack;
#pragma unroll
      for (int i = 0; i < 8; ++i) pack.v[i] = __float2bfloat16(acc[j + i] * inv);
      *reinterpret_cast<Bf16x8*>(dst + j) = pack;
    }
    if (half == 0) lse[head * seq + qrow] = m + log2f(l);
  }
}

// delta[row] = sum_d dO[row, d] * O[row, d]: one warp per row.
template <int D>
__global__ void flash_bwd_delta_kernel(const bf16* o, const bf16* d_o, float* delta, int64_t rows) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  float sum = 0.f;
  for (int c = lane; c < D; c += 32) {
    sum += __bfloat162float(o[row * D + c]) * __bfloat162float(d_o[row * D + c]);
  }
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffU, sum, off);
  if (lane == 0) delta[row] = sum;
}

// One block per (64-key tile, head). Each warp owns 16 keys: it accumulates
// their dK and dV in registers over the query tiles at or after its keys
// (causal), and adds its share of dQ to dq_accum with atomics.
template <int D>
__global__ void __launch_bounds__(kThreads)
    flash_bwd_kernel(const bf16* q, const bf16* k, const bf16* v, const bf16* d_o, const float* lse,
                     const float* delta, float* dq_accum, bf16* dk, bf16* dv, int64_t seq,
                     float scale_log2, float scale) {
  extern __shared__ __align__(128) unsigned char smem[];
  constexpr int ld = D + kPad;
  bf16* sk = reinterpret_cast<bf16*>(smem);
  bf16* sv = sk + kBlock * ld;
  bf16* sq = sv + kBlock * ld;
  bf16* sdo = sq + kBlock * ld;
  float* slse = reinterpret_cast<float*>(sdo + kBlock * ld);
  float* sdelta = slse + kBlock;
  float* scratch = sdelta + kBlock;
  bf16* probs = reinterpret_cast<bf16*>(scratch + kWarps * 16 * kScratch);
  bf16* sds = probs + kWarps * 16 * kRowP;  // dS^T of the block: [64 keys][64 queries]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* scr = scratch + warp * 16 * kScratch;
  bf16* sp = probs + warp * 16 * kRowP;
  const int64_t head = blockIdx.y;
  const int64_t tiles = (seq + kBlock - 1) / kBlock;
  const int64_t kt = blockIdx.x;  // tile 0 has the most query tiles: first
  const int64_t k0 = kt * kBlock;
  const int64_t base = head * seq * D;
  load_tile<D>(sk, k + base, k0, seq);
  load_tile<D>(sv, v + base, k0, seq);
  const int r = lane / 2, half = lane % 2;
  const int64_t key = k0 + warp * 16 + r;
  FragC dk_acc[D / 16], dv_acc[D / 16];
#pragma unroll
  for (int n = 0; n < D / 16; ++n) {
    wmma::fill_fragment(dk_acc[n], 0.f);
    wmma::fill_fragment(dv_acc[n], 0.f);
  }

  for (int64_t qt = kt; qt < tiles; ++qt) {
    const int64_t q0 = qt * kBlock;
    __syncthreads();  // the previous query tile and dS are consumed
    load_tile<D>(sq, q + base, q0, seq);
    load_tile<D>(sdo, d_o + base, q0, seq);
    for (int i = threadIdx.x; i < kBlock; i += blockDim.x) {
      const int64_t qi = q0 + i;
      slse[i] = qi < seq ? lse[head * seq + qi] : 0.f;
      sdelta[i] = qi < seq ? delta[head * seq + qi] : 0.f;
    }
    __syncthreads();
    // S^T = K_w Q^T into scr[:, 0:64] and dP^T = V_w dO^T into scr[:, 64:128].
#pragma unroll
    for (int n = 0; n < kBlock / 16; ++n) {
      FragC s, dp;
      wmma::fill_fragment(s, 0.f);
      wmma::fill_fragment(dp, 0.f);
#pragma unroll
      for (int kk = 0; kk < D; kk += 16) {
        FragA a;
        FragBt b;
        wmma::load_matrix_sync(a, sk + warp * 16 * ld + kk, ld);
        wmma::load_matrix_sync(b, sq + n * 16 * ld + kk, ld);
        wmma::mma_sync(s, a, b, s);
        wmma::load_matrix_sync(a, sv + warp * 16 * ld + kk, ld);
        wmma::load_matrix_sync(b, sdo + n * 16 * ld + kk, ld);
        wmma::mma_sync(dp, a, b, dp);
      }
      wmma::store_matrix_sync(scr + n * 16, s, kScratch, wmma::mem_row_major);
      wmma::store_matrix_sync(scr + kBlock + n * 16, dp, kScratch, wmma::mem_row_major);
    }
    __syncwarp();
    // P^T and dS^T = P^T * (dP^T - delta) for key row r, 32 query columns.
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int col = half * 32 + j;
      const int64_t qi = q0 + col;
      float p = 0.f;
      if (qi < seq && key < seq && qi >= key) {
        p = exp2f(scr[r * kScratch + col] * scale_log2 - slse[col]);
      }
      const float ds = p * (scr[r * kScratch + kBlock + col] - sdelta[col]);
      sp[r * kRowP + col] = __float2bfloat16(p);
      sds[(warp * 16 + r) * kRowP + col] = __float2bfloat16(ds);
    }
    __syncwarp();
    // dV += P^T dO and dK += dS^T Q (dS unscaled; scaled when written).
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
#pragma unroll
      for (int kk = 0; kk < kBlock; kk += 16) {
        FragA a;
        FragB b;
        wmma::load_matrix_sync(a, sp + kk, kRowP);
        wmma::load_matrix_sync(b, sdo + kk * ld + n * 16, ld);
        wmma::mma_sync(dv_acc[n], a, b, dv_acc[n]);
        wmma::load_matrix_sync(a, sds + warp * 16 * kRowP + kk, kRowP);
        wmma::load_matrix_sync(b, sq + kk * ld + n * 16, ld);
        wmma::mma_sync(dk_acc[n], a, b, dk_acc[n]);
      }
    }
    __syncthreads();  // every warp's dS^T rows are in sds
                      // dQ for the warp's 16 queries of this tile: dS (sds read transposed) K.
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      store_tile_product<FragAt, FragB, kBlock>(scr + n * 16, sds + warp * 16, kRowP, kRowP,
                                                sk + n * 16, ld, ld);
    __syncwarp();
    for (int e = lane; e < 16 * D; e += 32) {
      const int rr = e / D, cc = e % D;
      const int64_t qi = q0 + warp * 16 + rr;
      if (qi < seq)
        atomicAdd(dq_accum + (head * seq + qi) * D + cc, scr[rr * kScratch + cc] * scale);
    }
    __syncwarp();
  }
  // dK (scaled) and dV of the warp's keys.
  for (int which = 0; which < 2; ++which) {
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      wmma::store_matrix_sync(scr + n * 16, which == 0 ? dk_acc[n] : dv_acc[n], kScratch,
                              wmma::mem_row_major);
    }
    __syncwarp();
    bf16* dst = which == 0 ? dk : dv;
    const float f = which == 0 ? scale : 1.f;
    for (int e = lane; e < 16 * D; e += 32) {
      const int rr = e / D, cc = e % D;
      const int64_t kr = k0 + warp * 16 + rr;
      if (kr < seq) dst[base + kr * D + cc] = __float2bfloat16(scr[rr * kScratch + cc] * f);
    }
    __syncwarp();
  }
}

__global__ void dq_convert_kernel(const float* dq_accum, bf16* dq, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dq[i] = __float2bfloat16(dq_accum[i]);
  }
}

bool grid_ok(int64_t heads, int64_t seq) {
  return heads >= 1 && heads <= 65535 && seq >= 1 && (seq + kBlock - 1) / kBlock <= INT32_MAX;
}

// Calls f with the head dimension as a template argument.
template <typename F>
cudaError_t with_head_dim(int64_t head_dim, F&& f) {
  switch (head_dim) {
    case 64:
      return f(std::integral_constant<int, 64>());
    case 80:
      return f(std::integral_constant<int, 80>());
    case 96:
      return f(std::integral_constant<int, 96>());
    case 128:
      return f(std::integral_constant<int, 128>());
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

bool flash_attention_supports_head_dim(int64_t head_dim) {
  return head_dim == 64 || head_dim == 80 || head_dim == 96 || head_dim == 128;
}

size_t flash_attention_shared_bytes(bool forward, int64_t head_dim) {
  size_t bytes = 0;
  with_head_dim(head_dim, [&](auto d) {
    constexpr int D = decltype(d)::value;
    bytes = forward ? forward_smem_bytes<D>() : backward_smem_bytes<D>();
    return cudaSuccess;
  });
  return bytes;
}

cudaError_t flash_attention_forward(const void* q, const void* k, const void* v, void* o,
                                    float* lse, int64_t heads, int64_t seq, int64_t head_dim,
                                    cudaStream_t stream) {
  if (!grid_ok(heads, seq)) return cudaErrorInvalidValue;
  const float scale_log2 = 1.4426950408889634f / std::sqrt(static_cast<float>(head_dim));
  return with_head_dim(head_dim, [&](auto d) {
    constexpr int D = decltype(d)::value;
    constexpr size_t smem = forward_smem_bytes<D>();
    cudaError_t e = cudaFuncSetAttribute(flash_fwd_kernel<D>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    const dim3 grid(static_cast<unsigned>((seq + kBlock - 1) / kBlock),
                    static_cast<unsigned>(heads));
    flash_fwd_kernel<D><<<grid, kThreads, smem, stream>>>(
        static_cast<const bf16*>(q), static_cast<const bf16*>(k), static_cast<const bf16*>(v),
        static_cast<bf16*>(o), lse, seq, scale_log2);
    return cudaGetLastError();
  });
}

cudaError_t flash_attention_backward(const void* q, const void* k, const void* v, const void* o,
                                     const void* d_o, const float* lse, float* delta,
                                     float* dq_accum, void* dq, void* dk, void* dv, int64_t heads,
                                     int64_t seq, int64_t head_dim, cudaStream_t stream) {
  if (!grid_ok(heads, seq)) return cudaErrorInvalidValue;
  const float scale = 1.f / std::sqrt(static_cast<float>(head_dim));
  const float scale_log2 = 1.4426950408889634f * scale;
  return with_head_dim(head_dim, [&](auto d) {
    constexpr int D = decltype(d)::value;
    const int64_t rows = heads * seq, elements = rows * D;
    cudaError_t e =
        cudaMemsetAsync(dq_accum, 0, sizeof(float) * static_cast<size_t>(elements), stream);
    if (e != cudaSuccess) return e;
    const int64_t delta_blocks = (rows * 32 + 255) / 256;
    if (delta_blocks > INT32_MAX) return cudaErrorInvalidValue;
    flash_bwd_delta_kernel<D><<<static_cast<unsigned>(delta_blocks), 256, 0, stream>>>(
        static_cast<const bf16*>(o), static_cast<const bf16*>(d_o), delta, rows);
    constexpr size_t smem = backward_smem_bytes<D>();
    e = cudaFuncSetAttribute(flash_bwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem);
    if (e != cudaSuccess) return e;
    const dim3 grid(static_cast<unsigned>((seq + kBlock - 1) / kBlock),
                    static_cast<unsigned>(heads));
    flash_bwd_kernel<D><<<grid, kThreads, smem, stream>>>(
        static_cast<const bf16*>(q), static_cast<const bf16*>(k), static_cast<const bf16*>(v),
        static_cast<const bf16*>(d_o), lse, delta, dq_accum, static_cast<bf16*>(dk),
        static_cast<bf16*>(dv), seq, scale_log2, scale);
    const int64_t convert_blocks = std::min<int64_t>((elements + 255) / 256, int64_t{1} << 20);
    dq_convert_kernel<<<static_cast<unsigned>(convert_blocks), 256, 0, stream>>>(
        dq_accum, static_cast<bf16*>(dq), elements);
    return cudaGetLastError();
  });
}

}  // namespace llmplan::profiler
