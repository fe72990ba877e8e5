// The failures part of the planner's report: the figures of the search's
// plans computed here, written by reports/failures_report.h.
#include "planner/report/failures_report.h"

#include <boost/json.hpp>

namespace llmplan::planner {
namespace {

constexpr double kSecondsPerDay = 86400.0;

}  // namespace

FailureSummary failure_summary(const PlanReportView& v, const Candidate& c, const PlanResult& p,
                               bool distribution) {
  FailureSummary f;
  f.goodput = goodput(c.model, p.plan, v.cluster, v.options.reliability, c.compute_days * kSecondsPerDay);
  if (distribution) {
    const TimeBand& b = candidate_band(v, c);
    BandRatios band{b.known, b.p_low, b.p_high, b.low_ratio, b.high_ratio};
    f.distribution = monte_carlo(f.goodput, band);
  }
  return f;
}

std::string failures_assumption_line(const PlanReportView& v) {
  return reports::failures_assumption_line(v.options.reliability, v.cluster.gpus_per_node,
                                           v.cluster.gpu.name);
}

std::string failures_markdown(const PlanReportView& v) {
  const SearchResult& r = v.result;
  if (!v.options.reliability.enabled || r.best < 0) return "";
  const Candidate& c = r.candidates[r.best];
  const PlanResult& p = r.plans[c.best_plan];
  const FailureSummary f = failure_summary(v, c, p, true);
  return reports::failures_markdown(f.goodput, f.distribution, v.options.reliability, p.gpus_used);
}

std::vector<std::string> failure_csv_header(const PlanReportView& v) {
  if (!v.options.reliability.enabled) return {};
  return reports::failure_csv_header();
}

std::vector<std::string> failure_csv_cells(const PlanReportView& v, const Candidate& c) {
  if (!v.options.reliability.enabled) return {};
  if (c.best_plan < 0) return reports::failure_csv_cells(c.compute_days, nullptr);
  const Goodput g = failure_summary(v, c, v.result.plans[c.best_plan], false).goodput;
  return reports::failure_csv_cells(c.compute_days, &g);
}

void add_failures_json(const PlanReportView& v, const SearchResult& r, const Candidate& c,
                       bool detail, boost::json::object* o) {
  const Reliability& rel = v.options.reliability;
  if (!rel.enabled || c.best_plan < 0) return;
  const FailureSummary f = failure_summary(v, c, r.plans[c.best_plan], detail);
  reports::add_failure_fields_json(c.compute_days, f.goodput, o);
  if (!detail) return;
  (*o)["failures"] = failures_detail_json(f.goodput, rel, v.cluster.gpus_per_node, f.distribution);
}

}  // namespace llmplan::planner
