// The memory-bound kernels of a transformer layer, written for llmplan-profile
// so that it measures what these ops cost at their real sizes: layernorm,
// softmax (causal, scaled), dropout, dropout + residual, GeLU / SwiGLU and the
// mixed-precision Adam step, forward and backward. They compute the real
// operation (not a memcpy) in fp32 on 16-bit tensors, with 16-byte
// vectorised access where rows allow it; they are straightforward
// bandwidth-bound kernels comparable to the fused kernels of Megatron / Apex,
// not copies of them.
//
// Each launcher enqueues on `stream` and returns the launch error. Host-side
// declarations only: the kernels live in memory_kernels.cu. Element counts
// and row lengths are int64; rows are contiguous.
#ifndef LLMPLAN_PROFILER_MEMORY_KERNELS_H_
#define LLMPLAN_PROFILER_MEMORY_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmplan::profiler {

enum class ElemType { kBf16, kFp16 };

// Fills n 16-bit elements with uniform values in [-scale, scale] (a hash of
// index and seed), so that GEMMs and kernels see realistic data.
cudaError_t fill_uniform(ElemType t, void* p, int64_t n, uint64_t seed, float scale,
                         cudaStream_t stream);
// Fills n floats with uniform values in [lo, hi].
cudaError_t fill_uniform_f32(float* p, int64_t n, uint64_t seed, float lo, float hi,
                             cudaStream_t stream);

// y = (x - mean) * rstd * gamma + beta per row; saves mean and rstd (rows
// floats each).
cudaError_t layernorm_forward(ElemType t, const void* x, const void* gamma, const void* beta,
                              void* y, float* mean, float* rstd, int64_t rows, int64_t cols,
                              cudaStream_t stream);
// Rows of partial sums the backward needs: `partial` must hold
// 2 * layernorm_partial_rows(rows) * cols floats.
int64_t layernorm_partial_rows(int64_t rows);
// dx, dgamma, dbeta from dy, x, gamma and the saved statistics: one kernel
// for dx, and (as Apex does) a partial column reduction plus a final one for
// dgamma and dbeta.
cudaError_t layernorm_backward(ElemType t, const void* dy, const void* x, const void* gamma,
                               const float* mean, const float* rstd, void* dx, float* partial,
                               void* dgamma, void* dbeta, int64_t rows, int64_t cols,
                               cudaStream_t stream);

// y = softmax(scale * x) per row with a causal mask: in row r, columns
// > r % cols are masked (rows are [.., s, s] score matrices, cols == s).
cudaError_t softmax_forward(ElemType t, const void* x, void* y, int64_t rows, int64_t cols,
                            float scale, cudaStream_t stream);
// dx = scale * y * (dy - sum(dy * y)) per row.
cudaError_t softmax_backward(ElemType t, const void* y, const void* dy, void* dx, int64_t rows,
                             int64_t cols, float scale, cudaStream_t stream);

// y = x * keep / (1 - p), mask = keep (one byte per element), keep drawn
// from a counter-based hash of (seed, index).
cudaError_t dropout_forward(ElemType t, const void* x, void* y, uint8_t* mask, int64_t n, float p,
                            uint64_t seed, cudaStream_t stream);
// dx = dy * mask / (1 - p). Also the backward of dropout_residual (the
// residual's gradient is dy itself, passed on without a kernel).
cudaError_t dropout_backward(ElemType t, const void* dy, const uint8_t* mask, void* dx, int64_t n,
                             float p, cudaStream_t stream);
// y = residual + dropout(x).
cudaError_t dropout_residual_forward(ElemType t, const void* x, const void* residual, void* y,
                                     uint8_t* mask, int64_t n, float p, uint64_t seed,
                                     cudaStream_t stream);

// GeLU (tanh approximation) and its derivative.
cudaError_t gelu_forward(ElemType t, const void* x, void* y, int64_t n, cudaStream_t stream);
cudaError_t gelu_backward(ElemType t, const void* x, const void* dy, void* dx, int64_t n,
                          cudaStream_t stream);
// y = silu(gate) * up, and its gradients.
cudaError_t swiglu_forward(ElemType t, const void* gate, const void* up, void* y, int64_t n,
                           cudaStream_t stream);
cudaError_t swiglu_backward(ElemType t, const void* gate, const void* up, const void* dy,
                            void* dgate, void* dup, int64_t n, cudaStream_t stream);

// One Adam step (Megatron's mixed precision): fp32 master weights, moments
// and gradient are read, the three fp32 states written back and the 16-bit
// model weights written: 30 bytes per parameter.
struct AdamHyper {
  float lr = 1e-4f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
  int step = 1;
};
cudaError_t adam_step(ElemType t, float* master, float* m, float* v, const float* grad, void* param,
                      int64_t n, const AdamHyper& hyper, cudaStream_t stream);

// ---- FP8 (compute capability 8.9+ runs the GEMMs; these kernels run anywhere)

enum class Fp8Format { kE4M3, kE5M2 };  // forward tensors / gradients (TE's hybrid)

// Fills n FP8 elements with values uniform in [-scale, scale] (finite,
// never NaN), as the FP8 GEMMs' inputs.
cudaError_t fill_uniform_fp8(Fp8Format f, void* p, int64_t n, uint64_t seed, float scale,
                             cudaStream_t stream);

// Transformer Engine's fused cast-transpose of a GEMM input: x is bf16
// [rows, cols]; writes y = fp8(x * *scale) [rows, cols] and its transpose
// y_t [cols, rows], and folds max |x| into *amax (atomicMax; the caller
// zeroes it when a new amax is wanted). HBM traffic 2N + N + N bytes for
// N = rows * cols. 64 x 64 tiles through shared memory, 16-byte loads.
cudaError_t fp8_cast_transpose(Fp8Format f, const void* x, const float* scale, void* y, void* y_t,
                               float* amax, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_MEMORY_KERNELS_H_
