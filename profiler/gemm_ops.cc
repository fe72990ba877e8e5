#include "profiler/gemm_ops.h"

#include <climits>
#include <cstdint>
#include <string>

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

bool is_linear_gemm(KernelKind kind) {
  return kind == KernelKind::kQkvGemm || kind == KernelKind::kOutProjGemm ||
         kind == KernelKind::kFc1Gemm || kind == KernelKind::kFc2Gemm;
}

}  // namespace

// The cuBLASLt descriptors and algorithm of one FP8 GEMM.
struct GemmRunner::Fp8Plan {
  simulator::KernelDesc key;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t x = nullptr, y = nullptr, out = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulAlgo_t algo{};

  bool same(const simulator::KernelDesc& k) const {
    return k.kind == key.kind && k.pass == key.pass && k.gemm == key.gemm;
  }
  ~Fp8Plan() {
    if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
    if (out != nullptr) cublasLtMatrixLayoutDestroy(out);
    if (y != nullptr) cublasLtMatrixLayoutDestroy(y);
    if (x != nullptr) cublasLtMatrixLayoutDestroy(x);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

Result<Fp8GemmOperands> fp8_gemm_operands(const simulator::KernelDesc& kernel) {
  const char* name = simulator::kernel_kind_name(kernel.kind);
  if (!is_linear_gemm(kernel.kind)) {
    return Status::invalid_argument(std::string(name) +
                                    ": FP8 GEMMs are the linear layers' (qkv, out_proj, fc1, fc2)");
  }
  const auto& g = kernel.gemm;
  if (g.batch != 1) return Status::invalid_argument(std::string(name) + ": FP8 GEMMs have batch 1");
  switch (kernel.pass) {
    case Pass::kForward:
      return Fp8GemmOperands{g.m, g.n, g.k, false, true};
    case Pass::kBackwardData:
      return Fp8GemmOperands{g.m, g.k, g.n, true, false};
    case Pass::kBackwardWeight:
      return Fp8GemmOperands{g.n, g.k, g.m, true, false};
    case Pass::kBackward:
      break;
  }
  return Status::invalid_argument("GEMMs are measured per pass (fwd, bwd_data, bwd_weight)");
}

GemmRunner::GemmRunner() = default;

Result<std::unique_ptr<GemmRunner>> GemmRunner::create(cudaStream_t stream) {
  std::unique_ptr<GemmRunner> r(new GemmRunner());
  r->stream_ = stream;
  LLMPLAN_CUDA_TRY(cublasCreate(&r->handle_));
  LLMPLAN_CUDA_TRY(cublasSetStream(r->handle_, stream));
  LLMPLAN_CUDA_TRY(cublasLtCreate(&r->lt_));
  LLMPLAN_ASSIGN_OR_RETURN(r->workspace_, DeviceBuffer::allocate(kWorkspaceBytes));
  LLMPLAN_CUDA_TRY(cublasSetWorkspace(r->handle_, r->workspace_.get(), kWorkspaceBytes));
  LLMPLAN_ASSIGN_OR_RETURN(r->scales_, DeviceBuffer::allocate(2 * sizeof(float)));
  const float ones[2] = {1.0f, 1.0f};
  LLMPLAN_CUDA_TRY(cudaMemcpy(r->scales_.get(), ones, sizeof ones, cudaMemcpyHostToDevice));
  return r;
}

GemmRunner::~GemmRunner() {
  fp8_plan_.reset();
  if (lt_ != nullptr) cublasLtDestroy(lt_);
  if (handle_ != nullptr) cublasDestroy(handle_);
}

Status GemmRunner::run_fp8(const simulator::KernelDesc& kernel, const void* x, const void* y,
                           void* out) {
  LLMPLAN_ASSIGN_OR_RETURN(const Fp8GemmOperands o, fp8_gemm_operands(kernel));
  if (o.M % 16 != 0 || o.N % 16 != 0 || o.K % 16 != 0) {
    return Status::invalid_argument("FP8 GEMM dimensions must be multiples of 16");
  }
  if (o.M > INT_MAX || o.N > INT_MAX || o.K > INT_MAX) {
    return Status::invalid_argument("GEMM dimensions exceed cuBLASLt's int range");
  }
  if (fp8_plan_ == nullptr || !fp8_plan_->same(kernel)) {
    fp8_plan_.reset();
    auto plan = std::make_unique<Fp8Plan>();
    plan->key = kernel;
    // Column-major cuBLASLt computes out^T[N,M] = Y[N,K] X^T[K,M]: its A is
    // Y stored [K,N] (ld K) transposed, its B is X stored [K,M] (ld K):
    // the "TN" form FP8 requires.
    LLMPLAN_CUDA_TRY(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LLMPLAN_CUDA_TRY(
        cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LLMPLAN_CUDA_TRY(
        cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const int8_t fast = o.fast_accum ? 1 : 0;
    LLMPLAN_CUDA_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                    &fast, sizeof fast));
    const void* scale_a = scales_.get();
    const void* scale_b = static_cast<const float*>(scales_.get()) + 1;
    LLMPLAN_CUDA_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                    &scale_a, sizeof scale_a));
    LLMPLAN_CUDA_TRY(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                    &scale_b, sizeof scale_b));
    const cudaDataType_t x_type = o.x_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
    LLMPLAN_CUDA_TRY(cublasLtMatrixLayoutCreate(
        &plan->y, CUDA_R_8F_E4M3, static_cast<uint64_t>(o.K), static_cast<uint64_t>(o.N), o.K));
    LLMPLAN_CUDA_TRY(cublasLtMatrixLayoutCreate(&plan->x, x_type, static_cast<uint64_t>(o.K),
                                                static_cast<uint64_t>(o.M), o.K));
    LLMPLAN_CUDA_TRY(cublasLtMatrixLayoutCreate(&plan->out, CUDA_R_16BF, static_cast<uint64_t>(o.N),
                                                static_cast<uint64_t>(o.M), o.N));
    LLMPLAN_CUDA_TRY(cublasLtMatmulPreferenceCreate(&plan->preference));
    const uint64_t workspace = kWorkspaceBytes;
    LLMPLAN_CUDA_TRY(cublasLtMatmulPreferenceSetAttribute(
        plan->preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    LLMPLAN_CUDA_TRY(cublasLtMatmulAlgoGetHeuristic(lt_, plan->op, plan->y, plan->x, plan->out,
                                                    plan->out, plan->preference, 1, &result,
                                                    &found));
    if (found < 1) {
      return Status::internal(std::string(simulator::kernel_kind_name(kernel.kind)) + " " +
                              simulator::pass_name(kernel.pass) +
                              ": cuBLASLt has no FP8 algorithm for M=" + std::to_string(o.M) +
                              " N=" + std::to_string(o.N) + " K=" + std::to_string(o.K));
    }
    plan->algo = result.algo;
    fp8_plan_ = std::move(plan);
  }
  const float alpha = 1.0f, beta = 0.0f;
  const Fp8Plan& p = *fp8_plan_;
  LLMPLAN_CUDA_TRY(cublasLtMatmul(lt_, p.op, &alpha, y, p.y, x, p.x, &beta, out, p.out, out, p.out,
                                  &p.algo, workspace_.get(), kWorkspaceBytes, stream_));
  return Status();
}

Status GemmRunner::run(const simulator::KernelDesc& kernel, void* a, void* b, void* c) {
  if (kernel.precision == simulator::Precision::kFp8) {
    return Status::invalid_argument("FP8 GEMMs run through run_fp8");
  }
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
