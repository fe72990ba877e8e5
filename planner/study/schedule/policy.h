// Scheduling policies of the cluster simulator (cluster_sim.h), behind one
// small interface: at every event (a job arrives or finishes) the simulator
// shows the policy the active jobs and the policy says how many GPUs each
// gets, and which new arrivals it refuses.
//
// Built-in policies (make_policy names):
//   fifo     Fixed-size jobs, started in arrival order, never preempted; the
//            queue head blocks the jobs behind it (no backfilling).
//   edf      As fifo, but the waiting queue is ordered by deadline.
//   elasticflow-linear
//            ElasticFlow-style (Gu et al., ASPLOS'23): admission control and
//            elastic re-allocation at every event. Each admitted job gets the
//            minimum node-multiple share that meets its deadline, earliest
//            deadline first; a new job is refused when the shares of the
//            admitted jobs and its own exceed the cluster; spare GPUs go one
//            node at a time to the job whose finish time improves most. It
//            estimates throughput by linear scaling from the job's smallest
//            feasible count: T(g) = g / g0 * T_sim(g0).
//   elasticflow-simulated
//            The same policy reading the simulated throughput curve T_sim(g).
// Jobs always progress at their simulated throughput; only the policy's
// estimate differs.
//
// Policies are stateless values: decide() is const and pure, so one policy
// can be simulated on many threads.
#ifndef LLMPLAN_PLANNER_STUDY_SCHEDULE_POLICY_H_
#define LLMPLAN_PLANNER_STUDY_SCHEDULE_POLICY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "planner/study/schedule/job.h"
#include "planner/study/schedule/throughput.h"
#include "base/status.h"

namespace llmplan::planner::schedule {

// What a policy sees of one active job (arrived, not finished, not refused).
struct JobView {
  const Job* job = nullptr;
  const ThroughputCurve* curve = nullptr;  // simulated; curve->min_feasible_gpus() > 0
  double remaining_tokens = 0;
  int gpus = 0;             // allocated now (0: waiting or preempted)
  bool admitted = false;    // false only at the event where the job arrives
};

struct PolicyContext {
  double now_s = 0;
  int total_gpus = 0;
  int step_gpus = 1;        // allocations are multiples of this (one node)
  double rescale_cost_s = 0;  // pause a job pays when its allocation changes
};

// A policy's answer, one entry per JobView in the same order.
struct Decision {
  std::vector<int> gpus;              // multiples of step_gpus, sum <= total_gpus
  std::vector<std::string> refused;   // non-empty: refuse this (new) job, with the reason
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // REQUIRES: jobs in arrival order (ties in trace order). A policy may
  // refuse only jobs with admitted == false.
  virtual Decision decide(const PolicyContext& context, const std::vector<JobView>& jobs) const = 0;
};

// The names make_policy accepts, in report order.
std::vector<std::string> policy_names();
// NotFound listing the known names for an unknown one.
Result<std::unique_ptr<Policy>> make_policy(std::string_view name);

// The counts a job may run on: node multiples in [lo, hi], lo at least its
// min_gpus and smallest feasible count, hi at most its max_gpus, the
// cluster and the curve. lo == hi == 0 when there is none.
struct GpuRange {
  int lo = 0, hi = 0;
};
GpuRange gpu_range(const Job& job, const ThroughputCurve& curve, int total_gpus);

// The fixed size a job asks of the fifo and edf policies: its `gpus` when
// set; otherwise the smallest node multiple that meets its deadline running
// alone from arrival on the simulated curve (rescale cost included), or,
// when none does, the count of best throughput. Clamped to the job's bounds,
// to at least its smallest feasible count and at most total_gpus.
int requested_gpus(const Job& job, const ThroughputCurve& curve, int total_gpus,
                   double rescale_cost_s);

}  // namespace llmplan::planner::schedule

#endif  // LLMPLAN_PLANNER_STUDY_SCHEDULE_POLICY_H_
