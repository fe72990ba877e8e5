#include "planner/accuracy/held_out.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "reports/table.h"

namespace llmplan::planner {

std::vector<std::pair<double, double>> empirical_quantiles(
    std::vector<double> values, const std::vector<double>& probabilities) {
  std::sort(values.begin(), values.end());
  std::vector<std::pair<double, double>> out;
  const double last = static_cast<double>(values.size() - 1);
  for (double p : probabilities) {
    const double pos = std::clamp(p, 0.0, 1.0) * last;
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    const double w = pos - static_cast<double>(lo);
    out.emplace_back(p, values[lo] + w * (values[hi] - values[lo]));
  }
  return out;
}

std::vector<std::pair<double, double>> prediction_quantiles(
    std::vector<double> values, const std::vector<double>& probabilities) {
  std::sort(values.begin(), values.end());
  std::vector<std::pair<double, double>> out;
  const double n = static_cast<double>(values.size());
  for (double p : probabilities) {
    // 0-based position p * (n + 1) - 1, clamped to the sample.
    const double pos = std::clamp(std::clamp(p, 0.0, 1.0) * (n + 1) - 1, 0.0, n - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    const double w = pos - static_cast<double>(lo);
    out.emplace_back(p, values[lo] + w * (values[hi] - values[lo]));
  }
  return out;
}

std::vector<double> measured_mfu(const std::vector<AccuracyCase>& cases) {
  std::vector<double> out;
  out.reserve(cases.size());
  for (const AccuracyCase& c : cases) {
    const presets::SimConfig& k = c.config;
    // Utilisation of the run's own precision peak (fp8 runs: the fp8 peak),
    // the scale GpuValidation's MFU range and its caveat use.
    const double peak = simulator::peak_flops(k.cluster.gpu, k.plan.precision);
    const double flops = k.model.model_flops_per_step(k.plan.global_batch_size);
    out.push_back(flops / (c.run.iteration_time_s * k.plan.world_size() * peak));
  }
  return out;
}

simulator::BandFeatures case_band_features(const AccuracyCase& c) {
  simulator::BandFeatures f = simulator::band_features(c.config.model, c.config.plan);
  f.pytorch_fsdp = c.stack == "pytorch-fsdp";
  f.gpu_bucket = simulator::band_gpu_bucket(c.run.num_gpus);
  return f;
}

namespace {

constexpr double kBandLow = 0.10, kBandHigh = 0.90;

// keys[i][l]: level l (0 = finest) of row i's band_group_keys.
std::vector<std::vector<std::string>> keys_of(
    const std::vector<simulator::BandFeatures>& features) {
  std::vector<std::vector<std::string>> keys;
  keys.reserve(features.size());
  for (const simulator::BandFeatures& f : features) keys.push_back(simulator::band_group_keys(f));
  return keys;
}

// Distinct (level, key) pairs with at least min_samples rows, the pooled
// level excluded, coarse to fine then by key, with their member rows.
struct KeyRows {
  int level = 0;
  std::string key;
  std::vector<size_t> rows;
};
std::vector<KeyRows> populous_groups(const std::vector<std::vector<std::string>>& keys,
                                     int min_samples) {
  std::vector<KeyRows> out;
  if (keys.empty()) return out;
  const int pooled = static_cast<int>(keys.front().size()) - 1;
  for (int level = pooled - 1; level >= 0; --level) {
    std::vector<KeyRows> at;
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = std::find_if(at.begin(), at.end(),
                             [&](const KeyRows& k) { return k.key == keys[i][level]; });
      if (it == at.end()) {
        at.push_back({level, keys[i][level], {}});
        it = at.end() - 1;
      }
      it->rows.push_back(i);
    }
    std::sort(at.begin(), at.end(),
              [](const KeyRows& a, const KeyRows& b) { return a.key < b.key; });
    for (KeyRows& k : at) {
      if (static_cast<int>(k.rows.size()) >= min_samples) out.push_back(std::move(k));
    }
  }
  return out;
}

std::pair<double, double> p10_p90(const std::vector<double>& values) {
  const auto q = prediction_quantiles(values, {kBandLow, kBandHigh});
  return {q[0].second, q[1].second};
}

// Checks rows `rows` against the band of the other folds' rows of `rows`.
void check_rows(const std::vector<size_t>& rows, const std::vector<double>& ratio,
                const std::vector<int>& fold, BandCoverage* c) {
  for (size_t i : rows) {
    std::vector<double> others;
    for (size_t j : rows) {
      if (fold[j] != fold[i]) others.push_back(ratio[j]);
    }
    if (others.empty()) continue;
    const auto [lo, hi] = p10_p90(others);
    ++c->evaluated;
    if (ratio[i] >= lo && ratio[i] <= hi) ++c->inside;
  }
}

}  // namespace

std::vector<simulator::GpuValidation::Group> band_groups(
    const std::vector<simulator::BandFeatures>& features, const std::vector<double>& ratio,
    const std::vector<double>& probabilities, int min_samples) {
  std::vector<simulator::GpuValidation::Group> out;
  for (const KeyRows& k : populous_groups(keys_of(features), min_samples)) {
    std::vector<double> values;
    for (size_t i : k.rows) values.push_back(ratio[i]);
    out.push_back({k.key, static_cast<int>(k.rows.size()),
                   prediction_quantiles(values, probabilities)});
  }
  return out;
}

BandCheck band_coverage(const std::vector<simulator::BandFeatures>& features,
                        const std::vector<double>& ratio, const std::vector<int>& fold,
                        int min_samples) {
  BandCheck check;
  check.min_samples = min_samples;
  const auto keys = keys_of(features);
  std::vector<size_t> all(ratio.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<KeyRows> groups = populous_groups(keys, min_samples);
  groups.insert(groups.begin(), KeyRows{-1, simulator::kPooledBandKey, all});
  for (const KeyRows& k : groups) {
    BandCoverage c;
    c.key = k.key;
    c.rows = static_cast<int>(k.rows.size());
    std::vector<double> values;
    for (size_t i : k.rows) values.push_back(ratio[i]);
    std::tie(c.p10, c.p90) = p10_p90(values);
    check_rows(k.rows, ratio, fold, &c);
    check.groups.push_back(std::move(c));
  }
  // The planner's rule, with only the other folds' rows known.
  check.selected.key = "as selected";
  check.selected.rows = static_cast<int>(ratio.size());
  for (size_t i = 0; i < ratio.size(); ++i) {
    std::vector<double> band;
    for (size_t level = 0; level < keys[i].size() && band.empty(); ++level) {
      const bool pooled = level + 1 == keys[i].size();
      std::vector<double> others;
      for (size_t j = 0; j < ratio.size(); ++j) {
        if (fold[j] != fold[i] && (pooled || keys[j][level] == keys[i][level])) {
          others.push_back(ratio[j]);
        }
      }
      if (pooled ? !others.empty() : static_cast<int>(others.size()) >= min_samples) {
        band = std::move(others);
      }
    }
    if (band.empty()) continue;
    const auto [lo, hi] = p10_p90(band);
    ++check.selected.evaluated;
    if (ratio[i] >= lo && ratio[i] <= hi) ++check.selected.inside;
  }
  return check;
}

std::string band_coverage_table(const BandCheck& check, bool md) {
  reports::Table t({"group", "rows", "P10", "P90", "coverage"});
  const auto cov = [](const BandCoverage& c) {
    char buf[64];
    if (c.evaluated == 0) return std::string("n/a");
    std::snprintf(buf, sizeof buf, "%.0f %% (%d/%d)", 100 * c.coverage(), c.inside, c.evaluated);
    return std::string(buf);
  };
  const auto ratio = [](double r) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", r);
    return std::string(buf);
  };
  for (const BandCoverage& c : check.groups) {
    t.add_row({c.key, std::to_string(c.rows), ratio(c.p10), ratio(c.p90), cov(c)});
  }
  t.add_row({"each row, the group the planner would pick", std::to_string(check.selected.rows), "-",
         "-", cov(check.selected)});
  return md ? t.markdown() : t.text();
}

namespace {

// The command that reproduces the report: every source file, the GPU, folds.
std::string calibrate_command(const std::vector<AccuracyCase>& cases, int folds) {
  std::string command = "llmplan calibrate";
  std::vector<std::string> files;
  for (const AccuracyCase& c : cases) {
    if (std::find(files.begin(), files.end(), c.source) == files.end()) files.push_back(c.source);
  }
  for (const std::string& f : files) command += " " + f;
  command += " --gpu " + cases.front().config.cluster.gpu.name + " -o FILE --folds " +
             std::to_string(folds);
  return command;
}

// The measured MFU range of each precision, each against its own peak; the
// FP8 and NVFP4 runs' highest in *max_fp8 and *max_fp4 (0 for none).
std::string mfu_by_precision(const std::vector<AccuracyCase>& fitted,
                             const std::vector<double>& mfu, double* max_fp8, double* max_fp4) {
  std::string out;
  char buf[512];
  // 0: 16-bit, 1: FP8, 2: NVFP4.
  auto kind_of = [](simulator::Precision p) {
    return p == simulator::Precision::kFp8 ? 1 : p == simulator::Precision::kNvfp4 ? 2 : 0;
  };
  static constexpr const char* kKindNames[] = {"16-bit", "FP8", "NVFP4"};
  static constexpr const char* kPeakNames[] = {"16-bit", "FP8", "FP4"};
  for (const int kind : {0, 1, 2}) {
    double a = 1e300, b = 0;
    size_t n = 0;
    for (size_t i = 0; i < fitted.size(); ++i) {
      if (kind_of(fitted[i].config.plan.precision) != kind) continue;
      a = std::min(a, mfu[i]);
      b = std::max(b, mfu[i]);
      ++n;
    }
    if (n == 0) continue;
    if (kind == 1) *max_fp8 = b;
    if (kind == 2) *max_fp4 = b;
    std::snprintf(buf, sizeof buf, "  %s runs (%zu): %.4f .. %.4f of the %s peak\n",
                  kKindNames[kind], n, a, b, kPeakNames[kind]);
    out += buf;
  }
  return out;
}

// Quantiles as the JSON list items {"p": P, "ratio": R}, comma-separated.
std::string quantiles_json(const std::vector<std::pair<double, double>>& quantiles) {
  char buf[512];
  std::string qs;
  for (const auto& [p, r] : quantiles) {
    std::snprintf(buf, sizeof buf, "%s{\"p\": %.2f, \"ratio\": %.4f}", qs.empty() ? "" : ", ", p,
                  r);
    qs += buf;
  }
  return qs;
}

// The error-band groups as JSON list items {"key", "samples", "quantiles"}.
std::string band_groups_json(const std::vector<simulator::BandFeatures>& features,
                             const std::vector<double>& ratio,
                             const std::vector<double>& probabilities) {
  std::string gs;
  for (const auto& g : band_groups(features, ratio, probabilities)) {
    const std::string gq = quantiles_json(g.quantiles);
    gs += std::string(gs.empty() ? "" : ", ") + "{\"key\": \"" + g.key +
          "\", \"samples\": " + std::to_string(g.samples) + ", \"quantiles\": [" + gq + "]}";
  }
  return gs;
}

}  // namespace

std::string held_out_report(const std::vector<AccuracyCase>& cases,
                            const std::vector<double>& held_out_predicted,
                            const std::vector<int>& fold, int folds) {
  const std::string command = calibrate_command(cases, folds);
  std::vector<double> ratio;
  for (size_t i = 0; i < cases.size(); ++i) {
    ratio.push_back(cases[i].run.iteration_time_s / held_out_predicted[i]);
  }
  const std::vector<double> probabilities(std::begin(kValidationProbabilities),
                                          std::end(kValidationProbabilities));
  const auto q = prediction_quantiles(ratio, probabilities);
  // MFU range of the rows the constants are fitted on (MoE rows are
  // predicted, never fitted).
  std::vector<AccuracyCase> dense;
  for (const AccuracyCase& c : cases) {
    if (!c.config.model.is_moe()) dense.push_back(c);
  }
  const std::vector<AccuracyCase>& fitted = dense.empty() ? cases : dense;
  const std::vector<double> mfu = measured_mfu(fitted);
  const auto [lo, hi] = std::minmax_element(mfu.begin(), mfu.end());
  char buf[512];
  std::string out = std::to_string(folds) + "-fold held-out measured/predicted over " +
                    std::to_string(cases.size()) + " rows:";
  for (const auto& [p, r] : q) {
    std::snprintf(buf, sizeof buf, " P%02.0f %.4f", 100 * p, r);
    out += buf;
  }
  std::snprintf(buf, sizeof buf,
                "\nmeasured MFU (model FLOPs / (time x GPUs x peak)): %.4f .. %.4f\n", *lo, *hi);
  out += buf;
  // By precision, each against its own peak: the FP8 runs' highest is what
  // an FP8 plan's MFU is held to (validation.max_mfu_fp8, simulator/caveats.h),
  // the NVFP4 runs' an NVFP4 plan's (validation.max_mfu_fp4).
  double max_fp8 = 0, max_fp4 = 0;
  out += mfu_by_precision(fitted, mfu, &max_fp8, &max_fp4);
  // The preset's "validation" object.
  const std::string qs = quantiles_json(q);
  std::snprintf(buf, sizeof buf,
                "validation JSON: {\"calibrated\": true, \"min_mfu\": %.4f, \"max_mfu\": %.4f, ",
                *lo, *hi);
  std::string head = buf;
  if (max_fp8 > 0) {
    std::snprintf(buf, sizeof buf, "\"max_mfu_fp8\": %.4f, ", max_fp8);
    head += buf;
  }
  if (max_fp4 > 0) {
    std::snprintf(buf, sizeof buf, "\"max_mfu_fp4\": %.4f, ", max_fp4);
    head += buf;
  }
  std::snprintf(buf, sizeof buf, "\"held_out_error\": {\"samples\": %zu, \"quantiles\": [",
                cases.size());
  head += buf;
  std::vector<simulator::BandFeatures> features;
  for (const AccuracyCase& c : cases) features.push_back(case_band_features(c));
  const std::string gs = band_groups_json(features, ratio, probabilities);
  out += head + qs + "], \"groups\": [" + gs + "], \"source\": \"" + command + "\"}}\n";
  out += "band coverage (measured/predicted ratio inside P10-P90 of the other folds' rows of its "
         "group; groups of >= " +
         std::to_string(simulator::kMinBandSamples) + " rows):\n";
  out += band_coverage_table(band_coverage(features, ratio, fold), false);
  return out;
}

}  // namespace llmplan::planner
