#include "profiler/kernel_plan.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "simulator/model.h"

namespace llmplan::profiler {
namespace {

using simulator::KernelKind;
using simulator::Pass;
using simulator::Precision;
using simulator::ProfileShape;

constexpr double kElem = 2.0;  // bytes of a bf16/fp16 element

int kv_heads(const ProfileShape& s) { return s.kv_heads > 0 ? s.kv_heads : s.heads; }
int ffn(const ProfileShape& s) { return s.ffn > 0 ? s.ffn : 4 * s.hidden; }

// Bytes of a memory-bound kernel over N elements of its main tensor (the
// convention in simulator/profile_table.h).
double memory_bytes(KernelKind kind, Pass pass, double n, bool swiglu) {
  const bool fwd = pass == Pass::kForward;
  switch (kind) {
    case KernelKind::kLayerNorm:
      return (fwd ? 2 : 3) * n * kElem;
    case KernelKind::kSoftmax:
      return (fwd ? 2 : 3) * n * kElem;
    case KernelKind::kAttnDropout:
      return 2 * n * kElem + n;
    case KernelKind::kDropoutResidual:
      return (fwd ? 3 : 2) * n * kElem + n;
    case KernelKind::kActivation:
      return swiglu ? (fwd ? 3 : 5) * n * kElem : (fwd ? 2 : 3) * n * kElem;
    case KernelKind::kOptimizerStep:
      return 30 * n;
    case KernelKind::kFp8CastTranspose:
      return 4 * n;  // read bf16 (2N), write fp8 and its fp8 transpose (N each)
    default:
      return 0;
  }
}

class JobBuilder {
 public:
  JobBuilder(Precision precision, std::string origin, std::vector<KernelJob>* out)
      : precision_(precision), origin_(std::move(origin)), out_(out) {}

  // Jobs added from now on are keyed under `precision`.
  void set_precision(Precision precision) { precision_ = precision; }

  // Fused attention over `heads` (b*a/t) heads of s x d, causal: forward and
  // backward, keyed like the lowering's flash-attention op (the forward
  // score GEMM's shape; 4*heads*s*s*d FLOPs forward, 2.5x that backward).
  void flash(int64_t seq, int64_t head_dim, int64_t heads) {
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      KernelJob j;
      j.desc.kind = KernelKind::kFlashAttention;
      j.desc.pass = pass;
      j.desc.precision = precision_;
      j.desc.gemm = {seq, seq, head_dim, heads};
      const double fwd = 4.0 * static_cast<double>(heads) * static_cast<double>(seq) *
                         static_cast<double>(seq) * static_cast<double>(head_dim);
      j.desc.flops = pass == Pass::kForward ? fwd : 2.5 * fwd;
      j.rows = heads;
      j.cols = seq * head_dim;
      j.origin = origin_;
      out_->push_back(j);
    }
  }

  void gemm(KernelKind kind, int64_t m, int64_t n, int64_t k, int64_t batch) {
    for (Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeight}) {
      KernelJob j;
      j.desc.kind = kind;
      j.desc.pass = pass;
      j.desc.precision = precision_;
      j.desc.gemm = {m, n, k, batch};
      j.desc.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                     static_cast<double>(k) * static_cast<double>(batch);
      j.origin = origin_;
      out_->push_back(j);
    }
  }

  void memory(KernelKind kind, int64_t rows, int64_t cols, bool swiglu = false) {
    const bool has_backward = kind != KernelKind::kOptimizerStep;
    // Cast-transposes are listed at fp8 whatever the builder's precision.
    const Precision precision =
        kind == KernelKind::kFp8CastTranspose ? Precision::kFp8 : precision_;
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      if (pass == Pass::kBackward && !has_backward) break;
      KernelJob j;
      j.desc.kind = kind;
      j.desc.pass = pass;
      j.desc.precision = precision;
      j.desc.bytes =
          memory_bytes(kind, pass, static_cast<double>(rows) * static_cast<double>(cols), swiglu);
      j.rows = rows;
      j.cols = cols;
      j.swiglu = swiglu;
      j.origin = origin_;
      out_->push_back(j);
    }
  }

 private:
  Precision precision_;
  std::string origin_;
  std::vector<KernelJob>* out_;
};

bool same_key(const KernelJob& a, const KernelJob& b) {
  if (a.desc.kind != b.desc.kind || a.desc.pass != b.desc.pass ||
      a.desc.precision != b.desc.precision) {
    return false;
  }
  return simulator::is_shape_keyed(a.desc.kind) ? a.desc.gemm == b.desc.gemm
                                                : a.desc.bytes == b.desc.bytes;
}

std::string format_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, b == static_cast<int64_t>(b) ? "%.0f %s" : "%.2f %s", b, units[u]);
  return buf;
}

}  // namespace

Status validate_shape(const ProfileShape& s) {
  auto bad = [](const char* field, const std::string& m) {
    return Status::invalid_argument(std::string("shape.") + field + ": " + m);
  };
  if (s.hidden < 1) return bad("hidden", "must be >= 1");
  if (s.heads < 1) return bad("heads", "must be >= 1");
  if (s.kv_heads < 0) return bad("kv_heads", "must be >= 0");
  if (s.ffn < 0) return bad("ffn", "must be >= 0");
  if (s.seq < 1) return bad("seq", "must be >= 1");
  if (s.micro_batch < 1) return bad("micro_batch", "must be >= 1");
  if (s.tp < 1) return bad("tp", "must be >= 1");
  if (s.vocab < 0) return bad("vocab", "must be >= 0");
  if (s.hidden % s.heads != 0) {
    return bad("heads",
               std::to_string(s.heads) + " heads do not divide hidden " + std::to_string(s.hidden));
  }
  if (s.heads % kv_heads(s) != 0) {
    return bad("kv_heads",
               std::to_string(kv_heads(s)) + " do not divide heads " + std::to_string(s.heads));
  }
  if (s.heads % s.tp != 0 || kv_heads(s) % s.tp != 0) {
    return bad("tp", "tp " + std::to_string(s.tp) + " does not divide the heads (" +
                         std::to_string(s.heads) + ") and kv heads (" +
                         std::to_string(kv_heads(s)) + ")");
  }
  if (ffn(s) % s.tp != 0) {
    return bad("tp",
               "tp " + std::to_string(s.tp) + " does not divide ffn " + std::to_string(ffn(s)));
  }
  if (s.vocab > 0 && s.vocab % s.tp != 0) {
    return bad("tp",
               "tp " + std::to_string(s.tp) + " does not divide vocab " + std::to_string(s.vocab));
  }
  return Status();
}

std::string describe_shape(const ProfileShape& s) {
  std::ostringstream o;
  o << "h=" << s.hidden << " a=" << s.heads << " g=" << kv_heads(s) << " f=" << ffn(s)
    << " s=" << s.seq << " b=" << s.micro_batch << " t=" << s.tp;
  if (s.vocab > 0) o << " V=" << s.vocab;
  o << (s.activation == simulator::Activation::kSwiglu ? " swiglu" : " gelu");
  return o.str();
}

std::vector<KernelJob> layer_kernel_jobs(const ProfileShape& s, Precision precision) {
  LLMPLAN_CHECK(validate_shape(s).ok());
  std::vector<KernelJob> jobs;
  // FP8 training runs the linear GEMMs in FP8 and every other kernel in bf16.
  const bool fp8 = precision == Precision::kFp8;
  const Precision other = fp8 ? Precision::kBf16 : precision;
  JobBuilder add(other, describe_shape(s), &jobs);
  const int64_t b = s.micro_batch, seq = s.seq, h = s.hidden, a = s.heads, g = kv_heads(s);
  const int64_t d = h / a, f = ffn(s), t = s.tp;
  const bool swiglu = s.activation == simulator::Activation::kSwiglu;
  const int64_t tokens = b * seq;
  std::vector<int64_t> norm_rows = {tokens};
  if (t > 1 && tokens % t == 0) norm_rows.push_back(tokens / t);  // sequence parallelism
  const int64_t heads_local = b * a / t;

  const int64_t q_cols = (a + 2 * g) * d / t, fc1_cols = (swiglu ? 2 : 1) * f / t;
  // The linear GEMMs, at `precision` (fp8 included).
  auto linear = [&](KernelKind kind, int64_t m, int64_t n, int64_t k) {
    add.set_precision(precision);
    add.gemm(kind, m, n, k, 1);
    add.set_precision(other);
  };

  for (int64_t rows : norm_rows) add.memory(KernelKind::kLayerNorm, rows, h);
  linear(KernelKind::kQkvGemm, tokens, q_cols, h);
  add.flash(seq, d, heads_local);
  add.gemm(KernelKind::kAttnScoreGemm, seq, seq, d, heads_local);
  add.memory(KernelKind::kSoftmax, heads_local * seq, seq);
  add.memory(KernelKind::kAttnDropout, heads_local * seq, seq);
  add.gemm(KernelKind::kAttnValueGemm, seq, d, seq, heads_local);
  linear(KernelKind::kOutProjGemm, tokens, h, a * d / t);
  for (int64_t rows : norm_rows) add.memory(KernelKind::kDropoutResidual, rows, h);
  linear(KernelKind::kFc1Gemm, tokens, fc1_cols, h);
  add.memory(KernelKind::kActivation, tokens, f / t, swiglu);
  linear(KernelKind::kFc2Gemm, tokens, h, f / t);
  if (s.vocab > 0) add.gemm(KernelKind::kLogitsGemm, tokens, s.vocab / t, h, 1);
  if (fp8) {
    // Transformer Engine casts each linear GEMM's input to FP8 with its
    // transpose (for the weight-gradient GEMM) in one kernel, forward, and
    // each incoming gradient backward. Listed for every tensor a linear GEMM
    // reads or whose gradient it receives -- inputs b*s x {h, a*d/t, f/t},
    // gradients b*s x {(a+2g)*d/t, h, fc1 columns} -- at b*s rows and, with
    // sequence parallelism, b*s/t rows; "fwd" (to E4M3) and "bwd" (to E5M2)
    // at each size.
    std::vector<int64_t> listed;  // elements already listed
    for (int64_t rows : norm_rows) {
      for (int64_t cols : {h, a * d / t, f / t, q_cols, fc1_cols}) {
        if (std::find(listed.begin(), listed.end(), rows * cols) != listed.end()) continue;
        listed.push_back(rows * cols);
        add.memory(KernelKind::kFp8CastTranspose, rows, cols);
      }
    }
  }

  simulator::Model model;
  model.num_layers = 1;
  model.hidden_size = s.hidden;
  model.num_heads = s.heads;
  model.num_kv_heads = s.kv_heads;
  model.ffn_hidden_size = s.ffn;
  model.seq_length = s.seq;
  model.vocab_size = 1;
  model.activation = s.activation;
  model.linear_bias = !swiglu;
  add.memory(KernelKind::kOptimizerStep, 1, model.layer_parameters() / t);
  return jobs;
}

std::vector<KernelJob> plan_kernel_jobs(const std::vector<ProfileShape>& shapes,
                                        const std::vector<Precision>& precisions) {
  std::vector<KernelJob> out;
  for (Precision p : precisions) {
    for (const ProfileShape& s : shapes) {
      for (KernelJob& j : layer_kernel_jobs(s, p)) {
        bool dup = false;
        for (const KernelJob& o : out) dup = dup || same_key(o, j);
        if (!dup) out.push_back(std::move(j));
      }
    }
  }
  return out;
}

std::vector<std::string> unmeasured_kernel_notes() {
  return {
      "embedding and cross_entropy not measured (outside the transformer layer; the simulator "
      "falls back for them)",
  };
}

std::vector<double> collective_sizes(double min_bytes, double max_bytes) {
  LLMPLAN_CHECK(min_bytes > 0 && min_bytes <= max_bytes);
  std::vector<double> out;
  for (double b = min_bytes; b <= max_bytes; b *= 2) out.push_back(b);
  return out;
}

std::vector<int> collective_group_sizes(int gpus) {
  std::vector<int> out;
  for (int g = 2; g <= gpus; g *= 2) out.push_back(g);
  if (gpus >= 2 && out.back() != gpus) out.push_back(gpus);
  return out;
}

std::string format_plan(const std::vector<ProfileShape>& shapes, const std::vector<KernelJob>& jobs,
                        const std::vector<double>& collective_bytes, bool collectives) {
  std::ostringstream o;
  o << "shapes (" << shapes.size() << "):\n";
  for (const ProfileShape& s : shapes) o << "  " << describe_shape(s) << "\n";
  o << "kernels (" << jobs.size() << "):\n";
  for (const KernelJob& j : jobs) {
    char line[256];
    const auto& d = j.desc;
    if (simulator::is_shape_keyed(d.kind)) {
      std::snprintf(line, sizeof line, "  %-17s %-10s %-4s m=%lld n=%lld k=%lld batch=%lld",
                    simulator::kernel_kind_name(d.kind), simulator::pass_name(d.pass),
                    simulator::to_string(d.precision), static_cast<long long>(d.gemm.m),
                    static_cast<long long>(d.gemm.n), static_cast<long long>(d.gemm.k),
                    static_cast<long long>(d.gemm.batch));
    } else {
      std::snprintf(line, sizeof line, "  %-17s %-10s %-4s bytes=%.0f rows=%lld cols=%lld%s",
                    simulator::kernel_kind_name(d.kind), simulator::pass_name(d.pass),
                    simulator::to_string(d.precision), d.bytes, static_cast<long long>(j.rows),
                    static_cast<long long>(j.cols), j.swiglu ? " swiglu" : "");
    }
    o << line << "\n";
  }
  for (const std::string& n : unmeasured_kernel_notes()) o << "note: " << n << "\n";
  if (!collectives || collective_bytes.empty()) {
    o << "collectives: not measured (--no-collectives)\n";
  } else {
    o << "collectives: all_reduce, all_gather, reduce_scatter on the first 2, 4, 8, ... and all "
         "visible GPUs, send_recv between GPU 0 and GPU 1; "
      << collective_bytes.size() << " sizes from " << format_bytes(collective_bytes.front())
      << " to " << format_bytes(collective_bytes.back())
      << " (doubling); skipped when only one GPU is visible\n";
  }
  return o.str();
}

}  // namespace llmplan::profiler
