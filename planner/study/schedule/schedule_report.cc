#include "planner/study/schedule/schedule_report.h"

#include <algorithm>
#include <cstdio>

#include "reports/format.h"
#include "reports/svg_plot.h"

namespace llmplan::planner::schedule {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string hours(double s) { return s < 0 ? "" : fixed(s / 3600.0, 2); }

std::string plan_text(const simulator::Plan& p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "t%d p%d d%d b%d B%d%s%s", p.tensor_parallel,
                p.pipeline_parallel, p.data_parallel, p.micro_batch_size, p.global_batch_size,
                p.virtual_stages > 1 ? " v2" : "",
                p.recompute == simulator::Recompute::kFull ? " full-recompute" : "");
  return buf;
}

int total_rescales(const ScheduleResult& r) {
  int n = 0;
  for (const JobOutcome& o : r.jobs) n += o.rescales;
  return n;
}

const ScheduleResult* find(const ScheduleStudy& s, const std::string& name) {
  for (const ScheduleResult& r : s.results) {
    if (r.policy == name) return &r;
  }
  return nullptr;
}

}  // namespace

reports::Table summary_table(const ScheduleStudy& study) {
  reports::Table t({"policy", "jobs", "met", "deadline ratio", "refused", "avg JCT (h)",
                    "p95 JCT (h)", "makespan (h)", "utilisation", "re-scales"});
  for (const ScheduleResult& r : study.results) {
    const ScheduleMetrics& m = r.metrics;
    t.add_row({r.policy, std::to_string(m.jobs), std::to_string(m.met),
               reports::percent(m.deadline_ratio), std::to_string(m.refused),
               hours(m.avg_jct_s), hours(m.p95_jct_s), hours(m.makespan_s),
               reports::percent(m.utilisation), std::to_string(total_rescales(r))});
  }
  return t;
}

reports::Table jobs_table(const ScheduleStudy& study) {
  reports::Table t({"policy", "job", "model", "params", "tokens", "arrival (h)", "deadline (h)",
                    "start (h)", "finish (h)", "JCT (h)", "met", "max GPUs", "re-scales",
                    "note"});
  for (const ScheduleResult& r : study.results) {
    for (size_t i = 0; i < study.jobs.size(); ++i) {
      const Job& j = study.jobs[i];
      const JobOutcome& o = r.jobs[i];
      t.add_row({r.policy, j.name, j.model_name,
                 reports::count_human(static_cast<double>(j.model.parameter_count())),
                 reports::count_human(j.tokens), hours(j.arrival_s), hours(j.deadline_s),
                 hours(o.start_s), hours(o.finish_s), hours(o.jct_s),
                 o.finished ? (o.met_deadline ? "yes" : "no") : "no", std::to_string(o.max_gpus),
                 std::to_string(o.rescales), o.refused.empty() ? "" : "refused: " + o.refused});
    }
  }
  return t;
}

reports::Table curves_table(const ScheduleStudy& study) {
  reports::Table t({"model", "params", "gpus", "gpus used", "tokens/s", "MFU", "plan"});
  for (const ThroughputCurve& c : study.curves) {
    for (const CurvePoint& p : c.points()) {
      t.add_row({c.model().name, reports::count_human(static_cast<double>(c.model().parameter_count())),
                 std::to_string(p.gpus), std::to_string(p.gpus_used),
                 p.tokens_per_s > 0 ? fixed(p.tokens_per_s, 0) : "",
                 p.tokens_per_s > 0 ? reports::percent(p.mfu) : "",
                 p.tokens_per_s > 0 ? plan_text(p.plan) : "no plan fits"});
    }
  }
  return t;
}

Result<std::string> allocation_svg(const ScheduleStudy& study) {
  // One panel per policy, stacked, on a common time axis.
  constexpr int kWidth = 720, kPanel = 220;
  double end_h = 0;
  for (const ScheduleResult& r : study.results) {
    if (!r.timeline.empty()) end_h = std::max(end_h, r.timeline.back().time_s / 3600.0);
  }
  std::string panels;
  int y = 0;
  for (const ScheduleResult& r : study.results) {
    reports::Plot plot;
    plot.title = r.policy + ": GPUs allocated of " + std::to_string(study.total_gpus);
    plot.x = {"time (h)", false};
    plot.x.min = 0;
    plot.x.max = std::max(end_h, 1e-3);
    plot.y = {"GPUs", false};
    plot.y.min = 0;
    plot.y.max = study.total_gpus * 1.05;
    plot.width_px = kWidth;
    plot.height_px = kPanel;
    reports::PlotSeries s;
    for (size_t k = 0; k < r.timeline.size(); ++k) {
      const AllocationSample& a = r.timeline[k];
      if (k > 0) {  // a step: hold the previous level until this change
        s.x.push_back(a.time_s / 3600.0);
        s.y.push_back(r.timeline[k - 1].gpus);
      }
      s.x.push_back(a.time_s / 3600.0);
      s.y.push_back(a.gpus);
    }
    if (s.x.empty()) continue;
    plot.series.push_back(std::move(s));
    plot.references.push_back(
        {reports::ReferenceKind::kHorizontal, static_cast<double>(study.total_gpus), "",
         "capacity " + std::to_string(study.total_gpus)});
    LLMPLAN_ASSIGN_OR_RETURN(std::string svg, reports::render_svg(plot));
    // Nest the panel: an <svg> inside an <svg> is positioned by x/y.
    const size_t open = svg.find("<svg");
    panels += "<g transform=\"translate(0," + std::to_string(y) + ")\">\n" +
              svg.substr(open) + "</g>\n";
    y += kPanel;
  }
  if (panels.empty()) return Status::invalid_argument("allocation_svg: no policy has a timeline");
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
         "\" height=\"" + std::to_string(y) + "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " +
         std::to_string(y) + "\">\n" + panels + "</svg>\n";
}

std::string schedule_markdown(const ScheduleStudy& study, const std::string& svg_link) {
  std::string md = "# Cluster schedule: " + std::to_string(study.jobs.size()) + " jobs on " +
                   std::to_string(study.total_gpus) + " GPUs (" + study.cluster + ")\n\n";
  md += "- trace: " + study.trace + "\n";
  md += "- re-scale cost: " + reports::seconds_human(study.rescale_cost_s) +
        " per allocation change\n";
  md += "- throughput curves: " + std::to_string(study.curves.size()) + " models x " +
        std::to_string(study.curves.empty() ? 0 : study.curves.front().points().size()) +
        " GPU counts, " + std::to_string(study.plans_simulated) + " distinct plans simulated in " +
        fixed(study.curves_wall_s, 1) + " s; policies simulated in " +
        fixed(study.policies_wall_s, 2) + " s\n\n";
  md += "## Policies\n\n" + summary_table(study).markdown() + "\n";
  const ScheduleResult* lin = find(study, "elasticflow-linear");
  const ScheduleResult* sim = find(study, "elasticflow-simulated");
  if (lin != nullptr && sim != nullptr) {
    const ScheduleMetrics& a = lin->metrics;
    const ScheduleMetrics& b = sim->metrics;
    md += "Simulated throughput vs the linear-scaling assumption: deadlines met " +
          std::to_string(b.met) + " vs " + std::to_string(a.met) + " (" +
          fixed(100.0 * (b.deadline_ratio - a.deadline_ratio), 1) + " points)";
    if (a.avg_jct_s > 0) {
      md += ", average JCT " + fixed(100.0 * (b.avg_jct_s / a.avg_jct_s - 1), 1) + " %";
    }
    if (a.makespan_s > 0) {
      md += ", makespan " + fixed(100.0 * (b.makespan_s / a.makespan_s - 1), 1) + " %";
    }
    md += ".\n\n";
  }
  md += svg_link.empty()
            ? std::string("The plot of GPUs allocated over time, allocation.svg, is written beside "
                          "report.md by `llmplan schedule ... --out DIR`.\n\n")
            : "![GPUs allocated over time, per policy](" + svg_link + ")\n\n";
  md += "## Throughput curves (best plan per GPU count, selected counts)\n\n";
  reports::Table c({"model", "params", "min GPUs", "tokens/s at min", "GPUs", "tokens/s",
                    "scaling vs linear"});
  for (const ThroughputCurve& curve : study.curves) {
    const int g0 = curve.min_feasible_gpus();
    if (g0 == 0) {
      c.add_row({curve.model().name, "", "none", "", "", "", ""});
      continue;
    }
    const double t0 = curve.tokens_per_s(g0);
    for (int g = g0; g <= curve.max_gpus(); g *= 2) {
      const double t = curve.tokens_per_s(g);
      c.add_row({curve.model().name,
                 reports::count_human(static_cast<double>(curve.model().parameter_count())),
                 std::to_string(g0), fixed(t0, 0), std::to_string(g), fixed(t, 0),
                 reports::percent(t / (t0 * g / g0))});
    }
  }
  md += c.markdown() + "\n## Jobs\n\n" + jobs_table(study).markdown() + "\n";
  for (const std::string& n : study.notes) md += "- note: " + n + "\n";
  return md;
}

}  // namespace llmplan::planner::schedule
