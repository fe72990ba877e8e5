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

#include "planner/command.h"
#include "simulator/caveats.h"
#include "simulator/error_band.h"
#include "planner/plan_report.h"
#include "planner/plan_report_json.h"
#include "planner/progress.h"
#include "planner/plan_space_flags.h"
#include "planner/search.h"
#include "planner/shapes_json.h"
#include "planner/sim_inputs.h"
#include "simulator/strict_json.h"

namespace llmplan::planner {
namespace {

struct PlanOptions {
  int gpus = 0;
  double days = 0;
  std::string gpu, cluster;
  double budget_usd = 0;
  std::string objective = "largest";
  std::string law = kDefaultLaw;
  bool law_given = false;  // --law on the command line (else MoE models get kDefaultMoeLaw)
  double tokens_per_param = 20.0;
  std::string tokens_rule;
  std::string shapes;
  std::string family = "gpt";
  int seq = 0, vocab = 0;
  std::string model;
  double confidence = 0;
  PlanSpaceFlags space;
  bool max_gpus_used = false;
  int threads = 0;
  std::string out_dir;
  std::string format = "md";
  CostModelOptions cost;
  bool progress = false;
};

// The band of the GPU's held-out validation errors (simulator/error_band.h)
// at P10/P90 and at the requested confidence.
TimeBand time_band(const simulator::GpuSpec& gpu, double confidence) {
  const simulator::ErrorBand eb = simulator::error_band(gpu);
  TimeBand b;
  b.known = eb.known;
  b.confidence = confidence;
  if (eb.known) {
    b.low_ratio = eb.ratio_at(b.p_low);
    b.high_ratio = eb.ratio_at(b.p_high);
    b.confidence_ratio = confidence > 0 ? eb.ratio_at(confidence) : 1.0;
    b.samples = eb.samples;
    b.source = eb.source;
  }
  return b;
}

Status run_plan(const PlanOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  LLMPLAN_ASSIGN_OR_RETURN(simulator::Cluster cluster,
                           resolve_cluster(catalog, o.cluster, o.gpu, 0, kDefaultCluster));
  SearchOptions s;
  s.gpus = o.gpus;
  s.days = o.days;
  s.budget_usd = o.budget_usd;
  s.objective = o.objective == "loss" ? Objective::kLoss : Objective::kLargest;
  s.tokens.tokens_per_param = o.tokens_per_param;
  if (o.tokens_rule == "law") s.tokens.use_law = true;
  if (o.tokens_rule == "chinchilla") s.tokens.tokens_per_param = 20.0;
  {
    auto space = to_plan_space(o.space);
    if (!space.ok()) return space.status().as_usage();
    s.space = space.value();
  }
  s.space.all_gpus_only = o.max_gpus_used;
  if (o.threads < 0) return Status::invalid_argument("--threads must be >= 0");
  s.threads = o.threads;
  {
    auto family = parse_family(o.family);
    if (!family.ok()) return family.status().as_usage();
    s.family = family.value();
  }
  s.shape_template = family_template(s.family, o.seq, o.vocab);
  LLMPLAN_RETURN_IF_ERROR(simulator::validate([&] {
    simulator::Model probe = s.shape_template;  // seq and vocab within the simulator's bounds
    probe.num_layers = 1;
    probe.hidden_size = 1024;
    probe.num_heads = 8;
    probe.num_kv_heads = 0;
    probe.ffn_hidden_size = 0;
    return probe;
  }()).with_prefix("--seq/--vocab"));
  if (!o.shapes.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(s.shapes, read_shapes_file(o.shapes, s.shape_template, &catalog));
  }
  if (!o.model.empty()) {
    auto pinned = resolve_pinned_model(o.model, s.shape_template, catalog);
    if (!pinned.ok()) {
      const bool usage = pinned.status().message().rfind("--model: '", 0) == 0;  // neither preset nor file
      return usage ? pinned.status().as_usage() : pinned.status();
    }
    simulator::Model m = pinned.value();
    if (o.seq > 0) m.seq_length = o.seq;
    if (o.vocab > 0) m.vocab_size = o.vocab;
    LLMPLAN_RETURN_IF_ERROR(simulator::validate(m).with_prefix("--model " + o.model).as_usage());
    LLMPLAN_RETURN_IF_ERROR(check_against_model(s.space, m).as_usage());
    s.shapes = {m};
    s.pinned = true;
  }
  // The law: --law, else the default; MoE models (the moe family, an MoE
  // --model or --shapes entry) default to the MoE law.
  const bool any_moe = s.family == Family::kMoe ||
                       std::any_of(s.shapes.begin(), s.shapes.end(),
                                   [](const simulator::Model& m) { return m.is_moe(); });
  LLMPLAN_ASSIGN_OR_RETURN(
      s.law, load_law(catalog, !o.law_given && any_moe ? std::string(kDefaultMoeLaw) : o.law));
  s.band = time_band(cluster.gpu, o.confidence);
  std::vector<std::string> notes;
  LLMPLAN_ASSIGN_OR_RETURN(s.cost_model, make_cost_model(cluster, o.cost, &notes));
  s.progress = counter(std::make_shared<Progress>("llmplan", "plans", o.progress));
  LLMPLAN_ASSIGN_OR_RETURN(SearchResult result, search(cluster, s));
  // --family moe: the dense answer for the same budget (the llama family,
  // the same law, whose dense part is what it predicts for dense models).
  std::optional<SearchOptions> dense_options;
  std::optional<SearchResult> dense_result;
  if (s.family == Family::kMoe && s.shapes.empty()) {
    dense_options = s;
    dense_options->family = Family::kLlama;
    dense_options->shape_template = family_template(Family::kLlama, o.seq, o.vocab);
    dense_options->space.expert_parallel.clear();
    dense_options->space.moe_a2a_overlap = Choice::kAuto;
    dense_options->progress =
        counter(std::make_shared<Progress>("llmplan (dense comparison)", "plans", o.progress));
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
    view.caveats = simulator::caveat_list(p.caveats, cluster.gpu, p.mfu);
    const std::string moe = moe_law_caveat(s.law, result.candidates[result.best].model);
    if (!moe.empty()) view.caveats.push_back({"moe-law-extrapolated", moe});
  }
  const std::string md = plan_report_markdown(view);
  LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text,
                           json::pretty_finite(plan_report_to_json(view)));
  if (!o.out_dir.empty()) {
    LLMPLAN_RETURN_IF_ERROR(make_output_dir(o.out_dir, "--out"));
    const std::string d = o.out_dir + "/";
    LLMPLAN_RETURN_IF_ERROR(write_output_file(d + "report.md", md, "--out"));
    LLMPLAN_RETURN_IF_ERROR(write_output_file(d + "candidates.csv", candidates_csv(view), "--out"));
    LLMPLAN_RETURN_IF_ERROR(write_output_file(d + "plans.csv", plans_csv(view), "--out"));
    LLMPLAN_RETURN_IF_ERROR(write_output_file(d + "result.json", json_text, "--out"));
    const std::string days_svg = days_vs_params_svg(view);
    if (!days_svg.empty()) {
      LLMPLAN_RETURN_IF_ERROR(write_output_file(d + "days_vs_params.svg", days_svg, "--out"));
    }
    const std::string pareto = pareto_svg(view);
    if (!pareto.empty()) LLMPLAN_RETURN_IF_ERROR(write_output_file(d + "pareto.svg", pareto, "--out"));
  }
  const std::string out = o.format == "json" ? json_text : o.format == "csv" ? candidates_csv(view) : md;
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
                 "Planner: dollar budget (cluster's usd_per_gpu_hour)")
      ->check(finite_in(0, std::numeric_limits<double>::max()));
  app.add_option("--objective", o->objective, "Planner: largest model or lowest predicted loss")
      ->check(CLI::IsMember({"largest", "loss"}));
  CLI::Option* law = app.add_option(
      "--law", o->law,
      "Planner: loss law preset (chinchilla, epoch, clark-moe) or JSON file (default: chinchilla; "
      "clark-moe for MoE models)");
  CLI::Option* r = app.add_option("--tokens-per-param", o->tokens_per_param,
                                  "Planner: training tokens per parameter (default 20)")
                       ->check(finite_in(0, kMaxTokensPerParam, true));
  app.add_option("--tokens-rule", o->tokens_rule, "Planner: chinchilla (20 tokens/param) or law")
      ->check(CLI::IsMember({"chinchilla", "law"}))
      ->excludes(r);
  CLI::Option* shapes = app.add_option("--shapes", o->shapes,
                 "Planner: JSON array of model shapes to consider (entries may name a \"preset\")")
      ->check(CLI::ExistingFile);
  app.add_option("--family", o->family,
                 "Planner: model family of the automatic grid: gpt, llama or moe (MoE shapes, "
                 "compared with the dense llama answer)");
  app.add_option("--seq", o->seq, "Planner: sequence length (default: the family's, 2048 / 8192)")
      ->check(int_in(1, simulator::Model::kMaxSeqLength));
  app.add_option("--vocab", o->vocab, "Planner: vocabulary size (default: the family's, 51200 / 128256)")
      ->check(int_in(1, simulator::Model::kMaxVocab));
  app.add_option("--model", o->model,
                 "Planner: pin the model (a model preset or a JSON file of model fields); search plans only")
      ->excludes(shapes);
  app.add_option("--confidence", o->confidence,
                 "Planner: the largest model whose P-quantile training time (from the GPU's held-out "
                 "validation errors) meets the deadline, e.g. 0.9")
      ->check(finite_in(0, 1, true));
  add_plan_space_flags(&app, &o->space, "Planner");
  app.add_flag("--max-gpus-used", o->max_gpus_used,
               "Planner: only plans that use as many of the GPUs as the layout allows");
  app.add_option("--threads", o->threads, "Planner: OpenMP threads (default: all cores)")
      ->check(int_in(0, kMaxThreads));
  app.add_flag("--progress", o->progress,
               "Progress lines on stderr also when it is not a terminal (a log, a pipe)");
  app.add_option("--out", o->out_dir,
                 "Planner: write report.md, candidates.csv, plans.csv, result.json, SVGs to DIR");
  app.add_option("--format", o->format, "Planner: stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  add_cost_model_flags(&app, &o->cost);
  // The planner's own options: every option added above.
  std::vector<const CLI::Option*> planner_options;
  const std::vector<const CLI::Option*> all = std::as_const(app).get_options();
  planner_options.assign(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
  app.final_callback([&app, o, &global, action, gpus, law, planner_options] {
    o->law_given = law->count() > 0;
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
