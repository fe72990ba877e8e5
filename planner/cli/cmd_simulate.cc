// `llmplan simulate`: one training iteration of one model, plan and cluster.
#include <cstdio>
#include <memory>

#include "planner/cli/command.h"
#include "planner/cli/reliability_flags.h"
#include "planner/cli/run_flags.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/reliability.h"
#include "presets/sim_config.h"
#include "reports/failures_report.h"
#include "reports/step_report.h"
#include "reports/step_report_json.h"
#include "simulator/simulate.h"
#include "base/strict_json.h"
#include "simulator/trace_json.h"

namespace llmplan::planner {
namespace {

struct SimulateOptions {
  std::string config, vtrain_config;
  bool vtrain_ignore_num_gpus = false;
  ModelFlags model;   // --model and the shape flags (run_flags.h)
  PlanFlags plan;     // --tp, --pp, ..., --precision (run_flags.h)
  ClusterFlags where;  // --gpu, --cluster, --gpus-per-node
  std::string format = "text";
  std::string trace;
  bool task_level = false;
  CostModelOptions cost;
  ReliabilityFlags reliability;  // failures per day of compute (issue 28)
};

// The report of one simulation in --format, with the failures per day of
// compute when the failure model is on (issue 28).
Result<std::string> simulate_output(const SimulateOptions& o, const presets::SimConfig& config,
                                    const simulator::StepReport& report) {
  const reports::SimulationView view{config.model, config.plan, config.cluster, report, config.notes};
  // Failures (issue 28): the run has no tokens, so per day of compute.
  LLMPLAN_ASSIGN_OR_RETURN(const Reliability rel, resolve_reliability(o.reliability, config.cluster));
  Goodput failures;
  if (rel.enabled) failures = goodput(config.model, config.plan, config.cluster, rel, 86400.0);
  std::string out;
  if (o.format == "json") {
    boost::json::object j = reports::step_report_to_json(view);
    if (rel.enabled) j["failures"] = reports::failures_per_day_json(failures, rel, config.cluster.gpus_per_node);
    LLMPLAN_ASSIGN_OR_RETURN(out, json::pretty_finite(j));
  } else if (o.format == "md") {
    out = reports::step_report_markdown(view);
    if (rel.enabled) out += "\n" + reports::failures_per_day_text(failures, rel);
  } else {
    out = reports::step_report_text(view);
    if (rel.enabled) out += reports::failures_per_day_text(failures, rel);
  }
  return out;
}

Status run_simulate(const SimulateOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  presets::SimConfig config;
  bool have_model = false;
  if (!o.config.empty() && !o.vtrain_config.empty()) {
    return Status::invalid_argument("simulate: give --config or --vtrain-config, not both");
  }
  if (!o.config.empty() || !o.vtrain_config.empty()) {
    presets::VtrainLoadOptions vtrain;
    vtrain.ignore_stale_num_gpus = o.vtrain_ignore_num_gpus;
    LLMPLAN_ASSIGN_OR_RETURN(config, load_run_config(o.config, o.vtrain_config, vtrain, catalog));
    have_model = true;
  }
  LLMPLAN_RETURN_IF_ERROR(apply_model_flags(o.model, catalog, have_model, &config.model));
  LLMPLAN_RETURN_IF_ERROR(apply_plan_flags(o.plan, &config.plan));
  LLMPLAN_RETURN_IF_ERROR(apply_cluster_flags(o.where, catalog, have_model, &config.cluster));
  // A precision the GPU cannot run (fp8 or nvfp4 without those tensor
  // cores) contradicts the command line's own GPU: a usage error, exit 2.
  LLMPLAN_RETURN_IF_ERROR(simulator::check_precision(config.plan, config.cluster.gpu).as_usage());
  LLMPLAN_RETURN_IF_ERROR(simulator::check_host_link(config.plan, config.cluster).as_usage());
  LLMPLAN_ASSIGN_OR_RETURN(auto cost, make_cost_model(config.cluster, o.cost, &config.notes));
  simulator::SimOptions sim;
  sim.cost_model = cost;
  sim.keep_timeline = !o.trace.empty();
  sim.collapse_chains = !o.task_level;
  LLMPLAN_ASSIGN_OR_RETURN(simulator::StepReport report,
                           simulator::simulate(config.model, config.plan, config.cluster, sim));
  if (!o.trace.empty()) {
    LLMPLAN_RETURN_IF_ERROR(
        write_output_file(o.trace, simulator::chrome_trace_json(report), "--trace"));
    config.notes.push_back("Chrome trace of this iteration written to " + o.trace);
  }
  LLMPLAN_ASSIGN_OR_RETURN(const std::string out, simulate_output(o, config, report));
  return write_stdout(out);
}

}  // namespace

void add_simulate_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate one training iteration: time, breakdown, memory, MFU");
  cmd->add_option("--config", o->config,
                  "JSON with model, plan, cluster objects ({\"preset\": NAME} plus overrides)");
  cmd->add_option("--vtrain-config", o->vtrain_config, "A vTrain config file (its JSON format)");
  cmd->add_flag("--vtrain-ignore-num-gpus", o->vtrain_ignore_num_gpus,
                "With --vtrain-config: use t*d*p when num_gpus disagrees (vTrain's case-study "
                "files all say 3360) instead of rejecting the file");
  add_model_flags(cmd, &o->model);
  add_reliability_flags(cmd, &o->reliability, "Failures");
  add_plan_flags(cmd, &o->plan);
  cmd->add_option("--gpu", o->where.gpu, "GPU preset");
  cmd->add_option("--cluster", o->where.cluster, "Cluster preset (default dgx-a100-80gb)");
  cmd->add_option("--gpus-per-node", o->where.gpus_per_node, "GPUs per node")
      ->check(int_in(1, simulator::Cluster::kMaxGpusPerNode));
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md"}));
  cmd->add_option("--trace", o->trace, "Write a Chrome-trace JSON of the iteration to FILE");
  cmd->add_flag("--task-level", o->task_level,
                "Simulate every kernel as its own task (slower; same result)");
  add_cost_model_flags(cmd, &o->cost);
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_simulate(*o, global); }; });
}

}  // namespace llmplan::planner
