#include "simulator/error_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <string_view>

namespace llmplan::simulator {

double ErrorBand::ratio_at(double p) const {
  if (!known || quantiles.empty()) return 1.0;
  if (!(p >= 0)) p = 0;  // NaN too
  p = std::min(p, 1.0);
  if (p <= quantiles.front().first) return quantiles.front().second;
  if (p >= quantiles.back().first) return quantiles.back().second;
  const auto upper =
      std::upper_bound(quantiles.begin(), quantiles.end(), p,
                       [](double x, const std::pair<double, double>& q) { return x < q.first; });
  const auto lower = upper - 1;
  const double w = (p - lower->first) / (upper->first - lower->first);
  return lower->second + w * (upper->second - lower->second);
}

int band_gpu_bucket(long long gpus) { return gpus <= 8 ? 0 : gpus <= 255 ? 1 : 2; }

BandFeatures band_features(const Model& model, const Plan& plan) {
  BandFeatures f;
  f.moe = model.is_moe();
  // NVFP4 plans with the FP8 runs: the nearest measured low-precision group
  // (an NVFP4 plan carries its own caveat until NVFP4 runs are fitted).
  f.fp8 = low_precision(plan.precision);
  f.pipeline = plan.pipeline_parallel > 1;
  f.sharded = plan.sharding_stage() >= 2;
  f.gpu_bucket = band_gpu_bucket(plan.world_size());
  return f;
}

namespace {

// The most specific group key of `f` (its six parts joined by ", ") and where
// each of its prefixes of 1..6 parts ends: band_group_keys' keys are those
// prefixes, longest first.
struct BandKeyPrefixes {
  std::string full;
  size_t ends[6] = {};
};

BandKeyPrefixes band_key_prefixes(const BandFeatures& f) {
  static constexpr const char* kBuckets[] = {"<= 8 GPUs", "9-255 GPUs", ">= 256 GPUs"};
  const char* const parts[] = {
      f.pytorch_fsdp ? "PyTorch FSDP" : "Megatron-Core",
      f.moe ? "MoE" : "dense",
      f.fp8 ? "fp8" : "16-bit",
      f.pipeline ? "pp > 1" : "pp = 1",
      f.sharded ? "ZeRO 2-3" : "ZeRO 0-1",
      kBuckets[std::clamp(f.gpu_bucket, 0, 2)],
  };
  BandKeyPrefixes k;
  k.full.reserve(80);
  for (int i = 0; i < 6; ++i) {
    if (i > 0) k.full += ", ";
    k.full += parts[i];
    k.ends[i] = k.full.size();
  }
  return k;
}

}  // namespace

std::vector<std::string> band_group_keys(const BandFeatures& f) {
  const BandKeyPrefixes k = band_key_prefixes(f);
  std::vector<std::string> keys;
  for (int n = 6; n >= 1; --n) keys.push_back(k.full.substr(0, k.ends[n - 1]));
  keys.emplace_back(kPooledBandKey);
  return keys;
}

bool is_band_group_key(const std::string& key) {
  // Every key of every feature combination (not the pooled key), built once:
  // validate(GpuSpec) asks for each group of a GPU's validation, and the
  // simulator validates its cluster on every call. Immutable after its
  // thread-safe initialisation.
  static const std::set<std::string, std::less<>> kKeys = [] {
    std::set<std::string, std::less<>> keys;
    for (int bits = 0; bits < 32; ++bits) {
      for (int bucket = 0; bucket < 3; ++bucket) {
        BandFeatures f;
        f.pytorch_fsdp = bits & 1;
        f.moe = bits & 2;
        f.fp8 = bits & 4;
        f.pipeline = bits & 8;
        f.sharded = bits & 16;
        f.gpu_bucket = bucket;
        std::vector<std::string> all = band_group_keys(f);
        all.pop_back();  // kPooledBandKey
        keys.insert(std::make_move_iterator(all.begin()), std::make_move_iterator(all.end()));
      }
    }
    return keys;
  }();
  return kKeys.find(key) != kKeys.end();
}

std::string ErrorBand::describe() const {
  if (!known) return "error unknown (uncalibrated GPU)";
  const auto signed_pct = [](double ratio) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f %%", 100.0 * (ratio - 1.0));
    return std::string(buf);
  };
  return "P10-P90 " + signed_pct(ratio_at(0.10)) + " .. " + signed_pct(ratio_at(0.90)) +
         " from " + std::to_string(samples) + " held-out runs" +
         (group == kPooledBandKey ? ": " : " like this plan: ") + group;
}

ErrorBand error_band(const GpuSpec& gpu) {
  ErrorBand band;
  const GpuValidation& v = gpu.validation;
  band.known = v.calibrated && !v.quantiles.empty();
  if (!band.known) return band;
  band.quantiles = v.quantiles;
  band.samples = v.samples;
  band.source = v.held_out_source;
  return band;
}

}  // namespace llmplan::simulator

namespace llmplan::simulator {

ErrorBand error_band(const GpuSpec& gpu, const BandFeatures& f) {
  ErrorBand band = error_band(gpu);
  if (!band.known) return band;
  // band_group_keys(f) in order, without building each key (this runs for
  // every simulated plan).
  const BandKeyPrefixes k = band_key_prefixes(f);
  for (int n = 6; n >= 0; --n) {
    const std::string_view key =
        n > 0 ? std::string_view(k.full).substr(0, k.ends[n - 1]) : std::string_view(kPooledBandKey);
    for (const GpuValidation::Group& g : gpu.validation.groups) {
      if (g.key != key || g.samples < kMinBandSamples || g.quantiles.empty()) continue;
      band.quantiles = g.quantiles;
      band.samples = g.samples;
      band.group = g.key;
      return band;
    }
  }
  return band;
}

}  // namespace llmplan::simulator
