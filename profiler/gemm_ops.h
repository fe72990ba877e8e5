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
#ifndef LLMPLAN_PROFILER_GEMM_OPS_H_
#define LLMPLAN_PROFILER_GEMM_OPS_H_

#include <cuda_runtime_api.h>

#include <memory>

#include "profiler/cuda_util.h"
#include "simulator/cost_model.h"
#include "simulator/status.h"

namespace llmplan::profiler {

// A cuBLAS handle bound to one stream, with a 32 MiB workspace (what cuBLAS
// wants on Hopper). Used from one thread.
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

 private:
  GemmRunner() = default;
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_GEMM_OPS_H_
