// The discrete-event simulation of a shared GPU cluster running a trace of
// training jobs under one scheduling policy (policy.h).
//
// Events are job arrivals and completions. At each event the simulator
// advances every running job by its simulated throughput, retires finished
// jobs, refuses arrivals that cannot run at all (no plan fits on up to the
// allowed GPUs), and asks the policy for a new allocation. A job whose GPU
// count changes to a non-zero value (including its first start) pauses for
// the re-scale cost (checkpoint, restart, re-shard) while holding its GPUs;
// a job taken to zero GPUs is preempted at no cost and keeps its progress.
// Between events every rate is constant, so completion times are exact.
#ifndef LLMPLAN_PLANNER_STUDY_SCHEDULE_CLUSTER_SIM_H_
#define LLMPLAN_PLANNER_STUDY_SCHEDULE_CLUSTER_SIM_H_

#include <string>
#include <vector>

#include "planner/study/schedule/job.h"
#include "planner/study/schedule/policy.h"
#include "planner/study/schedule/throughput.h"
#include "base/status.h"

namespace llmplan::planner::schedule {

struct ClusterSimOptions {
  int total_gpus = 0;          // >= step
  double rescale_cost_s = 120; // >= 0
};

// What happened to one job.
struct JobOutcome {
  bool finished = false;
  bool met_deadline = false;
  std::string refused;         // non-empty: refused, with the reason
  double start_s = -1;         // first time it held GPUs; -1: never
  double finish_s = -1;        // -1: not finished
  double jct_s = -1;           // finish - arrival
  double gpu_seconds = 0;      // GPUs held x time (pauses included)
  int max_gpus = 0;            // largest allocation
  int rescales = 0;            // allocation changes to a non-zero count
};

// One point of the allocation step function: from time_s on, gpus are held.
struct AllocationSample {
  double time_s = 0;
  int gpus = 0;
};

struct ScheduleMetrics {
  int jobs = 0, finished = 0, met = 0, refused = 0;
  double deadline_ratio = 0;   // met / jobs (refused jobs count as missed)
  double avg_jct_s = 0;        // over finished jobs
  double p95_jct_s = 0;        // nearest rank, over finished jobs
  double makespan_s = 0;       // last finish - first arrival
  double utilisation = 0;      // GPU-seconds held / (total GPUs x makespan)
};

struct ScheduleResult {
  std::string policy;
  std::vector<JobOutcome> jobs;           // in trace order
  std::vector<AllocationSample> timeline; // total GPUs held, at each change
  ScheduleMetrics metrics;
  int events = 0;
};

// Simulates `jobs` (sorted by arrival) on a cluster of options.total_gpus
// GPUs under `policy`. curves[i] is job i's simulated throughput curve.
// Deterministic; thread-safe (reads only its arguments).
// Errors: InvalidArgument for sizes that disagree or bad options; Internal
// when the policy breaks its contract (over-allocates, allocates a count
// that is not a node multiple or outside the job's range, refuses an
// admitted job, or leaves jobs waiting on an idle cluster).
Result<ScheduleResult> simulate_cluster(const std::vector<Job>& jobs,
                                        const std::vector<const ThroughputCurve*>& curves,
                                        const Policy& policy, const ClusterSimOptions& options);

// Metrics of outcomes (also used by tests on hand-made outcomes).
ScheduleMetrics summarise(const std::vector<Job>& jobs, const std::vector<JobOutcome>& outcomes,
                          int total_gpus);

}  // namespace llmplan::planner::schedule

#endif  // LLMPLAN_PLANNER_STUDY_SCHEDULE_CLUSTER_SIM_H_
