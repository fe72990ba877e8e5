#include "profiler/moe_bench.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "profiler/job_buffers.h"
#include "profiler/moe_kernels.h"

namespace llmplan::profiler {
namespace {

using simulator::Pass;
using Enqueue = std::function<Status()>;

constexpr size_t kMemoryMargin = size_t{512} << 20;
constexpr uint64_t kRoutingSeed = 20261125;

// One expert's GEMM in cuBLAS's column-major terms (see gemm_for).
struct ExpertGemm {
  cublasOperation_t op_a = CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int lda = 0, ldb = 0, ldc = 0;
};

// Expert i's GEMM of job.pass, with m_i tokens from row `row0` on, on the
// buffers x (rows x k: the tokens, or dA), w (e x k x n: the weights, or
// dB) and y (rows x n: the output, or dC), all row-major bf16. A row-major
// X[r, c] is cuBLAS's column-major X^T with leading dimension c, so
//   fwd         C = A B      ->  C^T = B^T A^T       (N, N) M=n N=m K=k
//   bwd_data    dA = dC B^T  ->  dA^T = B dC^T       (T, N) M=k N=m K=n
//   bwd_weight  dB = A^T dC  ->  dB^T = dC^T A       (N, T) M=n N=k K=m
ExpertGemm gemm_for(const MoeJob& job, int64_t i, int64_t m_i, int64_t row0, void* x, void* w,
                    void* y) {
  auto* xp = static_cast<uint16_t*>(x) + row0 * job.k;
  auto* wp = static_cast<uint16_t*>(w) + i * job.k * job.n;
  auto* yp = static_cast<uint16_t*>(y) + row0 * job.n;
  const int n = static_cast<int>(job.n), k = static_cast<int>(job.k), m = static_cast<int>(m_i);
  switch (job.pass) {
    case Pass::kBackwardData:
      return {CUBLAS_OP_T, CUBLAS_OP_N, k, m, n, wp, yp, xp, n, n, k};
    case Pass::kBackwardWeight:
      return {CUBLAS_OP_N, CUBLAS_OP_T, n, k, m, yp, xp, wp, n, k, n};
    default:
      return {CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, wp, xp, yp, n, k, n};
  }
}

const float kOne = 1.f, kZero = 0.f;

Status gemm_ex(cublasHandle_t h, const ExpertGemm& g) {
  return to_status(cublasGemmEx(h, g.op_a, g.op_b, g.m, g.n, g.k, &kOne, g.a, CUDA_R_16BF, g.lda,
                                g.b, CUDA_R_16BF, g.ldb, &kZero, g.c, CUDA_R_16BF, g.ldc,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
}

// The enqueue of a grouped expert GEMM job on buffers x, w, y (gemm_for).
Result<Enqueue> prepare_grouped(const MoeJob& job, cublasHandle_t h, void* x, void* w, void* y,
                                JobBuffers* b) {
  std::vector<ExpertGemm> gemms;
  int64_t row0 = 0;
  for (int64_t i = 0; i < job.local_experts; ++i) {
    const int64_t m_i = job.expert_m[static_cast<size_t>(i)];
    if (m_i > 0) gemms.push_back(gemm_for(job, i, m_i, row0, x, w, y));
    row0 += m_i;
  }
  if (job.impl == GroupedImpl::kLoop) {
    return Enqueue([h, gemms] {
      for (const ExpertGemm& g : gemms) LLMPLAN_RETURN_IF_ERROR(gemm_ex(h, g));
      return Status();
    });
  }
  if (job.impl == GroupedImpl::kStridedBatched) {
    const ExpertGemm g = gemms.front();
    // Stride between consecutive experts' operands, in elements.
    auto stride = [&](const void* first, const void* second) {
      return static_cast<long long>(static_cast<const uint16_t*>(second) -
                                    static_cast<const uint16_t*>(first));
    };
    const ExpertGemm g1 = gemms.size() > 1 ? gemms[1] : gemms[0];
    const long long sa = stride(g.a, g1.a), sb = stride(g.b, g1.b);
    const long long sc = stride(g.c, g1.c);
    const int batch = static_cast<int>(gemms.size());
    return Enqueue([h, g, sa, sb, sc, batch] {
      return to_status(cublasGemmStridedBatchedEx(h, g.op_a, g.op_b, g.m, g.n, g.k, &kOne, g.a,
                                                  CUDA_R_16BF, g.lda, sa, g.b, CUDA_R_16BF, g.ldb,
                                                  sb, &kZero, g.c, CUDA_R_16BF, g.ldc, sc, batch,
                                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmStridedBatchedEx");
    });
  }
  // Grouped: one group of one problem per expert; pointer arrays on the device.
  struct Arrays {
    std::vector<cublasOperation_t> op_a, op_b;
    std::vector<int> m, n, k, lda, ldb, ldc, group_size;
    std::vector<float> alpha, beta;
    const void* const* a = nullptr;
    const void* const* b = nullptr;
    void* const* c = nullptr;
  };
  auto arr = std::make_shared<Arrays>();
  std::vector<const void*> pa, pb;
  std::vector<void*> pc;
  for (const ExpertGemm& g : gemms) {
    arr->op_a.push_back(g.op_a);
    arr->op_b.push_back(g.op_b);
    arr->m.push_back(g.m);
    arr->n.push_back(g.n);
    arr->k.push_back(g.k);
    arr->lda.push_back(g.lda);
    arr->ldb.push_back(g.ldb);
    arr->ldc.push_back(g.ldc);
    arr->group_size.push_back(1);
    arr->alpha.push_back(1.f);
    arr->beta.push_back(0.f);
    pa.push_back(g.a);
    pb.push_back(g.b);
    pc.push_back(g.c);
  }
  const size_t bytes = gemms.size() * sizeof(void*);
  LLMPLAN_ASSIGN_OR_RETURN(void* da, b->copy_in(pa.data(), bytes));
  LLMPLAN_ASSIGN_OR_RETURN(void* db, b->copy_in(pb.data(), bytes));
  LLMPLAN_ASSIGN_OR_RETURN(void* dc, b->copy_in(pc.data(), bytes));
  arr->a = static_cast<const void* const*>(da);
  arr->b = static_cast<const void* const*>(db);
  arr->c = static_cast<void* const*>(dc);
  const int groups = static_cast<int>(gemms.size());
  return Enqueue([h, arr, groups] {
    return to_status(
        cublasGemmGroupedBatchedEx(
            h, arr->op_a.data(), arr->op_b.data(), arr->m.data(), arr->n.data(), arr->k.data(),
            arr->alpha.data(), arr->a, CUDA_R_16BF, arr->lda.data(), arr->b, CUDA_R_16BF,
            arr->ldb.data(), arr->beta.data(), arr->c, CUDA_R_16BF, arr->ldc.data(), groups,
            arr->group_size.data(), CUBLAS_COMPUTE_32F),
        "cublasGemmGroupedBatchedEx");
  });
}

// A random top-k routing of `tokens` tokens (distinct experts per token),
// sorted into expert order: src[r] is the token of permuted row r, pos[t*k+j]
// the permuted row of token t's j-th copy.
void random_routing(int64_t tokens, int experts, int top_k, std::vector<int32_t>* src,
                    std::vector<int32_t>* pos) {
  std::mt19937_64 rng(kRoutingSeed);
  std::vector<int32_t> expert(static_cast<size_t>(tokens * top_k));
  std::vector<int32_t> all(static_cast<size_t>(experts));
  std::iota(all.begin(), all.end(), 0);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int j = 0; j < top_k; ++j) {  // partial Fisher-Yates: k distinct experts
      std::uniform_int_distribution<int> pick(j, experts - 1);
      std::swap(all[static_cast<size_t>(j)], all[static_cast<size_t>(pick(rng))]);
      expert[static_cast<size_t>(t * top_k + j)] = all[static_cast<size_t>(j)];
    }
  }
  std::vector<int32_t> order(expert.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return expert[static_cast<size_t>(a)] < expert[static_cast<size_t>(b)];
  });
  src->resize(order.size());
  pos->resize(order.size());
  for (size_t r = 0; r < order.size(); ++r) {
    (*src)[r] = order[r] / top_k;
    (*pos)[static_cast<size_t>(order[r])] = static_cast<int32_t>(r);
  }
}

#define LLMPLAN_LAUNCH(...) Enqueue([=] { return to_status((__VA_ARGS__), #__VA_ARGS__); })

// Routing and permutation jobs: buffers and the launch of their kernels.
Result<Enqueue> prepare_routing(const MoeJob& j, JobBuffers* b, cudaStream_t s) {
  const int64_t t = j.tokens, h = j.model.hidden, rows = t * j.model.top_k;
  const int e = j.model.experts, k = j.model.top_k;
  const bool fwd = j.pass == Pass::kForward;
  if (j.op == MoeOp::kRouterTopk) {
    const bool sigmoid = j.model.score == RouterScore::kSigmoid;
    LLMPLAN_ASSIGN_OR_RETURN(void* logits, b->half(t * e));
    LLMPLAN_ASSIGN_OR_RETURN(float* w, b->f32(rows, 0.f, 1.f));
    LLMPLAN_ASSIGN_OR_RETURN(void* idx_raw,
                             b->copy_in(std::vector<int32_t>(rows).data(), rows * 4));
    auto* idx = static_cast<int32_t*>(idx_raw);
    if (fwd) return LLMPLAN_LAUNCH(router_topk_forward(logits, w, idx, t, e, k, sigmoid, s));
    LLMPLAN_CUDA_TRY(router_topk_forward(logits, w, idx, t, e, k, sigmoid, s));  // real indices
    LLMPLAN_ASSIGN_OR_RETURN(float* dw, b->f32(rows, -1.f, 1.f));
    LLMPLAN_ASSIGN_OR_RETURN(void* dlogits, b->half(t * e));
    return LLMPLAN_LAUNCH(router_topk_backward(logits, idx, dw, dlogits, t, e, k, sigmoid, s));
  }
  std::vector<int32_t> src_h, pos_h;
  random_routing(t, e, k, &src_h, &pos_h);
  LLMPLAN_ASSIGN_OR_RETURN(void* src_raw, b->copy_in(src_h.data(), src_h.size() * 4));
  LLMPLAN_ASSIGN_OR_RETURN(void* pos_raw, b->copy_in(pos_h.data(), pos_h.size() * 4));
  const auto* src = static_cast<const int32_t*>(src_raw);
  const auto* pos = static_cast<const int32_t*>(pos_raw);
  LLMPLAN_ASSIGN_OR_RETURN(void* tok, b->half(t * h));        // x, dx, y or dy
  LLMPLAN_ASSIGN_OR_RETURN(void* routed, b->half(rows * h));  // permuted rows
  if (j.op == MoeOp::kPermute) {
    if (fwd) return LLMPLAN_LAUNCH(permute_tokens(tok, src, routed, rows, h, s));
    return LLMPLAN_LAUNCH(permute_tokens_backward(routed, pos, tok, t, k, h, s));
  }
  LLMPLAN_ASSIGN_OR_RETURN(float* w, b->f32(rows, 0.f, 1.f));
  if (fwd) return LLMPLAN_LAUNCH(unpermute_tokens(routed, pos, w, tok, t, k, h, s));
  LLMPLAN_ASSIGN_OR_RETURN(void* d_routed, b->half(rows * h));
  LLMPLAN_ASSIGN_OR_RETURN(float* dw, b->f32(rows, 0.f, 0.f));
  return LLMPLAN_LAUNCH(unpermute_tokens_backward(tok, routed, pos, w, d_routed, dw, t, k, h, s));
}

#undef LLMPLAN_LAUNCH

double moe_job_device_bytes(const MoeJob& j) {
  if (j.op == MoeOp::kExpertFc1 || j.op == MoeOp::kExpertFc2 || j.op == MoeOp::kRouterGemm) {
    const double rows =
        j.op == MoeOp::kRouterGemm ? j.m : static_cast<double>(j.local_experts * j.m);
    const double e = j.op == MoeOp::kRouterGemm ? 1 : static_cast<double>(j.local_experts);
    return 2.0 * (rows * j.k + e * j.k * j.n + rows * j.n);
  }
  const double rows = static_cast<double>(j.tokens * j.model.top_k);
  return 2.0 * (2 * rows + static_cast<double>(j.tokens)) * j.model.hidden +
         4.0 * static_cast<double>(j.tokens) * j.model.experts + 16 * rows;
}

}  // namespace

Result<std::optional<OpTiming>> measure_moe_job(const MoeJob& job, const BenchSettings& settings,
                                                cudaStream_t stream, GemmRunner* gemm,
                                                CuptiKernelTimer* timer, std::string* skip_reason) {
  const std::string what = describe_moe_job(job);
  size_t free_bytes = 0, total_bytes = 0;
  LLMPLAN_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double need = moe_job_device_bytes(job);
  if (need + static_cast<double>(kMemoryMargin) > static_cast<double>(free_bytes)) {
    *skip_reason = what + ": needs " + std::to_string(static_cast<int64_t>(need / 1e6)) + " MB, " +
                   std::to_string(free_bytes / 1000000) + " MB free";
    return std::optional<OpTiming>();
  }
  JobBuffers b(ElemType::kBf16, stream);
  Enqueue enqueue;
  if (job.op == MoeOp::kRouterGemm) {
    // The router is an nn.Linear without bias: weight [E, h], as GemmRunner
    // runs a linear layer's GEMM (fc1_gemm's layout).
    simulator::KernelDesc d;
    d.kind = simulator::KernelKind::kFc1Gemm;
    d.pass = job.pass;
    d.precision = simulator::Precision::kBf16;
    d.gemm = {job.m, job.n, job.k, 1};
    LLMPLAN_ASSIGN_OR_RETURN(void* a, b.half(job.m * job.k));
    LLMPLAN_ASSIGN_OR_RETURN(void* w, b.half(job.k * job.n));
    LLMPLAN_ASSIGN_OR_RETURN(void* c, b.half(job.m * job.n));
    enqueue = [gemm, d, a, w, c] { return gemm->run(d, a, w, c); };
  } else if (job.op == MoeOp::kExpertFc1 || job.op == MoeOp::kExpertFc2) {
    const int64_t rows = job.local_experts * job.m;
    LLMPLAN_ASSIGN_OR_RETURN(void* x, b.half(rows * job.k));
    LLMPLAN_ASSIGN_OR_RETURN(void* w, b.half(job.local_experts * job.k * job.n));
    LLMPLAN_ASSIGN_OR_RETURN(void* y, b.half(rows * job.n));
    LLMPLAN_ASSIGN_OR_RETURN(enqueue, prepare_grouped(job, gemm->handle(), x, w, y, &b));
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(enqueue, prepare_routing(job, &b, stream));
  }
  // A cuBLAS call it refuses (e.g. a grouped GEMM it does not support) is a
  // skipped job, not a failed run.
  if (Status s = enqueue(); !s.ok()) {
    *skip_reason = what + ": " + s.message();
    return std::optional<OpTiming>();
  }
  LLMPLAN_ASSIGN_OR_RETURN(OpTiming t, time_op(what, enqueue, settings, stream, timer));
  return std::optional<OpTiming>(std::move(t));
}

Status measure_moe_jobs(const std::vector<MoeJob>& jobs, const BenchSettings& settings,
                        MoeProfile* profile) {
  LLMPLAN_ASSIGN_OR_RETURN(std::unique_ptr<BenchSession> session, BenchSession::start());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const MoeJob& job = jobs[i];
    std::string skipped;
    LLMPLAN_ASSIGN_OR_RETURN(std::optional<OpTiming> t,
                             measure_moe_job(job, settings, session->stream(), session->gemm(),
                                             session->timer(), &skipped));
    if (!t) {
      std::fprintf(stderr, "[%zu/%zu] skipped: %s\n", i + 1, jobs.size(), skipped.c_str());
      profile->notes.push_back("not measured: " + skipped);
      continue;
    }
    const double rate = job.flops > 0 ? job.flops / t->time_s / 1e12 : job.bytes / t->time_s / 1e9;
    std::fprintf(stderr, "[%zu/%zu] %s: %.1f us, %.1f %s\n", i + 1, jobs.size(),
                 describe_moe_job(job).c_str(), t->time_s * 1e6, rate,
                 job.flops > 0 ? "TFLOP/s" : "GB/s");
    profile->entries.push_back({job, std::move(*t)});
  }
  return Status();
}

}  // namespace llmplan::profiler
