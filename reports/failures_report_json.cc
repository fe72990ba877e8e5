// The failures part of a report as JSON (failures_report.h).
#include <boost/json.hpp>
#include <cmath>

#include "reports/failures_report.h"

namespace llmplan::reports {
namespace {

using presets::Reliability;

constexpr double kSecondsPerDay = 86400.0;

boost::json::value finite(double x) {
  if (!std::isfinite(x) || x > 1e299) return nullptr;
  return x;
}

}  // namespace

boost::json::object failures_detail_json(const Goodput& g, const Reliability& rel, int gpus_per_node,
                                         const WallDistribution& distribution) {
  boost::json::object d;
  d["interruptions_per_gpu_day"] = presets::rate_per_gpu_day(rel, gpus_per_node);
  d["job_interruptions_per_day"] = g.rate_per_s * kSecondsPerDay;
  d["carried_over_from_h100"] = rel.carried_over;
  d["source"] = rel.source;
  d["checkpoint_bytes"] = g.checkpoint_bytes;
  d["checkpoint_bytes_per_gpu"] = g.checkpoint_bytes_per_gpu;
  d["checkpoint_write_s"] = g.checkpoint_write_s;
  d["checkpoint_exposed_s"] = g.checkpoint_exposed_s;
  d["checkpoint_async"] = rel.checkpoint.async;
  d["checkpoint_load_s"] = g.checkpoint_load_s;
  d["young_daly_interval_s"] = g.young_daly_interval_s;
  d["checkpoints"] = finite(g.checkpoints);
  d["checkpoint_overhead_days"] = finite(g.checkpoint_overhead_s / kSecondsPerDay);
  d["mean_restart_s"] = g.mean_restart_s;
  d["spare_nodes"] = rel.checkpoint.spare_nodes;
  d["spare_gpus"] = g.spare_gpus;
  d["spare_shortfall"] = g.spare_shortfall;
  boost::json::array causes;
  for (const CauseCost& cc : g.causes) {
    boost::json::object e;
    e["cause"] = cc.name;
    e["interruptions"] = finite(cc.interruptions);
    e["lost_days"] = finite(cc.lost_s / kSecondsPerDay);
    e["restart_s"] = cc.restart_s;
    causes.push_back(std::move(e));
  }
  d["lost_days_by_cause"] = std::move(causes);
  const WallDistribution& w = distribution;
  if (w.trials > 0) {
    boost::json::object mc;
    mc["trials"] = w.trials;
    mc["seed"] = w.seed;
    mc["mean_days"] = w.mean_s / kSecondsPerDay;
    mc["stderr_days"] = w.stderr_s / kSecondsPerDay;
    mc["wall_days_p10"] = w.p10_s / kSecondsPerDay;
    mc["wall_days_p50"] = w.p50_s / kSecondsPerDay;
    mc["wall_days_p90"] = w.p90_s / kSecondsPerDay;
    mc["mean_interruptions"] = w.mean_interruptions;
    d["monte_carlo"] = std::move(mc);
  } else {
    d["monte_carlo"] = nullptr;
  }
  return d;
}

void add_failure_fields_json(double compute_days, const Goodput& g, boost::json::object* o) {
  (*o)["compute_days"] = finite(compute_days);
  (*o)["wall_days"] = finite(g.wall_s / kSecondsPerDay);
  (*o)["expected_interruptions"] = finite(g.interruptions);
  (*o)["goodput"] = finite(g.goodput);
  (*o)["checkpoint_interval_s"] = finite(g.interval_s);
}

boost::json::object failures_per_day_json(const Goodput& g, const Reliability& rel, int gpus_per_node) {
  boost::json::object o;
  o["per_compute_days"] = g.compute_s / kSecondsPerDay;
  o["wall_days"] = finite(g.wall_s / kSecondsPerDay);
  o["expected_interruptions"] = finite(g.interruptions);
  o["goodput"] = finite(g.goodput);
  o["checkpoint_interval_s"] = finite(g.interval_s);
  boost::json::object d = failures_detail_json(g, rel, gpus_per_node, WallDistribution{});
  for (auto& kv : d) o[kv.key()] = kv.value();
  return o;
}

}  // namespace llmplan::reports
