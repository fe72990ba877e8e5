// The staged calibration of `llmplan calibrate` (calibrate_run.h).
#include "planner/accuracy/calibrate_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/held_out.h"
#include "planner/accuracy/runs_report.h"

namespace llmplan::planner {
namespace {

// What the stages of run_calibration share.
struct Calibration {
  explicit Calibration(const CalibrateRunOptions& options) : o(options), in(options.inputs) {}
  const CalibrateRunOptions& o;
  const AccuracyInputs& in;
  bool runs = false;                    // runs files (else vTrain's CSV)
  std::vector<PublishedRun> published;  // runs files: every row
  std::vector<AccuracyCase> cases;      // the rows to fit
  std::vector<std::string> notes;
  std::string gpu_name;
  std::shared_ptr<std::string> stage = std::make_shared<std::string>();  // progress prefix
  CalibrationOptions copt;
  AccuracyConstants initial;
  bool releases = false;              // fit only the latest release of each group
  std::vector<bool> latest;           // with releases: the rows of the latest release
  std::vector<AccuracyCase> all_cases;  // every row, for the stack drift after the fit
  std::string calibration_releases;     // the latest releases, newest first
};

// Stage 1: the rows. On runs files, the line of rows the simulator cannot
// express and the note on the mixture-of-experts rows.
Status load_calibration_cases(Calibration* c) {
  const LineSink& stream_line = c->o.on_line;
  std::vector<AccuracyCase>& cases = c->cases;
  LLMPLAN_ASSIGN_OR_RETURN(c->runs, reads_runs_files(c->in));
  if (!c->runs) {
    LLMPLAN_ASSIGN_OR_RETURN(cases, load_measured_cases(c->in, &c->notes, &c->gpu_name));
    return Status();
  }
  LLMPLAN_ASSIGN_OR_RETURN(cases,
                           load_runs_cases(c->in, &c->published, &c->notes, &c->gpu_name));
  stream_line(std::to_string(cases.size()) + " of " + std::to_string(c->published.size()) +
              " rows expressible; excluded by missing feature:");
  for (const auto& [feature, n] : missing_feature_counts(c->published)) {
    stream_line(" " + feature + " " + std::to_string(n) + ";");
  }
  stream_line("\n");
  // The constants describe dense layers; MoE rows are a test of them, never
  // fitted: cross-validation predicts them (their held-out errors make the
  // MoE groups of the band), the final fit leaves them out.
  const long moe_rows = std::count_if(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return c.config.model.is_moe();
  });
  if (moe_rows > 0) {
    const std::string why = std::to_string(moe_rows) +
                            " mixture-of-experts rows are not fitted with the dense constants "
                            "(their own MoE constants are fitted after the dense fit); "
                            "cross-validation predicts them for the error band";
    c->notes.push_back(why);
    stream_line(why + "\n");
  }
  if (moe_rows == static_cast<long>(cases.size())) {
    return Status::invalid_argument("calibrate: no dense row to fit in the runs file(s)");
  }
  return Status();
}

// Stage 2: the latest releases the constants represent, and the note on
// the older rows (runs with releases only).
void note_latest_releases(Calibration* c) {
  if (!c->releases) return;
  const std::vector<AccuracyCase>& cases = c->cases;
  std::vector<std::string> seen;
  long older = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!c->latest[i]) {
      ++older;
    } else if (std::find(seen.begin(), seen.end(), cases[i].release) == seen.end()) {
      seen.push_back(cases[i].release);
    }
  }
  std::sort(seen.begin(), seen.end(), [](const std::string& a, const std::string& b) {
    return release_version(a) > release_version(b);
  });
  for (const std::string& r : seen) {
    c->calibration_releases += (c->calibration_releases.empty() ? "" : ", ") + r;
  }
  const std::string why = std::to_string(older) +
                          " rows of older releases are not fitted (calibration on the latest "
                          "release of each system, model and precision: " +
                          c->calibration_releases + "); they are reported as stack drift";
  c->notes.push_back(why);
  c->o.on_line(why + "\n");
}

// The data files' names without their folders, space-separated.
std::string data_names(const std::vector<std::string>& files) {
  std::string data;
  for (const std::string& f : files) {
    data += (data.empty() ? "" : " ") + f.substr(f.find_last_of('/') + 1);
  }
  return data;
}

// The constants of a stage-only fit (--moe-only, --hybrid-only): the held
// dense constants plus the fitted stage, with a provenance line naming the
// command (`flags`) and what it fitted.
Result<std::string> stage_constants(const Calibration& c, const AccuracyConstants& held,
                                    const std::string& flags, const std::string& fitted,
                                    const boost::json::object* moe,
                                    const boost::json::object* hybrid) {
  const std::string data = data_names(c.in.files);
  const std::string src = "llmplan calibrate " + data + " --gpu " + c.gpu_name + " " + flags +
                          ": the " + (moe != nullptr ? "dense " : "") +
                          "constants in effect held (" +
                          (c.in.constants.empty() ? std::string("the preset's") : c.in.constants) +
                          "); only " + fitted + " fitted";
  return constants_to_json(c.gpu_name, held, src, "not fitted: " + src, moe, hybrid);
}

// A stage fit over the constants in effect: `latest` (empty for every
// row), the constants to update and the stage's report.
using StageFit = std::function<Status(const std::vector<bool>& latest, AccuracyConstants* held,
                                      boost::json::object* report)>;

// Stage 3: one stage only, over the constants in effect (held); the
// constants JSON, or InvalidArgument `no_rows` when the stage has no row.
Result<std::string> stage_only(const Calibration& c, const StageFit& fit,
                               const std::string& no_rows, const std::string& flags,
                               const std::string& fitted, bool moe) {
  AccuracyConstants held = c.initial;
  boost::json::object report;
  LLMPLAN_RETURN_IF_ERROR(fit(c.releases ? c.latest : std::vector<bool>(), &held, &report));
  if (report.empty()) return Status::invalid_argument(no_rows);
  return stage_constants(c, held, flags, fitted, moe ? &report : nullptr,
                         moe ? nullptr : &report);
}

// Stage 3, --hybrid-only (#27): only ssd_scan_efficiency, on the rows with
// Mamba layers, over the dense and MoE constants in effect (held).
Result<std::string> hybrid_only(const Calibration& c) {
  const CalibrateRunOptions& o = c.o;
  if (!c.runs) return Status::invalid_argument("--hybrid-only: needs a runs file (hybrid rows)");
  if (o.folds > 0 || o.moe_only || !o.pool_gpu.empty()) {
    return Status::invalid_argument(
        "--hybrid-only: fits one constant with its own leave-one-model-out figures; give "
        "--folds 0 and no --moe-only or --pool-gpu");
  }
  const StageFit fit = [&](const std::vector<bool>& latest, AccuracyConstants* held,
                           boost::json::object* report) {
    return fit_ssd_constant(c.all_cases, latest, o.on_line, held, report);
  };
  return stage_only(c, fit, "--hybrid-only: no row of a model with Mamba layers to fit",
                    "--hybrid-only --folds 0", "ssd_scan_efficiency", /*moe=*/false);
}

// Stage 4, --pool-gpu (#26): the other GPU's dense rows of the latest
// release, fitted alongside every fit below (folds included), never scored.
Status add_pool(Calibration* c) {
  const CalibrateRunOptions& o = c->o;
  if (!c->runs || !c->releases || c->copt.prior_reference == nullptr) {
    return Status::invalid_argument(
        "--pool-gpu: needs a runs file with releases (the restricted fit), such as "
        "data/blackwell/published_runs.csv");
  }
  if (o.pool_gpu == c->in.gpu) {
    return Status::invalid_argument("--pool-gpu: the same GPU as --gpu");
  }
  AccuracyInputs po = c->in;
  po.gpu = o.pool_gpu;
  std::vector<PublishedRun> pool_runs;
  std::vector<std::string> pool_notes;
  std::string pool_name;
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<AccuracyCase> pool,
                           load_runs_cases(po, &pool_runs, &pool_notes, &pool_name));
  const std::vector<bool> pool_latest = latest_release_mask(pool);
  std::vector<AccuracyCase> kept;
  for (size_t i = 0; i < pool.size(); ++i) {
    if (pool_latest[i] && !pool[i].config.model.is_moe()) kept.push_back(std::move(pool[i]));
  }
  if (kept.empty()) {
    return Status::invalid_argument("--pool-gpu: no dense row of the latest release ran on " +
                                    o.pool_gpu);
  }
  const std::string why = "pooled restricted fit: " + std::to_string(kept.size()) +
                          " dense latest-release rows of " + o.pool_gpu +
                          " fitted alongside (own GEMM scales, shared attention and host "
                          "costs), never scored";
  c->notes.push_back(why);
  o.on_line(why + "\n");
  c->copt.pool = std::make_shared<const std::vector<AccuracyCase>>(std::move(kept));
  return Status();
}

// Stage 3, --moe-only (#27): only the mixture-of-experts stage, over the
// dense constants in effect (the GPU preset's, or --constants), which are
// held, not refitted.
Result<std::string> moe_only(const Calibration& c) {
  const CalibrateRunOptions& o = c.o;
  if (!c.runs) return Status::invalid_argument("--moe-only: needs a runs file (MoE rows)");
  if (!o.pool_gpu.empty()) {
    return Status::invalid_argument(
        "--moe-only: --pool-gpu pools the dense fit, which --moe-only skips; give one of them");
  }
  if (o.folds > 0) {
    return Status::invalid_argument(
        "--moe-only: --folds cross-validates the dense fit, which --moe-only skips; use "
        "--folds 0 (the MoE stage reports its own leave-one-model-out and -release-out figures)");
  }
  const StageFit fit = [&](const std::vector<bool>& latest, AccuracyConstants* held,
                           boost::json::object* report) {
    return fit_moe_constants(c.all_cases, latest, c.copt, o.on_line, held, report);
  };
  return stage_only(c, fit, "--moe-only: no mixture-of-experts row to fit", "--moe-only",
                    "the mixture-of-experts constants", /*moe=*/true);
}

// The MAPE of a group of held-out rows ("n/a" for none, never "0.00 %").
std::string group_mape(const std::vector<double>& p, const std::vector<double>& m) {
  return p.empty() ? std::string("n/a") : percent_text(summarise(p, m).mape);
}

// Stage 5: the held-out MAPE line of the dense rows (all, single-node,
// multi-node) and of the mixture-of-experts rows.
void report_held_out_groups(const Calibration& c, const std::vector<double>& held_pred,
                            const std::vector<double>& meas) {
  const std::vector<AccuracyCase>& cases = c.cases;
  std::vector<double> ps, ms, pm, mm, pe, me, pd, md;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].config.model.is_moe()) {
      pe.push_back(held_pred[i]);
      me.push_back(meas[i]);
      continue;
    }
    pd.push_back(held_pred[i]);
    md.push_back(meas[i]);
    const bool multi = cases[i].run.num_gpus > cases[i].config.cluster.gpus_per_node;
    (multi ? pm : ps).push_back(held_pred[i]);
    (multi ? mm : ms).push_back(meas[i]);
  }
  const auto group = group_mape;
  c.o.on_line(std::to_string(c.o.folds) + "-fold held-out MAPE: all dense " + group(pd, md) +
              ", single-node " + group(ps, ms) + " (" + std::to_string(ps.size()) +
              " rows), multi-node " + group(pm, mm) + " (" + std::to_string(pm.size()) + " rows)" +
              (pe.empty() ? std::string()
                          : ", mixture-of-experts " + group(pe, me) + " (" +
                                std::to_string(pe.size()) + " rows, predicted, never fitted)") +
              "\n");
}

// Stage 5 with releases: each release's rows predicted by a fit on the
// other releases (when there are two or more).
Status report_leave_one_release_out(const Calibration& c, const std::vector<double>& meas) {
  const LineSink& stream_line = c.o.on_line;
  const std::vector<AccuracyCase>& cases = c.cases;
  const auto group = group_mape;
  std::vector<std::string> names;
  const std::vector<int> by_release = release_folds(cases, &names);
  if (names.size() <= 1) return Status();
  *c.stage = "leave-one-release-out: ";
  LLMPLAN_ASSIGN_OR_RETURN(
      const HeldOut lo,
      cross_validate(cases, by_release, static_cast<int>(names.size()), c.initial, c.copt,
                     nullptr, nullptr, /*lenient=*/true));
  // Dense rows apart (#26: the dense target), over all releases too.
  std::vector<double> all_dp, all_dm;
  for (size_t k = 0; k < names.size(); ++k) {
    std::vector<double> p, m, dp, dm;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (by_release[i] == static_cast<int>(k) && std::isfinite(lo.predicted[i])) {
        p.push_back(lo.predicted[i]);
        m.push_back(meas[i]);
        if (!cases[i].config.model.is_moe()) {
          dp.push_back(lo.predicted[i]);
          dm.push_back(meas[i]);
        }
      }
    }
    all_dp.insert(all_dp.end(), dp.begin(), dp.end());
    all_dm.insert(all_dm.end(), dm.begin(), dm.end());
    stream_line("leave-one-release-out: " + names[k] + ": MAPE " + group(p, m) + " (" +
                std::to_string(p.size()) + " rows predicted by a fit on the other "
                "releases; dense " + group(dp, dm) + " over " + std::to_string(dp.size()) +
                ")\n");
  }
  stream_line("leave-one-release-out MAPE, dense rows of every release: " +
              group(all_dp, all_dm) + " (" + std::to_string(all_dp.size()) + " rows)\n");
  return Status();
}

// Stage 5 with releases: the held-out figures of the latest release, leave
// one release out, and the validation block of the rows the constants
// represent.
Status report_latest_release(const Calibration& c, const HeldOut& held,
                             const std::vector<double>& meas) {
  const std::vector<AccuracyCase>& cases = c.cases;
  const std::vector<double>& held_pred = held.predicted;
  const auto group = group_mape;
  // The targets: the latest release, held out, dense and MoE apart.
  std::vector<double> ld, lmd, le, lme;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!c.latest[i]) continue;
    const bool moe = cases[i].config.model.is_moe();
    (moe ? le : ld).push_back(held_pred[i]);
    (moe ? lme : lmd).push_back(meas[i]);
  }
  c.o.on_line(std::to_string(c.o.folds) + "-fold held-out MAPE on the latest release: dense " +
              group(ld, lmd) + " (" + std::to_string(ld.size()) + " rows), mixture-of-experts " +
              group(le, lme) + " (" + std::to_string(le.size()) + " rows)\n");
  LLMPLAN_RETURN_IF_ERROR(report_leave_one_release_out(c, meas));
  // The validation block: the rows the constants represent.
  std::vector<AccuracyCase> lc;
  std::vector<double> lp;
  std::vector<int> lf;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!c.latest[i]) continue;
    lc.push_back(cases[i]);
    lp.push_back(held_pred[i]);
    lf.push_back(held.fold[i]);
  }
  c.o.on_line(held_out_report(lc, lp, lf, c.o.folds));
  return Status();
}

// Stage 5: k-fold cross-validation; row i is in fold i mod k (vTrain's
// CSV), or by configuration (runs files: repeat measurements share a fold).
Status cross_validation(const Calibration& c) {
  const CalibrateRunOptions& o = c.o;
  const LineSink& stream_line = o.on_line;
  const std::vector<AccuracyCase>& cases = c.cases;
  const std::vector<double> meas = measured_of(cases);
  *c.stage = "fold 1 of " + std::to_string(o.folds) + ": ";
  const auto t_fold = std::chrono::steady_clock::now();
  LLMPLAN_ASSIGN_OR_RETURN(
      const HeldOut held,
      cross_validate(cases, folds_of(cases, o.folds, c.runs), o.folds, c.initial, c.copt,
                     [&](int f, const CalibrationResult& fit, const std::vector<double>& p,
                         const std::vector<double>& m) {
                       *c.stage = "fold " + std::to_string(f + 2) + " of " +
                                  std::to_string(o.folds) + ": ";
                       stream_line("fold " + std::to_string(f) + ": in-sample MAPE " +
                                   percent_text(fit.in_sample_mape) + ", held-out MAPE " +
                                   percent_text(summarise(p, m).mape) + "\n");
                     },
                     c.releases ? &c.latest : nullptr));
  if (c.runs) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f s per fold",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t_fold)
                          .count() /
                      o.folds);
    stream_line(std::string(buf) + "\n");
  }
  report_held_out_groups(c, held.predicted, meas);
  if (c.releases) return report_latest_release(c, held, meas);
  stream_line(held_out_report(cases, held.predicted, held.fold, o.folds));
  return Status();
}

// Stage 6 with releases: every release against the fitted constants.
Status report_stack_drift(Calibration* c, const AccuracyConstants& fitted) {
  apply_constants(fitted, &c->all_cases);
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<double> p,
                           predict_iteration_times(c->all_cases, nullptr));
  for (const ReleaseDrift& d : release_drift(c->all_cases, p, c->latest)) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "stack drift: %s on %s (%s, %d rows): measured/predicted %.3f (%.1f %% %s "
                  "than the fitted constants predict), MAPE %s\n",
                  d.release.c_str(), d.gpu.c_str(), d.latest ? "calibration rows" : "older",
                  d.rows, d.measured_over_predicted,
                  100 * std::abs(d.measured_over_predicted - 1),
                  d.measured_over_predicted >= 1 ? "slower" : "faster",
                  percent_text(d.mape).c_str());
    c->o.on_line(buf);
  }
  return Status();
}

// Stage 6: the final fit on the dense rows only (of the latest release,
// with releases), its in-sample line and the stack drift.
Result<CalibrationResult> final_fit(Calibration* c) {
  std::vector<AccuracyCase>& cases = c->cases;
  if (c->releases) {
    std::vector<AccuracyCase> kept;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (c->latest[i]) kept.push_back(std::move(cases[i]));
    }
    cases = std::move(kept);
  }
  std::erase_if(cases, [](const AccuracyCase& c) { return c.config.model.is_moe(); });
  if (cases.empty()) {
    return Status::invalid_argument("calibrate: no dense row of the latest release to fit");
  }
  *c->stage = c->o.folds > 1 ? "final fit on all rows: " : "";
  c->copt.on_line = c->o.on_line;
  LLMPLAN_ASSIGN_OR_RETURN(CalibrationResult fit, calibrate(cases, c->initial, c->copt));
  char buf[128];
  std::snprintf(buf, sizeof buf, "in-sample MAPE %s over %zu rows\n",
                percent_text(fit.in_sample_mape).c_str(), cases.size());
  c->o.on_line(buf);
  if (c->releases) LLMPLAN_RETURN_IF_ERROR(report_stack_drift(c, fit.constants));
  return fit;
}

// Stage 6, --evaluate: the error of the fitted constants on a held-out file
// of the same kind.
Status evaluate(const Calibration& c, const AccuracyConstants& fitted) {
  const CalibrateRunOptions& o = c.o;
  AccuracyInputs eo = c.in;
  eo.files = {o.evaluate};
  eo.constants.clear();
  std::vector<std::string> enotes;
  std::string egpu;
  std::vector<AccuracyCase> held;
  LLMPLAN_ASSIGN_OR_RETURN(const bool eruns, reads_runs_files(eo));
  if (eruns != c.runs) {
    return Status::invalid_argument("--evaluate: " + o.evaluate +
                                    " is not of the same kind as the calibrated files");
  }
  std::vector<PublishedRun> epublished;
  if (c.runs) {
    LLMPLAN_ASSIGN_OR_RETURN(held, load_runs_cases(eo, &epublished, &enotes, &egpu));
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(held, load_measured_cases(eo, &enotes, &egpu));
  }
  apply_constants(fitted, &held);
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> p, predict_iteration_times(held, nullptr));
  const ErrorSummary e = summarise(p, measured_of(held));
  o.on_line("held-out MAPE on " + o.evaluate + ": " + percent_text(e.mape) + " (median " +
            percent_text(e.median_ape) + ", max " + percent_text(e.max_ape) + ")\n");
  return Status();
}

// Stage 7: the fitted constants as JSON, with the provenance line.
Result<std::string> fitted_constants(const Calibration& c, const CalibrationResult& fit,
                                     const boost::json::object& moe_report) {
  const std::string data = data_names(c.in.files);
  std::string pinned;
  for (const std::string& b : fit.at_bound) pinned += "; " + b;
  // The restricted dense fit (#26) names its free set in its first line.
  const std::string method =
      fit.summary.rfind("restricted dense fit", 0) == 0
          ? fit.summary.substr(0, fit.summary.find('\n')) + ", Ceres on log iteration time (Huber 0.03)"
          : "Ceres fit on log iteration time (Huber 0.03, best " + std::to_string(fit.starts) +
                " of " + std::to_string(kCalibrationScreenPoints) + " screened starts polished)";
  char src[2048];
  std::snprintf(src, sizeof src,
                "llmplan calibrate %s --gpu %s: %s, robust cost %.4g, in-sample MAPE %.2f %% over "
                "%zu rows (%s)%s",
                data.c_str(), c.gpu_name.c_str(), method.c_str(), fit.cost,
                100 * fit.in_sample_mape, c.cases.size(),
                c.runs ? (c.releases ? "published runs, the expressible rows of the latest "
                                       "release of each system, model and precision (" +
                                           c.calibration_releases +
                                           "); data/blackwell/README.md for sources and licences"
                                     : std::string("published runs, the expressible rows; "
                                                   "data/h100/README.md for sources and licences"))
                             .c_str()
                       : "vTrain A100 data, MIT",
                pinned.c_str());
  const std::string net_src =
      c.copt.fit_network ? std::string(src) + "; nic_efficiency and nic_latency_s fitted"
                         : std::string("not fitted (single-node data only): ") + src;
  return constants_to_json(c.gpu_name, fit.constants, src, net_src,
                           moe_report.empty() ? nullptr : &moe_report);
}

}  // namespace

CalibrationOptions fit_options(int max_iterations, int starts,
                               const std::vector<AccuracyCase>& cases,
                               const ProgressSink& on_progress,
                               const std::shared_ptr<std::string>& stage) {
  CalibrationOptions copt;
  copt.max_iterations = max_iterations;
  copt.starts = starts;
  if (on_progress) {
    copt.on_progress = [on_progress, stage](const CalibrationProgress& p) {
      char buf[160];
      if (p.stage == CalibrationProgress::Stage::kScreen) {
        std::snprintf(buf, sizeof buf, "screening starting point %d of %d, best cost %.6g", p.step,
                      p.steps, p.cost);
      } else {
        std::snprintf(buf, sizeof buf, "start %d of %d, iteration %d, cost %.6g", p.step, p.steps,
                      p.iteration, p.cost);
      }
      on_progress(*stage + buf);
    };
  }
  for (const AccuracyCase& c : cases) {
    copt.fit_network |= c.run.num_gpus > c.config.cluster.gpus_per_node;
    copt.fit_flash_attention |= c.config.plan.flash_attention;
  }
  return copt;
}

Status set_prior_reference(const PresetAccess& presets, const std::vector<AccuracyCase>& cases,
                           CalibrationOptions* copt) {
  const bool releases = std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return !c.release.empty() && c.config.cluster.gpu.name != "h100-sxm";
  });
  if (!releases) return Status();
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, presets.load_catalog());
  LLMPLAN_ASSIGN_OR_RETURN(simulator::GpuSpec h100, catalog.gpu("h100-sxm"));
  copt->prior_reference = std::make_shared<const simulator::GpuSpec>(std::move(h100));
  return Status();
}

std::vector<int> folds_of(const std::vector<AccuracyCase>& cases, int k, bool runs) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < cases.size(); ++i) {
    keys.push_back(runs ? configuration_key(cases[i]) : std::to_string(i));
  }
  return assign_folds(keys, k);
}

Result<std::string> run_calibration(const CalibrateRunOptions& o) {
  Calibration c(o);
  LLMPLAN_RETURN_IF_ERROR(load_calibration_cases(&c));
  c.copt = fit_options(o.max_iterations, o.starts, c.cases, o.on_progress, c.stage);
  if (!c.runs) c.copt.fit_flash_attention = false;  // vTrain's runs use no flash attention
  if (c.runs) LLMPLAN_RETURN_IF_ERROR(set_prior_reference(c.in.presets, c.cases, &c.copt));
  c.initial = constants_of(c.cases.front());
  // Runs with releases: the constants represent the latest release of each
  // (system, model, precision); older releases are predicted, never fitted.
  // (The H100 form's releases, read from its source cells, are reported by
  // the MoE stage but select no rows: fits_latest_release().)
  c.releases = fits_latest_release(c.cases);
  c.latest = c.releases ? latest_release_mask(c.cases) : std::vector<bool>();
  c.all_cases = c.cases;
  note_latest_releases(&c);

  if (o.hybrid_only) return hybrid_only(c);
  if (!o.pool_gpu.empty()) LLMPLAN_RETURN_IF_ERROR(add_pool(&c));
  if (o.moe_only) return moe_only(c);
  if (o.folds > static_cast<int>(c.cases.size())) {
    return Status::invalid_argument(
        "--folds: " + std::to_string(o.folds) + " folds for " + std::to_string(c.cases.size()) +
        " rows would leave folds empty; give at most " + std::to_string(c.cases.size()));
  }
  if (o.folds > 1) LLMPLAN_RETURN_IF_ERROR(cross_validation(c));
  LLMPLAN_ASSIGN_OR_RETURN(CalibrationResult fit, final_fit(&c));
  boost::json::object moe_report;
  if (c.runs) {
    LLMPLAN_RETURN_IF_ERROR(fit_moe_constants(c.all_cases,
                                              c.releases ? c.latest : std::vector<bool>(), c.copt,
                                              o.on_line, &fit.constants, &moe_report));
  }
  if (!o.evaluate.empty()) LLMPLAN_RETURN_IF_ERROR(evaluate(c, fit.constants));
  return fitted_constants(c, fit, moe_report);
}

}  // namespace llmplan::planner
