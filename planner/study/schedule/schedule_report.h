// Reports of a scheduling study (`llmplan schedule`): the per-policy
// metrics, the per-job outcomes, the throughput curves and an SVG of GPUs
// allocated over time. Pure functions of a ScheduleStudy value.
#ifndef LLMPLAN_PLANNER_STUDY_SCHEDULE_SCHEDULE_REPORT_H_
#define LLMPLAN_PLANNER_STUDY_SCHEDULE_SCHEDULE_REPORT_H_

#include <string>
#include <vector>

#include "planner/study/schedule/cluster_sim.h"
#include "planner/study/schedule/job.h"
#include "planner/study/schedule/throughput.h"
#include "reports/table.h"
#include "base/status.h"

namespace llmplan::planner::schedule {

// Everything one `llmplan schedule` run computed.
struct ScheduleStudy {
  std::string cluster;                 // preset name
  int total_gpus = 0;
  double rescale_cost_s = 0;
  std::string trace;                   // the job file, or "generated: N jobs, seed S"
  std::vector<Job> jobs;               // sorted by arrival
  std::vector<ThroughputCurve> curves; // one per distinct model
  std::vector<int> curve_of_job;       // index into curves, per job
  std::vector<ScheduleResult> results; // one per policy, in the order run
  long plans_simulated = 0;            // distinct plans behind the curves
  double curves_wall_s = 0, policies_wall_s = 0;
  std::vector<std::string> notes;
};

// One row per policy: jobs, met, deadline ratio, refused, average and p95
// JCT (h), makespan (h), utilisation (%), re-scales.
reports::Table summary_table(const ScheduleStudy& study);
// One row per (policy, job): times in hours, outcome, GPUs, re-scales.
reports::Table jobs_table(const ScheduleStudy& study);
// One row per (model, count): the best plan and its tokens/s.
reports::Table curves_table(const ScheduleStudy& study);
// GPUs allocated over time, one step line per policy; InvalidArgument only
// if there is nothing to plot.
Result<std::string> allocation_svg(const ScheduleStudy& study);
// A Markdown report: the question, the summary, the comparison of the two
// ElasticFlow variants when both ran, an image link to the allocation plot
// `svg_link` (the file written beside the report; when empty, a line saying
// that --out DIR writes allocation.svg; never inline SVG), the curves at a
// few counts and the per-job tables.
std::string schedule_markdown(const ScheduleStudy& study, const std::string& svg_link);
// JSON: {cluster, gpus, rescale_cost_s, trace, policies: [{name, metrics,
// jobs: [...]}], curves: [...], plans_simulated, timings}. InvalidArgument
// naming the JSON path if a number is not finite (JSON cannot hold it).
Result<std::string> schedule_to_json(const ScheduleStudy& study);

}  // namespace llmplan::planner::schedule

#endif  // LLMPLAN_PLANNER_STUDY_SCHEDULE_SCHEDULE_REPORT_H_
