// The mixture-of-experts and hybrid stages of calibrate (calibrate_stages.h).
#include "planner/accuracy/calibrate_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace llmplan::planner {
namespace {

// MAPE of `rows` of `cases` predicted with `constants` ("n/a" for none).
Result<std::string> moe_mape(const std::vector<AccuracyCase>& cases, const std::vector<size_t>& rows,
                             const AccuracyConstants& constants) {
  if (rows.empty()) return std::string("n/a");
  std::vector<AccuracyCase> trial;
  for (size_t i : rows) trial.push_back(cases[i]);
  apply_constants(constants, &trial);
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p, predict_iteration_times(trial, nullptr));
  return percent_text(summarise(p, measured_of(trial)).mape);
}

// The rows of `cases` that `keep` selects (*rows) and, of those, the rows
// of the latest release (*fit_rows; every kept row when `latest` is empty).
template <typename Keep>
void stage_rows(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                Keep keep, std::vector<size_t>* rows, std::vector<size_t>* fit_rows) {
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!keep(cases[i])) continue;
    rows->push_back(i);
    if (latest.empty() || latest[i]) fit_rows->push_back(i);
  }
}

// Copies of cases[rows[0]], cases[rows[1]], ...
std::vector<AccuracyCase> cases_at(const std::vector<AccuracyCase>& cases,
                                   const std::vector<size_t>& rows) {
  std::vector<AccuracyCase> out;
  out.reserve(rows.size());
  for (size_t i : rows) out.push_back(cases[i]);
  return out;
}

// The shared inputs of the MoE stage's steps.
struct MoeStage {
  const std::vector<AccuracyCase>& cases;
  const std::vector<bool>& latest;
  const CalibrationOptions& copt;
  const LineSink& on_line;
  const AccuracyConstants& held;  // the dense constants, held
  std::vector<size_t> moe, fit_rows;
};

// MoE constants fitted on the `train` rows predict the `test` rows.
struct HeldGroup {
  MoeCalibrationResult fit;
  std::vector<double> predicted, measured;
};
Result<HeldGroup> held_group(const MoeStage& s, const std::vector<size_t>& train,
                             const std::vector<size_t>& test) {
  HeldGroup g;
  LLMPLAN_ASSIGN_OR_RETURN(g.fit, calibrate_moe(cases_at(s.cases, train), s.held, s.copt));
  std::vector<AccuracyCase> t = cases_at(s.cases, test);
  apply_constants(g.fit.constants, &t);
  LLMPLAN_ASSIGN_OR_RETURN(g.predicted, predict_iteration_times(t, nullptr));
  g.measured = measured_of(t);
  return g;
}

// The fit on every fit row: its lines and its "rows", "in_sample_mape" and
// "at_bound" entries.
void report_moe_fit(const MoeStage& s, const MoeCalibrationResult& all,
                    boost::json::object* report) {
  const LineSink& on_line = s.on_line;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "mixture-of-experts constants fitted on %zu MoE rows%s (dense constants held): "
                "grouped_gemm_expert_overhead_s %.3g, moe_a2a_efficiency %.4g, "
                "moe_a2a_nic_efficiency %.4g; in-sample MAPE %s\n",
                s.fit_rows.size(), s.latest.empty() ? "" : " of the latest release",
                all.constants.roofline.grouped_gemm_expert_overhead_s,
                all.constants.roofline.moe_a2a_efficiency,
                all.constants.roofline.moe_a2a_nic_efficiency,
                percent_text(all.in_sample_mape).c_str());
  on_line(buf);
  for (const std::string& b : all.at_bound) on_line("note: " + b + "\n");
  if (all.nic_held && all.nic_matches_cluster) {
    on_line(
        "note: the fitted moe_a2a_nic_efficiency equals the cluster's NIC figure within 0.5 % "
        "of every row's step: 0, the cluster's figure, is used\n");
  } else if (all.nic_held) {
    on_line(
        "note: moe_a2a_nic_efficiency is not determined by these rows (replacing it by the "
        "cluster's NIC figure moves no row's step by 0.5 %): 0, the cluster's figure, is used\n");
  }
  (*report)["rows"] = s.fit_rows.size();
  (*report)["in_sample_mape"] = all.in_sample_mape;
  boost::json::array bounds;
  for (const std::string& b : all.at_bound) bounds.push_back(boost::json::string(b));
  (*report)["at_bound"] = std::move(bounds);
}

// The models of the fit rows, in order of first appearance.
std::vector<std::string> fit_models(const MoeStage& s) {
  std::vector<std::string> models;
  for (size_t i : s.fit_rows) {
    const std::string& m = s.cases[i].config.model.name;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  return models;
}

// Leave one model out: each model's fit rows predicted by a fit on the
// other models'. Sets each row's held-out prediction in *held_at (for the
// latest-release and by-release views) and appends to *held_p / *held_m.
Status moe_leave_one_model_out(const MoeStage& s, const std::vector<std::string>& models,
                               boost::json::object* by_model, std::vector<double>* held_at,
                               std::vector<double>* held_p, std::vector<double>* held_m) {
  const LineSink& on_line = s.on_line;
  char buf[512];
  for (const std::string& m : models) {
    std::vector<size_t> train, test;
    for (size_t i : s.fit_rows) (s.cases[i].config.model.name == m ? test : train).push_back(i);
    if (train.empty()) continue;
    LLMPLAN_ASSIGN_OR_RETURN(const HeldGroup g, held_group(s, train, test));
    const MoeCalibrationResult& f = g.fit;
    const std::vector<double>& p = g.predicted;
    const std::vector<double>& meas = g.measured;
    for (size_t k = 0; k < test.size(); ++k) (*held_at)[test[k]] = p[k];
    held_p->insert(held_p->end(), p.begin(), p.end());
    held_m->insert(held_m->end(), meas.begin(), meas.end());
    (*by_model)[m] = {{"rows", test.size()}, {"mape", summarise(p, meas).mape}};
    std::snprintf(buf, sizeof buf,
                  "mixture-of-experts leave-one-model-out: %s: MAPE %s (%zu rows predicted by "
                  "MoE constants fitted on the other models: %.3g s, %.4g, %.4g%s)\n",
                  m.c_str(), percent_text(summarise(p, meas).mape).c_str(), test.size(),
                  f.constants.roofline.grouped_gemm_expert_overhead_s,
                  f.constants.roofline.moe_a2a_efficiency,
                  f.constants.roofline.moe_a2a_nic_efficiency,
                  !f.nic_held              ? ""
                  : f.nic_matches_cluster ? " (the fit equals the cluster's NIC figure)"
                                          : " (not determined: the cluster's NIC figure)");
    on_line(buf);
  }
  return Status();
}

// Rows fitted over every release (the H100 form, whose releases are read
// from its source cells): the held-out predictions `held_at` on the latest
// release of each (system, model, precision) -- the rows #26's targets are
// set on -- and grouped by release.
void report_moe_release_views(const MoeStage& s, const std::vector<std::string>& models,
                              const std::vector<double>& held_at, boost::json::object* report) {
  const LineSink& on_line = s.on_line;
  const std::vector<AccuracyCase>& cases = s.cases;
  const std::vector<bool> newest = latest_release_mask(cases);
  const auto group = [&](const auto& in_group) {
    std::vector<double> p, meas;
    for (size_t i : s.moe) {
      if (!std::isfinite(held_at[i]) || !in_group(i)) continue;
      p.push_back(held_at[i]);
      meas.push_back(cases[i].run.iteration_time_s);
    }
    return std::pair(p, meas);
  };
  boost::json::object latest_by_model, held_by_release;
  for (const std::string& m : models) {
    const auto [p, meas] =
        group([&](size_t i) { return newest[i] && cases[i].config.model.name == m; });
    if (p.empty()) continue;
    latest_by_model[m] = {{"rows", p.size()}, {"mape", summarise(p, meas).mape}};
    on_line("mixture-of-experts leave-one-model-out, latest release: " + m + ": MAPE " +
            percent_text(summarise(p, meas).mape) + " (" + std::to_string(p.size()) + " rows)\n");
  }
  const auto [lp, lm] = group([&](size_t i) { return static_cast<bool>(newest[i]); });
  (*report)["held_out_by_model_latest_release"] = std::move(latest_by_model);
  (*report)["leave_one_model_out_latest_release_mape"] = summarise(lp, lm).mape;
  on_line("mixture-of-experts leave-one-model-out MAPE on the latest release of each "
          "(system, model, precision): " +
          percent_text(summarise(lp, lm).mape) + " (" + std::to_string(lp.size()) + " rows)\n");
  std::vector<std::string> names;
  for (size_t i : s.moe) {
    if (std::find(names.begin(), names.end(), cases[i].release) == names.end()) {
      names.push_back(cases[i].release);
    }
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return release_version(a) < release_version(b);
  });
  for (const std::string& r : names) {
    const auto [p, meas] = group([&](size_t i) { return cases[i].release == r; });
    if (p.empty()) continue;
    const std::string label = r.empty() ? "(no release)" : r;
    held_by_release[label] = {{"rows", p.size()}, {"mape", summarise(p, meas).mape}};
    on_line("mixture-of-experts leave-one-model-out by release: " + label + ": MAPE " +
            percent_text(summarise(p, meas).mape) + " (" + std::to_string(p.size()) + " rows)\n");
  }
  (*report)["held_out_by_model_by_release"] = std::move(held_by_release);
}

// Leave one release out: each release's MoE rows predicted by a fit on the
// other releases' MoE rows (when the rows have two releases or more).
Status moe_leave_one_release_out(const MoeStage& s, boost::json::object* by_release,
                                 boost::json::object* report) {
  const LineSink& on_line = s.on_line;
  const std::vector<AccuracyCase>& cases = s.cases;
  std::vector<std::string> releases;
  for (size_t i : s.moe) {
    const std::string& r = cases[i].release;
    if (!r.empty() && std::find(releases.begin(), releases.end(), r) == releases.end()) {
      releases.push_back(r);
    }
  }
  if (releases.size() > 1) {
    std::vector<double> rp, rm;
    for (const std::string& r : releases) {
      std::vector<size_t> train, test;
      for (size_t i : s.moe) (cases[i].release == r ? test : train).push_back(i);
      if (train.empty()) continue;
      LLMPLAN_ASSIGN_OR_RETURN(const HeldGroup g, held_group(s, train, test));
      const std::vector<double>& p = g.predicted;
      const std::vector<double>& meas = g.measured;
      rp.insert(rp.end(), p.begin(), p.end());
      rm.insert(rm.end(), meas.begin(), meas.end());
      (*by_release)[r] = {{"rows", test.size()}, {"mape", summarise(p, meas).mape}};
      on_line("mixture-of-experts leave-one-release-out: " + r + ": MAPE " +
              percent_text(summarise(p, meas).mape) + " (" + std::to_string(test.size()) +
              " rows)\n");
    }
    (*report)["held_out_by_release"] = std::move(*by_release);
    (*report)["leave_one_release_out_mape"] = summarise(rp, rm).mape;
    on_line("mixture-of-experts leave-one-release-out MAPE: " + percent_text(summarise(rp, rm).mape) +
            " (" + std::to_string(rp.size()) + " rows)\n");
  }
  return Status();
}

}  // namespace

Status fit_moe_constants(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                         const CalibrationOptions& copt, const LineSink& on_line,
                         AccuracyConstants* constants, boost::json::object* report) {
  MoeStage s{cases, latest, copt, on_line, *constants, {}, {}};
  stage_rows(
      cases, latest, [](const AccuracyCase& c) { return c.config.model.is_moe(); }, &s.moe,
      &s.fit_rows);
  if (s.fit_rows.empty()) return Status();
  LLMPLAN_ASSIGN_OR_RETURN(const MoeCalibrationResult all,
                           calibrate_moe(cases_at(cases, s.fit_rows), *constants, copt));
  report_moe_fit(s, all, report);
  boost::json::object by_model, by_release;
  LLMPLAN_ASSIGN_OR_RETURN(const std::string all_rows, moe_mape(cases, s.moe, all.constants));
  on_line("mixture-of-experts MAPE with these constants over all " +
          std::to_string(s.moe.size()) + " MoE rows (older releases included): " + all_rows +
          "\n");
  // Leave one model out.
  const std::vector<std::string> models = fit_models(s);
  std::vector<double> held_p, held_m;
  // Each row's held-out prediction (by the fit on the other models), for
  // the latest-release and by-release views below.
  std::vector<double> held_at(cases.size(), std::nan(""));
  LLMPLAN_RETURN_IF_ERROR(
      moe_leave_one_model_out(s, models, &by_model, &held_at, &held_p, &held_m));
  (*report)["held_out_by_model"] = std::move(by_model);
  if (!held_p.empty()) {
    (*report)["leave_one_model_out_mape"] = summarise(held_p, held_m).mape;
    on_line("mixture-of-experts leave-one-model-out MAPE: " +
            percent_text(summarise(held_p, held_m).mape) + " (" + std::to_string(held_p.size()) +
            " rows)\n");
  }
  const bool reported_releases =
      latest.empty() && std::any_of(s.moe.begin(), s.moe.end(),
                                    [&](size_t i) { return !cases[i].release.empty(); });
  if (reported_releases && !held_p.empty()) report_moe_release_views(s, models, held_at, report);
  LLMPLAN_RETURN_IF_ERROR(moe_leave_one_release_out(s, &by_release, report));
  constants->roofline.grouped_gemm_expert_overhead_s =
      all.constants.roofline.grouped_gemm_expert_overhead_s;
  constants->roofline.moe_a2a_efficiency = all.constants.roofline.moe_a2a_efficiency;
  constants->roofline.moe_a2a_nic_efficiency = all.constants.roofline.moe_a2a_nic_efficiency;
  return Status();
}

Status fit_ssd_constant(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                        const LineSink& on_line, AccuracyConstants* constants,
                        boost::json::object* report) {
  std::vector<size_t> hybrid, fit_rows;
  stage_rows(cases, latest, has_mamba_layers, &hybrid, &fit_rows);
  if (fit_rows.empty()) return Status();
  const auto pick = [&](const std::vector<size_t>& rows) { return cases_at(cases, rows); };
  LLMPLAN_ASSIGN_OR_RETURN(const SsdCalibrationResult all, calibrate_ssd(pick(fit_rows), *constants));
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "hybrid constant fitted on %zu rows with Mamba layers%s (other constants held): "
                "ssd_scan_efficiency %.4g; in-sample MAPE %s\n",
                fit_rows.size(), latest.empty() ? "" : " of the latest release",
                all.constants.roofline.ssd_scan_efficiency, percent_text(all.in_sample_mape).c_str());
  on_line(buf);
  for (const std::string& b : all.at_bound) on_line("note: " + b + "\n");
  (*report)["rows"] = fit_rows.size();
  (*report)["ssd_scan_efficiency"] = all.constants.roofline.ssd_scan_efficiency;
  (*report)["in_sample_mape"] = all.in_sample_mape;
  LLMPLAN_ASSIGN_OR_RETURN(const std::string all_rows, moe_mape(cases, hybrid, all.constants));
  {
    std::vector<AccuracyCase> t = pick(hybrid);
    apply_constants(all.constants, &t);
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p, predict_iteration_times(t, nullptr));
    (*report)["all_rows_mape"] = summarise(p, measured_of(t)).mape;
  }
  on_line("hybrid MAPE with this constant over all " + std::to_string(hybrid.size()) +
              " rows with Mamba layers (older releases included): " + all_rows + "\n");
  std::vector<std::string> models;
  for (size_t i : fit_rows) {
    const std::string& m = cases[i].config.model.name;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  boost::json::object by_model;
  std::vector<double> held_p, held_m;
  for (const std::string& m : models) {
    std::vector<size_t> train, test;
    for (size_t i : fit_rows) (cases[i].config.model.name == m ? test : train).push_back(i);
    if (train.empty()) continue;
    LLMPLAN_ASSIGN_OR_RETURN(const SsdCalibrationResult f, calibrate_ssd(pick(train), *constants));
    std::vector<AccuracyCase> t = pick(test);
    apply_constants(f.constants, &t);
    LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p, predict_iteration_times(t, nullptr));
    const std::vector<double> meas = measured_of(t);
    held_p.insert(held_p.end(), p.begin(), p.end());
    held_m.insert(held_m.end(), meas.begin(), meas.end());
    by_model[m] = {{"rows", test.size()},
                   {"mape", summarise(p, meas).mape},
                   {"ssd_scan_efficiency", f.constants.roofline.ssd_scan_efficiency}};
    std::snprintf(buf, sizeof buf,
                  "hybrid leave-one-model-out: %s: MAPE %s (%zu rows predicted by "
                  "ssd_scan_efficiency %.4g fitted on the other models)\n",
                  m.c_str(), percent_text(summarise(p, meas).mape).c_str(), test.size(),
                  f.constants.roofline.ssd_scan_efficiency);
    on_line(buf);
  }
  (*report)["held_out_by_model"] = std::move(by_model);
  if (!held_p.empty()) {
    (*report)["leave_one_model_out_mape"] = summarise(held_p, held_m).mape;
    on_line("hybrid leave-one-model-out MAPE: " + percent_text(summarise(held_p, held_m).mape) + " (" +
                std::to_string(held_p.size()) + " rows)\n");
  }
  constants->roofline.ssd_scan_efficiency = all.constants.roofline.ssd_scan_efficiency;
  return Status();
}

}  // namespace llmplan::planner
