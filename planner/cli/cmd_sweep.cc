// `llmplan sweep`: a grid of plans for one model (the vTrain paper's first
// case study), with time, cost, MFU and the time-cost Pareto front.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include "planner/cli/command.h"
#include "planner/cli/reliability_flags.h"
#include "planner/cli/plan_space_flags.h"
#include "planner/cli/planner_flags.h"
#include "planner/cli/progress.h"
#include "planner/cli/run_flags.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/search.h"
#include "base/threads.h"
#include "presets/sim_config.h"
#include "reports/format.h"
#include "reports/plan_report.h"
#include "reports/plan_report_json.h"
#include "reports/svg_plot.h"
#include "reports/table.h"
#include "simulator/simulate.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

// Most plans one sweep simulates: one simulation each, a few milliseconds for
// typical plans but up to about a second at the simulator's largest sizes.
constexpr long kMaxSweepPlans = 16384;

struct SweepOptions {
  std::string config, vtrain_config, gpu, cluster;
  PlanSpaceFlags space_flags;  // --tp, --pp, --micro-batch, --global-batch, ... (plan_space_flags.h)
  std::string dp;              // --dp LIST
  PlanSpace space;             // parsed from space_flags (the callback)
  std::vector<int> dps;        // parsed from dp
  double tokens = 0;
  int threads = 0;
  std::string format = "md";
  std::string out_dir;
  CostModelOptions cost;
  PricingFlags pricing;  // --cost-model cloud|owned and the ownership flags
  ReliabilityFlags reliability;  // failures (issue 28): days are expected wall-clock days
  bool progress = false;
};

// GPUs of a plan, t * p * d * cp, also for plans validate() rejects. Each
// degree is <= Plan::kMaxGpus (flags, config), so t * p * d fits 64 bits;
// the product saturates beyond.
int64_t gpus_of(const simulator::Plan& p) {
  const int64_t tpd =
      static_cast<int64_t>(p.tensor_parallel) * p.pipeline_parallel * p.data_parallel;
  if (tpd > 0 && p.context_parallel > std::numeric_limits<int64_t>::max() / tpd) {
    return std::numeric_limits<int64_t>::max();
  }
  return tpd * p.context_parallel;
}

// The expert axes of the sweep: --ep (every listed size; the simulator
// rejects those that do not divide) and --moe-a2a-overlap, else the
// config's values.
std::vector<simulator::Plan> sweep_expert_axes(const PlanSpace& s, const simulator::Model& model,
                                               const simulator::Plan& base) {
  std::vector<int> eps = s.expert_parallel;
  if (eps.empty()) eps = {base.expert_parallel};
  std::vector<bool> overlaps;
  switch (s.moe_a2a_overlap) {
    case Choice::kAuto: overlaps = {base.moe_a2a_overlap}; break;
    case Choice::kOn: overlaps = {true}; break;
    case Choice::kOff: overlaps = {false}; break;
    case Choice::kBoth: overlaps = {false, true}; break;
  }
  std::vector<simulator::Plan> out;
  for (int ep : eps) {
    for (bool overlap : overlaps) {
      simulator::Plan plan = base;
      plan.expert_parallel = ep;
      // Overlap has no meaning without expert parallelism: keep one plan.
      plan.moe_a2a_overlap = model.is_moe() && ep > 1 ? overlap : base.moe_a2a_overlap;
      if (std::find(out.begin(), out.end(), plan) == out.end()) out.push_back(plan);
    }
  }
  return out;
}

// The grid: every combination of the listed values, the config's plan for
// axes not listed. Global batches given in tokens become sequences of the
// model's length. With a model-parallel cap, layouts above it are left out.
std::vector<simulator::Plan> sweep_plans(const simulator::Plan& base, const simulator::Model& model,
                                         const PlanSpace& s, const std::vector<int>& dps_in) {
  using simulator::Plan;
  auto or_base = [](const std::vector<int>& v, int b) { return v.empty() ? std::vector<int>{b} : v; };
  const std::vector<int> tps = or_base(s.tp, base.tensor_parallel);
  const std::vector<int> pps = or_base(s.pp, base.pipeline_parallel);
  const std::vector<int> cps = or_base(s.context_parallel, base.context_parallel);
  const std::vector<int> dps = or_base(dps_in, base.data_parallel);
  const std::vector<int> bs = or_base(s.micro_batch, base.micro_batch_size);
  const std::vector<int> vs = or_base(s.virtual_stages, base.virtual_stages);
  std::vector<int> gbs = or_base(s.global_batch, base.global_batch_size);
  if (!s.global_batch_tokens.empty()) {
    gbs.clear();
    for (double t : s.global_batch_tokens) {
      gbs.push_back(static_cast<int>(
          std::clamp(std::round(t / model.seq_length), 1.0, double{Plan::kMaxGlobalBatch})));
    }
  }
  const std::vector<simulator::Recompute> rcs =
      s.recompute.empty() ? std::vector<simulator::Recompute>{base.recompute} : s.recompute;
  const std::vector<bool> sps =
      s.sequence_parallel == Choice::kAuto ? std::vector<bool>{base.sequence_parallel}
      : s.sequence_parallel == Choice::kBoth ? std::vector<bool>{false, true}
                                             : std::vector<bool>{s.sequence_parallel == Choice::kOn};
  // Precision: the listed ones (fp8 with the space's recipe), else the config's.
  const bool keep_precision = s.precision.empty();
  const std::vector<simulator::Precision> precisions =
      keep_precision ? std::vector<simulator::Precision>{base.precision} : s.precision;
  std::vector<Plan> plans;
  for (int t : tps)
    for (int p : pps) {
      if (s.max_model_parallel > 0 && static_cast<long>(t) * p > s.max_model_parallel) continue;
      for (int cp : cps)
        for (int d : dps)
          for (int b : bs)
            for (int v : vs)
              for (int gb : gbs)
                for (simulator::Recompute rc : rcs)
                  for (bool sp : sps) {
                    Plan plan = base;
                    plan.tensor_parallel = t;
                    plan.pipeline_parallel = p;
                    plan.context_parallel = cp;
                    plan.data_parallel = d;
                    plan.micro_batch_size = b;
                    plan.virtual_stages = v;
                    if (v > 1) plan.schedule = simulator::Schedule::kInterleaved;
                    plan.global_batch_size = gb;
                    plan.recompute = rc;
                    plan.sequence_parallel = sp;
                    // ZeRO stage, FSDP group and the overlap flags.
                    // A listed schedule axis (--schedule) replaces the
                    // config's schedule for p > 1, v = 1; automatic keeps it.
                    std::vector<Plan> scheduled;
                    // MoE models: the listed --ep sizes and a2a overlap
                    // (the config's when not listed).
                    for (const Plan& e : sweep_expert_axes(s, model, plan)) {
                      if (s.schedule.empty()) {
                        scheduled.push_back(e);
                      } else {
                        for (const Plan& x : expand_schedule_axis(s, e)) scheduled.push_back(x);
                      }
                    }
                    for (const Plan& one : scheduled) {
                      for (const Plan& q : expand_sharding_axes(s, one)) {
                        for (simulator::Precision precision : precisions) {
                          Plan r = q;
                          r.precision = precision;
                          if (!keep_precision && precision == simulator::Precision::kFp8) {
                            r.fp8_recipe = s.fp8_recipe;
                          }
                          plans.push_back(r);
                        }
                      }
                    }
                  }
    }
  return plans;
}

// One sweep's simulations and what follows from them: each plan's result
// (or error) and failure model, the training tokens and price, and the
// fitting plans with their days and GPU-hours, the time-cost front among them.
struct SweepRun {
  std::vector<PlanResult> results;
  std::vector<std::string> errors;
  Reliability rel;
  std::vector<Goodput> failures;  // per plan when rel.enabled
  double params = 0, active = 0, tokens = 0, price = 0;
  std::vector<int> ok_idx;        // fitting plans
  std::vector<double> days, cost;  // of ok_idx
  std::vector<bool> on_front;
  std::vector<int> front;
};

// Simulates every plan (OpenMP, --threads; progress on stderr).
void simulate_sweep(const SweepOptions& o, const std::vector<simulator::Plan>& plans,
                    const presets::SimConfig& config, const simulator::SimOptions& sim,
                    SweepRun* w) {
  const long n = static_cast<long>(plans.size());
  w->results.assign(n, PlanResult{});
  w->errors.assign(n, std::string());
  auto progress = counter(std::make_shared<Progress>("sweep", "plans", o.progress));
  long done = 0;
  const int threads = loop_threads(o.threads, omp_get_max_threads(), n);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    PlanResult& r = w->results[i];
    r.plan = plans[i];
    // world_size() needs a valid plan (its product could overflow an int).
    if (simulator::validate(plans[i]).ok()) r.gpus_used = plans[i].world_size();
    auto rep = simulator::simulate(config.model, plans[i], config.cluster, sim);
    if (rep.ok()) {
      record_simulation(rep.value(), &r);
    } else {
      w->errors[i] = rep.status().message();
    }
    if (progress) {
#pragma omp critical(llmplan_sweep_progress)
      progress(++done, n);
    }
  }
}

// A plan's days: expected wall-clock days with failures, else compute days.
double sweep_days(const SweepRun& w, long i) {
  return w.rel.enabled ? w.failures[i].wall_s / 86400.0 : training_days(w.results[i], w.tokens);
}

// The fitting plans' days and GPU-hours, and the time-cost Pareto front.
void sweep_front(SweepRun* w) {
  const long n = static_cast<long>(w->results.size());
  for (long i = 0; i < n; ++i) {
    if (!w->errors[i].empty() || !w->results[i].fits) continue;
    w->ok_idx.push_back(static_cast<int>(i));
    const double d = sweep_days(*w, i);
    w->days.push_back(d);
    w->cost.push_back(d * 24.0 * w->results[i].gpus_used);
  }
  w->on_front.assign(n, false);
  for (int k : pareto_front(w->days, w->cost)) {
    w->on_front[w->ok_idx[k]] = true;
    w->front.push_back(w->ok_idx[k]);
  }
}

// Plan i's row of --format json: numbers as numbers, null where the CSV is empty.
boost::json::object sweep_json_row(const SweepRun& w, long i) {
  const PlanResult& r = w.results[i];
  const bool good = w.errors[i].empty();
  const double d = good ? sweep_days(w, i) : 0;
  const double price = w.price;
  const auto number_or_null = [good](double x) {
    return good ? boost::json::value(x) : boost::json::value(nullptr);
  };
  boost::json::object row{
      {"tp", r.plan.tensor_parallel},
      {"pp", r.plan.pipeline_parallel},
      {"dp", r.plan.data_parallel},
      {"cp", r.plan.context_parallel},
      {"micro_batch", r.plan.micro_batch_size},
      {"global_batch", r.plan.global_batch_size},
      {"gpus", gpus_of(r.plan)},
      {"iteration_s", number_or_null(r.iteration_time_s)},
      {"days", number_or_null(d)},
      {"mfu", number_or_null(r.mfu)},
      {"gpu_hours", number_or_null(d * 24 * r.gpus_used)},
      {"cost_usd", good && price > 0 ? boost::json::value(d * 24 * r.gpus_used * price)
                                     : boost::json::value(nullptr)},
      {"fits", good ? boost::json::value(r.fits) : boost::json::value(nullptr)},
      {"pareto", static_cast<bool>(w.on_front[i])},
      {"error", w.errors[i]},
      {"virtual_stages", r.plan.virtual_stages},
      {"recompute", simulator::to_string(r.plan.recompute)},
      {"sequence_parallel", r.plan.sequence_parallel},
      {"distributed_optimizer", r.plan.distributed_optimizer},
      {"zero_stage", r.plan.sharding_stage()},
      {"fsdp_group", r.plan.shard_group_size()},
      {"tp_comm_overlap", r.plan.tp_comm_overlap},
      {"overlap_grad_reduce", r.plan.overlap_grad_reduce},
      {"overlap_param_gather", r.plan.overlap_param_gather},
      {"ep", r.plan.expert_parallel},
      {"moe_a2a_overlap", r.plan.moe_a2a_overlap}};
  if (w.rel.enabled) {
    row["compute_days"] = number_or_null(good ? training_days(r, w.tokens) : 0);
    row["expected_interruptions"] = number_or_null(good ? w.failures[i].interruptions : 0);
    row["goodput"] = number_or_null(good ? w.failures[i].goodput : 0);
    row["checkpoint_interval_s"] = number_or_null(good ? w.failures[i].interval_s : 0);
  }
  return row;
}

// Plan i's row of the table (sweep.csv, the Markdown's "All plans").
std::vector<std::string> sweep_cells(const SweepRun& w, long i) {
  const PlanResult& r = w.results[i];
  const bool good = w.errors[i].empty();
  const double d = good ? sweep_days(w, i) : 0;
  const double price = w.price;
  std::vector<std::string> cells = {std::to_string(r.plan.tensor_parallel), std::to_string(r.plan.pipeline_parallel),
             std::to_string(r.plan.data_parallel), std::to_string(r.plan.micro_batch_size),
             std::to_string(r.plan.global_batch_size),
             std::to_string(gpus_of(r.plan)),
             good ? fmt::format("{:.4f}", r.iteration_time_s) : "",
             good ? fmt::format("{:.2f}", d) : "", good ? fmt::format("{:.4f}", r.mfu) : "",
             good ? fmt::format("{:.0f}", d * 24 * r.gpus_used) : "",
             good && price > 0 ? fmt::format("{:.0f}", d * 24 * r.gpus_used * price) : "",
             good ? (r.fits ? "1" : "0") : "", w.on_front[i] ? "1" : "0", w.errors[i],
             std::to_string(r.plan.virtual_stages), simulator::to_string(r.plan.recompute),
             r.plan.sequence_parallel ? "1" : "0", r.plan.distributed_optimizer ? "1" : "0",
             std::to_string(r.plan.sharding_stage()), std::to_string(r.plan.shard_group_size()),
             r.plan.tp_comm_overlap ? "1" : "0", r.plan.overlap_grad_reduce ? "1" : "0",
             r.plan.overlap_param_gather ? "1" : "0", std::to_string(r.plan.expert_parallel),
             r.plan.moe_a2a_overlap ? "1" : "0"};
  if (w.rel.enabled) {
    cells.insert(cells.end(),
                 {good ? fmt::format("{:.2f}", training_days(r, w.tokens)) : "",
                  good ? fmt::format("{:.2f}", w.failures[i].interruptions) : "",
                  good ? fmt::format("{:.4f}", w.failures[i].goodput) : "",
                  good ? fmt::format("{:.1f}", w.failures[i].interval_s) : ""});
  }
  return cells;
}

// The table of every plan, with issue 28's columns when failures are on.
reports::Table sweep_table(const SweepRun& w) {
  reports::Table t({"tp", "pp", "dp", "micro_batch", "global_batch", "gpus", "iteration_s", "days",
                    "mfu", "gpu_hours", "cost_usd", "fits", "pareto", "error", "virtual_stages",
                    "recompute", "sequence_parallel", "distributed_optimizer", "zero_stage",
                    "fsdp_group", "tp_comm_overlap", "overlap_grad_reduce",
                    "overlap_param_gather", "ep", "moe_a2a_overlap"});
  if (w.rel.enabled) {  // issue 28's columns, appended
    std::vector<std::string> header = t.header();
    for (const char* h : {"compute_days", "expected_interruptions", "goodput", "checkpoint_interval_s"}) {
      header.push_back(h);
    }
    t = reports::Table(header);
  }
  for (long i = 0; i < static_cast<long>(w.results.size()); ++i) t.add_row(sweep_cells(w, i));
  return t;
}

// sweep.md: the header, notes, the Pareto front and every plan.
std::string sweep_markdown(const SweepRun& w, const presets::SimConfig& config,
                           const Pricing& pricing, const std::vector<std::string>& notes,
                           const reports::Table& t) {
  const long n = static_cast<long>(w.results.size());
  const double params = w.params, active = w.active, tokens = w.tokens, price = w.price;
  const Reliability& rel = w.rel;
  std::string md = fmt::format("# llmplan sweep: {} ({} parameters{}, {} tokens) on {}\n\n",
                               config.model.name, reports::count_human(params),
                               config.model.is_moe() ? ", " + reports::count_human(active) + " active"
                                                     : std::string(),
                               reports::count_human(tokens), config.cluster.name);
  md += fmt::format("{} plans simulated; {} fit in memory.\n\n", n, w.ok_idx.size());
  if (pricing.stated) md += reports::pricing_markdown(pricing);
  for (const std::string& note : notes) md += "- " + note + "\n";
  if (rel.enabled) {
    md += fmt::format("- Days are expected wall-clock days with failures ({:.3g} interruptions per "
                      "GPU-day, checkpoints and restarts; --no-interruptions: compute days)\n\n",
                      rate_per_gpu_day(rel, config.cluster.gpus_per_node));
  }
  md += "## Time-cost Pareto front\n\n";
  reports::Table pt({"plan", "GPUs", "iteration", "days", "MFU (16-bit peak)", "GPU-hours", "cost"});
  for (int i : w.front) {
    const PlanResult& r = w.results[i];
    const double d = sweep_days(w, i);
    pt.add_row({reports::plan_label(r.plan), std::to_string(r.gpus_used), reports::seconds_human(r.iteration_time_s),
                fmt::format("{:.1f}", d), reports::percent(r.mfu),
                reports::count_human(d * 24 * r.gpus_used),
                price > 0 ? reports::usd_human(d * 24 * r.gpus_used * price) : "n/a"});
  }
  md += pt.markdown() + "\n## All plans\n\n" + t.markdown();
  return md;
}

// --out DIR (when given): sweep.json, sweep.md, sweep.csv and pareto.svg.
Status write_sweep_files(const SweepOptions& o, const SweepRun& w, const std::string& json_text,
                         const std::string& md, const reports::Table& t) {
  if (!o.out_dir.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(o.out_dir, "--out", "sweep"));
    LLMPLAN_RETURN_IF_ERROR(out.write("sweep.json", json_text));
    LLMPLAN_RETURN_IF_ERROR(out.write("sweep.md", md));
    LLMPLAN_RETURN_IF_ERROR(out.write("sweep.csv", t.csv()));
    if (!w.days.empty()) {
      reports::Plot plot;
      plot.title = "Sweep: training days vs GPU-hours";
      plot.x = {"days", true};
      plot.y = {"GPU-hours", true};
      plot.series.push_back({"plans", reports::SeriesKind::kScatter, w.days, w.cost, "#999", false});
      reports::PlotSeries f{"Pareto front", reports::SeriesKind::kLine, {}, {}, "#36c", false};
      for (int i : w.front) {
        const double d = training_days(w.results[i], w.tokens);
        f.x.push_back(d);
        f.y.push_back(d * 24 * w.results[i].gpus_used);
      }
      plot.series.push_back(f);
      LLMPLAN_ASSIGN_OR_RETURN(std::string svg, reports::render_svg(plot));
      LLMPLAN_RETURN_IF_ERROR(out.write("pareto.svg", svg));
    }
    LLMPLAN_RETURN_IF_ERROR(out.commit());
  }
  return Status();
}

Status run_sweep(const SweepOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  if (o.config.empty() == o.vtrain_config.empty()) {
    return Status::invalid_argument("sweep: give exactly one of --config or --vtrain-config");
  }
  LLMPLAN_ASSIGN_OR_RETURN(presets::SimConfig config,
                           load_run_config(o.config, o.vtrain_config, {}, catalog));
  LLMPLAN_RETURN_IF_ERROR(apply_cluster_flags({o.gpu, o.cluster, 0}, catalog, true, &config.cluster));
  LLMPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> models, cost_models(o.pricing));
  LLMPLAN_ASSIGN_OR_RETURN(const OwnershipFile ownership, builtin_ownership());
  LLMPLAN_ASSIGN_OR_RETURN(const Pricing pricing,
                           price_cluster(o.pricing, ownership, models.front(), &config.cluster));
  if (o.tokens < 0 || !std::isfinite(o.tokens)) {
    return Status::invalid_argument("sweep: --tokens must be positive");
  }
  if (o.threads < 0) return Status::invalid_argument("sweep: --threads must be >= 0");
  std::vector<simulator::Plan> plans = sweep_plans(config.plan, config.model, o.space, o.dps);
  std::vector<std::string> notes;
  simulator::SimOptions sim;
  LLMPLAN_ASSIGN_OR_RETURN(sim.cost_model, make_cost_model(config.cluster, o.cost, &notes));
  SweepRun w;
  simulate_sweep(o, plans, config, sim, &w);
  const long n = static_cast<long>(plans.size());
  w.params = static_cast<double>(config.model.parameter_count());
  // Tokens per active parameter (all of them for a dense model).
  w.active = static_cast<double>(config.model.active_parameter_count());
  w.tokens = o.tokens > 0 ? o.tokens : 20.0 * w.active;
  w.price = config.cluster.usd_per_gpu_hour;
  // Failures (issue 28): a plan's days are its expected wall-clock days
  // (compute days with --no-interruptions), as in the planner.
  LLMPLAN_ASSIGN_OR_RETURN(w.rel, resolve_reliability(o.reliability, config.cluster));
  w.failures.resize(w.rel.enabled ? n : 0);
  if (w.rel.enabled) {
    for (long i = 0; i < n; ++i) {
      if (!w.errors[i].empty()) continue;
      w.failures[i] = goodput(config.model, w.results[i].plan, config.cluster, w.rel,
                              training_days(w.results[i], w.tokens) * 86400.0);
    }
  }
  sweep_front(&w);
  const reports::Table t = sweep_table(w);
  boost::json::array rows;
  for (long i = 0; i < n; ++i) rows.push_back(sweep_json_row(w, i));
  const std::string md = sweep_markdown(w, config, pricing, notes, t);
  const double params = w.params, active = w.active, tokens = w.tokens, price = w.price;
  boost::json::object doc{{"model", config.model.name},
                                {"params", params},
                                {"active_params", active},
                                {"tokens", tokens},
                                {"cluster", config.cluster.name},
                                {"usd_per_gpu_hour", price},
                                {"plans_simulated", n},
                                {"plans_fit", w.ok_idx.size()},
                                {"notes", boost::json::value_from(notes)},
                                {"plans", std::move(rows)}};
  if (pricing.stated) {  // --cost-model given (absent otherwise: the cloud price)
    doc["cost_model"] = pricing.model;
    doc["ownership"] = reports::ownership_json(pricing);
  }
  LLMPLAN_ASSIGN_OR_RETURN(const std::string json_text, json::pretty_finite(doc, "sweep"));
  LLMPLAN_RETURN_IF_ERROR(write_sweep_files(o, w, json_text, md, t));
  return write_stdout(o.format == "json" ? json_text : o.format == "csv" ? t.csv() : md);
}

}  // namespace

void add_sweep_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "Simulate a grid of plans for one model: time, cost, MFU, Pareto front");
  cmd->add_option("--config", o->config, "JSON with model, plan, cluster (see 'llmplan simulate')");
  cmd->add_option("--vtrain-config", o->vtrain_config, "A vTrain config file");
  using simulator::Plan;
  add_plan_space_flags(cmd, &o->space_flags, "Sweep (default: the config's value)");
  cmd->add_option("--dp", o->dp, "Sweep: data-parallel degrees, comma-separated");
  cmd->add_option("--tokens", o->tokens, "Training tokens for days and cost (default 20 x active params)")
      ->check(finite_positive());
  cmd->add_option("--gpu", o->gpu, "GPU preset");
  cmd->add_option("--cluster", o->cluster, "Cluster preset");
  cmd->add_option("--threads", o->threads, "OpenMP threads (default: all cores)")
      ->check(int_in(0, kMaxThreads));
  cmd->add_flag("--progress", o->progress,
                "Progress lines on stderr also when it is not a terminal (a log, a pipe)");
  cmd->add_option("--format", o->format, "stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  cmd->add_option("--out", o->out_dir, "Write sweep.md, sweep.csv, sweep.json, pareto.svg to DIR");
  add_cost_model_flags(cmd, &o->cost);
  add_pricing_flags(cmd, &o->pricing, /*list=*/false);
  add_reliability_flags(cmd, &o->reliability, "Failures");
  cmd->callback([o, &global, action, cmd] {
    // The lists are usage errors when malformed; the grid is their product:
    // bound it before anything runs.
    auto space = to_plan_space(o->space_flags);
    if (!space.ok()) throw CLI::ValidationError(space.status().message());
    o->space = space.value();
    if (!o->dp.empty() || cmd->count("--dp") > 0) {
      auto dps = parse_int_list(o->dp, "--dp", simulator::Plan::kMaxGpus);
      if (!dps.ok()) throw CLI::ValidationError(dps.status().message());
      o->dps = dps.value();
    }
    const PlanSpace& sp = o->space;
    double grid = 1;
    for (size_t n : {sp.tp.size(), sp.pp.size(), sp.context_parallel.size(), o->dps.size(), sp.micro_batch.size(),
                     sp.virtual_stages.size(), sp.global_batch.size(), sp.global_batch_tokens.size(),
                     sp.recompute.size(), sp.zero_stage.size(), sp.fsdp_group.size() + 1}) {
      grid *= static_cast<double>(std::max<size_t>(n, 1));
    }
    grid *= sp.sequence_parallel == Choice::kBoth ? 2 : 1;
    for (Choice c : {sp.distributed_optimizer, sp.tp_comm_overlap, sp.overlap_grad_reduce,
                     sp.overlap_param_gather}) {
      grid *= c == Choice::kBoth ? 2 : 1;
    }
    if (grid > kMaxSweepPlans) {
      throw CLI::ValidationError("--tp/--pp/--dp/--micro-batch/...",
                                 "the grid has " + fmt::format("{:.0f}", grid) +
                                     " plans, more than the limit of " +
                                     std::to_string(kMaxSweepPlans));
    }
    *action = [o, &global] { return run_sweep(*o, global); };
  });
}

}  // namespace llmplan::planner
