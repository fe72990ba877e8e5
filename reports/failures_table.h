// The tables of a plan's failure figures (issue 28) that the reports write
// (failures_report.h): the planner's reliability model fills them
// (planner/search/reliability.h: goodput, monte_carlo), the writers only
// format them. Plain values.
#ifndef LLMPLAN_REPORTS_FAILURES_TABLE_H_
#define LLMPLAN_REPORTS_FAILURES_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace llmplan::reports {

// A cause with the job's rate and what it cost.
struct CauseCost {
  std::string name;
  double rate_per_s = 0;         // the job's rate from this cause
  double restart_s = 0;          // the restart it costs
  double interruptions = 0;      // expected count over the run
  double lost_s = 0;             // expected wall time lost (rework + restart)
};

// The expected cost of failures for one plan and its compute time.
struct Goodput {
  bool enabled = false;
  double compute_s = 0;          // W
  double wall_s = 0;             // expected wall time (= W when disabled)
  double goodput = 1;            // W / wall_s
  double rate_per_s = 0;         // lambda, the job's interruption rate
  double mtbi_s = 0;             // 1 / lambda (0 when lambda is 0)
  double interruptions = 0;      // expected count
  double checkpoint_bytes = 0;   // the whole checkpoint
  double checkpoint_bytes_per_gpu = 0;  // the most one writer writes
  double checkpoint_write_s = 0; // a synchronous write of it
  double checkpoint_exposed_s = 0;  // delta: what stops training
  double checkpoint_load_s = 0;
  double young_daly_interval_s = 0;  // sqrt(2 delta M)
  double interval_s = 0;         // tau, compute seconds between checkpoints
  double checkpoints = 0;        // n
  double checkpoint_overhead_s = 0;  // n delta
  double mean_restart_s = 0;     // E[R]
  double spare_shortfall = 0;    // P(no hot spare free when one is needed)
  int spare_gpus = 0;
  std::vector<CauseCost> causes;
};


// The Monte Carlo's answer: wall-time quantiles over trials, each trial
// drawing the simulator's error (a log-normal through the band's P10/P90
// iteration-time ratios) and then the interruptions.
struct WallDistribution {
  int trials = 0;
  uint64_t seed = 0;
  double mean_s = 0, stderr_s = 0;   // of the trials' wall time
  double p10_s = 0, p50_s = 0, p90_s = 0;
  double mean_interruptions = 0;
};

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_FAILURES_TABLE_H_
