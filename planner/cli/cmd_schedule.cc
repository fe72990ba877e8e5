// `llmplan schedule`: a shared cluster running a trace of training jobs
// under several scheduling policies, with each job's throughput at every GPU
// count taken from the simulator (planner/study/schedule/).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "planner/cli/command.h"
#include "planner/cli/plan_space_flags.h"
#include "planner/cli/progress.h"
#include "planner/cli/run_flags.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/gpu_count.h"
#include "planner/study/schedule/cluster_sim.h"
#include "planner/study/schedule/job.h"
#include "planner/study/schedule/policy.h"
#include "planner/study/schedule/schedule_report.h"
#include "planner/study/schedule/throughput.h"

namespace llmplan::planner {
namespace {

using schedule::Job;

struct ScheduleOptions {
  std::string jobs_file;
  int generate = 0;
  uint64_t seed = 1;
  double mean_interarrival_h = 0.5;
  double min_duration_h = 2, max_duration_h = 24;
  double min_slack = 1.5, max_slack = 3.0;
  std::string write_jobs;
  int gpus = 0;
  std::string gpu, cluster;
  std::string policy = "all";
  std::string format = "md";
  double rescale_cost_s = 120;
  double batch_tokens = 2.0 * 1024 * 1024;
  int threads = 0;
  std::string out_dir;
  CostModelOptions cost;
  PlanSpaceFlags space_flags;  // the plans each job's curve tries (plan_space_flags.h)
  bool progress = false;
};

// Largest --batch-tokens: 2^30 tokens per step (so the global batch in
// sequences stays far inside an int).
constexpr double kMaxBatchTokens = 1073741824.0;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


Status check_options(const ScheduleOptions& o) {
  if (o.jobs_file.empty() == (o.generate == 0)) {
    return Status::invalid_argument("schedule: give exactly one of --jobs FILE and --generate N");
  }
  if (check_gpu_count(o.gpus, {}) != GpuCountError::kNone) {
    return Status::invalid_argument("--gpus: must be from 1 to " +
                                    std::to_string(simulator::Plan::kMaxGpus) + " (got " +
                                    std::to_string(o.gpus) + ")");
  }
  if (o.threads < 0) return Status::invalid_argument("--threads: must be >= 0");
  if (!(o.rescale_cost_s >= 0) || !std::isfinite(o.rescale_cost_s)) {
    return Status::invalid_argument("--rescale-cost-s: must be finite and >= 0");
  }
  if (!(o.batch_tokens > 0) || !(o.batch_tokens <= kMaxBatchTokens)) {
    return Status::invalid_argument("--batch-tokens: must be > 0 and at most 2^30");
  }
  if (o.generate < 0 || o.generate > schedule::kMaxJobs) {
    return Status::invalid_argument("--generate: must be from 1 to " +
                                    std::to_string(schedule::kMaxJobs));
  }
  if (o.generate > 0) {  // the generator checks too, but names its own fields
    if (!(o.mean_interarrival_h > 0) || !std::isfinite(o.mean_interarrival_h)) {
      return Status::invalid_argument("--mean-interarrival-h: must be > 0");
    }
    if (!(o.min_duration_h > 0) || !(o.max_duration_h >= o.min_duration_h) ||
        !std::isfinite(o.max_duration_h)) {
      return Status::invalid_argument("--min-duration-h/--max-duration-h: need 0 < min <= max");
    }
    if (!(o.min_slack >= 1) || !(o.max_slack >= o.min_slack) || !std::isfinite(o.max_slack)) {
      return Status::invalid_argument("--min-slack/--max-slack: need 1 <= min <= max");
    }
  }
  return Status();
}

// The study's jobs: generated (--generate N) or read (--jobs FILE).
Status load_jobs(const ScheduleOptions& o, const presets::Catalog& catalog,
                 const simulator::Cluster& cluster, schedule::ScheduleStudy* study_out) {
  schedule::ScheduleStudy& study = *study_out;
  if (o.generate > 0) {
    schedule::GenerateOptions g;
    g.num_jobs = o.generate;
    g.seed = o.seed;
    g.mean_interarrival_s = o.mean_interarrival_h * 3600;
    g.min_duration_s = o.min_duration_h * 3600;
    g.max_duration_s = o.max_duration_h * 3600;
    g.min_slack = o.min_slack;
    g.max_slack = o.max_slack;
    g.cluster_gpus = o.gpus;
    g.gpus_per_node = cluster.gpus_per_node;
    g.peak_flops = cluster.gpu.peak_fp16_flops;
    LLMPLAN_ASSIGN_OR_RETURN(study.jobs, schedule::generate_jobs(g));
    study.trace = "generated: " + std::to_string(o.generate) + " jobs, seed " + std::to_string(o.seed);
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(study.jobs, schedule::read_jobs_file(o.jobs_file, catalog));
    if (study.jobs.size() > static_cast<size_t>(schedule::kMaxJobs)) {
      return Status::invalid_argument(o.jobs_file + ": " + std::to_string(study.jobs.size()) +
                                      " jobs, more than the limit of " +
                                      std::to_string(schedule::kMaxJobs));
    }
    study.trace = o.jobs_file;
  }
  return Status();
}

// --policy NAME, or every policy ("all").
Result<std::vector<std::unique_ptr<schedule::Policy>>> make_policies(const ScheduleOptions& o) {
  std::vector<std::unique_ptr<schedule::Policy>> policies;
  if (o.policy == "all") {
    for (const std::string& name : schedule::policy_names()) {
      LLMPLAN_ASSIGN_OR_RETURN(auto p, schedule::make_policy(name));
      policies.push_back(std::move(p));
    }
  } else {
    auto p = schedule::make_policy(o.policy);
    if (!p.ok()) return Status::invalid_argument("--policy: " + p.status().message());
    policies.push_back(std::move(p).value());
  }
  return policies;
}

// The throughput curves, one per distinct model (study.curve_of_job maps
// each job to its curve).
Status compute_study_curves(const ScheduleOptions& o, const simulator::Cluster& cluster,
                            schedule::ScheduleStudy* study_out) {
  schedule::ScheduleStudy& study = *study_out;
  std::vector<simulator::Model> models;
  for (const Job& j : study.jobs) {
    int k = 0;
    while (k < static_cast<int>(models.size()) && !(models[k] == j.model)) ++k;
    if (k == static_cast<int>(models.size())) models.push_back(j.model);
    study.curve_of_job.push_back(k);
  }
  const long curve_points = static_cast<long>(models.size()) * (o.gpus / cluster.gpus_per_node);
  if (curve_points > schedule::kMaxCurvePoints) {
    return Status::invalid_argument(
        "schedule: " + std::to_string(models.size()) + " distinct models x " +
        std::to_string(o.gpus / cluster.gpus_per_node) + " GPU counts = " +
        std::to_string(curve_points) + " throughput-curve points, more than the limit of " +
        std::to_string(schedule::kMaxCurvePoints) + "; use fewer --gpus or fewer distinct models");
  }
  schedule::CurveOptions copt;
  copt.max_gpus = o.gpus;
  copt.target_batch_tokens = o.batch_tokens;
  {
    auto space = to_plan_space(o.space_flags);
    if (!space.ok()) return space.status().as_usage();
    copt.space = space.value();
  }
  copt.threads = o.threads;
  copt.progress = counter(std::make_shared<Progress>("schedule", "distinct plans", o.progress));
  LLMPLAN_ASSIGN_OR_RETURN(copt.cost_model, make_cost_model(cluster, o.cost, &study.notes));
  auto t0 = std::chrono::steady_clock::now();
  study.curves = schedule::compute_curves(models, cluster, copt, &study.plans_simulated);
  study.curves_wall_s = seconds_since(t0);
  return Status();
}

// The report in --format, and the files of --out DIR.
Result<std::string> schedule_output(const ScheduleOptions& o,
                                    const schedule::ScheduleStudy& study) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string svg, schedule::allocation_svg(study));
  const std::string md = schedule::schedule_markdown(
      study, o.out_dir.empty() ? "" : o.out_dir + "/allocation.svg");
  LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text, schedule::schedule_to_json(study));
  const std::string summary_csv = schedule::summary_table(study).csv();
  if (!o.out_dir.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(o.out_dir, "--out", "schedule"));
    LLMPLAN_RETURN_IF_ERROR(
        out.write("report.md", schedule::schedule_markdown(study, "allocation.svg")));
    LLMPLAN_RETURN_IF_ERROR(out.write("summary.csv", summary_csv));
    LLMPLAN_RETURN_IF_ERROR(out.write("jobs.csv", schedule::jobs_table(study).csv()));
    LLMPLAN_RETURN_IF_ERROR(out.write("curves.csv", schedule::curves_table(study).csv()));
    LLMPLAN_RETURN_IF_ERROR(out.write("trace.csv", schedule::jobs_to_csv(study.jobs)));
    LLMPLAN_RETURN_IF_ERROR(out.write("schedule.json", json_text));
    LLMPLAN_RETURN_IF_ERROR(out.write("allocation.svg", svg));
    LLMPLAN_RETURN_IF_ERROR(out.commit());
  }
  return o.format == "json" ? json_text : o.format == "csv" ? summary_csv : md;
}

Status run_schedule(const ScheduleOptions& o, const GlobalOptions& global) {
  LLMPLAN_RETURN_IF_ERROR(check_options(o));
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  simulator::Cluster cluster;
  LLMPLAN_RETURN_IF_ERROR(apply_cluster_flags({o.gpu, o.cluster, 0}, catalog, false, &cluster));
  const GpuCountError nodes = check_gpu_count(o.gpus, {cluster.gpus_per_node, true, 0});
  if (nodes == GpuCountError::kBelowOneNode || nodes == GpuCountError::kNotWholeNodes) {
    return Status::invalid_argument("--gpus: " + std::to_string(o.gpus) +
                                    " is not a positive multiple of the node size (" +
                                    std::to_string(cluster.gpus_per_node) + " GPUs)");
  }
  schedule::ScheduleStudy study;
  study.cluster = cluster.name;
  study.total_gpus = o.gpus;
  study.rescale_cost_s = o.rescale_cost_s;
  LLMPLAN_RETURN_IF_ERROR(load_jobs(o, catalog, cluster, &study));
  if (!o.write_jobs.empty()) {
    LLMPLAN_RETURN_IF_ERROR(write_output_file(o.write_jobs, schedule::jobs_to_csv(study.jobs), "--write-jobs"));
  }
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<std::unique_ptr<schedule::Policy>> policies,
                           make_policies(o));

  LLMPLAN_RETURN_IF_ERROR(compute_study_curves(o, cluster, &study));
  std::vector<const schedule::ThroughputCurve*> curve_ptrs;
  for (int k : study.curve_of_job) curve_ptrs.push_back(&study.curves[k]);

  const auto t0 = std::chrono::steady_clock::now();
  schedule::ClusterSimOptions sim;
  sim.total_gpus = o.gpus;
  sim.rescale_cost_s = o.rescale_cost_s;
  for (const auto& p : policies) {
    LLMPLAN_ASSIGN_OR_RETURN(schedule::ScheduleResult r,
                             schedule::simulate_cluster(study.jobs, curve_ptrs, *p, sim));
    study.results.push_back(std::move(r));
  }
  study.policies_wall_s = seconds_since(t0);
  study.notes.push_back(
      "jobs progress at the simulated throughput of the best plan (enumerate_plans, global batch "
      "near --batch-tokens) for the GPUs they hold; a job holding g GPUs runs the fastest plan "
      "on at most g");
  study.notes.push_back(
      "deadline ratio counts refused jobs as missed; JCT and makespan are over finished jobs; "
      "utilisation is GPUs held (re-scale pauses included) over GPUs x makespan");

  LLMPLAN_ASSIGN_OR_RETURN(const std::string out, schedule_output(o, study));
  return write_stdout(out);
}

}  // namespace

void add_schedule_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<ScheduleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "schedule", "Simulate a shared cluster running a trace of training jobs under scheduling "
                  "policies, with throughput from the simulator");
  CLI::Option* jobs = cmd->add_option("--jobs", o->jobs_file, "Job file (JSON or CSV)");
  cmd->add_option("--generate", o->generate, "Generate a synthetic trace of N jobs")
      ->excludes(jobs)
      ->check(int_in(1, schedule::kMaxJobs));
  cmd->add_option("--seed", o->seed, "Generator seed (default 1)");
  cmd->add_option("--mean-interarrival-h", o->mean_interarrival_h,
                  "Generator: mean hours between arrivals (default 0.5)")
      ->check(finite_positive());
  cmd->add_option("--min-duration-h", o->min_duration_h,
                  "Generator: shortest ideal run, hours (default 2)")
      ->check(finite_positive());
  cmd->add_option("--max-duration-h", o->max_duration_h,
                  "Generator: longest ideal run, hours (default 24)")
      ->check(finite_positive());
  cmd->add_option("--min-slack", o->min_slack,
                  "Generator: least deadline slack factor (default 1.5)")
      ->check(finite_in(1, std::numeric_limits<double>::max()));
  cmd->add_option("--max-slack", o->max_slack, "Generator: most deadline slack factor (default 3)")
      ->check(finite_in(1, std::numeric_limits<double>::max()));
  cmd->add_option("--write-jobs", o->write_jobs, "Also write the trace as CSV to FILE");
  cmd->add_option("--gpus", o->gpus, "GPUs in the cluster (a multiple of the node size)")
      ->required()
      ->check(int_in(1, simulator::Plan::kMaxGpus));
  cmd->add_option("--gpu", o->gpu, "GPU preset (a cluster built from it)");
  cmd->add_option("--cluster", o->cluster, "Cluster preset (default dgx-a100-80gb)");
  cmd->add_option("--policy", o->policy,
                  "fifo, edf, elasticflow-linear, elasticflow-simulated or all (default)");
  cmd->add_option("--format", o->format, "stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  cmd->add_option("--rescale-cost-s", o->rescale_cost_s,
                  "Seconds a job pauses when its GPU count changes (default 120)")
      ->check(finite_in(0, std::numeric_limits<double>::max()));
  cmd->add_option("--batch-tokens", o->batch_tokens,
                  "Each job's global batch in tokens, about (default 2Mi)")
      ->check(finite_in(0, kMaxBatchTokens, true));
  add_plan_space_flags(cmd, &o->space_flags, "Schedule curves");
  cmd->add_option("--threads", o->threads, "OpenMP threads for the curves (default: all cores)")
      ->check(int_in(0, kMaxThreads));
  cmd->add_flag("--progress", o->progress,
                "Progress lines on stderr also when it is not a terminal (a log, a pipe)");
  cmd->add_option("--out", o->out_dir,
                  "Write report.md, summary.csv, jobs.csv, curves.csv, trace.csv, schedule.json, "
                  "allocation.svg to DIR");
  add_cost_model_flags(cmd, &o->cost);
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_schedule(*o, global); }; });
}

}  // namespace llmplan::planner
