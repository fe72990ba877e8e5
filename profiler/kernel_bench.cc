#include "profiler/kernel_bench.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "profiler/attention_kernels.h"
#include "profiler/job_buffers.h"
#include "profiler/memory_kernels.h"

namespace llmplan::profiler {
namespace {

using simulator::KernelKind;
using simulator::Pass;

using Enqueue = std::function<Status()>;

// The Enqueue of one memory-kernel launch; errors quote the call.
#define LLMPLAN_LAUNCH(...) Enqueue([=] { return to_status((__VA_ARGS__), #__VA_ARGS__); })

constexpr float kDropoutP = 0.1f;
constexpr float kSoftmaxScale = 0.125f;
constexpr size_t kMemoryMargin = size_t{512} << 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Device bytes a job allocates (approximately; for the free-memory check).
double job_device_bytes(const KernelJob& job) {
  const auto& g = job.desc.gemm;
  if (job.desc.kind == KernelKind::kFlashAttention) {
    // q, k, v, o (+ do, dq, dk, dv) bf16; dq_accum fp32 backward.
    const double n = static_cast<double>(g.batch) * static_cast<double>(g.m * g.k);
    return job.desc.pass == Pass::kForward ? 8 * n : 20 * n;
  }
  if (job.desc.precision == simulator::Precision::kFp8 && simulator::is_gemm(job.desc.kind)) {
    return static_cast<double>(g.m * g.k + g.k * g.n) + 2.0 * static_cast<double>(g.m * g.n) +
           static_cast<double>(std::max({g.m * g.k, g.k * g.n, g.m * g.n}));
  }
  if (job.desc.kind == KernelKind::kFp8CastTranspose) {
    return 4.0 * static_cast<double>(job.elements());
  }
  if (simulator::is_shape_keyed(job.desc.kind)) {
    return 2.0 * static_cast<double>(g.batch) *
           static_cast<double>(g.m * g.k + g.k * g.n + g.m * g.n);
  }
  const double n = static_cast<double>(job.elements());
  return job.desc.kind == KernelKind::kOptimizerStep ? 18 * n : 6 * n * 2 + 2 * n;
}

bool row_kernel(KernelKind k) { return k == KernelKind::kLayerNorm || k == KernelKind::kSoftmax; }

// Why llmplan-profile's kernels cannot run `job` on the current GPU, or "".
std::string unsupported_reason(const KernelJob& job) {
  const auto& d = job.desc;
  if (d.kind == KernelKind::kFlashAttention) {
    if (d.precision != simulator::Precision::kBf16) {
      return "llmplan-profile's flash attention is bf16 only";
    }
    if (!flash_attention_supports_head_dim(d.gemm.k)) {
      return "head dim " + std::to_string(d.gemm.k) +
             " (llmplan-profile's flash attention is built for 64, 80, 96 and 128)";
    }
    int device = 0, optin = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess) {
      return "cannot read the GPU's shared memory per block";
    }
    const size_t need = flash_attention_shared_bytes(d.pass == Pass::kForward, d.gemm.k);
    if (need > static_cast<size_t>(optin)) {
      return "needs " + std::to_string(need / 1024) + " KiB of shared memory per block, the GPU " +
             "allows " + std::to_string(optin / 1024) + " KiB";
    }
  }
  if (d.precision == simulator::Precision::kFp8 && simulator::is_gemm(d.kind)) {
    Result<Fp8GemmOperands> o = fp8_gemm_operands(d);
    if (!o.ok()) return o.status().message();
    if (o->M % 16 != 0 || o->N % 16 != 0 || o->K % 16 != 0) {
      return "cuBLASLt FP8 needs M, N, K multiples of 16 (M=" + std::to_string(o->M) +
             " N=" + std::to_string(o->N) + " K=" + std::to_string(o->K) + ")";
    }
  }
  return "";
}

// The layer norm's buffers and launch (forward or backward).
Result<Enqueue> prepare_layernorm(JobBuffers* b, cudaStream_t s, ElemType t, bool fwd,
                                  int64_t rows, int64_t cols, int64_t n) {
  LLMPLAN_ASSIGN_OR_RETURN(void* x, b->half(n));
  LLMPLAN_ASSIGN_OR_RETURN(void* gamma, b->half(cols));
  LLMPLAN_ASSIGN_OR_RETURN(float* mean, b->f32(rows, -0.1f, 0.1f));
  LLMPLAN_ASSIGN_OR_RETURN(float* rstd, b->f32(rows, 0.9f, 1.1f));
  LLMPLAN_ASSIGN_OR_RETURN(void* out, b->half(n));
  if (fwd) {
    LLMPLAN_ASSIGN_OR_RETURN(void* beta, b->half(cols));
    return LLMPLAN_LAUNCH(layernorm_forward(t, x, gamma, beta, out, mean, rstd, rows, cols, s));
  }
  LLMPLAN_ASSIGN_OR_RETURN(void* dy, b->half(n));
  LLMPLAN_ASSIGN_OR_RETURN(float* partial,
                           b->f32(2 * layernorm_partial_rows(rows) * cols, 0.f, 0.f));
  LLMPLAN_ASSIGN_OR_RETURN(void* dgamma, b->half(cols));
  LLMPLAN_ASSIGN_OR_RETURN(void* dbeta, b->half(cols));
  return LLMPLAN_LAUNCH(layernorm_backward(t, dy, x, gamma, mean, rstd, out, partial, dgamma,
                                           dbeta, rows, cols, s));
}

// Flash attention's buffers and launch; the backward first runs the forward
// for the output and log-sum-exp it reads.
Result<Enqueue> prepare_flash_attention(const simulator::KernelDesc& d, JobBuffers* b,
                                        cudaStream_t s, bool fwd) {
  const int64_t heads = d.gemm.batch, seq = d.gemm.m, dim = d.gemm.k;
  const int64_t e = heads * seq * dim;
  LLMPLAN_ASSIGN_OR_RETURN(void* q, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(void* k, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(void* v, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(void* o, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(float* lse, b->f32(heads * seq, 0.f, 0.f));
  if (fwd) {
    return LLMPLAN_LAUNCH(flash_attention_forward(q, k, v, o, lse, heads, seq, dim, s));
  }
  // The backward reads the forward's output and log-sum-exp.
  LLMPLAN_CUDA_TRY(flash_attention_forward(q, k, v, o, lse, heads, seq, dim, s));
  LLMPLAN_ASSIGN_OR_RETURN(void* d_o, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(float* delta, b->f32(heads * seq, 0.f, 0.f));
  LLMPLAN_ASSIGN_OR_RETURN(float* dq_accum, b->f32(e, 0.f, 0.f));
  LLMPLAN_ASSIGN_OR_RETURN(void* dq, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(void* dk, b->half(e));
  LLMPLAN_ASSIGN_OR_RETURN(void* dv, b->half(e));
  return LLMPLAN_LAUNCH(flash_attention_backward(q, k, v, o, d_o, lse, delta, dq_accum, dq, dk,
                                                 dv, heads, seq, dim, s));
}

// Allocates the job's buffers in *b and returns the launch of its op.
Result<Enqueue> prepare(const KernelJob& job, JobBuffers* b, cudaStream_t s, GemmRunner* gemm) {
  const auto& d = job.desc;
  const ElemType t = d.precision == simulator::Precision::kFp16 ? ElemType::kFp16 : ElemType::kBf16;
  const bool fwd = d.pass == Pass::kForward;
  const int64_t rows = job.rows, cols = job.cols, n = job.elements();
  if (simulator::is_gemm(d.kind) && d.precision == simulator::Precision::kFp8) {
    LLMPLAN_ASSIGN_OR_RETURN(const Fp8GemmOperands o, fp8_gemm_operands(d));
    LLMPLAN_ASSIGN_OR_RETURN(void* x,
                             b->fp8(o.M * o.K, o.x_e5m2 ? Fp8Format::kE5M2 : Fp8Format::kE4M3));
    LLMPLAN_ASSIGN_OR_RETURN(void* y, b->fp8(o.N * o.K, Fp8Format::kE4M3));
    LLMPLAN_ASSIGN_OR_RETURN(void* out, b->half(o.M * o.N));
    return Enqueue([gemm, d, x, y, out] { return gemm->run_fp8(d, x, y, out); });
  }
  if (simulator::is_gemm(d.kind)) {
    const auto& g = d.gemm;
    LLMPLAN_ASSIGN_OR_RETURN(void* a, b->half(g.batch * g.m * g.k));
    LLMPLAN_ASSIGN_OR_RETURN(void* bb, b->half(g.batch * g.k * g.n));
    LLMPLAN_ASSIGN_OR_RETURN(void* c, b->half(g.batch * g.m * g.n));
    return Enqueue([gemm, d, a, bb, c] { return gemm->run(d, a, bb, c); });
  }
  switch (d.kind) {
    case KernelKind::kLayerNorm:
      return prepare_layernorm(b, s, t, fwd, rows, cols, n);
    case KernelKind::kSoftmax: {
      LLMPLAN_ASSIGN_OR_RETURN(void* x, b->half(n));
      LLMPLAN_ASSIGN_OR_RETURN(void* out, b->half(n));
      if (fwd) return LLMPLAN_LAUNCH(softmax_forward(t, x, out, rows, cols, kSoftmaxScale, s));
      LLMPLAN_ASSIGN_OR_RETURN(void* dy, b->half(n));
      return LLMPLAN_LAUNCH(softmax_backward(t, x, dy, out, rows, cols, kSoftmaxScale, s));
    }
    case KernelKind::kAttnDropout:
    case KernelKind::kDropoutResidual: {
      LLMPLAN_ASSIGN_OR_RETURN(void* x, b->half(n));
      LLMPLAN_ASSIGN_OR_RETURN(uint8_t * mask, b->mask(n));
      LLMPLAN_ASSIGN_OR_RETURN(void* out, b->half(n));
      if (!fwd) return LLMPLAN_LAUNCH(dropout_backward(t, x, mask, out, n, kDropoutP, s));
      if (d.kind == KernelKind::kAttnDropout) {
        return LLMPLAN_LAUNCH(dropout_forward(t, x, out, mask, n, kDropoutP, 7, s));
      }
      LLMPLAN_ASSIGN_OR_RETURN(void* res, b->half(n));
      return LLMPLAN_LAUNCH(dropout_residual_forward(t, x, res, out, mask, n, kDropoutP, 7, s));
    }
    case KernelKind::kActivation: {
      LLMPLAN_ASSIGN_OR_RETURN(void* x, b->half(n));
      LLMPLAN_ASSIGN_OR_RETURN(void* out, b->half(n));
      if (!job.swiglu) {
        if (fwd) return LLMPLAN_LAUNCH(gelu_forward(t, x, out, n, s));
        LLMPLAN_ASSIGN_OR_RETURN(void* dy, b->half(n));
        return LLMPLAN_LAUNCH(gelu_backward(t, x, dy, out, n, s));
      }
      LLMPLAN_ASSIGN_OR_RETURN(void* up, b->half(n));
      if (fwd) return LLMPLAN_LAUNCH(swiglu_forward(t, x, up, out, n, s));
      LLMPLAN_ASSIGN_OR_RETURN(void* dy, b->half(n));
      LLMPLAN_ASSIGN_OR_RETURN(void* dup, b->half(n));
      return LLMPLAN_LAUNCH(swiglu_backward(t, x, up, dy, out, dup, n, s));
    }
    case KernelKind::kFlashAttention:
      return prepare_flash_attention(d, b, s, fwd);
    case KernelKind::kFp8CastTranspose: {
      // Forward casts activations to E4M3, backward gradients to E5M2.
      const Fp8Format f = fwd ? Fp8Format::kE4M3 : Fp8Format::kE5M2;
      LLMPLAN_ASSIGN_OR_RETURN(void* x, b->half(n));
      LLMPLAN_ASSIGN_OR_RETURN(float* scale, b->f32(1, 1.f, 1.f));
      LLMPLAN_ASSIGN_OR_RETURN(float* amax, b->f32(1, 0.f, 0.f));
      LLMPLAN_ASSIGN_OR_RETURN(void* y, b->fp8(n, f));
      LLMPLAN_ASSIGN_OR_RETURN(void* y_t, b->fp8(n, f));
      return LLMPLAN_LAUNCH(fp8_cast_transpose(f, x, scale, y, y_t, amax, rows, cols, s));
    }
    case KernelKind::kOptimizerStep: {
      LLMPLAN_ASSIGN_OR_RETURN(float* master, b->f32(n, -0.05f, 0.05f));
      LLMPLAN_ASSIGN_OR_RETURN(float* m, b->f32(n, -1e-3f, 1e-3f));
      LLMPLAN_ASSIGN_OR_RETURN(float* v, b->f32(n, 0.f, 1e-6f));
      LLMPLAN_ASSIGN_OR_RETURN(float* grad, b->f32(n, -1e-3f, 1e-3f));
      LLMPLAN_ASSIGN_OR_RETURN(void* param, b->half(n));
      return LLMPLAN_LAUNCH(adam_step(t, master, m, v, grad, param, n, AdamHyper{}, s));
    }
    default:
      return Status::invalid_argument(std::string("llmplan-profile has no kernel for ") +
                                      simulator::kernel_kind_name(d.kind));
  }
}

#undef LLMPLAN_LAUNCH

}  // namespace

Result<std::unique_ptr<BenchSession>> BenchSession::start() {
  std::unique_ptr<BenchSession> s(new BenchSession());
  LLMPLAN_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream_, cudaStreamNonBlocking));
  LLMPLAN_ASSIGN_OR_RETURN(s->gemm_, GemmRunner::create(s->stream_));
  LLMPLAN_ASSIGN_OR_RETURN(s->timer_, CuptiKernelTimer::start());
  return s;
}

BenchSession::~BenchSession() {
  timer_.reset();
  gemm_.reset();
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Result<OpTiming> time_op(const std::string& what, const std::function<Status()>& enqueue,
                         const BenchSettings& settings, cudaStream_t stream,
                         CuptiKernelTimer* timer) {
  for (int i = 0; i < settings.warmup; ++i) LLMPLAN_RETURN_IF_ERROR(enqueue());
  LLMPLAN_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<KernelRecord> records;
  LLMPLAN_RETURN_IF_ERROR(timer->flush(&records));  // warm-up and fills: discarded
  records.clear();

  const int reps = settings.repeats;
  std::vector<cudaEvent_t> events(2 * static_cast<size_t>(reps), nullptr);
  struct EventsGuard {
    std::vector<cudaEvent_t>* e;
    ~EventsGuard() {
      for (cudaEvent_t x : *e) {
        if (x != nullptr) cudaEventDestroy(x);
      }
    }
  } guard{&events};
  for (cudaEvent_t& e : events) LLMPLAN_CUDA_TRY(cudaEventCreate(&e));
  std::vector<uint64_t> rep_start(static_cast<size_t>(reps) + 1);
  for (int r = 0; r < reps; ++r) {
    rep_start[static_cast<size_t>(r)] = CuptiKernelTimer::now_ns();
    LLMPLAN_CUDA_TRY(cudaEventRecord(events[2 * static_cast<size_t>(r)], stream));
    LLMPLAN_RETURN_IF_ERROR(enqueue());
    LLMPLAN_CUDA_TRY(cudaEventRecord(events[2 * static_cast<size_t>(r) + 1], stream));
    LLMPLAN_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  rep_start[static_cast<size_t>(reps)] = CuptiKernelTimer::now_ns();
  LLMPLAN_RETURN_IF_ERROR(timer->flush(&records));

  std::sort(records.begin(), records.end(),
            [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  std::vector<double> kernel_s(static_cast<size_t>(reps), 0.0);
  std::vector<int> kernels_in(static_cast<size_t>(reps), 0);
  std::vector<std::string> names;
  for (const KernelRecord& k : records) {
    auto it = std::upper_bound(rep_start.begin(), rep_start.end(), k.start_ns);
    if (it == rep_start.begin() || it == rep_start.end()) continue;  // outside the timed window
    const size_t r = static_cast<size_t>(it - rep_start.begin()) - 1;
    kernel_s[r] += static_cast<double>(k.end_ns - k.start_ns) * 1e-9;
    ++kernels_in[r];
    if (r == 0 && std::find(names.begin(), names.end(), k.name) == names.end()) {
      names.push_back(k.name);
    }
  }
  for (int r = 0; r < reps; ++r) {
    if (kernels_in[static_cast<size_t>(r)] == 0) {
      return Status::internal(what + ": CUPTI recorded no kernel for repetition " +
                              std::to_string(r));
    }
  }
  std::vector<double> event_s;
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    LLMPLAN_CUDA_TRY(cudaEventElapsedTime(&ms, events[2 * static_cast<size_t>(r)],
                                          events[2 * static_cast<size_t>(r) + 1]));
    event_s.push_back(ms * 1e-3);
  }

  OpTiming t;
  t.time_s = median(kernel_s);
  t.min_time_s = *std::min_element(kernel_s.begin(), kernel_s.end());
  t.max_time_s = *std::max_element(kernel_s.begin(), kernel_s.end());
  t.event_time_s = median(event_s);
  t.repeats = reps;
  t.kernel_names = std::move(names);
  return t;
}

Result<std::optional<simulator::ProfileKernel>> measure_kernel_job(
    const KernelJob& job, const BenchSettings& settings, cudaStream_t stream, GemmRunner* gemm,
    CuptiKernelTimer* timer, std::string* skip_reason) {
  const std::string what = std::string(simulator::kernel_kind_name(job.desc.kind)) + " " +
                           simulator::pass_name(job.desc.pass);
  if (row_kernel(job.desc.kind) && job.cols % 8 != 0) {
    *skip_reason = what + ": row length " + std::to_string(job.cols) + " is not a multiple of 8";
    return std::optional<simulator::ProfileKernel>();
  }
  if (std::string why = unsupported_reason(job); !why.empty()) {
    *skip_reason = what + ": " + why;
    return std::optional<simulator::ProfileKernel>();
  }
  size_t free_bytes = 0, total_bytes = 0;
  LLMPLAN_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double need = job_device_bytes(job);
  if (need + static_cast<double>(kMemoryMargin) > static_cast<double>(free_bytes)) {
    *skip_reason = what + ": needs " + std::to_string(static_cast<int64_t>(need / 1e6)) + " MB, " +
                   std::to_string(free_bytes / 1000000) + " MB free";
    return std::optional<simulator::ProfileKernel>();
  }

  // FP8 jobs' 16-bit tensors (GEMM outputs, cast inputs) are bf16.
  JobBuffers buffers(
      job.desc.precision == simulator::Precision::kFp16 ? ElemType::kFp16 : ElemType::kBf16,
      stream);
  LLMPLAN_ASSIGN_OR_RETURN(Enqueue enqueue, prepare(job, &buffers, stream, gemm));
  LLMPLAN_ASSIGN_OR_RETURN(OpTiming t, time_op(what, enqueue, settings, stream, timer));

  simulator::ProfileKernel k;
  k.kind = job.desc.kind;
  k.pass = job.desc.pass;
  k.precision = job.desc.precision;
  k.gemm = simulator::is_shape_keyed(job.desc.kind) ? job.desc.gemm : simulator::GemmShape{};
  k.bytes = simulator::is_shape_keyed(job.desc.kind) ? 0 : job.desc.bytes;
  k.flops = job.desc.flops;
  k.elements = simulator::is_shape_keyed(job.desc.kind) ? 0 : job.elements();
  k.time_s = t.time_s;
  k.min_time_s = t.min_time_s;
  k.max_time_s = t.max_time_s;
  k.event_time_s = t.event_time_s;
  k.repeats = t.repeats;
  k.kernel_names = std::move(t.kernel_names);
  return std::optional<simulator::ProfileKernel>(std::move(k));
}

}  // namespace llmplan::profiler
