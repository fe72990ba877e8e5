#include "reports/failures_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "reports/format.h"
#include "reports/table.h"

namespace llmplan::reports {
namespace {

using presets::CheckpointSettings;
using presets::Reliability;

constexpr double kSecondsPerDay = 86400.0;

std::string cell(double x) {
  if (!std::isfinite(x) || x > 1e299) return "";
  return fmt::format("{}", x);
}

std::string days_text(double s) { return s > 1e299 ? "inf" : fmt::format("{:.1f}", s / kSecondsPerDay); }

}  // namespace

std::string failures_assumption_line(const Reliability& rel, int gpus_per_node,
                                     const std::string& gpu_name) {
  if (!rel.enabled) return "";
  const CheckpointSettings& k = rel.checkpoint;
  return fmt::format(
      "- Failures: {:.3g} interruptions per GPU-day ({} causes, {}{}); checkpoints {} to storage at "
      "{:.0f} GB/s aggregate (read {:.0f} GB/s){}; deadline days are expected wall-clock days "
      "(--no-interruptions: compute days)\n",
      presets::rate_per_gpu_day(rel, gpus_per_node), rel.causes.size(), rel.source,
      rel.carried_over ? fmt::format(", carried over from H100: no published figures for {}", gpu_name)
                       : "",
      k.async ? "asynchronous (the copy to host exposed)" : "synchronous", k.write_bytes_per_s / 1e9,
      k.read_bytes_per_s / 1e9,
      k.spare_nodes > 0 ? fmt::format("; {} hot spare nodes (paid for)", k.spare_nodes) : "");
}

std::string failures_markdown(const Goodput& g, const WallDistribution& d, const Reliability& rel,
                              int gpus_used) {
  std::string md = "## Failures, checkpoints and goodput\n\n";
  md += fmt::format(
      "**{} compute days → {} wall-clock days** expected (goodput {:.1f} %: the effective training "
      "time ratio){}.\n\n",
      days_text(g.compute_s), days_text(g.wall_s), 100 * g.goodput,
      d.trials > 0 ? fmt::format("; P10–P90 {}–{} days (median {}) over {} Monte Carlo trials "
                                 "that draw the simulator's error band and the interruptions",
                                 days_text(d.p10_s), days_text(d.p90_s), days_text(d.p50_s),
                                 d.trials)
                   : "");
  md += fmt::format(
      "- Interruptions: {:.0f} expected ({} between them on {} GPUs{})\n", g.interruptions,
      g.mtbi_s > 0 ? seconds_human(g.mtbi_s) : "never",
      gpus_used, rel.carried_over ? "; rates carried over from H100" : "");
  md += fmt::format(
      "- Checkpoint: {} ({} per writing GPU), written in {}, of which {} stops training; every {} "
      "of compute ({:.0f} checkpoints; Young/Daly sqrt(2·δ·M) = {}), {} of checkpoint time in all\n",
      bytes_human(g.checkpoint_bytes), bytes_human(g.checkpoint_bytes_per_gpu),
      seconds_human(g.checkpoint_write_s), seconds_human(g.checkpoint_exposed_s),
      seconds_human(g.interval_s), g.checkpoints, seconds_human(g.young_daly_interval_s),
      seconds_human(g.checkpoint_overhead_s));
  const CheckpointSettings& k = rel.checkpoint;
  md += fmt::format("- Restart: {} on average (checkpoint load {}{})\n", seconds_human(g.mean_restart_s),
                    seconds_human(g.checkpoint_load_s),
                    k.spare_nodes > 0
                        ? fmt::format("; {} hot spare nodes, all busy with probability {:.2g}",
                                      k.spare_nodes, g.spare_shortfall)
                        : "; no hot spares: a node fault waits for rescheduling");
  if (k.async && g.checkpoint_write_s > g.interval_s) {
    md += "- The background checkpoint write takes longer than the interval: asynchronous "
          "checkpoints at this rate would queue (not modelled)\n";
  }
  md += "\nTime lost by cause (rework since the last checkpoint + restart):\n\n";
  std::vector<int> order(g.causes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return g.causes[a].lost_s > g.causes[b].lost_s; });
  reports::Table t({"cause", "interruptions", "days lost", "restart"});
  t.add_row({"checkpointing", "-", days_text(g.checkpoint_overhead_s), "-"});
  for (int i : order) {
    const CauseCost& cc = g.causes[i];
    if (cc.interruptions < 0.05) continue;
    t.add_row({cc.name, fmt::format("{:.1f}", cc.interruptions), fmt::format("{:.2f}", cc.lost_s / kSecondsPerDay),
               seconds_human(cc.restart_s)});
  }
  md += t.markdown() + "\n";
  return md;
}

std::string failures_per_day_text(const Goodput& g, const Reliability& rel) {
  std::string t = fmt::format(
      "Failures (per day of compute; --no-interruptions to leave out): {:.2f} interruptions "
      "expected ({} between them), goodput {:.1f} %: 1 compute day takes {:.3f} wall-clock days{}\n",
      g.interruptions, g.mtbi_s > 0 ? seconds_human(g.mtbi_s) : "never", 100 * g.goodput,
      g.wall_s / kSecondsPerDay, rel.carried_over ? " (rates carried over from H100)" : "");
  t += fmt::format(
      "  checkpoint {} ({} per writing GPU), {} exposed, every {} of compute; restart {} on average\n",
      bytes_human(g.checkpoint_bytes), bytes_human(g.checkpoint_bytes_per_gpu),
      seconds_human(g.checkpoint_exposed_s), seconds_human(g.interval_s),
      seconds_human(g.mean_restart_s));
  return t;
}

std::vector<std::string> failure_csv_header() {
  return {"compute_days", "wall_days", "expected_interruptions", "goodput", "checkpoint_interval_s"};
}

std::vector<std::string> failure_csv_cells(double compute_days, const Goodput* g) {
  if (g == nullptr) return std::vector<std::string>(5, "");
  return {cell(compute_days), cell(g->wall_s / kSecondsPerDay), cell(g->interruptions),
          cell(g->goodput), cell(g->interval_s)};
}

}  // namespace llmplan::reports
