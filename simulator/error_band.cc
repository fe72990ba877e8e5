#include "simulator/error_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

std::vector<std::string> band_group_keys(const BandFeatures& f) {
  static constexpr const char* kBuckets[] = {"<= 8 GPUs", "9-255 GPUs", ">= 256 GPUs"};
  const std::string parts[] = {
      f.pytorch_fsdp ? "PyTorch FSDP" : "Megatron-Core",
      f.moe ? "MoE" : "dense",
      f.fp8 ? "fp8" : "16-bit",
      f.pipeline ? "pp > 1" : "pp = 1",
      f.sharded ? "ZeRO 2-3" : "ZeRO 0-1",
      kBuckets[std::clamp(f.gpu_bucket, 0, 2)],
  };
  std::vector<std::string> keys;
  for (int n = 6; n >= 1; --n) {
    std::string key;
    for (int i = 0; i < n; ++i) key += (i > 0 ? ", " : "") + parts[i];
    keys.push_back(std::move(key));
  }
  keys.emplace_back(kPooledBandKey);
  return keys;
}

bool is_band_group_key(const std::string& key) {
  for (int bits = 0; bits < 32; ++bits) {
    for (int bucket = 0; bucket < 3; ++bucket) {
      BandFeatures f;
      f.pytorch_fsdp = bits & 1;
      f.moe = bits & 2;
      f.fp8 = bits & 4;
      f.pipeline = bits & 8;
      f.sharded = bits & 16;
      f.gpu_bucket = bucket;
      const std::vector<std::string> keys = band_group_keys(f);
      if (std::find(keys.begin(), keys.end() - 1, key) != keys.end() - 1) return true;
    }
  }
  return false;
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
  for (const std::string& key : band_group_keys(f)) {
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
