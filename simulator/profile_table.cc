#include "simulator/profile_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

namespace llmplan::simulator {
namespace {

constexpr int kNumKinds = static_cast<int>(KernelKind::kCount);
constexpr int kNumPasses = 4;
constexpr int kNumPrecisions = 4;  // bf16, fp16, fp8, nvfp4 (simulator::Precision)
constexpr size_t kNumBuckets = static_cast<size_t>(kNumKinds * kNumPasses * kNumPrecisions);

double gemm_work(const GemmShape& g) {
  return 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
         static_cast<double>(g.batch);
}

bool valid_shape(const GemmShape& g) { return g.m >= 1 && g.n >= 1 && g.k >= 1 && g.batch >= 1; }

void log2_dims(const GemmShape& g, double out[4]) {
  out[0] = std::log2(static_cast<double>(g.m));
  out[1] = std::log2(static_cast<double>(g.n));
  out[2] = std::log2(static_cast<double>(g.k));
  out[3] = std::log2(static_cast<double>(g.batch));
}

int normalized_ranks_per_node(int group_size, int ranks_per_node) {
  return std::min(group_size, std::max(1, ranks_per_node));
}

// Linear interpolation of y in log(x) between (x0, y0) and (x1, y1).
double lerp_log(double x, double x0, double y0, double x1, double y1) {
  if (x1 <= x0) return y0;
  const double f = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return y0 + f * (y1 - y0);
}

}  // namespace

bool is_shape_keyed(KernelKind kind) {
  return is_gemm(kind) || kind == KernelKind::kFlashAttention;
}

int64_t ProfileFallbacks::total() const {
  int64_t t = 0;
  for (int64_t c : kernels) t += c;
  for (int64_t c : collectives) t += c;
  return t;
}

Status validate(const Profile& profile) {
  if (profile.gpu.name.empty()) return Status::invalid_argument("gpu.name: must not be empty");
  if (profile.kernels.size() > kMaxProfileKernels) {
    return Status::invalid_argument("kernels: " + std::to_string(profile.kernels.size()) +
                                    " entries, more than " + std::to_string(kMaxProfileKernels));
  }
  if (profile.collectives.size() > kMaxProfileCollectives) {
    return Status::invalid_argument("collectives: " + std::to_string(profile.collectives.size()) +
                                    " entries, more than " +
                                    std::to_string(kMaxProfileCollectives));
  }
  // The lookup key of each kernel entry, for the duplicate check (sorted,
  // so that large profiles are checked in n log n).
  struct Key {
    int bucket;
    int64_t m, n, k, batch;
    double bytes;
    size_t index;
    auto tie() const { return std::tie(bucket, m, n, k, batch, bytes); }
  };
  std::vector<Key> keys;
  keys.reserve(profile.kernels.size());
  for (size_t i = 0; i < profile.kernels.size(); ++i) {
    const ProfileKernel& k = profile.kernels[i];
    const std::string at = "kernels[" + std::to_string(i) + "]";
    if (static_cast<int>(k.kind) < 0 || k.kind >= KernelKind::kCount) {
      return Status::invalid_argument(at + ".kind: not a kernel kind");
    }
    if (!std::isfinite(k.time_s) || k.time_s <= 0) {
      return Status::invalid_argument(at + ".time_s: must be > 0");
    }
    if (k.kind == KernelKind::kOptimizerStep && k.pass != Pass::kForward) {
      return Status::invalid_argument(at + ".pass: optimizer_step entries use \"fwd\"");
    }
    if (k.kind == KernelKind::kFp8CastTranspose && k.pass != Pass::kForward &&
        k.pass != Pass::kBackward) {
      return Status::invalid_argument(at +
                                      ".pass: fp8_cast_transpose entries use \"fwd\" or \"bwd\"");
    }
    const int b =
        (static_cast<int>(k.kind) * kNumPasses + static_cast<int>(k.pass)) * kNumPrecisions +
        static_cast<int>(k.precision);
    if (is_shape_keyed(k.kind)) {
      if (!valid_shape(k.gemm)) {
        return Status::invalid_argument(at + ": m, n, k and batch must be >= 1");
      }
      keys.push_back({b, k.gemm.m, k.gemm.n, k.gemm.k, k.gemm.batch, 0.0, i});
    } else if (!std::isfinite(k.bytes) || k.bytes <= 0) {
      return Status::invalid_argument(at + ".bytes: must be > 0");
    } else {
      keys.push_back({b, 0, 0, 0, 0, k.bytes, i});
    }
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.tie() < b.tie() || (a.tie() == b.tie() && a.index < b.index);
  });
  // Within a run of equal keys (sorted by index) each entry after the first
  // repeats an earlier one; report the lowest such index.
  size_t first_duplicate = std::numeric_limits<size_t>::max();
  for (size_t i = 1; i < keys.size(); ++i) {
    if (keys[i].tie() == keys[i - 1].tie()) {
      first_duplicate = std::min(first_duplicate, keys[i].index);
    }
  }
  if (first_duplicate != std::numeric_limits<size_t>::max()) {
    return Status::invalid_argument("kernels[" + std::to_string(first_duplicate) +
                                    "]: duplicate of an earlier entry with the same "
                                    "kind, pass, precision and size");
  }
  for (size_t i = 0; i < profile.collectives.size(); ++i) {
    const ProfileCollective& c = profile.collectives[i];
    const std::string at = "collectives[" + std::to_string(i) + "]";
    if (c.group_size < 2) return Status::invalid_argument(at + ".group_size: must be >= 2");
    if (c.ranks_per_node < 1) {
      return Status::invalid_argument(at + ".ranks_per_node: must be >= 1");
    }
    LLMPLAN_RETURN_IF_ERROR(validate(c.curve).with_prefix(at));
    for (size_t j = 0; j < i; ++j) {
      const ProfileCollective& o = profile.collectives[j];
      if (o.kind == c.kind && o.group_size == c.group_size &&
          normalized_ranks_per_node(o.group_size, o.ranks_per_node) ==
              normalized_ranks_per_node(c.group_size, c.ranks_per_node)) {
        return Status::invalid_argument(at + ": duplicate of collectives[" + std::to_string(j) +
                                        "] (same kind and group)");
      }
    }
  }
  for (const auto& [name, v] : {std::pair{"overheads.microbatch_s", profile.microbatch_overhead_s},
                                std::pair{"overheads.iteration_s", profile.iteration_overhead_s}}) {
    if (v && (!std::isfinite(*v) || *v < 0)) {
      return Status::invalid_argument(std::string(name) + ": must be >= 0");
    }
  }
  return Status();
}

int ProfileTable::bucket(KernelKind kind, Pass pass, Precision precision) {
  const int k = static_cast<int>(kind), p = static_cast<int>(pass), q = static_cast<int>(precision);
  if (k < 0 || k >= kNumKinds || p < 0 || p >= kNumPasses || q < 0 || q >= kNumPrecisions) {
    return -1;
  }
  return (k * kNumPasses + p) * kNumPrecisions + q;
}

Result<std::shared_ptr<const ProfileTable>> ProfileTable::create(
    Profile profile, std::string source, std::shared_ptr<const CostModel> fallback) {
  if (fallback == nullptr) return Status::invalid_argument(source + ": no fallback cost model");
  LLMPLAN_RETURN_IF_ERROR(validate(profile).with_prefix(source));
  return std::shared_ptr<const ProfileTable>(
      std::make_shared<ProfileTable>(std::move(profile), std::move(source), std::move(fallback)));
}

ProfileTable::ProfileTable(Profile profile, std::string source,
                           std::shared_ptr<const CostModel> fallback)
    : profile_(std::move(profile)),
      source_(std::move(source)),
      fallback_(std::move(fallback)),
      shape_points_(kNumBuckets),
      bytes_points_(kNumBuckets) {
  LLMPLAN_CHECK(fallback_ != nullptr);
  for (const ProfileKernel& k : profile_.kernels) {
    const int b = bucket(k.kind, k.pass, k.precision);
    LLMPLAN_CHECK(b >= 0);
    if (is_shape_keyed(k.kind)) {
      ShapePoint p;
      p.shape = k.gemm;
      log2_dims(k.gemm, p.log2_dims);
      p.work = gemm_work(k.gemm);
      p.time_s = k.time_s;
      shape_points_[static_cast<size_t>(b)].push_back(p);
    } else {
      bytes_points_[static_cast<size_t>(b)].push_back({k.bytes, k.time_s});
    }
  }
  for (auto& points : bytes_points_) {
    std::sort(points.begin(), points.end(),
              [](const BytesPoint& a, const BytesPoint& b) { return a.bytes < b.bytes; });
  }
  for (size_t i = 0; i < profile_.collectives.size(); ++i) {
    const ProfileCollective& c = profile_.collectives[i];
    curves_.push_back(
        {c.kind, c.group_size, normalized_ranks_per_node(c.group_size, c.ranks_per_node), i});
  }
}

std::optional<double> ProfileTable::lookup_kernel(const KernelDesc& kernel) const {
  const Pass pass = kernel.kind == KernelKind::kOptimizerStep ? Pass::kForward : kernel.pass;
  const int b = bucket(kernel.kind, pass, kernel.precision);
  if (b < 0) return std::nullopt;

  if (is_shape_keyed(kernel.kind)) {
    const std::vector<ShapePoint>& points = shape_points_[static_cast<size_t>(b)];
    if (points.empty() || !valid_shape(kernel.gemm)) return std::nullopt;
    double q[4];
    log2_dims(kernel.gemm, q);
    const double w = gemm_work(kernel.gemm);
    const ShapePoint* lo = nullptr;
    const ShapePoint* hi = nullptr;
    double lo_d2 = std::numeric_limits<double>::infinity();
    double hi_d2 = lo_d2;
    for (const ShapePoint& p : points) {
      if (p.shape == kernel.gemm) return p.time_s;
      double d2 = 0;
      for (int i = 0; i < 4; ++i) d2 += (p.log2_dims[i] - q[i]) * (p.log2_dims[i] - q[i]);
      if (p.work <= w && d2 < lo_d2) {
        lo = &p;
        lo_d2 = d2;
      }
      if (p.work >= w && d2 < hi_d2) {
        hi = &p;
        hi_d2 = d2;
      }
    }
    double throughput = 0;  // work per second
    if (lo != nullptr && hi != nullptr) {
      throughput = lerp_log(w, lo->work, lo->work / lo->time_s, hi->work, hi->work / hi->time_s);
    } else {
      const ShapePoint* only = lo != nullptr ? lo : hi;
      throughput = only->work / only->time_s;
    }
    return w / throughput;
  }

  const std::vector<BytesPoint>& points = bytes_points_[static_cast<size_t>(b)];
  if (points.empty() || !(kernel.bytes > 0) || !std::isfinite(kernel.bytes)) return std::nullopt;
  const double x = kernel.bytes;
  auto it = std::lower_bound(points.begin(), points.end(), x,
                             [](const BytesPoint& p, double v) { return p.bytes < v; });
  if (it != points.end() && it->bytes == x) return it->time_s;
  double bandwidth = 0;  // bytes per second
  if (it == points.begin()) {
    bandwidth = it->bytes / it->time_s;
  } else if (it == points.end()) {
    bandwidth = points.back().bytes / points.back().time_s;
  } else {
    const BytesPoint& l = *(it - 1);
    bandwidth = lerp_log(x, l.bytes, l.bytes / l.time_s, it->bytes, it->bytes / it->time_s);
  }
  return x / bandwidth;
}

double ProfileTable::kernel_time_s(const KernelDesc& kernel) const {
  if (std::optional<double> t = lookup_kernel(kernel)) return *t;
  const size_t k = static_cast<size_t>(kernel.kind);
  if (k < kernel_fallbacks_.size()) kernel_fallbacks_[k].fetch_add(1, std::memory_order_relaxed);
  return fallback_->kernel_time_s(kernel);
}

double ProfileTable::collective_time_s(const CollectiveDesc& collective) const {
  const CommGroup& g = collective.group;
  if (g.size <= 1) return 0.0;
  const int rpn = normalized_ranks_per_node(g.size, g.ranks_per_node);
  for (const Curve& c : curves_) {
    if (c.kind == collective.kind && c.group_size == g.size && c.ranks_per_node == rpn) {
      return profile_.collectives[c.index].curve.time_s(collective.bytes);
    }
  }
  const size_t k = static_cast<size_t>(collective.kind);
  if (k < collective_fallbacks_.size()) {
    collective_fallbacks_[k].fetch_add(1, std::memory_order_relaxed);
  }
  return fallback_->collective_time_s(collective);
}

double ProfileTable::microbatch_overhead_s() const {
  return profile_.microbatch_overhead_s ? *profile_.microbatch_overhead_s
                                        : fallback_->microbatch_overhead_s();
}

double ProfileTable::iteration_overhead_s() const {
  return profile_.iteration_overhead_s ? *profile_.iteration_overhead_s
                                       : fallback_->iteration_overhead_s();
}

std::string ProfileTable::describe() const {
  return "profile " + source_ + " (" + profile_.gpu.name + "), fallback " + fallback_->describe();
}

ProfileFallbacks ProfileTable::fallback_counts() const {
  ProfileFallbacks f;
  for (size_t i = 0; i < f.kernels.size(); ++i) {
    f.kernels[i] = kernel_fallbacks_[i].load(std::memory_order_relaxed);
  }
  for (size_t i = 0; i < f.collectives.size(); ++i) {
    f.collectives[i] = collective_fallbacks_[i].load(std::memory_order_relaxed);
  }
  return f;
}

}  // namespace llmplan::simulator
