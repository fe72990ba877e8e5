#include "planner/cli/planner_flags.h"

#include <algorithm>

#include "planner/search/shapes_json.h"
#include "simulator/error_band.h"

namespace llmplan::planner {

void add_planner_flags(CLI::App* app, PlannerFlags* o, const std::string& what) {
  const std::string p = what + ": ";
  app->add_option("--objective", o->objective, p + "largest model or lowest predicted loss")
      ->check(CLI::IsMember({"largest", "loss"}));
  // Whether --law was given is recorded while parsing: the action runs after
  // the parser (and its options) may be gone.
  app->add_option("--law", o->law,
                  p + "loss law preset (chinchilla, epoch, joint-moe, clark-moe) or JSON file "
                      "(default: chinchilla; joint-moe for MoE models)")
      ->each([o](const std::string&) { o->law_given = true; });
  CLI::Option* r = app->add_option("--tokens-per-param", o->tokens_per_param,
                                   p + "training tokens per parameter (default 20; 0.01 to 1e6)")
                       ->check(finite_in(0.01, kMaxTokensPerParam));
  app->add_option("--tokens-rule", o->tokens_rule, p + "chinchilla (20 tokens/param) or law")
      ->check(CLI::IsMember({"chinchilla", "law"}))
      ->excludes(r);
  CLI::Option* shapes =
      app->add_option("--shapes", o->shapes,
                      p + "JSON array of model shapes to consider (entries may name a \"preset\")")
          ->check(CLI::ExistingFile);
  app->add_option("--family", o->family,
                  p + "model family of the automatic grid: gpt, llama or moe (MoE shapes, "
                      "compared with the dense llama answer)");
  app->add_option("--seq", o->seq, p + "sequence length (default: the family's, 2048 / 8192)")
      ->check(int_in(1, simulator::Model::kMaxSeqLength));
  app->add_option("--vocab", o->vocab,
                  p + "vocabulary size (default: the family's, 51200 / 128256)")
      ->check(int_in(1, simulator::Model::kMaxVocab));
  app->add_option("--model", o->model,
                  p + "pin the model (a model preset or a JSON file of model fields); search plans "
                      "only")
      ->excludes(shapes);
  app->add_option("--confidence", o->confidence,
                  p + "the largest model whose P-quantile training time (from the GPU's held-out "
                      "validation errors) meets the deadline, e.g. 0.9")
      ->check(finite_in(0, 1, true));
  add_plan_space_flags(app, &o->space, what);
  add_reliability_flags(app, &o->reliability, what);
  app->add_flag("--max-gpus-used", o->max_gpus_used,
                p + "only plans that use as many of the GPUs as the layout allows");
  app->add_option("--threads", o->threads, p + "OpenMP threads (default: all cores)")
      ->check(int_in(0, kMaxThreads));
  app->add_flag("--exhaustive", o->exhaustive,
                p + "simulate every plan of every shape: no pruning with the iteration-time lower "
                    "bound (the answer, its plans and every candidate's best plan are the same; "
                    "plans.csv then lists every plan)");
  app->add_flag("--exact-rows", o->exact_rows,
                p + "optimise every model's row: without it a model that ranks below a feasible "
                    "model (it cannot change the answer) stops at its first feasible plan; the "
                    "answer and its plans are the same either way");
  app->add_flag("--progress", o->progress,
                "Progress lines on stderr also when it is not a terminal (a log, a pipe)");
}

namespace {

TimeBand band_of(const simulator::ErrorBand& eb, double confidence) {
  TimeBand b;
  b.known = eb.known;
  b.confidence = confidence;
  if (eb.known) {
    b.low_ratio = eb.ratio_at(b.p_low);
    b.high_ratio = eb.ratio_at(b.p_high);
    b.confidence_ratio = confidence > 0 ? eb.ratio_at(confidence) : 1.0;
    b.samples = eb.samples;
    b.source = eb.source;
    b.group = eb.group;
  }
  return b;
}

}  // namespace

TimeBand time_band(const simulator::GpuSpec& gpu, double confidence) {
  TimeBand b = band_of(simulator::error_band(gpu), confidence);
  if (!b.known || gpu.validation.groups.empty()) return b;
  b.cells.resize(TimeBand::kCells);
  for (int bits = 0; bits < 16; ++bits) {
    for (int bucket = 0; bucket < 3; ++bucket) {
      simulator::BandFeatures f;
      f.moe = bits & 1;
      f.fp8 = bits & 2;
      f.pipeline = bits & 4;
      f.sharded = bits & 8;
      f.gpu_bucket = bucket;
      b.cells[TimeBand::cell_index(f)] = band_of(simulator::error_band(gpu, f), confidence);
    }
  }
  return b;
}

Result<SearchOptions> planner_search_options(const PlannerFlags& o,
                                             const presets::Catalog& catalog) {
  SearchOptions s;
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
  s.exhaustive = o.exhaustive;
  s.exact_rows = o.exact_rows;
  {
    auto family = parse_family(o.family);
    if (!family.ok()) return family.status().as_usage();
    s.family = family.value();
  }
  s.shape_template = family_template(s.family, o.seq, o.vocab);
  LLMPLAN_RETURN_IF_ERROR(simulator::validate([&] {
                            simulator::Model probe =
                                s.shape_template;  // seq and vocab within the simulator's bounds
                            probe.num_layers = 1;
                            probe.hidden_size = 1024;
                            probe.num_heads = 8;
                            probe.num_kv_heads = 0;
                            probe.ffn_hidden_size = 0;
                            return probe;
                          }())
                              .with_prefix("--seq/--vocab"));
  if (!o.shapes.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(s.shapes, read_shapes_file(o.shapes, s.shape_template, &catalog));
  }
  if (!o.model.empty()) {
    auto pinned = resolve_pinned_model(o.model, s.shape_template, catalog);
    if (!pinned.ok()) {
      const bool usage =
          pinned.status().message().rfind("--model: '", 0) == 0;  // neither preset nor file
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
  const bool law_given = o.law_given;
  const bool any_moe =
      s.family == Family::kMoe || std::any_of(s.shapes.begin(), s.shapes.end(),
                                              [](const simulator::Model& m) { return m.is_moe(); });
  LLMPLAN_ASSIGN_OR_RETURN(
      s.law, load_law(catalog, !law_given && any_moe ? std::string(kDefaultMoeLaw) : o.law));
  return s;
}

Status set_cluster_options(const PlannerFlags& flags, const simulator::Cluster& cluster,
                           SearchOptions* options, std::vector<std::string>* notes) {
  // A fixed axis the cluster cannot run (fp8 on a GPU without it, a --tp
  // that forms no group within a node) is a usage error, not "no model fits".
  LLMPLAN_RETURN_IF_ERROR(check_against_cluster(options->space, cluster, options->gpus).as_usage());
  options->band = time_band(cluster.gpu, flags.confidence);
  LLMPLAN_ASSIGN_OR_RETURN(options->cost_model, make_cost_model(cluster, flags.cost, notes));
  LLMPLAN_ASSIGN_OR_RETURN(options->reliability, resolve_reliability(flags.reliability, cluster));
  return Status();
}

void add_pricing_flags(CLI::App* app, PricingFlags* flags, bool list) {
  CLI::Option* model = app->add_option(
      "--cost-model", flags->cost_model,
      list ? "How a GPU-hour is priced, comma-separated to compare: cloud (the cluster's price "
             "preset, default), owned (capex amortised + power, presets/ownership.json); the "
             "first prices the budget"
           : "How a GPU-hour is priced: cloud (the cluster's price preset, default) or owned "
             "(capex amortised + power, presets/ownership.json)");
  if (list) {
    model->check(non_empty_list());
  } else {
    model->check(CLI::IsMember({"cloud", "owned"}));
  }
  app->add_option("--capex-usd-per-gpu", flags->ownership.capex_usd_per_gpu,
                  "Owned cost: purchase price per GPU, system share included (default: "
                  "presets/ownership.json for the GPU; $1 to $1e7)")
      ->check(finite_in(1, 1e7));
  app->add_option("--amortisation-years", flags->ownership.amortisation_years,
                  "Owned cost: years the capex is spread over (default 5; 0.1 to 30)")
      ->check(finite_in(0.1, 30));
  app->add_option("--pue", flags->ownership.pue,
                  "Owned cost: datacentre power usage effectiveness (default 1.58)")
      ->check(finite_in(1, 5));
  app->add_option("--usd-per-kwh", flags->ownership.usd_per_kwh,
                  "Owned cost: electricity price in dollars per kWh (default 0.0806; 0.001 to 10)")
      ->check(finite_in(0.001, 10));
}

Result<std::vector<std::string>> cost_models(const PricingFlags& flags) {
  std::vector<std::string> out;
  if (flags.cost_model.empty()) {
    out.push_back("cloud");
  } else {
    size_t start = 0;
    while (true) {
      const size_t comma = flags.cost_model.find(',', start);
      const std::string item = flags.cost_model.substr(
          start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item != "cloud" && item != "owned") {
        return Status::usage("--cost-model: unknown model '" + item +
                             "' (expected cloud, owned or cloud,owned)");
      }
      if (std::find(out.begin(), out.end(), item) != out.end()) {
        return Status::usage("--cost-model: " + item + " is listed twice");
      }
      out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  const OwnershipOverrides& o = flags.ownership;
  const bool owned = std::find(out.begin(), out.end(), "owned") != out.end();
  if (!owned) {
    for (auto [flag, x] : {std::pair{"--capex-usd-per-gpu", o.capex_usd_per_gpu},
                           {"--amortisation-years", o.amortisation_years},
                           {"--pue", o.pue},
                           {"--usd-per-kwh", o.usd_per_kwh}}) {
      if (x != 0) {
        return Status::usage(std::string(flag) +
                             " prices owned GPUs: give it with --cost-model owned");
      }
    }
  }
  LLMPLAN_RETURN_IF_ERROR(check_overrides(o));
  return out;
}

Result<Pricing> price_cluster(const PricingFlags& flags, const OwnershipFile& ownership,
                              const std::string& model, simulator::Cluster* cluster) {
  LLMPLAN_ASSIGN_OR_RETURN(
      Pricing p, make_pricing(model, !flags.cost_model.empty(), *cluster, ownership, flags.ownership));
  cluster->usd_per_gpu_hour = p.usd_per_gpu_hour();
  return p;
}

}  // namespace llmplan::planner
