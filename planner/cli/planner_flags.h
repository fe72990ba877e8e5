// The planner's flags, shared by the root planner command (`llmplan --gpus G
// --days D ...`) and `llmplan frontier` (which runs the planner per cell):
// the same names, checks, defaults and errors in both. The grid flags
// (--gpus, --days, --gpu, --cluster, --budget-usd) and the output flags are
// each command's own.
#ifndef LLMPLAN_PLANNER_CLI_PLANNER_FLAGS_H_
#define LLMPLAN_PLANNER_CLI_PLANNER_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "planner/cli/command.h"
#include "planner/cli/plan_space_flags.h"
#include "planner/cli/reliability_flags.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/pricing.h"
#include "planner/search/search.h"
#include "presets/catalog.h"
#include "simulator/cluster.h"
#include "base/status.h"

namespace llmplan::planner {

// --cost-model (as given; empty: cloud, not stated) and the ownership
// overrides (0: the default of presets/ownership.json).
struct PricingFlags {
  std::string cost_model;
  OwnershipOverrides ownership;
};

// The flags as given.
struct PlannerFlags {
  std::string objective = "largest";
  std::string law = kDefaultLaw;
  bool law_given = false;  // --law was on the command line (set while parsing)
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
  bool progress = false;
  bool exhaustive = false;  // --exhaustive (SearchOptions::exhaustive)
  bool exact_rows = false;  // --exact-rows (SearchOptions::exact_rows)
  CostModelOptions cost;  // registered separately (add_cost_model_flags)
  PricingFlags pricing;   // registered separately (add_pricing_flags)
  ReliabilityFlags reliability;  // failures and checkpoints (issue 28)
};

// Registers --cost-model (`list`: comma-separated, e.g. "cloud,owned"; else
// one of cloud, owned), --capex-usd-per-gpu, --amortisation-years, --pue and
// --usd-per-kwh on `app`, each checked (one-line error naming the flag).
void add_pricing_flags(CLI::App* app, PricingFlags* flags, bool list);

// The cost models of --cost-model, in order ({"cloud"} when not given);
// usage errors name the flag (unknown or repeated model, empty entry), and
// an ownership flag given without "owned" among them.
Result<std::vector<std::string>> cost_models(const PricingFlags& flags);

// The pricing of `cluster` under `model` ("cloud" or "owned"); the
// cluster's usd_per_gpu_hour becomes that model's price, so that costs and
// --budget-usd use it. Errors name the flag.
Result<Pricing> price_cluster(const PricingFlags& flags, const OwnershipFile& ownership,
                              const std::string& model, simulator::Cluster* cluster);

// Registers --objective, --law, --tokens-per-param, --tokens-rule, --shapes,
// --family, --seq, --vocab, --model, --confidence, the plan-space flags
// (plan_space_flags.h), --max-gpus-used, --threads and --progress on `app`;
// `what` prefixes the help texts ("Planner").
void add_planner_flags(CLI::App* app, PlannerFlags* flags, const std::string& what);

// The search options the flags describe, apart from the cluster's (the
// band, the cost model) and the grid's (gpus, days, budget): objective,
// tokens rule, plan space, threads, family and its template (--seq/--vocab
// checked), --shapes, a pinned --model, and the law (--law, else the
// default; joint-moe for MoE models). Errors name the flag.
Result<SearchOptions> planner_search_options(const PlannerFlags& flags,
                                             const presets::Catalog& catalog);

// The training-time band of `gpu` (its held-out validation errors) at
// P10/P90 and at `confidence` (0: none).
TimeBand time_band(const simulator::GpuSpec& gpu, double confidence);

// Sets the cluster's part of `options`: the band at --confidence and the
// cost model (--profile, --allreduce-lut); notes say what was loaded.
Status set_cluster_options(const PlannerFlags& flags, const simulator::Cluster& cluster,
                           SearchOptions* options, std::vector<std::string>* notes);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_PLANNER_FLAGS_H_
