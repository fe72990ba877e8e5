#include "planner/accuracy/held_out.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

std::string held_out_report(const std::vector<AccuracyCase>& cases,
                            const std::vector<double>& held_out_predicted, int folds) {
  std::string command = "llmplan calibrate";
  std::vector<std::string> files;
  for (const AccuracyCase& c : cases) {
    if (std::find(files.begin(), files.end(), c.source) == files.end()) files.push_back(c.source);
  }
  for (const std::string& f : files) command += " " + f;
  command += " --gpu " + cases.front().config.cluster.gpu.name + " -o FILE --folds " +
             std::to_string(folds);
  std::vector<double> ratio;
  for (size_t i = 0; i < cases.size(); ++i) {
    ratio.push_back(cases[i].run.iteration_time_s / held_out_predicted[i]);
  }
  const std::vector<double> probabilities(std::begin(kValidationProbabilities),
                                          std::end(kValidationProbabilities));
  const auto q = empirical_quantiles(ratio, probabilities);
  const std::vector<double> mfu = measured_mfu(cases);
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
  // an FP8 plan's MFU is held to (validation.max_mfu_fp8, simulator/caveats.h).
  double max_fp8 = 0;
  for (const bool fp8 : {false, true}) {
    double a = 1e300, b = 0;
    size_t n = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      if ((cases[i].config.plan.precision == simulator::Precision::kFp8) != fp8) continue;
      a = std::min(a, mfu[i]);
      b = std::max(b, mfu[i]);
      ++n;
    }
    if (n == 0) continue;
    if (fp8) max_fp8 = b;
    std::snprintf(buf, sizeof buf, "  %s runs (%zu): %.4f .. %.4f of the %s peak\n",
                  fp8 ? "FP8" : "16-bit", n, a, b, fp8 ? "FP8" : "16-bit");
    out += buf;
  }
  // The preset's "validation" object.
  std::string qs;
  for (const auto& [p, r] : q) {
    std::snprintf(buf, sizeof buf, "%s{\"p\": %.2f, \"ratio\": %.4f}", qs.empty() ? "" : ", ", p,
                  r);
    qs += buf;
  }
  std::snprintf(buf, sizeof buf,
                "validation JSON: {\"calibrated\": true, \"min_mfu\": %.4f, \"max_mfu\": %.4f, ",
                *lo, *hi);
  out += buf;
  if (max_fp8 > 0) {
    std::snprintf(buf, sizeof buf, "\"max_mfu_fp8\": %.4f, ", max_fp8);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "\"held_out_error\": {\"samples\": %zu, \"quantiles\": [",
                cases.size());
  out += buf + qs + "], \"source\": \"" + command + "\"}}\n";
  return out;
}

}  // namespace llmplan::planner
