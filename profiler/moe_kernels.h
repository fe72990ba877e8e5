// The memory-bound kernels of a mixture-of-experts layer, written for
// llmplan-profile (`--moe`): the router's score function + top-k, and token
// permutation (gather into expert order) and combine (weighted sum back),
// forward and backward. bf16 activations, fp32 routing weights, int32
// indices; one warp per token or permuted row, 16-byte accesses. They
// compute the real operation; they are straightforward kernels in the
// spirit of Megatron-Core's fused router and permutation kernels, not
// copies of them.
//
// Each launcher enqueues on `stream` and returns the launch error
// (cudaErrorInvalidValue for sizes outside what the kernels handle:
// experts <= kMaxRouterExperts, top_k <= kMaxRouterTopK, hidden a multiple
// of 8, see moe_limits.h). Host-side declarations only: the kernels live in
// moe_kernels.cu.
#ifndef LLMPLAN_PROFILER_MOE_KERNELS_H_
#define LLMPLAN_PROFILER_MOE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmplan::profiler {

// Per token t: scores s = softmax(logits[t]) (or sigmoid), the top_k largest
// (ties to the lower expert), normalised to sum 1: weights[t, j] and their
// experts idx[t, j]. logits is bf16 [tokens, experts].
cudaError_t router_topk_forward(const void* logits, float* weights, int32_t* idx, int64_t tokens,
                                int experts, int top_k, bool sigmoid, cudaStream_t stream);
// The logits' gradient (bf16 [tokens, experts]) from d_weights [tokens,
// top_k], recomputing the scores from the logits.
cudaError_t router_topk_backward(const void* logits, const int32_t* idx, const float* d_weights,
                                 void* d_logits, int64_t tokens, int experts, int top_k,
                                 bool sigmoid, cudaStream_t stream);

// out[r] = x[src[r]] for the rows r < rows (= tokens * top_k) of width hidden.
cudaError_t permute_tokens(const void* x, const int32_t* src, void* out, int64_t rows,
                           int64_t hidden, cudaStream_t stream);
// dx[t] = sum_j d_out[pos[t, j]]: pos[t, j] is the permuted row of token t's
// j-th copy.
cudaError_t permute_tokens_backward(const void* d_out, const int32_t* pos, void* dx, int64_t tokens,
                                    int top_k, int64_t hidden, cudaStream_t stream);
// y[t] = sum_j weights[t, j] * expert_out[pos[t, j]].
cudaError_t unpermute_tokens(const void* expert_out, const int32_t* pos, const float* weights,
                             void* y, int64_t tokens, int top_k, int64_t hidden,
                             cudaStream_t stream);
// d_expert_out[pos[t, j]] = weights[t, j] * dy[t] and
// d_weights[t, j] = <dy[t], expert_out[pos[t, j]]>.
cudaError_t unpermute_tokens_backward(const void* dy, const void* expert_out, const int32_t* pos,
                                      const float* weights, void* d_expert_out, float* d_weights,
                                      int64_t tokens, int top_k, int64_t hidden,
                                      cudaStream_t stream);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_MOE_KERNELS_H_
