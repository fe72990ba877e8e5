// `llmplan fit` and `llmplan optimal`: the scaling-law commands.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "planner/cli/command.h"
#include "planner/cli/progress.h"
#include "planner/cli/sim_inputs.h"
#include "reports/scaling_report.h"
#include "scaling/fit.h"
#include "scaling/loss_csv.h"
#include "scaling/optimal.h"
#include "scaling/results_json.h"
#include "simulator/plan.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

struct FitArgs {
  std::string file;
  std::string law = "chinchilla-form";
  std::string format = "text";
  std::string out_dir;
  std::string out_flag = "--out";  // the spelling given: --out or --out-dir
  int bootstrap = 0;
  uint64_t seed = 1;
  double confidence = 0.95;
  bool use_excluded = false;
  bool progress = false;
  scaling::LossCsvOptions csv;
};

Status run_fit(const FitArgs& args) {
  scaling::LossCsvOptions csv = args.csv;
  csv.honour_excluded = args.use_excluded || !csv.excluded_column.empty();
  LLMPLAN_ASSIGN_OR_RETURN(scaling::LossData data, scaling::read_loss_csv(args.file, csv));
  if (static_cast<double>(args.bootstrap) * static_cast<double>(data.points.size()) >
      scaling::kMaxBootstrapPointFits) {
    return Status::invalid_argument(
        "--bootstrap: " + std::to_string(args.bootstrap) + " resamples of " +
        std::to_string(data.points.size()) + " rows would take too long (the bound is 1e7 "
        "resamples x rows); give at most " +
        std::to_string(static_cast<long>(scaling::kMaxBootstrapPointFits /
                                         static_cast<double>(data.points.size()))));
  }
  scaling::FitOptions options;
  options.bootstrap_samples = args.bootstrap;
  options.bootstrap_progress =
      counter(std::make_shared<Progress>("fit", "bootstrap resamples", args.progress));
  options.seed = args.seed;
  options.confidence_level = args.confidence;
  Result<scaling::ScalingFit> fitted = scaling::fit_loss_law(data.points, options);
  if (!fitted.ok()) return fitted.status().with_prefix(args.file);  // a fit outside the law's range
  scaling::ScalingFit fit = std::move(fitted).value();

  reports::FitReport report{fit, data.points, args.file, scaling::describe(data)};
  if (!args.out_dir.empty()) {
    const std::filesystem::path dir(args.out_dir);
    const std::string& flag = args.out_flag;
    LLMPLAN_ASSIGN_OR_RETURN(std::string svg, reports::fit_plot_svg(report));
    LLMPLAN_ASSIGN_OR_RETURN(std::string md, reports::fit_markdown(report, "fit.svg"));
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(dir.string(), flag, "fit"));
    LLMPLAN_RETURN_IF_ERROR(out.write("fit.svg", svg));
    LLMPLAN_RETURN_IF_ERROR(out.write("fit.md", md));
    LLMPLAN_RETURN_IF_ERROR(out.write("fit.json", scaling::fit_to_json(fit, report.data_description)));
    LLMPLAN_RETURN_IF_ERROR(out.commit());
  }
  if (args.format == "json") return write_stdout(scaling::fit_to_json(fit, report.data_description));
  if (args.format == "md") {
    LLMPLAN_ASSIGN_OR_RETURN(std::string md,
                             reports::fit_markdown(report, args.out_dir.empty() ? "" : "fit.svg"));
    return write_stdout(md);
  }
  return write_stdout(reports::fit_text(report));
}

struct OptimalArgs {
  double flops = 0;
  int gpus = 0;
  double days = 0;
  std::string gpu, cluster;
  double mfu = 1.0;
  double params = 0;
  double tokens = 0;
  double max_params = 0;
  double max_tokens = 0;
  std::string law = kDefaultLaw;
  std::string rule;         // --rule; empty: the planner's (chinchilla-20)
  std::string tokens_rule;  // --tokens-rule, the planner's spelling
  std::string format = "text";
};

// The allocation rule from --rule or --tokens-rule (the planner's flag:
// chinchilla = 20 tokens per parameter, law = the law's optimum); neither:
// the planner's default, chinchilla-20.
Result<scaling::AllocationRule> optimal_rule(const OptimalArgs& args) {
  if (!args.rule.empty()) return scaling::parse_allocation_rule(args.rule);
  if (args.tokens_rule == "law") return scaling::AllocationRule::kLaw;
  return scaling::AllocationRule::kTokensPerParam20;
}

Status run_optimal(const OptimalArgs& args, const GlobalOptions& global) {
  const bool gpu_budget = args.gpus > 0 || args.days > 0;
  const int budgets = (args.flops > 0) + gpu_budget + (args.params > 0) + (args.tokens > 0);
  if (budgets != 1) {
    return Status::invalid_argument(
        "give exactly one of --flops C, --gpus G --days D, --params N, --tokens D");
  }
  if (!gpu_budget && (!args.gpu.empty() || !args.cluster.empty())) {
    return Status::invalid_argument("--gpu/--cluster apply to a GPU budget (--gpus G --days D)");
  }
  if ((args.max_params > 0 || args.max_tokens > 0) && (args.params > 0 || args.tokens > 0)) {
    return Status::invalid_argument("--max-params/--max-tokens apply to a compute budget only");
  }
  LLMPLAN_ASSIGN_OR_RETURN(const scaling::AllocationRule rule, optimal_rule(args));
  LLMPLAN_ASSIGN_OR_RETURN(const presets::Catalog catalog, load_catalog(global));
  LLMPLAN_ASSIGN_OR_RETURN(scaling::LossLaw law, load_law(catalog, args.law));

  reports::OptimalReport report;
  report.law = law;
  report.limits = {args.max_params, args.max_tokens};
  report.assumptions.push_back(
      "law " + law.name + (args.law == kDefaultLaw ? " (the default, as the planner's)" : "") +
      " from " + (std::filesystem::is_regular_file(args.law) ? args.law : "the presets"));
  report.assumptions.push_back(
      rule == scaling::AllocationRule::kLaw
          ? std::string("tokens rule: law (the law's compute-optimal split; the planner's "
                        "--tokens-rule law)")
          : std::string("tokens rule: chinchilla-20 (D = 20 N, the planner's default; --rule law "
                        "for the law's optimum)"));
  if (args.params > 0) {
    report.query = reports::OptimalQuery::kParams;
    LLMPLAN_ASSIGN_OR_RETURN(report.allocation,
                             scaling::optimal_for_params(law, args.params, rule));
  } else if (args.tokens > 0) {
    report.query = reports::OptimalQuery::kTokens;
    LLMPLAN_ASSIGN_OR_RETURN(report.allocation,
                             scaling::optimal_for_tokens(law, args.tokens, rule));
  } else {
    double flops = args.flops;
    if (gpu_budget) {
      if (args.gpus <= 0 || args.days <= 0) {
        return Status::invalid_argument("a GPU budget needs --gpus G (> 0) and --days D (> 0)");
      }
      LLMPLAN_ASSIGN_OR_RETURN(
          const simulator::Cluster cluster,
          resolve_cluster(catalog, args.cluster, args.gpu, 0, kDefaultCluster));
      scaling::GpuBudget budget{cluster.gpu.name, static_cast<double>(args.gpus), args.days,
                                cluster.gpu.peak_bf16_flops, args.mfu};
      LLMPLAN_ASSIGN_OR_RETURN(flops, scaling::budget_flops(budget));
      report.budget = budget;
      report.cluster = cluster.name;
      report.assumptions.push_back(
          "cluster " + cluster.name +
          (args.cluster.empty() && args.gpu.empty() ? " (the planner's default; --cluster or --gpu "
                                                      "picks another)"
                                                    : "") +
          ", GPU " + cluster.gpu.name + " at its dense bf16 peak");
      report.assumptions.push_back(
          args.mfu == 1.0 ? std::string("MFU 1 (the naive budget: every GPU at peak all the "
                                        "time; the planner simulates the real MFU)")
                          : fmt::format("MFU {:g} (--mfu)", args.mfu));
    }
    LLMPLAN_ASSIGN_OR_RETURN(report.allocation,
                             scaling::optimal_for_compute(law, flops, rule, report.limits));
  }
  if (args.format == "json") {
    // allocation_to_json's document, with the cluster and the assumptions.
    LLMPLAN_ASSIGN_OR_RETURN(
        boost::json::value doc,
        json::parse(scaling::allocation_to_json(report.allocation, law,
                                                report.budget ? &*report.budget : nullptr),
                    "optimal"));
    boost::json::object& o = doc.as_object();
    if (report.budget) o["budget"].as_object()["cluster"] = report.cluster;
    o["assumptions"] = boost::json::value_from(report.assumptions);
    return write_stdout(json::pretty(doc));
  }
  return write_stdout(reports::optimal_text(report));
}

}  // namespace

void add_fit_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  (void)global;  // fitting needs no presets
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "Fit L(N, D) = E + A/N^alpha + B/D^beta to your runs (CSV of parameters, tokens or FLOPs, "
      "and loss) with a Huber loss on log loss, from a grid of 4,500 starts");
  cmd->add_option("file", args->file, "CSV file with a header row")->required();
  cmd->add_option("--law", args->law, "Law form to fit (only chinchilla-form)")
      ->check(CLI::IsMember({"chinchilla-form"}));
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md"}));
  CLI::Option* out = cmd->add_option(
      "--out", args->out_dir,
      "Also write fit.md, fit.svg and fit.json to DIR (fit.json is a law file for --law)");
  cmd->add_option_function<std::string>(
         "--out-dir",
         [args](const std::string& dir) {
           args->out_dir = dir;
           args->out_flag = "--out-dir";
         },
         "The same as --out")
      ->excludes(out);
  cmd->add_option("--bootstrap", args->bootstrap,
                  "Bootstrap resamples for confidence intervals (0: none; 100-1000 typical)")
      ->check(int_in(0, scaling::kMaxBootstrapSamples));
  cmd->add_flag("--progress", args->progress,
                "Bootstrap progress on stderr also when it is not a terminal (a log, a pipe)");
  cmd->add_option("--seed", args->seed,
                  "Seed of the bootstrap resampling (results are "
                  "deterministic for a given seed)");
  cmd->add_option("--confidence", args->confidence, "Confidence level of the intervals")
      ->check(finite_in(0.5, 0.999));
  cmd->add_option("--params-column", args->csv.params_column, "Column of parameter counts N");
  cmd->add_option("--tokens-column", args->csv.tokens_column, "Column of training tokens D");
  cmd->add_option("--flops-column", args->csv.flops_column,
                  "Column of training FLOPs C (then D = C/(6N))");
  cmd->add_option("--loss-column", args->csv.loss_column, "Column of final losses");
  cmd->add_flag("--use-excluded", args->use_excluded,
                "Leave out rows marked true in an excluded column (e.g. excluded_by_epoch)");
  cmd->add_option("--excluded-column", args->csv.excluded_column,
                  "Name of that column (implies --use-excluded)");
  cmd->add_option("--drop-highest-loss", args->csv.drop_highest_loss,
                  "Leave out the K highest-loss rows (Besiroglu et al. 2024 dropped 5)")
      ->check(int_in(0, std::numeric_limits<int>::max()));
  cmd->callback([args, action] { *action = [args] { return run_fit(*args); }; });
}

void add_optimal_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto args = std::make_shared<OptimalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimal",
      "Compute-optimal model size N and tokens D for a compute budget (or the budget at which a "
      "given N or D is optimal), with the predicted loss");
  cmd->add_option("--flops", args->flops, "Compute budget in FLOPs (C = 6ND)")
      ->check(finite_positive());
  cmd->add_option("--gpus", args->gpus, "GPU budget: number of GPUs")
      ->check(int_in(1, simulator::Plan::kMaxGpus));
  cmd->add_option("--days", args->days, "GPU budget: days")->check(finite_positive());
  cmd->add_option("--gpu", args->gpu,
                  "GPU budget: GPU preset (its dense bf16 peak is used; default: the "
                  "cluster's)");
  cmd->add_option("--cluster", args->cluster,
                  "GPU budget: cluster preset (default dgx-a100-80gb, as the planner)");
  cmd->add_option("--mfu", args->mfu,
                  "GPU budget: fraction of peak achieved (default 1: the naive budget)")
      ->check(finite_in(0.001, 1.0));
  cmd->add_option("--params", args->params,
                  "Instead of a budget: the model size N; prints the compute at which N is "
                  "optimal")
      ->check(finite_positive());
  cmd->add_option("--tokens", args->tokens,
                  "Instead of a budget: the token count D; prints the compute at which D is "
                  "optimal")
      ->check(finite_positive());
  cmd->add_option("--max-params", args->max_params, "Cap on N (e.g. the largest model that fits)")
      ->check(finite_positive());
  cmd->add_option("--max-tokens", args->max_tokens, "Cap on D (e.g. the data available)")
      ->check(finite_positive());
  cmd->add_option("--law", args->law,
                  "Law preset (chinchilla, the default; epoch) or a JSON file: a law, or the "
                  "fit.json of 'llmplan fit'");
  CLI::Option* rule =
      cmd->add_option("--rule", args->rule,
                      "Allocation rule (default chinchilla-20: D = 20 N, as the planner)")
          ->check(CLI::IsMember({"law", "chinchilla-20"}));
  cmd->add_option("--tokens-rule", args->tokens_rule,
                  "The planner's spelling: chinchilla (= --rule chinchilla-20) or law")
      ->check(CLI::IsMember({"chinchilla", "law"}))
      ->excludes(rule);
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([args, action, &global] {
    *action = [args, &global] { return run_optimal(*args, global); };
  });
}

}  // namespace llmplan::planner
