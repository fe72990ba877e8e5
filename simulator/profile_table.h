// ProfileTable: the CostModel that answers with durations measured on a real
// GPU by llmplan-profile (profiler/README.md describes the JSON file and how
// it is measured; profile_table_json.h reads and writes it).
//
// Keys. A kernel is looked up by (kernel_kind_name, pass_name, precision)
// and then by its size:
//  - GEMMs and flash attention by the shape of the *forward* GEMM
//    C[m,n] = A[m,k] B[k,n] x batch, whatever the pass. The backward passes of
//    that GEMM are stored under the same shape with pass "bwd_data" (dA =
//    dC B^T, a [m,n]x[n,k] GEMM) and "bwd_weight" (dB = A^T dC, a [k,m]x[m,n]
//    GEMM), so a lookup never has to guess which dimensions were swapped.
//    For the attention GEMMs "bwd_data" is the gradient of the first operand
//    and "bwd_weight" that of the second. Per layer, with b micro batch,
//    s sequence, h hidden, a heads, g kv heads, d = h/a, f FFN size, t TP:
//      qkv_gemm          m = b*s  k = h      n = (a+2g)*d/t
//      attn_score_gemm   m = s    n = s      k = d      batch = b*a/t
//      attn_value_gemm   m = s    n = d      k = s      batch = b*a/t
//      out_proj_gemm     m = b*s  k = a*d/t  n = h
//      fc1_gemm          m = b*s  k = h      n = f/t (2f/t for SwiGLU)
//      fc2_gemm          m = b*s  k = f/t    n = h
//      logits_gemm       m = b*s  k = h      n = V/t
//    The shape is the GEMM actually launched (SwiGLU's FC1 is one GEMM with
//    2f/t columns).
//  - Memory-bound kernels by `bytes`, a convention counted the same way by
//    the profiler and the lowering: the main tensors each read or written
//    once, e = 2 bytes per bf16/fp16 element, 1 byte per dropout-mask
//    element; small per-row/per-column vectors (gamma, beta, statistics,
//    biases) not counted. With N the elements of the op's main tensor:
//      layernorm         N = rows*h   fwd 2Ne (x, y)        bwd 3Ne (x, dy, dx)
//      softmax           N = b*a/t*s*s fwd 2Ne (x, y)       bwd 3Ne (y, dy, dx)
//      attn_dropout      same N       fwd 2Ne+N (x, y, mask) bwd 2Ne+N (dy, mask, dx)
//      dropout_residual  N = rows*h   fwd 3Ne+N (x, res, y, mask) bwd 2Ne+N
//      activation GeLU   N = b*s*f/t  fwd 2Ne               bwd 3Ne
//      activation SwiGLU N = b*s*f/t  fwd 3Ne (gate, up, y) bwd 5Ne
//      optimizer_step    P params     30*P (Adam, fp32 master/m/v/grad read
//                                     and written, 16-bit param written)
//      fp8_cast_transpose N = elements of the tensor cast (a linear GEMM's
//                        input: rows*h, rows*f/t; or its incoming gradient)
//                                     fwd 4N (read bf16 2N, write fp8 N and
//                                     its fp8 transpose N; amax fused)
//                                     bwd 4N (the same, on the gradient)
//    rows = b*s, or b*s/t with sequence parallelism. optimizer_step has no
//    backward: it is stored under "fwd" and a lookup of any pass finds it.
//  - Precision must match (bf16 entries do not answer fp16 lookups).
//
// Interpolation.
//  - GEMMs / flash attention: an exact shape hit returns the measured time.
//    Otherwise the work w = 2*m*n*k*batch of the query is computed from its
//    shape (the same formula for every entry, so the ratio is exact whatever
//    FLOP convention a caller uses). Among the entries with work <= w the one
//    nearest in shape (Euclidean distance of log2 m, n, k, batch) is the
//    lower neighbour; among those with work >= w the nearest in shape is the
//    upper one. Achieved throughput (work / time) is interpolated linearly in
//    log(work) between the two, and time = w / throughput. With a neighbour
//    on one side only (the query is bigger or smaller than every measured
//    shape) the throughput of that neighbour is used: throughput is clamped,
//    never extrapolated.
//  - Memory-bound kernels: an exact size hit returns the measured time;
//    between measured sizes achieved bandwidth (bytes / time) is interpolated
//    linearly in log(bytes); outside, the bandwidth of the nearest end is
//    used. (A kernel much smaller than any measured is therefore
//    underestimated: its launch-latency floor is not known. The profiler
//    measures the real sizes of the layer, so this rarely happens.)
//  - Collectives: a curve is used for a group with the same kind, size and
//    ranks per node (ranks_per_node >= size counts as one node). The curve
//    interpolates piecewise-linearly in bytes (collective_curve.h). Groups of
//    one rank take 0 s.
//
// Fallback. A kernel kind / pass / precision with no entries, a memory-bound
// lookup with bytes <= 0, a collective kind or group with no curve (e.g. any
// group spanning nodes, since llmplan-profile measures one node) and the two
// host overheads when the profile has none, and the host's launch interval
// (never profiled: kernels are timed back to back on the GPU), are answered
// by the `fallback`
// CostModel (typically the Roofline for the same GPU). Kernel and collective
// fallbacks are counted (fallback_counts()) so that a report can say how
// much of a prediction was not measured; overheads are not counted (see
// Profile::microbatch_overhead_s).
#ifndef LLMPLAN_SIMULATOR_PROFILE_TABLE_H_
#define LLMPLAN_SIMULATOR_PROFILE_TABLE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simulator/collective_curve.h"
#include "simulator/cost_model.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::simulator {

// The GPU a profile was measured on (provenance; not used in lookups).
struct ProfileGpu {
  std::string name;                // e.g. "NVIDIA H100 80GB HBM3"
  int count = 0;                   // GPUs visible to the profiler
  std::string compute_capability;  // e.g. "9.0"
  int sm_count = 0;
  double memory_bytes = 0;
  double sm_clock_mhz = 0;  // peak (boost) clock reported by the driver
  double memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  friend bool operator==(const ProfileGpu&, const ProfileGpu&) = default;
};

// Versions of the software stack that produced the profile.
struct ProfileSoftware {
  std::string driver;  // CUDA driver API version, e.g. "13.0"
  std::string cuda_runtime;
  std::string cublas;
  std::string nccl;
  std::string cupti;
  friend bool operator==(const ProfileSoftware&, const ProfileSoftware&) = default;
};

// How kernel times were taken.
struct ProfileTiming {
  std::string method;     // "cupti_activity"
  int warmup = 0;         // launches discarded before timing
  int repeats = 0;        // timed launches per kernel
  std::string statistic;  // "median"
  friend bool operator==(const ProfileTiming&, const ProfileTiming&) = default;
};

// One transformer-layer configuration whose kernels were measured.
// Zero kv_heads means heads; zero ffn means 4*hidden; zero vocab means the
// logits GEMM was not measured.
struct ProfileShape {
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int ffn = 0;
  int seq = 0;
  int micro_batch = 1;
  int tp = 1;
  int vocab = 0;
  Activation activation = Activation::kGelu;
  friend bool operator==(const ProfileShape&, const ProfileShape&) = default;
};

// One measured kernel (or short sequence of kernels forming one op, e.g. a
// GEMM plus its split-K reduction): key, size and the median time.
struct ProfileKernel {
  KernelKind kind = KernelKind::kLayerNorm;
  Pass pass = Pass::kForward;
  Precision precision = Precision::kBf16;
  GemmShape gemm;         // GEMMs and flash attention: the forward shape
  double bytes = 0;       // memory-bound kernels: the convention above
  double flops = 0;       // informational (2*m*n*k*batch for GEMMs)
  int64_t elements = 0;   // memory-bound kernels: elements of the main tensor
  double time_s = 0;      // median over repeats (CUPTI kernel durations)
  double min_time_s = 0;  // 0: not recorded
  double max_time_s = 0;
  double event_time_s = 0;  // median cudaEvent time, a cross-check; 0: none
  int repeats = 0;
  std::vector<std::string> kernel_names;  // CUDA kernels that made up the op
  friend bool operator==(const ProfileKernel&, const ProfileKernel&) = default;
};

// One measured collective curve.
struct ProfileCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int group_size = 0;
  int ranks_per_node = 0;
  std::string dtype;  // element type used, e.g. "float32"
  CollectiveCurve curve;
  friend bool operator==(const ProfileCollective&, const ProfileCollective&) = default;
};

// The content of a profile file: provenance, the measured shapes, kernels,
// collectives, optional host overheads and free-form notes (e.g. "flash
// attention not measured"). A plain value.
struct Profile {
  std::string llmplan_version;
  std::string date;  // ISO 8601, UTC
  std::string host;
  ProfileGpu gpu;
  ProfileSoftware software;
  ProfileTiming timing;
  std::vector<ProfileShape> shapes;
  std::vector<ProfileKernel> kernels;
  std::vector<ProfileCollective> collectives;
  std::optional<double> microbatch_overhead_s;
  std::optional<double> iteration_overhead_s;
  std::vector<std::string> notes;
  friend bool operator==(const Profile&, const Profile&) = default;
};

// True for the kinds looked up by GEMM shape (GEMMs and flash attention);
// false for the memory-bound kinds looked up by bytes.
bool is_shape_keyed(KernelKind kind);

// The most kernel and collective entries a profile may have (a full
// llmplan-profile run writes a few thousand kernels); lookups scan a
// kernel's bucket, so the caps bound time as well as memory.
inline constexpr size_t kMaxProfileKernels = 100000;
inline constexpr size_t kMaxProfileCollectives = 10000;

// OK when the profile can back a ProfileTable: a GPU name; at most
// kMaxProfileKernels kernels and kMaxProfileCollectives collectives; every
// kernel with
// a real kind, time_s > 0, m, n, k, batch >= 1 for shape-keyed kinds and
// bytes > 0 for memory-bound ones, optimizer_step only under "fwd",
// fp8_cast_transpose only under "fwd" and "bwd", no two
// entries with the same key and size; every collective with group_size >= 2,
// ranks_per_node >= 1, a valid curve and no duplicate (kind, group); overheads
// >= 0. InvalidArgument names the entry, e.g. "kernels[3].time_s".
Status validate(const Profile& profile);

// Kernel and collective lookups that the fallback model answered, by kind.
struct ProfileFallbacks {
  std::array<int64_t, static_cast<size_t>(KernelKind::kCount)> kernels{};  // by KernelKind
  std::array<int64_t, 4> collectives{};                                    // by CollectiveKind
  int64_t total() const;
};

// The measured-profile CostModel. Immutable after create() except for the
// fallback counters, which are atomics: every method may be called from many
// threads at once.
class ProfileTable final : public CostModel {
 public:
  // Builds the lookup tables. `source` names the profile in describe() (e.g.
  // its path). Returns InvalidArgument if validate(profile) fails or
  // `fallback` is null.
  static Result<std::shared_ptr<const ProfileTable>> create(
      Profile profile, std::string source, std::shared_ptr<const CostModel> fallback);

  double kernel_time_s(const KernelDesc& kernel) const override;
  double collective_time_s(const CollectiveDesc& collective) const override;
  // The fallback's: the profile times kernels on the GPU only.
  double launch_interval_s() const override { return fallback_->launch_interval_s(); }
  double host_run_ahead_s() const override { return fallback_->host_run_ahead_s(); }
  bool fp8_transpose_copy() const override { return fallback_->fp8_transpose_copy(); }
  // From the profile's overheads when present, else the fallback's.
  double microbatch_overhead_s() const override;
  double iteration_overhead_s() const override;
  // "profile <source> (<gpu name>), fallback <fallback's describe()>".
  std::string describe() const override;

  // Lookups answered by the fallback since creation (relaxed counters: exact
  // once the threads that used the table have been joined).
  ProfileFallbacks fallback_counts() const;

  const Profile& profile() const { return profile_; }
  const CostModel& fallback() const { return *fallback_; }

  // Use create().
  ProfileTable(Profile profile, std::string source, std::shared_ptr<const CostModel> fallback);

 private:
  struct ShapePoint {
    GemmShape shape;
    double log2_dims[4] = {0, 0, 0, 0};  // m, n, k, batch
    double work = 0;                     // 2*m*n*k*batch
    double time_s = 0;
  };
  struct BytesPoint {
    double bytes = 0;
    double time_s = 0;
  };
  struct Curve {
    CollectiveKind kind;
    int group_size;
    int ranks_per_node;  // min(ranks_per_node, group_size)
    size_t index;        // into profile_.collectives
  };

  // Index of (kind, pass, precision) in the tables below, or -1.
  static int bucket(KernelKind kind, Pass pass, Precision precision);
  // Measured-table answer, or nullopt when the fallback must answer.
  std::optional<double> lookup_kernel(const KernelDesc& kernel) const;

  Profile profile_;
  std::string source_;
  std::shared_ptr<const CostModel> fallback_;
  std::vector<std::vector<ShapePoint>> shape_points_;  // by bucket
  std::vector<std::vector<BytesPoint>> bytes_points_;  // by bucket, sorted by bytes
  std::vector<Curve> curves_;
  mutable std::array<std::atomic<int64_t>, static_cast<size_t>(KernelKind::kCount)>
      kernel_fallbacks_{};
  mutable std::array<std::atomic<int64_t>, 4> collective_fallbacks_{};
};

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PROFILE_TABLE_H_
