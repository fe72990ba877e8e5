#include "profiler/kernel_bench.h"

#include <algorithm>
#include <functional>
#include <vector>

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

// Buffers of one job, allocated and filled on `stream`.
class Buffers {
 public:
  Buffers(ElemType type, cudaStream_t stream) : type_(type), stream_(stream) {}

  // n 16-bit elements, uniform in [-1, 1].
  Result<void*> half(int64_t n) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n) * 2));
    LLMPLAN_CUDA_TRY(fill_uniform(type_, p, n, ++seed_, 1.0f, stream_));
    return p;
  }
  // n floats, uniform in [lo, hi].
  Result<float*> f32(int64_t n, float lo, float hi) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n) * 4));
    LLMPLAN_CUDA_TRY(fill_uniform_f32(static_cast<float*>(p), n, ++seed_, lo, hi, stream_));
    return static_cast<float*>(p);
  }
  // n bytes set to 1 (a dropout mask that keeps everything).
  Result<uint8_t*> mask(int64_t n) {
    LLMPLAN_ASSIGN_OR_RETURN(void* p, raw(static_cast<size_t>(n)));
    LLMPLAN_CUDA_TRY(cudaMemsetAsync(p, 1, static_cast<size_t>(n), stream_));
    return static_cast<uint8_t*>(p);
  }

 private:
  Result<void*> raw(size_t bytes) {
    LLMPLAN_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(bytes));
    void* p = b.get();
    owned_.push_back(std::move(b));
    return p;
  }
  ElemType type_;
  cudaStream_t stream_;
  uint64_t seed_ = 0;
  std::vector<DeviceBuffer> owned_;
};

// Device bytes a job allocates (approximately; for the free-memory check).
double job_device_bytes(const KernelJob& job) {
  const auto& g = job.desc.gemm;
  if (simulator::is_shape_keyed(job.desc.kind)) {
    return 2.0 * static_cast<double>(g.batch) *
           static_cast<double>(g.m * g.k + g.k * g.n + g.m * g.n);
  }
  const double n = static_cast<double>(job.elements());
  return job.desc.kind == KernelKind::kOptimizerStep ? 18 * n : 6 * n * 2 + 2 * n;
}

bool row_kernel(KernelKind k) { return k == KernelKind::kLayerNorm || k == KernelKind::kSoftmax; }

// Allocates the job's buffers in *b and returns the launch of its op.
Result<Enqueue> prepare(const KernelJob& job, Buffers* b, cudaStream_t s, GemmRunner* gemm) {
  const auto& d = job.desc;
  const ElemType t = d.precision == simulator::Precision::kBf16 ? ElemType::kBf16 : ElemType::kFp16;
  const bool fwd = d.pass == Pass::kForward;
  const int64_t rows = job.rows, cols = job.cols, n = job.elements();
  if (simulator::is_gemm(d.kind)) {
    const auto& g = d.gemm;
    LLMPLAN_ASSIGN_OR_RETURN(void* a, b->half(g.batch * g.m * g.k));
    LLMPLAN_ASSIGN_OR_RETURN(void* bb, b->half(g.batch * g.k * g.n));
    LLMPLAN_ASSIGN_OR_RETURN(void* c, b->half(g.batch * g.m * g.n));
    return Enqueue([gemm, d, a, bb, c] { return gemm->run(d, a, bb, c); });
  }
  switch (d.kind) {
    case KernelKind::kLayerNorm: {
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

Result<std::optional<simulator::ProfileKernel>> measure_kernel_job(
    const KernelJob& job, const BenchSettings& settings, cudaStream_t stream, GemmRunner* gemm,
    CuptiKernelTimer* timer, std::string* skip_reason) {
  const std::string what = std::string(simulator::kernel_kind_name(job.desc.kind)) + " " +
                           simulator::pass_name(job.desc.pass);
  if (row_kernel(job.desc.kind) && job.cols % 8 != 0) {
    *skip_reason = what + ": row length " + std::to_string(job.cols) + " is not a multiple of 8";
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

  Buffers buffers(
      job.desc.precision == simulator::Precision::kBf16 ? ElemType::kBf16 : ElemType::kFp16,
      stream);
  LLMPLAN_ASSIGN_OR_RETURN(Enqueue enqueue, prepare(job, &buffers, stream, gemm));
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

  simulator::ProfileKernel k;
  k.kind = job.desc.kind;
  k.pass = job.desc.pass;
  k.precision = job.desc.precision;
  k.gemm = simulator::is_shape_keyed(job.desc.kind) ? job.desc.gemm : simulator::GemmShape{};
  k.bytes = simulator::is_shape_keyed(job.desc.kind) ? 0 : job.desc.bytes;
  k.flops = job.desc.flops;
  k.elements = simulator::is_shape_keyed(job.desc.kind) ? 0 : job.elements();
  k.time_s = median(kernel_s);
  k.min_time_s = *std::min_element(kernel_s.begin(), kernel_s.end());
  k.max_time_s = *std::max_element(kernel_s.begin(), kernel_s.end());
  k.event_time_s = median(event_s);
  k.repeats = reps;
  k.kernel_names = names;
  return std::optional<simulator::ProfileKernel>(std::move(k));
}

}  // namespace llmplan::profiler
