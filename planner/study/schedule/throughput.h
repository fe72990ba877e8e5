// Throughput curves for the cluster scheduler: for each job's model, the
// best plan's training throughput (tokens/s) at every GPU count that is a
// multiple of a node, from the simulator (planner::enumerate_plans +
// simulator::simulate at each count, keeping the fastest plan that fits).
//
// A job given g GPUs runs the fastest plan that uses at most g of them, so
// the curve a scheduler reads is the running maximum over counts (the
// "envelope"), and useful_gpus(g) says how many of the g it really needs.
#ifndef LLMPLAN_PLANNER_STUDY_SCHEDULE_THROUGHPUT_H_
#define LLMPLAN_PLANNER_STUDY_SCHEDULE_THROUGHPUT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "planner/search/plan_space.h"
#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::planner::schedule {

// The best plan at one GPU count.
struct CurvePoint {
  int gpus = 0;               // the count offered (a node multiple)
  double tokens_per_s = 0;    // of the best plan that fits; 0: none fits
  double mfu = 0;
  int gpus_used = 0;          // t * p * d of that plan (<= gpus)
  simulator::Plan plan;
  int plans_simulated = 0;
};

// One model's curve on one cluster. A plain value; all queries are O(1).
class ThroughputCurve {
 public:
  ThroughputCurve() = default;
  // REQUIRES: points[k].gpus == (k + 1) * step_gpus, step_gpus >= 1.
  ThroughputCurve(simulator::Model model, int step_gpus, std::vector<CurvePoint> points);

  const simulator::Model& model() const { return model_; }
  int step_gpus() const { return step_; }
  int max_gpus() const { return static_cast<int>(points_.size()) * step_; }
  const std::vector<CurvePoint>& points() const { return points_; }

  // Best tokens/s with at most `gpus` GPUs (0 when none fits or gpus < step).
  double tokens_per_s(int gpus) const;
  // The smallest node-multiple count that reaches tokens_per_s(gpus); 0 if none.
  int useful_gpus(int gpus) const;
  // The smallest node-multiple count at which some plan fits; 0 if none.
  int min_feasible_gpus() const { return min_feasible_; }

 private:
  simulator::Model model_;
  int step_ = 1;
  std::vector<CurvePoint> points_;
  std::vector<double> best_;  // envelope, per point
  std::vector<int> useful_;   // count reaching the envelope, per point
  int min_feasible_ = 0;
};

// Most curve points (distinct models x GPU counts) one study computes: each
// point enumerates and simulates plans, so time and memory grow with the
// points and the models' sizes. At 2^21 points `schedule --generate 10000
// --gpus 1048576` (7 models x 131,072 counts) ran past 600 s and `--jobs` with
// 10,000 distinct shapes reached 2.4 GB (issue 31); `--generate 1000 --gpus
// 1048576` (917,504 points) took 80 CPU s and 2.1 GB. 2^17 points keep the
// largest study to about 15 CPU s and 400 MB (tests/bench/limits.sh).
inline constexpr long kMaxCurvePoints = 131072;  // 2^17

struct CurveOptions {
  int max_gpus = 0;                                  // counts step, 2 step, ..., <= max_gpus
  double target_batch_tokens = 2.0 * 1024 * 1024;    // each job's global batch, about
  // The plans tried (plan_space.h); its global-batch lists, when given,
  // replace target_batch_tokens. all_gpus_only is always set.
  PlanSpace space;
  int threads = 0;                                   // 0: OpenMP default
  std::shared_ptr<const simulator::CostModel> cost_model;  // null: Roofline
  // Optional: (distinct plans simulated, of all), called from inside the
  // parallel loop under a critical section.
  std::function<void(long done, long total)> progress;
};

// Curves of `models` on `cluster` (step = cluster.gpus_per_node), one per
// model in the given order. Every (model, count) pair is simulated once, in
// parallel (OpenMP), and the results are identical for any thread count.
// Only plans that use as many of the count's GPUs as their layout allows are
// tried (enumerate_plans with all_gpus_only, within options.space), with
// the global batch near target_batch_tokens unless the space lists batches. Pure apart from the threads it starts.
// `distinct_plans` (may be null) receives how many distinct plans ran.
// REQUIRES: options.max_gpus >= cluster.gpus_per_node >= 1; models valid.
std::vector<ThroughputCurve> compute_curves(const std::vector<simulator::Model>& models,
                                            const simulator::Cluster& cluster,
                                            const CurveOptions& options,
                                            long* distinct_plans = nullptr);

}  // namespace llmplan::planner::schedule

#endif  // LLMPLAN_PLANNER_STUDY_SCHEDULE_THROUGHPUT_H_
