// Failures, checkpoints and restarts (issue 28): how many times a training
// job of a given size is interrupted, what each interruption costs (the work
// since the last checkpoint, detection, rescheduling, process-group start-up,
// checkpoint load, warm-up), what checkpointing costs, the checkpoint
// interval that minimises the sum, and the wall-clock time that results.
//
// The model. Interruptions arrive as a Poisson process whose rate is the sum
// of per-cause rates, each per unit of the job (a GPU, a node or a network
// switch), so a job's rate grows with its size. The work W (compute seconds:
// tokens / tokens per second) is cut into n equal segments of tau = W / n,
// each followed by a checkpoint whose exposed cost is delta; an interruption
// during a segment or its checkpoint loses the segment's progress and costs
// a restart R (drawn by cause), after which the segment starts again. With
// lambda the job's rate, the expected wall time of one segment is
//   E(T) = (1/lambda + E[R]) (exp(lambda T) - 1),  T = tau + delta
// (interruptions during a restart are not modelled: a restart is short next
// to 1/lambda), and the expected wall time is n E(tau + delta) with n the
// integer that minimises it: the exact optimum of E(tau + delta) / tau, near
// Young/Daly's sqrt(2 delta M) (M = 1/lambda) when delta << M. Hence
//   wall(W) >= W + n delta >= W, and wall(W) is increasing in W
// (a minimum over n of increasing functions of W), which the planner's
// pruning relies on.
//
// Everything here is pure and thread-safe; the Monte Carlo draws from a
// counter-based generator indexed by trial, so it is deterministic.
#ifndef LLMPLAN_PLANNER_SEARCH_RELIABILITY_H_
#define LLMPLAN_PLANNER_SEARCH_RELIABILITY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "presets/interruptions.h"
#include "reports/failures_table.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::planner {

// The interruption causes and checkpoint figures and their reader
// (presets/interruptions.h), by their planner names.
using presets::builtin_reliability;
using presets::CauseScope;
using presets::CheckpointSettings;
using presets::InterruptionCause;
using presets::parse_interruptions;
using presets::rate_per_gpu_day;
using presets::Reliability;
// What a plan's failures cost, in the tables the report writes
// (reports/failures_table.h): the search fills them.
using reports::CauseCost;
using reports::Goodput;
using reports::WallDistribution;

// The job's size in units of each scope.
struct JobSize {
  double gpus = 0, nodes = 0, switches = 0;
};
JobSize job_size(int gpus_used, const simulator::Cluster& cluster, int gpus_per_switch);

// Young/Daly's first-order optimum sqrt(2 delta M). REQUIRES: delta, M >= 0.
double young_daly_interval_s(double delta_s, double mtbi_s);

// The exact optimum segment length tau of E(tau + delta) / tau for rate
// lambda > 0 and delta >= 0 (tau = x / lambda, (1 - x) exp(x + lambda delta) = 1).
double optimal_interval_s(double rate_per_s, double delta_s);

// Expected wall time of one segment of length T (E(T) above).
double expected_segment_s(double rate_per_s, double mean_restart_s, double segment_s);

// The per-plan constants of the wall-time model (rate, delta, E[R], tau*):
// everything but the compute time, so that the search evaluates many
// compute times (the loss objective's bisection) cheaply.
struct FailureCosts {
  bool enabled = false;
  double rate_per_s = 0, delta_s = 0, mean_restart_s = 0, tau_opt_s = 0;
};
FailureCosts failure_costs(const simulator::Model& model, const simulator::Plan& plan,
                           const simulator::Cluster& cluster, const Reliability& rel);

// Expected wall seconds for compute seconds W (W when disabled); the number
// of checkpoints n in *checkpoints when not null. Increasing in W, >= W.
double expected_wall_s(const FailureCosts& f, double compute_s, double* checkpoints = nullptr);

// The largest W with expected_wall_s(f, W) <= wall_s (bisection; W = wall_s
// when disabled).
double compute_s_within(const FailureCosts& f, double wall_s);

// The full breakdown for the report (causes, checkpoint sizes and times).
Goodput goodput(const simulator::Model& model, const simulator::Plan& plan,
                const simulator::Cluster& cluster, const Reliability& rel, double compute_s);

// The Monte Carlo of the wall time (WallDistribution, reports/failures_table.h):
// each trial draws the simulator's error (a log-normal through the band's
// P10/P90 iteration-time ratios) and then the interruptions.
struct BandRatios {
  bool known = false;
  double p_low = 0.1, p_high = 0.9, low_ratio = 1, high_ratio = 1;
};
inline constexpr uint64_t kMonteCarloSeed = 2407217830ULL;  // arbitrary, fixed
inline constexpr int kMonteCarloTrials = 1000;
WallDistribution monte_carlo(const Goodput& g, const BandRatios& band, int trials = kMonteCarloTrials,
                             uint64_t seed = kMonteCarloSeed);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_RELIABILITY_H_
