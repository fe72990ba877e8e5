// `llmplan frontier --gpus LIST --days LIST [--gpu LIST | --cluster LIST]
// [--budget-usd LIST] [planner flags] [--cost-model cloud,owned ...]
// [--out DIR | --format md|csv|json]`: the planner's answer for every cell of
// the grid (planner/study/frontier.h). --cost-model lists the cost models to
// compare; the first prices the cells' cost_usd and the budgets (two models
// with --budget-usd are refused: a budget picks different answers under
// each), and the report then compares the hardware side by side.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "planner/cli/command.h"
#include "planner/cli/planner_flags.h"
#include "planner/cli/progress.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/gpu_count.h"
#include "planner/study/distributed.h"
#include "planner/study/frontier.h"
#include "reports/frontier_report.h"

namespace llmplan::planner {
namespace {

struct FrontierOptions {
  std::string gpus, days, gpu, cluster, budget_usd;
  PlannerFlags flags;
  std::string out_dir;
  std::string format = "md";
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The items of a comma-separated list: "<flag>: empty list" for "", "<flag>:
// empty entry in '1,,2'" for an empty item, "<flag>: X is listed twice".
Result<std::vector<std::string>> parse_list(const std::string& text, const std::string& flag) {
  if (text.empty()) return Status::usage(flag + ": empty list (give comma-separated values)");
  std::vector<std::string> out;
  for (const std::string& item : split_list(text)) {
    if (item.empty()) return Status::usage(flag + ": empty entry in '" + text + "'");
    for (const std::string& seen : out) {
      if (seen == item) return Status::usage(flag + ": " + item + " is listed twice");
    }
    out.push_back(item);
  }
  return out;
}

// Positive finite decimal numbers ("14,30,60"), listed once each; with
// `zero_allowed`, 0 too (--budget-usd 0: no budget, as on the planner).
Result<std::vector<double>> parse_positive_list(const std::string& text, const std::string& flag,
                                                bool zero_allowed = false) {
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<std::string> items, parse_list(text, flag));
  std::vector<double> out;
  for (const std::string& item : items) {
    const double x = is_decimal_number(item) ? std::strtod(item.c_str(), nullptr) : NAN;
    if (!std::isfinite(x) || !(x > 0 || (zero_allowed && x == 0))) {
      return Status::usage(flag + ": must be a finite number " + (zero_allowed ? ">= 0" : "> 0") +
                           ", got " + item);
    }
    for (double seen : out) {
      if (seen == x) return Status::usage(flag + ": " + item + " is listed twice");
    }
    out.push_back(x);
  }
  return out;
}

// The clusters of --cluster LIST or --gpu LIST (the planner's default
// cluster when neither is given), with a did-you-mean for unknown names.
Result<std::vector<simulator::Cluster>> resolve_hardware(const presets::Catalog& catalog,
                                                         const FrontierOptions& o) {
  const bool by_gpu = !o.gpu.empty();
  const std::string flag = by_gpu ? "--gpu" : "--cluster";
  std::vector<std::string> names = {kDefaultCluster};
  if (!o.gpu.empty() || !o.cluster.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(names, parse_list(by_gpu ? o.gpu : o.cluster, flag));
  }
  const presets::PresetKind kind =
      by_gpu ? presets::PresetKind::kGpu : presets::PresetKind::kCluster;
  std::vector<std::string> known;
  for (const presets::PresetInfo& info : catalog.list()) {
    if (info.kind == kind) known.push_back(info.name);
  }
  std::vector<simulator::Cluster> out;
  for (const std::string& name : names) {
    const bool exists = std::find(known.begin(), known.end(), name) != known.end();
    if (!exists) {
      const std::string guess = closest_name(name, known);
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::usage(flag + ": unknown " + (by_gpu ? "GPU" : "cluster") + " '" + name + "'" +
                           (guess.empty() ? "" : "; did you mean '" + guess + "'?") + " (" +
                           (by_gpu ? "gpu" : "cluster") + " presets: " + list + ")");
    }
    LLMPLAN_ASSIGN_OR_RETURN(
        simulator::Cluster c,
        resolve_cluster(catalog, by_gpu ? "" : name, by_gpu ? name : "", 0, kDefaultCluster));
    for (const simulator::Cluster& seen : out) {
      if (seen.name == c.name) {
        return Status::usage(flag + ": " + name + " is the same hardware as an earlier entry (" +
                             c.name + ")");
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

Status write_table(const reports::FrontierTable& table, const FrontierOptions& o) {
  if (!o.out_dir.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(o.out_dir, "--out", "frontier"));
    LLMPLAN_RETURN_IF_ERROR(out.write("frontier.csv", reports::frontier_csv(table)));
    LLMPLAN_RETURN_IF_ERROR(out.write("frontier.json", reports::frontier_json(table)));
    LLMPLAN_RETURN_IF_ERROR(out.write("frontier.md", reports::frontier_markdown(table)));
    for (const reports::SvgFile& f : reports::frontier_svg_files(table)) {
      LLMPLAN_RETURN_IF_ERROR(out.write(f.name, f.svg));
    }
    LLMPLAN_RETURN_IF_ERROR(out.commit());
    return Status();
  }
  const std::string out = o.format == "json"  ? reports::frontier_json(table)
                          : o.format == "csv" ? reports::frontier_csv(table)
                                              : reports::frontier_markdown(table);
  return write_stdout(out);
}

// Everything up to the first collective: identical on every rank.
Result<FrontierStudy> make_study(const FrontierOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  FrontierStudy study;
  {
    auto gpus = parse_int_list(o.gpus, "--gpus", simulator::Plan::kMaxGpus);
    if (!gpus.ok()) return gpus.status().as_usage();
    study.gpus = gpus.value();
  }
  LLMPLAN_ASSIGN_OR_RETURN(study.days, parse_positive_list(o.days, "--days"));
  if (!o.budget_usd.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(study.budgets_usd, parse_positive_list(o.budget_usd, "--budget-usd", true));
  }
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<simulator::Cluster> clusters, resolve_hardware(catalog, o));
  for (const simulator::Cluster& c : clusters) {
    for (int g : study.gpus) {
      if (check_gpu_count(g, {c.gpus_per_node, false, 0}) == GpuCountError::kBelowOneNode) {
        return Status::usage("--gpus: " + std::to_string(g) + " is below one node of " + c.name +
                             " (" + std::to_string(c.gpus_per_node) + " GPUs)");
      }
    }
  }
  LLMPLAN_ASSIGN_OR_RETURN(SearchOptions base, planner_search_options(o.flags, catalog));
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<std::string> models, cost_models(o.flags.pricing));
  if (models.size() > 1 && !o.budget_usd.empty()) {
    return Status::usage(
        "--cost-model: compare cost models without --budget-usd (a budget picks different "
        "answers under each), or run one study per cost model");
  }
  LLMPLAN_ASSIGN_OR_RETURN(OwnershipFile ownership, builtin_ownership());
  if (!o.flags.pricing.cost_model.empty()) study.cost_models = models;
  for (simulator::Cluster& c : clusters) {
    FrontierHardware h{std::move(c), base, {}};
    std::vector<std::string> notes;
    LLMPLAN_RETURN_IF_ERROR(set_cluster_options(o.flags, h.cluster, &h.options, &notes));
    const double cloud_price = h.cluster.usd_per_gpu_hour;
    for (size_t m = models.size(); m-- > 0;) {  // the first model last: it prices the cluster
      h.cluster.usd_per_gpu_hour = cloud_price;
      LLMPLAN_ASSIGN_OR_RETURN(h.options.pricing,
                               price_cluster(o.flags.pricing, ownership, models[m], &h.cluster));
      if (!study.cost_models.empty()) h.pricings.insert(h.pricings.begin(), h.options.pricing);
    }
    study.hardware.push_back(std::move(h));
  }
  study.family = !base.shapes.empty() ? "shapes" : to_string(base.family);
  study.command_line = global.command_line;
  // A grid beyond the bounds is a usage error (exit 2), as sweep's is.
  if (Status bounds = check_frontier_bounds(study); !bounds.ok()) return bounds.as_usage();
  LLMPLAN_RETURN_IF_ERROR(validate_study(study));
  return study;
}

Status run_frontier_command(const FrontierOptions& o, const GlobalOptions& global,
                            const ProcessGroup& group) {
  LLMPLAN_ASSIGN_OR_RETURN(FrontierStudy study, make_study(o, global));
  FrontierRunOptions run;
  run.threads = o.flags.threads;
  if (group.rank == 0) {
    auto progress = std::make_shared<Progress>("llmplan frontier", "simulations", o.flags.progress);
    if (progress->enabled()) {
      const int ranks = group.size;
      run.progress = [progress, ranks](const FrontierProgress& p) {
        progress->update(p.round_done, p.round_total);
        if (p.round_done == p.round_total) {
          progress->message(
              "round " + std::to_string(p.round) + ": " + std::to_string(p.cells_done) + "/" +
                  std::to_string(p.cells) + " cells answered, " + std::to_string(p.simulations) +
                  " simulations for " + std::to_string(p.plan_lookups) + " plan evaluations" +
                  (ranks > 1 ? " (" + std::to_string(ranks) + " processes)" : ""),
              true);
        }
      };
    }
  }
  LLMPLAN_ASSIGN_OR_RETURN(reports::FrontierTable table, run_frontier(study, group, run));
  if (group.rank != 0) return Status();
  return write_table(table, o);
}

}  // namespace

void add_frontier_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<FrontierOptions>();
  CLI::App* cmd = app.add_subcommand(
      "frontier",
      "The planner's answer for every cell of a grid of hardware x GPU counts x deadlines "
      "(x budgets), sharing simulations between cells; splits the work over MPI ranks under "
      "mpirun/srun");
  cmd->add_option("--gpus", o->gpus, "GPU counts, comma-separated (1024,2048,4096)")
      ->required()
      ->check(non_empty_list());
  cmd->add_option("--days", o->days, "Deadlines in days, comma-separated (14,30,60)")
      ->required()
      ->check(non_empty_list());
  CLI::Option* gpu =
      cmd->add_option("--gpu", o->gpu, "GPU presets, comma-separated (a cluster built from each)")
          ->check(non_empty_list());
  cmd->add_option("--cluster", o->cluster,
                  "Cluster presets, comma-separated (default dgx-a100-80gb)")
      ->excludes(gpu)
      ->check(non_empty_list());
  cmd->add_option("--budget-usd", o->budget_usd,
                  "Dollar budgets, comma-separated (priced by the first --cost-model: cloud, the cluster's usd_per_gpu_hour, by default; 0: no budget); default none")
      ->check(non_empty_list());
  add_planner_flags(cmd, &o->flags, "Planner");
  cmd->add_option("--out", o->out_dir,
                  "Write frontier.csv, frontier.json, frontier.md and the SVG figures to DIR");
  cmd->add_option("--format", o->format, "stdout format without --out (default md)")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  add_cost_model_flags(cmd, &o->flags.cost);
  add_pricing_flags(cmd, &o->flags.pricing, /*list=*/true);
  cmd->callback([o, &global, action] {
    *action = [o, &global]() -> Status {
      LLMPLAN_ASSIGN_OR_RETURN(ProcessGroup group, join_process_group());
      const Status status = run_frontier_command(*o, global, group);
      leave_process_group(group);
      return status;
    };
  });
}

}  // namespace llmplan::planner
