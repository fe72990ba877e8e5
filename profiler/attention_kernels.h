// llmplan-profile's fused (flash) attention, forward and backward, so that
// the profile has measured entries for the flash_attention op the
// simulator's lowering emits.
//
// The algorithm is FlashAttention-2's (Dao 2023): causal, softmax scale
// 1/sqrt(d), no dropout; tiles of 64 queries x 64 keys held in shared
// memory, the scores never written to HBM; bf16 tensor-core MMAs (WMMA
// 16x16x16, fp32 accumulation); online softmax in fp32; the forward saves
// the log-sum-exp per query row. The backward is FA2's: a row-sum
// pre-pass (D = rowsum(dO * O)), one block per 64-key tile accumulating dK
// and dV on chip and adding dQ into an fp32 buffer with atomics, and a pass
// converting dQ to bf16. Tensors are [heads, s, d] contiguous (heads =
// b*a/t; one layout for q, k, v, o and their gradients), bf16.
//
// It is a straightforward implementation, not FlashAttention-2/3 or cuDNN:
// it reaches a fraction of their throughput (they use warp-specialised,
// asynchronous Hopper MMAs), so its times are an upper bound on what a
// tuned kernel takes (profiler/README.md says how to read them).
//
// Host-side declarations only: the kernels live in attention_kernels.cu.
#ifndef LLMPLAN_PROFILER_ATTENTION_KERNELS_H_
#define LLMPLAN_PROFILER_ATTENTION_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace llmplan::profiler {

// Head dimensions the kernels are built for: 64, 80, 96 and 128.
bool flash_attention_supports_head_dim(int64_t head_dim);

// Dynamic shared memory per block of the forward or backward kernel (the
// backward at d = 128 needs ~125 KiB: GPUs that opt in less, e.g. Ada's
// 99 KiB, cannot run it). 0 for an unsupported head dimension.
size_t flash_attention_shared_bytes(bool forward, int64_t head_dim);

// o = softmax(q k^T / sqrt(d), causal) v and lse (heads * seq floats).
// REQUIRES: flash_attention_supports_head_dim(head_dim); cudaErrorInvalidValue
// otherwise or for sizes beyond the grid.
cudaError_t flash_attention_forward(const void* q, const void* k, const void* v, void* o,
                                    float* lse, int64_t heads, int64_t seq, int64_t head_dim,
                                    cudaStream_t stream);

// dq, dk, dv from q, k, v, o, do and the forward's lse. `delta` (heads *
// seq floats) and `dq_accum` (heads * seq * head_dim floats) are scratch.
cudaError_t flash_attention_backward(const void* q, const void* k, const void* v, const void* o,
                                     const void* d_o, const float* lse, float* delta,
                                     float* dq_accum, void* dq, void* dk, void* dv, int64_t heads,
                                     int64_t seq, int64_t head_dim, cudaStream_t stream);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_ATTENTION_KERNELS_H_
