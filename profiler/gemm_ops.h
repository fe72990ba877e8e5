// The GEMMs of a transformer layer, run with cuBLAS in the memory layouts
// training uses, forward and both backward GEMMs.
//
// A job's desc.gemm is the forward GEMM C[m,n] = A[m,k] op(B) (x batch,
// strided). B is stored [n,k] (transposed, as nn.Linear stores weights and as
// K is stored for the attention scores) for every kind except
// attn_value_gemm, whose V is stored [k,n]. The passes:
//   fwd         C  = A op(B)
//   bwd_data    dA = dC op(B)^T         ([m,n] x [n,k])
//   bwd_weight  dB = A^T dC  (or dC^T A for transposed B)  ([k,m] x [m,n])
// All three use the same three buffers (A: m*k, B: k*n, C: m*n elements per
// batch), 16-bit inputs and outputs, fp32 accumulation
// (CUBLAS_COMPUTE_32F), beta = 0.
//
// FP8 (precision fp8: the linear layers' GEMMs) runs through cuBLASLt as
// Transformer Engine runs it: every pass in cuBLASLt's FP8 "TN" form,
// row-major out[M,N] = X[M,K] Y[N,K]^T, both operands K-contiguous, reading
// the transposed FP8 copies that fp8_cast_transpose makes (see
// fp8_gemm_operands); E4M3 for activations and weights, E5M2 for gradients
// (TE's HYBRID format); per-tensor scales (A/B_SCALE_POINTER); bf16 output;
// fp32 accumulation, with fast accumulation in the forward only (TE's
// default: split accumulators for dgrad and wgrad).
#ifndef LLMPLAN_PROFILER_GEMM_OPS_H_
#define LLMPLAN_PROFILER_GEMM_OPS_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "profiler/cuda_util.h"
#include "simulator/cost_model.h"
#include "base/status.h"

namespace llmplan::profiler {

// A cuBLAS and a cuBLASLt handle bound to one stream, with a 32 MiB
// workspace (what cuBLAS wants on Hopper). Used from one thread.
// The FP8 GEMM of one pass of a linear layer's forward GEMM C[m,n] =
// A[m,k] B[n,k]^T: out[M,N] = X[M,K] Y[N,K]^T with
//   fwd         out = C [m,n]    X = A   [m,k] e4m3   Y = B     [n,k] e4m3
//   bwd_data    out = dA [m,k]   X = dC  [m,n] e5m2   Y = B^T   [k,n] e4m3
//   bwd_weight  out = dB [n,k]   X = dC^T [n,m] e5m2  Y = A^T   [k,m] e4m3
struct Fp8GemmOperands {
  int64_t M = 0, N = 0, K = 0;
  bool x_e5m2 = false;      // X is a gradient (E5M2); otherwise E4M3
  bool fast_accum = false;  // forward only
};
// InvalidArgument unless kernel is a linear-layer GEMM (qkv, out_proj, fc1,
// fc2) with batch 1 and a GEMM pass.
Result<Fp8GemmOperands> fp8_gemm_operands(const simulator::KernelDesc& kernel);

class GemmRunner {
 public:
  static Result<std::unique_ptr<GemmRunner>> create(cudaStream_t stream);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  // Enqueues the GEMM of kernel.pass for the forward shape kernel.gemm on
  // the buffers a (m*k*batch), b (k*n*batch), c (m*n*batch) elements of
  // kernel.precision. InvalidArgument for a non-GEMM kind or dimensions
  // beyond cuBLAS's int range; Internal for cuBLAS errors.
  Status run(const simulator::KernelDesc& kernel, void* a, void* b, void* c);

  // Enqueues the FP8 GEMM of kernel.pass (kernel.precision kFp8) with
  // cublasLtMatmul on x (M*K FP8 bytes), y (N*K) and out (M*N bf16), sizes
  // from fp8_gemm_operands. The descriptors and the algorithm (cuBLASLt's
  // first heuristic choice for the 32 MiB workspace) are kept for repeated
  // calls with the same kernel. InvalidArgument as fp8_gemm_operands, or
  // when M, N or K is not a multiple of 16 (cuBLASLt's FP8 alignment);
  // Internal for cuBLASLt errors or when it has no algorithm.
  Status run_fp8(const simulator::KernelDesc& kernel, const void* x, const void* y, void* out);

  // The cuBLAS handle (bound to the stream, with the workspace), for callers
  // that run other cuBLAS GEMMs (moe_bench.cc's grouped expert GEMMs).
  cublasHandle_t handle() const { return handle_; }

 private:
  struct Fp8Plan;
  GemmRunner();
  cublasHandle_t handle_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer workspace_;
  DeviceBuffer scales_;  // per-tensor FP8 scales (1.0)
  std::unique_ptr<Fp8Plan> fp8_plan_;
};

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_GEMM_OPS_H_
