// The error band of a simulated iteration time: how far the measured time
// may lie from the prediction, from the held-out errors of the GPU's
// validation (GpuValidation in cluster.h).
//
// The band is a distribution of the ratio measured / predicted iteration
// time. A planner turns a predicted training time T into a band
// [T * ratio_at(0.10), T * ratio_at(0.90)] and, for a confidence P, asks
// whether T * ratio_at(P) still meets the deadline. Training days and cost
// scale with iteration time, so the same ratios apply to them.
#ifndef LLMPLAN_SIMULATOR_ERROR_BAND_H_
#define LLMPLAN_SIMULATOR_ERROR_BAND_H_

#include <string>
#include <utility>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

// Fewest held-out rows a group's band is built from. With type-7 quantiles
// over n >= 10 rows, P10 and P90 lie between the two smallest (largest) rows
// or further in, so each end of the band has a measured row at or beyond it;
// with fewer rows one extreme row alone sets the end. calibrate stores only
// groups of at least this many rows, and error_band() widens past smaller
// ones.
inline constexpr int kMinBandSamples = 10;

// The features of a run or plan that group held-out errors: runs alike in
// these were simulated through the same parts of the model (software stack:
// its own efficiency constant; MoE: never fitted; FP8: its own GEMM constant
// and casts; pipeline: schedule and bubble; ZeRO 2-3: parameter gathers;
// GPUs: the network).
struct BandFeatures {
  // The run's software stack is eager PyTorch under PyTorch FSDP (MosaicML
  // llm-foundry; planner/accuracy/accuracy.h AccuracyCase::stack), not
  // Megatron-Core / NeMo / Megatron-Bridge. Plans of the planner: false.
  bool pytorch_fsdp = false;
  bool moe = false;
  bool fp8 = false;
  bool pipeline = false;  // pp > 1
  bool sharded = false;   // ZeRO stage 2-3 (FSDP); false: 0-1
  // GPUs used: 0: <= 8 (one node), 1: 9-255, 2: >= 256.
  int gpu_bucket = 0;
};

// The features of `plan` on `model` (the Megatron-Core stack). Pure.
BandFeatures band_features(const Model& model, const Plan& plan);
// The GPU bucket of a run on `gpus` GPUs (BandFeatures::gpu_bucket).
int band_gpu_bucket(long long gpus);

// The groups a run with features `f` belongs to, finest first: all six
// features, then dropping one at a time from the end of the fixed order
// stack, MoE, precision, pp, ZeRO stage, GPUs (the GPU bucket first, the
// stack last), and last "all runs" (the pooled band), e.g. "Megatron-Core,
// dense, fp8, pp > 1, ZeRO 0-1, >= 256 GPUs", ..., "Megatron-Core", "all
// runs". The order was fixed before any coverage was measured: features
// whose modelling differs most (a separate constant, never fitted) are kept
// longest. Pure.
std::vector<std::string> band_group_keys(const BandFeatures& f);
// The key of all runs (the pooled band).
inline constexpr const char* kPooledBandKey = "all runs";
// Whether `key` is a group key of some BandFeatures other than the pooled one.
bool is_band_group_key(const std::string& key);

// A plain value; cheap to copy, safe to share between threads.
struct ErrorBand {
  // False for a GPU whose constants were never validated: the error is
  // unknown, reports say so instead of showing a band, and ratio_at()
  // returns 1 (the point estimate).
  bool known = false;
  // (probability, measured / predicted), probabilities strictly increasing,
  // ratios non-decreasing (validate(GpuValidation)).
  std::vector<std::pair<double, double>> quantiles;
  int samples = 0;     // held-out runs behind the quantiles
  std::string source;  // the command and data that produced them
  // The group of runs the quantiles come from (band_group_keys), or
  // kPooledBandKey.
  std::string group = kPooledBandKey;

  // The ratio measured / predicted at probability p: linear interpolation
  // between the stored quantiles, clamped to the first and last one outside
  // their range (it never extrapolates). 1 when !known. p outside [0, 1] is
  // clamped. Thread-safe.
  double ratio_at(double p) const;
  // "error unknown (uncalibrated GPU)" or e.g. "P10-P90 -12.0 % .. +21.0 %
  // from 15 held-out runs like this plan: Megatron-Core, dense, fp8, pp > 1,
  // ZeRO 0-1" ("... from 105 held-out runs: all runs" for the pooled band).
  std::string describe() const;
};

// The pooled band of `gpu`: known when the GPU is calibrated and carries
// held-out quantiles. Pure; thread-safe.
ErrorBand error_band(const GpuSpec& gpu);
// The band of a plan with features `f` on `gpu`: the quantiles of the first
// of band_group_keys(f) that the GPU's validation stores with at least
// kMinBandSamples rows, else the pooled band. Pure; thread-safe.
ErrorBand error_band(const GpuSpec& gpu, const BandFeatures& f);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_ERROR_BAND_H_
