#include "planner/accuracy/runs_report.h"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/held_out.h"
#include "reports/table.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

// One grouping's rows: key -> case indices, keys in order of first appearance.
struct Group {
  std::string key;
  std::vector<size_t> index;
};
std::vector<std::pair<std::string, std::vector<Group>>> groupings(
    const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest) {
  std::vector<std::pair<std::string, std::vector<Group>>> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    // Cases with a release have more groupings: found by name.
    const auto keys = feature_groups(cases[i], latest.empty() || latest[i]);
    for (size_t g = 0; g < keys.size(); ++g) {
      auto named = std::find_if(out.begin(), out.end(),
                                [&](const auto& x) { return x.first == keys[g].first; });
      if (named == out.end()) {
        out.push_back({keys[g].first, {}});
        named = out.end() - 1;
      }
      std::vector<Group>& groups = named->second;
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const Group& x) { return x.key == keys[g].second; });
      if (it == groups.end()) {
        groups.push_back({keys[g].second, {}});
        it = groups.end() - 1;
      }
      it->index.push_back(i);
    }
  }
  return out;
}

double mape_of(const std::vector<size_t>& index, const std::vector<double>& pred,
               const std::vector<AccuracyCase>& cases) {
  std::vector<double> p, m;
  for (size_t i : index) {
    p.push_back(pred[i]);
    m.push_back(cases[i].run.iteration_time_s);
  }
  return summarise(p, m).mape;
}

int not_fitting(const RunsValidation& v) {
  int n = 0;
  for (bool f : v.fits) n += f ? 0 : 1;
  return n;
}

// The rows of each model, models in order of first appearance.
struct ModelGroup {
  std::string model;
  bool moe = false;
  int excluded = 0;           // rows the simulator cannot express
  std::vector<size_t> index;  // the expressible rows (case indices)
};
std::vector<ModelGroup> model_groups(const RunsValidation& v) {
  std::vector<ModelGroup> out;
  size_t next = 0;  // cases hold the expressible runs in order
  for (const PublishedRun& r : v.runs) {
    const std::string key = r.model.empty() ? "(unnamed)" : r.model;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const ModelGroup& g) { return g.model == key; });
    if (it == out.end()) {
      out.push_back({key, false, 0, {}});
      it = out.end() - 1;
    }
    if (!r.missing.empty() || next >= v.cases.size()) {
      ++it->excluded;
      continue;
    }
    it->moe = it->moe || v.cases[next].config.model.is_moe();
    it->index.push_back(next++);
  }
  return out;
}

// The error band's coverage over the held-out rows (held_out.h).
BandCheck band_check(const RunsValidation& v) {
  std::vector<simulator::BandFeatures> features;
  std::vector<double> ratio;
  for (size_t i = 0; i < v.cases.size(); ++i) {
    features.push_back(case_band_features(v.cases[i]));
    ratio.push_back(v.cases[i].run.iteration_time_s / v.held_out.predicted[i]);
  }
  return band_coverage(features, ratio, v.held_out.fold);
}

boost::json::object coverage_json(const BandCoverage& c) {
  return {{"group", c.key},
          {"rows", c.rows},
          {"p10", c.p10},
          {"p90", c.p90},
          {"evaluated", c.evaluated},
          {"inside", c.inside},
          {"coverage", c.evaluated > 0 ? boost::json::value(c.coverage())
                                       : boost::json::value(nullptr)}};
}

std::string missing_text(const std::vector<std::string>& missing) {
  std::string s;
  for (const std::string& m : missing) s += (s.empty() ? "" : "; ") + m;
  return s;
}

}  // namespace

namespace {
// The release sections of the report: leave-one-release-out and stack
// drift (empty for runs without releases).
// The rows held out with release k in leave-one-release-out: how many, and
// the predicted / measured times of those it could predict.
struct ReleaseFold {
  int rows = 0;
  std::vector<double> predicted, measured;
};
ReleaseFold release_fold(const RunsValidation& v, size_t k) {
  const HeldOut& lo = v.by_release.leave_one_out;
  ReleaseFold f;
  for (size_t i = 0; i < v.cases.size(); ++i) {
    if (lo.fold[i] != static_cast<int>(k)) continue;
    ++f.rows;
    if (!std::isfinite(lo.predicted[i])) continue;
    f.predicted.push_back(lo.predicted[i]);
    f.measured.push_back(v.cases[i].run.iteration_time_s);
  }
  return f;
}

std::string release_sections(const RunsValidation& v, bool md) {
  const std::vector<ReleaseDrift> drift = release_drift(v.cases, v.predicted, v.latest);
  bool any = false;
  for (const ReleaseDrift& d : drift) any = any || !d.release.empty();
  if (!any) return "";
  std::string out;
  if (!v.by_release.releases.empty()) {
    reports::Table t({"held-out release", "rows", "evaluated", "MAPE"});
    for (size_t k = 0; k < v.by_release.releases.size(); ++k) {
      const ReleaseFold f = release_fold(v, k);
      const std::vector<double>& p = f.predicted;
      t.add_row({v.by_release.releases[k], std::to_string(f.rows), std::to_string(p.size()),
                 p.empty() ? "n/a" : percent_text(summarise(p, f.measured).mape)});
    }
    out += md ? "\n## Leave-one-release-out\n\nEach release's rows predicted by a fit on the "
                "dense rows of the other releases (rows of a GPU no other release trains are "
                "not evaluated):\n\n" + t.markdown() + "\n"
              : "\nleave-one-release-out (each release predicted by a fit on the others):\n" +
                    t.text() + "\n";
  }
  reports::Table t({"release", "gpu", "rows", "calibration rows", "measured/predicted",
                    "in-sample MAPE"});
  for (const ReleaseDrift& d : drift) {
    if (d.release.empty()) continue;
    char r[32];
    std::snprintf(r, sizeof r, "%.3f", d.measured_over_predicted);
    t.add_row({d.release, d.gpu, std::to_string(d.rows), d.latest ? "yes" : "no (older)", r,
               percent_text(d.mape)});
  }
  // Runs whose releases select no calibration rows (the H100 form, its
  // releases read from the source cells: v.latest is empty) are fitted on
  // every row.
  const std::string rows_md = v.latest.empty()
                                  ? "every row (these releases select no calibration rows)"
                                  : "the latest release of each (system, model, precision); "
                                    "older releases are their own groups";
  const std::string rows_text = v.latest.empty()
                                    ? "every row (these releases select no calibration rows)"
                                    : "the latest release of each system, model and precision";
  out += md ? "\n## Stack drift\n\nGeometric mean of measured / predicted per release (the "
              "constants in effect; > 1: the release ran slower than predicted). Calibration "
              "rows: " + rows_md + ":\n\n" + t.markdown() + "\n"
            : "\nstack drift (measured/predicted per release; calibration rows = " + rows_text +
                  "):\n" + t.text() + "\n";
  return out;
}
}  // namespace

std::map<std::string, int> missing_feature_counts(const std::vector<PublishedRun>& runs) {
  std::map<std::string, int> out;
  for (const PublishedRun& r : runs) {
    for (const std::string& m : r.missing) ++out[m];
  }
  return out;
}

namespace {

// The in-sample and held-out MAPE of each feature group.
boost::json::object groups_json(const RunsValidation& v, bool held) {
  boost::json::object groups;
  for (const auto& [name, list] : groupings(v.cases, v.latest)) {
    boost::json::array a;
    for (const Group& g : list) {
      boost::json::object e;
      e["key"] = g.key;
      e["rows"] = g.index.size();
      e["in_sample_mape"] = mape_of(g.index, v.predicted, v.cases);
      if (held) {
        e["held_out_mape"] = mape_of(g.index, v.held_out.predicted, v.cases);
      } else {
        e["held_out_mape"] = nullptr;
      }
      a.push_back(std::move(e));
    }
    groups[name] = std::move(a);
  }
  return groups;
}

// The rows and errors of each model.
boost::json::object by_model_json(const RunsValidation& v, bool held) {
  boost::json::object by_model;
  for (const ModelGroup& g : model_groups(v)) {
    boost::json::object e;
    e["rows"] = g.index.size();
    e["excluded_rows"] = g.excluded;
    e["moe"] = g.moe;
    if (g.index.empty()) {
      e["in_sample_mape"] = nullptr;
      e["held_out_mape"] = nullptr;
    } else {
      e["in_sample_mape"] = mape_of(g.index, v.predicted, v.cases);
      if (held) {
        e["held_out_mape"] = mape_of(g.index, v.held_out.predicted, v.cases);
      } else {
        e["held_out_mape"] = nullptr;
      }
    }
    by_model[g.model] = std::move(e);
  }
  return by_model;
}

// One object per expressible row: its plan, times, errors and memory.
boost::json::array rows_json(const RunsValidation& v, const std::vector<double>& meas, bool held) {
  boost::json::array rows;
  for (size_t i = 0; i < v.cases.size(); ++i) {
    const AccuracyCase& c = v.cases[i];
    const simulator::Plan& p = c.config.plan;
    boost::json::object e;
    e["name"] = c.name;
    e["model"] = c.config.model.name;
    e["source"] = c.origin;
    e["release"] = c.release;
    e["latest_release"] = v.latest.empty() || v.latest[i];
    e["precision"] = precision_recipe(c);
    e["line"] = c.run.line;
    e["gpus"] = p.world_size();
    e["t"] = p.tensor_parallel;
    e["p"] = p.pipeline_parallel;
    e["d"] = p.data_parallel;
    e["v"] = p.virtual_stages;
    e["ep"] = p.expert_parallel;
    e["micro_batch"] = p.micro_batch_size;
    e["global_batch"] = p.global_batch_size;
    e["seq"] = c.config.model.seq_length;
    e["zero_stage"] = p.sharding_stage();
    e["recompute"] = simulator::to_string(p.recompute);
    e["measured_s"] = meas[i];
    e["predicted_s"] = v.predicted[i];
    e["ape"] = std::abs(v.predicted[i] - meas[i]) / meas[i];
    e["fits"] = static_cast<bool>(v.fits[i]);
    e["peak_memory_bytes"] = v.peak_memory_bytes[i];
    e["memory_margin_bytes"] = v.memory_capacity_bytes[i] - v.peak_memory_bytes[i];
    if (held) {
      e["fold"] = v.held_out.fold[i];
      e["held_out_predicted_s"] = v.held_out.predicted[i];
      e["held_out_ape"] = std::abs(v.held_out.predicted[i] - meas[i]) / meas[i];
    }
    rows.push_back(std::move(e));
  }
  return rows;
}

// The rows the simulator cannot express: counted by feature and listed.
boost::json::object excluded_json(const RunsValidation& v) {
  boost::json::object ex;
  ex["rows"] = v.runs.size() - v.cases.size();
  boost::json::object by;
  for (const auto& [feature, n] : missing_feature_counts(v.runs)) by[feature] = n;
  ex["by_feature"] = std::move(by);
  boost::json::array list;
  for (const PublishedRun& r : v.runs) {
    if (r.missing.empty()) continue;
    boost::json::object e;
    e["name"] = r.name;
    e["source"] = r.source;
    e["release"] = r.release;
    e["line"] = r.line;
    boost::json::array m;
    for (const std::string& s : r.missing) m.push_back(boost::json::string(s));
    e["missing"] = std::move(m);
    list.push_back(std::move(e));
  }
  ex["runs"] = std::move(list);
  return ex;
}

// The error band's coverage over the held-out rows (held_out.h).
boost::json::object band_coverage_json(const RunsValidation& v) {
  const BandCheck check = band_check(v);
  boost::json::object bc;
  bc["min_samples"] = check.min_samples;
  boost::json::array groups;
  for (const BandCoverage& c : check.groups) groups.push_back(coverage_json(c));
  bc["groups"] = std::move(groups);
  boost::json::object sel = coverage_json(check.selected);
  sel.erase("p10");
  sel.erase("p90");
  bc["as_selected"] = std::move(sel);
  return bc;
}

// Leave one release out: each release's rows predicted by a fit on the
// others.
boost::json::object leave_one_release_out_json(const RunsValidation& v) {
  boost::json::object r;
  boost::json::array list;
  std::vector<double> all_p, all_m;
  for (size_t k = 0; k < v.by_release.releases.size(); ++k) {
    const ReleaseFold f = release_fold(v, k);
    const std::vector<double>& p = f.predicted;
    const std::vector<double>& m = f.measured;
    const int rows = f.rows;
    all_p.insert(all_p.end(), p.begin(), p.end());
    all_m.insert(all_m.end(), m.begin(), m.end());
    boost::json::object e;
    e["release"] = v.by_release.releases[k];
    e["rows"] = rows;
    e["evaluated"] = p.size();
    e["mape"] = p.empty() ? boost::json::value(nullptr) : boost::json::value(summarise(p, m).mape);
    list.push_back(std::move(e));
  }
  r["rows"] = v.cases.size();
  r["evaluated"] = all_p.size();
  r["mape"] = all_p.empty() ? boost::json::value(nullptr)
                            : boost::json::value(summarise(all_p, all_m).mape);
  r["releases"] = std::move(list);
  return r;
}

// Every release against the constants in effect.
boost::json::array stack_drift_json(const RunsValidation& v) {
  boost::json::array drift;
  for (const ReleaseDrift& d : release_drift(v.cases, v.predicted, v.latest)) {
    if (d.release.empty()) continue;
    boost::json::object e;
    e["release"] = d.release;
    e["gpu"] = d.gpu;
    e["calibration_rows"] = d.latest;
    e["rows"] = d.rows;
    e["measured_over_predicted"] = d.measured_over_predicted;
    e["in_sample_mape"] = d.mape;
    drift.push_back(std::move(e));
  }
  return drift;
}

}  // namespace

Result<std::string> runs_validation_json(const RunsValidation& v) {
  boost::json::object o;
  const std::vector<double> meas = measured_of(v.cases);
  o["source"] = v.source;
  o["gpu"] = v.gpu;
  o["rows"] = v.runs.size();
  o["expressible_rows"] = v.cases.size();
  o["excluded_rows"] = v.runs.size() - v.cases.size();
  o["not_fitting_rows"] = not_fitting(v);
  o["in_sample"] = summary_json(summarise(v.predicted, meas));
  const bool held = v.held_out.folds > 0;
  if (held) {
    boost::json::object h = summary_json(summarise(v.held_out.predicted, meas));
    h["folds"] = v.held_out.folds;
    boost::json::array s;
    for (double x : v.held_out.seconds) s.push_back(x);
    h["seconds_per_fold"] = std::move(s);
    o["held_out_mape"] = summarise(v.held_out.predicted, meas).mape;
    o["held_out"] = std::move(h);
  } else {
    o["held_out_mape"] = nullptr;
    o["held_out"] = nullptr;
  }
  o["groups"] = groups_json(v, held);
  o["by_model"] = by_model_json(v, held);
  o["runs"] = rows_json(v, meas, held);
  o["excluded"] = excluded_json(v);
  if (held) {
    o["band_coverage"] = band_coverage_json(v);
  } else {
    o["band_coverage"] = nullptr;
  }
  if (!v.by_release.releases.empty()) {
    o["leave_one_release_out"] = leave_one_release_out_json(v);
  } else {
    o["leave_one_release_out"] = nullptr;
  }
  o["stack_drift"] = stack_drift_json(v);
  boost::json::array n;
  for (const std::string& s : v.notes) n.push_back(boost::json::string(s));
  o["notes"] = std::move(n);
  return json::pretty_finite(o, "validation JSON");
}

std::string runs_validation_report(const RunsValidation& v, bool md) {
  const std::vector<double> meas = measured_of(v.cases);
  const bool held = v.held_out.folds > 0;
  std::string out = md ? "# Validation: " + v.source + "\n\n" : "validation: " + v.source + "\n";
  const std::string item = md ? "- " : "  ";
  const ErrorSummary in = summarise(v.predicted, meas);
  out += item + "GPU: " + v.gpu + "\n";
  out += item + "rows: " + std::to_string(v.runs.size()) + " (" + std::to_string(v.cases.size()) +
         " expressible, " + std::to_string(v.runs.size() - v.cases.size()) + " excluded)\n";
  out += item + "in-sample MAPE: " + percent_text(in.mape) + " (median " + percent_text(in.median_ape) + ", max " +
         percent_text(in.max_ape) + ", mean signed " + percent_text(in.mean_signed) + ")\n";
  if (held) {
    const ErrorSummary h = summarise(v.held_out.predicted, meas);
    double total = 0;
    for (double s : v.held_out.seconds) total += s;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.1f s per fold", total / v.held_out.folds);
    out += item + std::to_string(v.held_out.folds) + "-fold held-out MAPE: " + percent_text(h.mape) +
           " (median " + percent_text(h.median_ape) + ", max " + percent_text(h.max_ape) + "; " + buf + ")\n";
  } else {
    out += item + "held-out MAPE: not run (--folds 0)\n";
  }
  out += item + "predicted not to fit in memory: " + std::to_string(not_fitting(v)) + " of " +
         std::to_string(v.cases.size()) + "\n\n";
  for (const auto& [name, list] : groupings(v.cases, v.latest)) {
    reports::Table t({name, "rows", "in-sample MAPE", "held-out MAPE"});
    for (const Group& g : list) {
      t.add_row({g.key, std::to_string(g.index.size()), percent_text(mape_of(g.index, v.predicted, v.cases)),
                 held ? percent_text(mape_of(g.index, v.held_out.predicted, v.cases)) : "n/a"});
    }
    out += md ? "## Error by " + name + "\n\n" + t.markdown() + "\n"
              : "error by " + name + ":\n" + t.text() + "\n";
  }
  reports::Table models({"model", "MoE", "rows", "excluded", "in-sample MAPE", "held-out MAPE"});
  for (const ModelGroup& g : model_groups(v)) {
    const bool any = !g.index.empty();
    models.add_row({g.model, g.moe ? "yes" : "no", std::to_string(g.index.size()),
                    std::to_string(g.excluded),
                    any ? percent_text(mape_of(g.index, v.predicted, v.cases)) : "n/a",
                    any && held ? percent_text(mape_of(g.index, v.held_out.predicted, v.cases)) : "n/a"});
  }
  out += md ? "## Error by model\n\n" + models.markdown() + "\n"
            : "error by model:\n" + models.text() + "\n";
  reports::Table rows({"name", "gpus", "t", "p", "v", "d", "ep", "zero", "recompute",
                       "measured_s", "predicted_s", "APE", "held-out APE", "fits",
                       "margin GB"});
  for (size_t i = 0; i < v.cases.size(); ++i) {
    const simulator::Plan& p = v.cases[i].config.plan;
    char m[32], pr[32], margin[32];
    std::snprintf(m, sizeof m, "%.3f", meas[i]);
    std::snprintf(pr, sizeof pr, "%.3f", v.predicted[i]);
    std::snprintf(margin, sizeof margin, "%.1f",
                  (v.memory_capacity_bytes[i] - v.peak_memory_bytes[i]) / 1e9);
    rows.add_row({v.cases[i].name, std::to_string(p.world_size()),
                  std::to_string(p.tensor_parallel), std::to_string(p.pipeline_parallel),
                  std::to_string(p.virtual_stages), std::to_string(p.data_parallel),
                  std::to_string(p.expert_parallel), std::to_string(p.sharding_stage()),
                  simulator::to_string(p.recompute), m, pr,
                  percent_text(std::abs(v.predicted[i] - meas[i]) / meas[i]),
                  held ? percent_text(std::abs(v.held_out.predicted[i] - meas[i]) / meas[i]) : "n/a",
                  v.fits[i] ? "yes" : "NO", margin});
  }
  out += md ? "## Rows\n\n" + rows.markdown() + "\n" : "rows:\n" + rows.text() + "\n";
  reports::Table by({"missing feature", "rows"});
  for (const auto& [feature, n] : missing_feature_counts(v.runs)) {
    by.add_row({feature, std::to_string(n)});
  }
  reports::Table ex({"name", "source", "line", "missing"});
  for (const PublishedRun& r : v.runs) {
    if (!r.missing.empty()) {
      ex.add_row({r.name, r.source, std::to_string(r.line), missing_text(r.missing)});
    }
  }
  const std::string n_ex = std::to_string(v.runs.size() - v.cases.size());
  out += md ? "## Rows the simulator cannot express (" + n_ex + ")\n\n" + by.markdown() + "\n" +
                  ex.markdown() + "\n"
            : "rows the simulator cannot express (" + n_ex + "), by missing feature:\n" +
                  by.text() + "\n" + ex.text() + "\n";
  if (held) {
    out += (md ? "\n## Error band coverage\n\n" : "\nerror band coverage:\n") +
           std::string("Each held-out row's measured/predicted ratio against P10-P90 of the "
                       "other folds' rows of its group (groups of >= ") +
           std::to_string(simulator::kMinBandSamples) + " rows; simulator/error_band.h):\n" +
           (md ? "\n" : "") + band_coverage_table(band_check(v), md) + "\n";
  }
  out += release_sections(v, md);
  for (const std::string& n : v.notes) out += (md ? "- note: " : "note: ") + n + "\n";
  return out;
}

namespace {
// Whole bytes, as a CSV cell.
std::string bytes_text(double bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "%.0f", bytes);
  return b;
}
}  // namespace

Result<std::string> runs_validation_csv(const RunsValidation& v) {
  reports::Table t({"name", "source", "line", "gpus", "t", "p", "v", "d", "micro_batch",
                    "global_batch", "seq", "zero_stage", "recompute", "measured_s", "predicted_s",
                    "ape_percent", "held_out_predicted_s", "held_out_ape_percent", "fits",
                    "missing", "model", "ep", "peak_memory_bytes", "memory_margin_bytes",
                    "release"});
  size_t next = 0;
  for (const PublishedRun& r : v.runs) {
    if (!r.missing.empty()) {
      char m[32];
      std::snprintf(m, sizeof m, "%.3f", r.measured_step_s);
      t.add_row({r.name, r.source, std::to_string(r.line), "", "", "", "", "", "", "", "", "", "",
                 m, "", "", "", "", "", missing_text(r.missing), r.model, "", "", "",
                 r.release});
      continue;
    }
    const size_t i = next++;
    const AccuracyCase& c = v.cases[i];
    const simulator::Plan& p = c.config.plan;
    const double meas = c.run.iteration_time_s;
    char m[32], pr[32], e[32], hp[32] = "", he[32] = "";
    std::snprintf(m, sizeof m, "%.3f", meas);
    std::snprintf(pr, sizeof pr, "%.4f", v.predicted[i]);
    std::snprintf(e, sizeof e, "%.3f", 100 * std::abs(v.predicted[i] - meas) / meas);
    if (v.held_out.folds > 0) {
      std::snprintf(hp, sizeof hp, "%.4f", v.held_out.predicted[i]);
      std::snprintf(he, sizeof he, "%.3f", 100 * std::abs(v.held_out.predicted[i] - meas) / meas);
    }
    t.add_row({c.name, c.origin, std::to_string(c.run.line), std::to_string(p.world_size()),
               std::to_string(p.tensor_parallel), std::to_string(p.pipeline_parallel),
               std::to_string(p.virtual_stages), std::to_string(p.data_parallel),
               std::to_string(p.micro_batch_size), std::to_string(p.global_batch_size),
               std::to_string(c.config.model.seq_length), std::to_string(p.sharding_stage()),
               simulator::to_string(p.recompute), m, pr, e, hp, he, v.fits[i] ? "true" : "false",
               "", c.config.model.name, std::to_string(p.expert_parallel),
               bytes_text(v.peak_memory_bytes[i]),
               bytes_text(v.memory_capacity_bytes[i] - v.peak_memory_bytes[i]), c.release});
  }
  return t.csv();
}

}  // namespace llmplan::planner
