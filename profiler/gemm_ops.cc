#include "profiler/gemm_ops.h"

#include <climits>

namespace llmplan::profiler {
namespace {

using simulator::KernelKind;
using simulator::Pass;

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// C[M,N] = op(A) op(B) with row-major operands: A stored [M,K] (or [K,M]
// when trans_a), B stored [K,N] (or [N,K] when trans_b). cuBLAS is
// column-major, so it computes C^T = op(B)^T op(A)^T.
struct RowMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;
  const void* B = nullptr;
  void* C = nullptr;
};

}  // namespace

Result<std::unique_ptr<GemmRunner>> GemmRunner::create(cudaStream_t stream) {
  std::unique_ptr<GemmRunner> r(new GemmRunner());
  LLMPLAN_CUDA_TRY(cublasCreate(&r->handle_));
  LLMPLAN_CUDA_TRY(cublasSetStream(r->handle_, stream));
  LLMPLAN_ASSIGN_OR_RETURN(r->workspace_, DeviceBuffer::allocate(kWorkspaceBytes));
  LLMPLAN_CUDA_TRY(cublasSetWorkspace(r->handle_, r->workspace_.get(), kWorkspaceBytes));
  return r;
}

GemmRunner::~GemmRunner() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

Status GemmRunner::run(const simulator::KernelDesc& kernel, void* a, void* b, void* c) {
  if (!simulator::is_gemm(kernel.kind)) {
    return Status::invalid_argument(std::string(simulator::kernel_kind_name(kernel.kind)) +
                                    " is not a GEMM");
  }
  const auto& g = kernel.gemm;
  const int64_t m = g.m, n = g.n, k = g.k;
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || g.batch > INT_MAX) {
    return Status::invalid_argument("GEMM dimensions exceed cuBLAS's int range");
  }
  const bool b_transposed = kernel.kind != KernelKind::kAttnValueGemm;
  RowMajorGemm op;
  // Strides per batch of the three buffers, in elements.
  const int64_t stride_a = m * k, stride_b = k * n, stride_c = m * n;
  int64_t sa = 0, sb = 0, sc = 0;
  switch (kernel.pass) {
    case Pass::kForward:
      op = {false, b_transposed, m, n, k, a, b, c};
      sa = stride_a, sb = stride_b, sc = stride_c;
      break;
    case Pass::kBackwardData:  // dA[m,k] = dC[m,n] op(B)^T
      op = {false, !b_transposed, m, k, n, c, b, a};
      sa = stride_c, sb = stride_b, sc = stride_a;
      break;
    case Pass::kBackwardWeight:
      if (b_transposed) {  // dB[n,k] = dC^T A
        op = {true, false, n, k, m, c, a, b};
        sa = stride_c, sb = stride_a, sc = stride_b;
      } else {  // dB[k,n] = A^T dC
        op = {true, false, k, n, m, a, c, b};
        sa = stride_a, sb = stride_c, sc = stride_b;
      }
      break;
    case Pass::kBackward:
      return Status::invalid_argument("GEMMs are measured per pass (fwd, bwd_data, bwd_weight)");
  }
  const cudaDataType_t type =
      kernel.precision == simulator::Precision::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  const cublasOperation_t op_b = op.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = op.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = static_cast<int>(op.trans_b ? op.K : op.N);
  const int lda = static_cast<int>(op.trans_a ? op.M : op.K);
  const int ldc = static_cast<int>(op.N);
  const float alpha = 1.0f, beta = 0.0f;
  if (g.batch == 1) {
    LLMPLAN_CUDA_TRY(cublasGemmEx(handle_, op_b, op_a, static_cast<int>(op.N),
                                  static_cast<int>(op.M), static_cast<int>(op.K), &alpha, op.B,
                                  type, ldb, op.A, type, lda, &beta, op.C, type, ldc,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  } else {
    LLMPLAN_CUDA_TRY(cublasGemmStridedBatchedEx(
        handle_, op_b, op_a, static_cast<int>(op.N), static_cast<int>(op.M), static_cast<int>(op.K),
        &alpha, op.B, type, ldb, sb, op.A, type, lda, sa, &beta, op.C, type, ldc, sc,
        static_cast<int>(g.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  return Status();
}

}  // namespace llmplan::profiler
