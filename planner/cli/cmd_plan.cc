// The root command: `llmplan --gpus G --days D [...]`, the planner.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "planner/cli/command.h"
#include "planner/cli/objective_flags.h"
#include "planner/cli/plan_space_flags.h"
#include "planner/cli/planner_flags.h"
#include "planner/cli/progress.h"
#include "planner/cli/run_flags.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/loss_verdict.h"
#include "planner/search/report_tables.h"
#include "planner/search/search.h"
#include "planner/search/shapes_json.h"
#include "reports/plan_report.h"
#include "reports/plan_report_json.h"
#include "simulator/caveats.h"
#include "simulator/error_band.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

struct PlanOptions {
  int gpus = 0;
  double days = 0;
  std::string gpu, cluster;
  double budget_usd = 0;
  PlannerFlags flags;
  ObjectiveFlags training;  // --tokens, --unique-tokens, --inference-tokens
  std::string out_dir;
  std::string format = "md";
};

// Every shape searched without a single layout (before memory) is the fixed
// axes' doing, never memory: the automatic space always has t1 p1 d1 b1.
// A usage error naming them, not a "No feasible model ... fits in memory"
// report with exit 0.
Status check_some_layout(const SearchResult& result, const SearchOptions& s) {
  if (result.best >= 0 || result.candidates.empty()) return Status();
  for (const Candidate& c : result.candidates) {
    if (c.why != "no-layout") return Status();
  }
  const std::string fixed = fixed_axes(s.space);
  const Candidate& c = result.candidates.front();
  return Status::usage(fmt::format(
      "{}: no valid layout of any of the {} shapes searched on up to {} GPUs (e.g. {}: {} "
      "layers, {} heads, {} KV heads, FFN {}, seq {}); relax {}",
      fixed.empty() ? std::string("the plan space") : fixed, result.candidates.size(), s.gpus,
      c.model.name, c.model.num_layers, c.model.num_heads, c.model.kv_heads(),
      c.model.ffn_hidden(), c.model.seq_length, fixed.empty() ? "the model" : "these flags"));
}

Status run_plan(const PlanOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  simulator::Cluster cluster;
  LLMPLAN_RETURN_IF_ERROR(apply_cluster_flags({o.gpu, o.cluster, 0}, catalog, false, &cluster));
  LLMPLAN_ASSIGN_OR_RETURN(SearchOptions s, planner_search_options(o.flags, catalog));
  s.gpus = o.gpus;
  s.days = o.days;
  s.budget_usd = o.budget_usd;
  LLMPLAN_ASSIGN_OR_RETURN(s.training, training_objective(o.training));
  std::vector<std::string> notes;
  LLMPLAN_RETURN_IF_ERROR(set_cluster_options(o.flags, cluster, &s, &notes));
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> models, cost_models(o.flags.pricing));
  LLMPLAN_ASSIGN_OR_RETURN(const OwnershipFile ownership, builtin_ownership());
  LLMPLAN_ASSIGN_OR_RETURN(s.pricing, price_cluster(o.flags.pricing, ownership, models.front(), &cluster));
  s.progress = counter(std::make_shared<Progress>("llmplan", "plans", o.flags.progress));
  LLMPLAN_ASSIGN_OR_RETURN(SearchResult result, search(cluster, s));
  LLMPLAN_RETURN_IF_ERROR(check_some_layout(result, s));
  // --family moe: the dense answer for the same budget (the llama family,
  // the same law, whose dense part is what it predicts for dense models).
  std::optional<SearchOptions> dense_options;
  std::optional<SearchResult> dense_result;
  if (s.family == Family::kMoe && s.shapes.empty()) {
    dense_options = s;
    dense_options->family = Family::kLlama;
    dense_options->shape_template = family_template(Family::kLlama, o.flags.seq, o.flags.vocab);
    dense_options->space.expert_parallel.clear();
    dense_options->space.moe_a2a_overlap = Choice::kAuto;
    dense_options->progress =
        counter(std::make_shared<Progress>("llmplan (dense comparison)", "plans", o.flags.progress));
    LLMPLAN_ASSIGN_OR_RETURN(dense_result, search(cluster, *dense_options));
  }
  PlanReportView view{cluster, s, result, s.law.name, notes, nullptr, {}, {}, false};
  if (dense_result) {
    view.dense_options = &*dense_options;
    view.dense_result = &*dense_result;
  }
  view.command_line = global.command_line;
  view.plots_written = !o.out_dir.empty();
  // The answer's plan again, in full, for its time and memory breakdown.
  std::optional<simulator::StepReport> best_report;
  if (result.best >= 0) {
    const Candidate& c = result.candidates[result.best];
    simulator::SimOptions sim;
    sim.cost_model = s.cost_model;
    auto rep = simulator::simulate(c.model, result.plans[c.best_plan].plan, cluster, sim);
    if (rep.ok()) best_report = std::move(rep.value());
  }
  if (best_report) view.best_report = &*best_report;
  if (result.best >= 0) {
    const PlanResult& p = result.plans[result.candidates[result.best].best_plan];
    view.caveats = simulator::caveat_list(p.caveats, cluster.gpu, p.mfu, p.plan.precision);
    const std::string moe =
        s.law.joint.present ? law_extrapolation_caveat(s.law, result.candidates[result.best])
                            : moe_law_caveat(s.law, result.candidates[result.best].model);
    if (!moe.empty()) view.caveats.push_back({"moe-law-extrapolated", moe});
    if (s.law.moe.present && !s.law.moe.verified) {
      view.caveats.push_back({"moe-law-unverified",
                              "Law " + s.law.name + "'s MoE constants were not verified against "
                              "their paper (presets/laws.json says so); prefer --law joint-moe"});
    }
  }
  const reports::PlanReport tables = plan_report_tables(view);
  const std::string md = reports::plan_report_markdown(tables);
  LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text,
                           json::pretty_finite(reports::plan_report_to_json(tables)));
  if (!o.out_dir.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(o.out_dir, "--out", "plan"));
    LLMPLAN_RETURN_IF_ERROR(out.write("report.md", md));
    LLMPLAN_RETURN_IF_ERROR(out.write("candidates.csv", reports::candidates_csv(tables)));
    LLMPLAN_RETURN_IF_ERROR(out.write("plans.csv", reports::plans_csv(tables)));
    LLMPLAN_RETURN_IF_ERROR(out.write("result.json", json_text));
    const std::string days_svg = reports::days_vs_params_svg(tables);
    if (!days_svg.empty()) LLMPLAN_RETURN_IF_ERROR(out.write("days_vs_params.svg", days_svg));
    const std::string pareto = reports::pareto_svg(tables);
    if (!pareto.empty()) LLMPLAN_RETURN_IF_ERROR(out.write("pareto.svg", pareto));
    LLMPLAN_RETURN_IF_ERROR(out.commit());
  }
  const std::string out = o.format == "json" ? json_text : o.format == "csv" ? reports::candidates_csv(tables) : md;
  return write_stdout(out);
}

}  // namespace

void add_plan_options(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<PlanOptions>();
  const size_t before = app.get_options().size();
  CLI::Option* gpus = app.add_option("--gpus", o->gpus, "Planner: GPUs available")
                          ->check(int_in(1, simulator::Plan::kMaxGpus));
  app.add_option("--days", o->days, "Planner: deadline in days")->check(finite_positive());
  app.add_option("--gpu", o->gpu, "Planner: GPU preset (a cluster built from it)");
  app.add_option("--cluster", o->cluster, "Planner: cluster preset (default dgx-a100-80gb)");
  app.add_option("--budget-usd", o->budget_usd,
                 "Planner: dollar budget (priced by --cost-model: cloud, the cluster's usd_per_gpu_hour, by default)")
      ->check(finite_in(0, std::numeric_limits<double>::max()));
  add_planner_flags(&app, &o->flags, "Planner");
  add_objective_flags(&app, &o->training);
  app.add_option("--out", o->out_dir,
                 "Planner: write report.md, candidates.csv, plans.csv, result.json, SVGs to DIR");
  app.add_option("--format", o->format, "Planner: stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  add_cost_model_flags(&app, &o->flags.cost);
  add_pricing_flags(&app, &o->flags.pricing, /*list=*/false);
  // The planner's own options: every option added above.
  std::vector<const CLI::Option*> planner_options;
  const std::vector<const CLI::Option*> all = std::as_const(app).get_options();
  planner_options.assign(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
  app.final_callback([&app, o, &global, action, gpus, planner_options] {
    const CLI::Option* first_given = nullptr;
    for (const CLI::Option* opt : planner_options) {
      if (opt->count() > 0) {
        first_given = opt;
        break;
      }
    }
    const std::vector<CLI::App*> subcommands = app.get_subcommands();
    if (!subcommands.empty()) {
      if (first_given != nullptr) {  // e.g. `llmplan --gpus 8 fit runs.csv`
        throw CLI::ValidationError(first_given->get_name() +
                                   " is an option of the planner (llmplan --gpus G --days D), "
                                   "not of '" +
                                   subcommands.front()->get_name() + "'");
      }
      return;
    }
    if (gpus->count() == 0) {
      if (first_given != nullptr) {  // e.g. `llmplan --days 20`
        throw CLI::ValidationError("--gpus is required to plan (" + first_given->get_name() +
                                   " was given without it)");
      }
      return;  // bare `llmplan`: main prints the help
    }
    *action = [o, &global] { return run_plan(*o, global); };
  });
}

}  // namespace llmplan::planner
