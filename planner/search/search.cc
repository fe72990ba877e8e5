#include "planner/search/search.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "planner/search/prune.h"
#include "base/threads.h"
#include "scaling/optimal.h"
#include "simulator/memory.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"

namespace llmplan::planner {

using simulator::Cluster;
using simulator::Model;
using simulator::Plan;

double moe_expansion(const Model& m) {
  return m.is_moe() ? static_cast<double>(m.num_experts) / m.moe_top_k : 1.0;
}

double active_params(const Model& m) { return static_cast<double>(m.active_parameter_count()); }

double predicted_loss(const scaling::LossLaw& law, const Model& m, double tokens) {
  return law.moe_loss(active_params(m), moe_expansion(m), tokens);
}

std::vector<Plan> enumerate_plans(const Model& model, const Cluster& cluster, int gpus,
                                  double target_batch_tokens, bool all_gpus_only) {
  PlanSpace space;
  space.global_batch_tokens = {target_batch_tokens};
  space.all_gpus_only = all_gpus_only;
  return enumerate_plans(model, cluster, gpus, space);
}

double rule_tokens(const TokensRule& rule, const scaling::LossLaw& law, double params) {
  if (rule.use_law) {
    auto a = scaling::optimal_for_params(law, params, scaling::AllocationRule::kLaw);
    if (a.ok()) return a.value().n_tokens;
  }
  return rule.tokens_per_param * params;
}

double training_days(const PlanResult& r, double tokens) {
  if (!(r.tokens_per_s > 0)) return 1e300;
  return tokens / r.tokens_per_s / 86400.0;
}

double training_cost_usd(const PlanResult& r, double days, double usd_per_gpu_hour) {
  return days * 24.0 * r.gpus_used * usd_per_gpu_hour;
}

double deadline_days(const Model& model, const PlanResult& r, double compute_days,
                     const Cluster& cluster, const SearchOptions& options) {
  if (!options.reliability.enabled) return compute_days;
  const FailureCosts f = failure_costs(model, r.plan, cluster, options.reliability);
  const double wall_s = expected_wall_s(f, compute_days * 86400.0);
  // Never finishing stays training_days' 1e300 (reports print it as "inf").
  return wall_s >= 1e300 ? 1e300 : wall_s / 86400.0;
}

std::vector<int> pareto_front(const std::vector<double>& time, const std::vector<double>& cost) {
  std::vector<int> idx(time.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
    if (time[a] != time[b]) return time[a] < time[b];
    return cost[a] < cost[b];
  });
  std::vector<int> front;
  double best_cost = 1e300;
  for (int i : idx) {
    if (cost[i] < best_cost) {
      front.push_back(i);
      best_cost = cost[i];
    }
  }
  return front;
}

namespace {

// The candidates of `models` and their plans to simulate (the plan space of
// each shape on options.gpus GPUs, in its order).
void enumerate_step(const std::vector<Model>& models, const Cluster& cluster,
                    const SearchOptions& options, std::vector<Candidate>* candidates,
                    std::vector<PlanTask>* tasks) {
  candidates->clear();
  tasks->clear();
  for (int s = 0; s < static_cast<int>(models.size()); ++s) {
    Candidate c;
    c.model = models[s];
    c.params = static_cast<double>(models[s].parameter_count());
    c.active_params = active_params(models[s]);
    PlanSpace space = options.space;
    // Under a budget a narrower, cheaper layout may be the answer: every
    // width of G / 2^k GPUs, so that a larger G keeps every plan of G.
    if (options.budget_usd > 0) space.every_width = true;
    if (space.global_batch.empty() && space.global_batch_tokens.empty()) {
      double tokens = candidate_tokens(options, models[s], c.active_params);
      if (!(tokens < kUnreachableTokens)) tokens = rule_tokens(options.tokens, options.law, c.active_params);
      space.global_batch_tokens = auto_batch_ladder(6.0 * c.active_params * tokens);
      c.batch_tokens = space.global_batch_tokens.front();
    }
    EnumerationStats stats;
    if (options.enumeration_cache) {
      const auto entry = options.enumeration_cache->get(models[s], cluster, options.gpus, space);
      for (const Plan& p : entry->plans) tasks->push_back({s, p});
      stats = entry->stats;
    } else {
      for (const Plan& p : enumerate_plans(models[s], cluster, options.gpus, space, &stats)) {
        tasks->push_back({s, p});
      }
    }
    c.layouts = stats.layouts;
    c.most_layout_gpus = stats.most_gpus;
    c.memory_pruned = stats.memory_pruned;
    candidates->push_back(c);
  }
}

// A step's result: its candidates and every task's simulation.
SearchResult assemble_step(std::vector<Candidate> candidates, const std::vector<PlanTask>& tasks,
                           const std::vector<PlanResult>& results) {
  SearchResult result;
  result.candidates = std::move(candidates);
  const long n = static_cast<long>(tasks.size());
  result.plans.resize(n);
  for (long i = 0; i < n; ++i) {
    PlanResult& r = result.plans[i];
    r = results[i];
    r.shape = tasks[i].shape;
    r.plan = tasks[i].plan;
    r.gpus_used = r.plan.world_size();
  }
  for (const PlanResult& r : result.plans) result.candidates[r.shape].plans_evaluated++;
  result.plans_evaluated = n;
  return result;
}

}  // namespace

PlanResult simulate_task(const Model& model, const Plan& plan, const Cluster& cluster,
                         const simulator::SimOptions& sim) {
  PlanResult r;
  r.plan = plan;
  r.gpus_used = plan.world_size();
  auto rep = simulator::simulate(model, plan, cluster, sim);
  if (rep.ok()) record_simulation(rep.value(), &r);
  return r;
}

PlanResult simulate_task(const Model& model, const Plan& plan, const simulator::SimSetup& setup,
                         const simulator::SimOptions& sim) {
  PlanResult r;
  r.plan = plan;
  r.gpus_used = plan.world_size();
  auto rep = simulator::simulate(model, plan, setup, sim);
  if (rep.ok()) record_simulation(rep.value(), &r);
  return r;
}

std::vector<PlanResult> simulate_tasks(const std::vector<Model>& shapes,
                                       const std::vector<PlanTask>& tasks, const Cluster& cluster,
                                       const SearchOptions& options) {
  const long n = static_cast<long>(tasks.size());
  std::vector<PlanResult> results(n);
  simulator::SimOptions sim;
  sim.cost_model = options.cost_model;
  // The cluster validated and its cost model built once for every task (an
  // invalid cluster: each task fails as simulate() fails it).
  const auto setup = simulator::SimSetup::make(cluster, options.cost_model);
  long done = 0;
  const int threads = loop_threads(options.threads, omp_get_max_threads(), n);
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    results[i] = setup.ok()
                     ? simulate_task(shapes[tasks[i].shape], tasks[i].plan, setup.value(), sim)
                     : simulate_task(shapes[tasks[i].shape], tasks[i].plan, cluster, sim);
    results[i].shape = tasks[i].shape;
    if (options.progress) {
#pragma omp critical(llmplan_progress)
      {
        ++done;
        if (done % 64 == 0 || done == n) options.progress(done, n);
      }
    }
  }
  return results;
}

SearchResult evaluate_shapes(const std::vector<Model>& models, const Cluster& cluster,
                             const SearchOptions& options) {
  std::vector<Candidate> candidates;
  std::vector<PlanTask> tasks;
  enumerate_step(models, cluster, options, &candidates, &tasks);
  return assemble_step(std::move(candidates), tasks,
                       simulate_tasks(models, tasks, cluster, options));
}

PlanOutcome plan_outcome(const Candidate& c, const PlanResult& r, const Cluster& cluster,
                         const SearchOptions& options) {
  const double price = cluster.usd_per_gpu_hour;
  const bool budget = options.budget_usd > 0 && price > 0;
  // Days that must meet the deadline: the point estimate times the plan's
  // band's ratio at the requested confidence (1 without --confidence).
  const bool confidence = options.band.confidence > 0;
  // Per active parameter (candidates built without it: all parameters).
  const double n_active = c.active_params > 0 ? c.active_params : c.params;
  const double ratio = confidence ? options.band.of(c.model, r.plan).confidence_ratio : 1.0;
  PlanOutcome out;
  double tokens, days, cost, compute_days;
  bool in_time, in_budget;
  // Interruptions (issue 28): days are wall-clock days (deadline_days),
  // and hot spares are paid for too.
  const bool failures = options.reliability.enabled;
  const double spare_gpus =
      failures ? static_cast<double>(options.reliability.checkpoint.spare_nodes) * cluster.gpus_per_node : 0;
  if (!trains_to_deadline(options)) {
    // A token count fixed before the plan (the rule, --tokens, the
    // --inference-tokens target): days grow with the iteration time.
    tokens = candidate_tokens(options, c.model, n_active);
    compute_days = training_days(r, tokens);
    if (failures) {  // deadline_days, with the plan's failure costs computed once
      const FailureCosts f = failure_costs(c.model, r.plan, cluster, options.reliability);
      const auto wall_days = [&f](double d) {
        const double wall_s = expected_wall_s(f, d * 86400.0);
        return wall_s >= 1e300 ? 1e300 : wall_s / 86400.0;
      };
      days = wall_days(compute_days);
      in_time = (ratio == 1.0 ? days : wall_days(compute_days * ratio)) <= options.days;
    } else {
      days = compute_days;
      in_time = compute_days * ratio <= options.days;
    }
    cost = training_cost_usd(r, days, price) + days * 24.0 * spare_gpus * price;
    in_budget = !budget || cost * ratio <= options.budget_usd;
  } else if (!failures) {
    double seconds = options.days * 86400.0 / ratio;
    if (budget) {
      seconds = std::min(seconds, options.budget_usd / ratio / (price * r.gpus_used) * 3600.0);
    }
    tokens = seconds * r.tokens_per_s;
    days = training_days(r, tokens);
    compute_days = days;
    cost = training_cost_usd(r, days, price);
    in_time = tokens >= n_active;  // at least one token per (active) parameter to count
    in_budget = true;
  } else {
    // The most compute that fits the deadline (and budget) in wall time.
    const FailureCosts f = failure_costs(c.model, r.plan, cluster, options.reliability);
    double wall_s = options.days * 86400.0;
    if (budget) {
      wall_s = std::min(wall_s, options.budget_usd / (price * (r.gpus_used + spare_gpus)) * 3600.0);
    }
    const double seconds = compute_s_within(f, wall_s) / ratio;
    tokens = seconds * r.tokens_per_s;
    compute_days = training_days(r, tokens);
    days = deadline_days(c.model, r, compute_days, cluster, options);
    cost = training_cost_usd(r, days, price) + days * 24.0 * spare_gpus * price;
    in_time = tokens >= n_active;
    in_budget = true;
  }
  const bool ok = in_time && in_budget;
  out.tokens = tokens;
  out.days = days;
  out.compute_days = compute_days;
  out.cost_usd = cost;
  out.in_time = in_time;
  // Score: feasible first, then fewest days (fixed tokens) / most tokens
  // (trained to the deadline), then cheapest; ties keep the earlier plan.
  const double primary = !trains_to_deadline(options) ? -days : tokens;
  out.score = PlanScore{ok ? 1 : 0, primary, -cost};
  return out;
}

void select(const Cluster& cluster, const SearchOptions& options, SearchResult* result) {
  for (Candidate& c : result->candidates) {
    c.best_plan = -1;
    c.feasible = false;
    c.plans_fit = c.plans_in_time = c.plans_in_budget = 0;
  }
  std::vector<PlanScore> best_score(result->candidates.size());
  std::vector<int> simulated(result->candidates.size(), 0);
  for (int i = 0; i < static_cast<int>(result->plans.size()); ++i) {
    const PlanResult& r = result->plans[i];
    ++simulated[r.shape];
    if (!r.fits || !(r.tokens_per_s > 0)) continue;
    Candidate& c = result->candidates[r.shape];
    ++c.plans_fit;
    const PlanOutcome out = plan_outcome(c, r, cluster, options);
    const double n_active = c.active_params > 0 ? c.active_params : c.params;
    const double tokens = out.tokens, days = out.days, cost = out.cost_usd;
    const bool ok = out.score.ok == 1;
    c.plans_in_time += out.in_time ? 1 : 0;
    c.plans_in_budget += ok ? 1 : 0;
    const PlanScore& score = out.score;
    if (c.best_plan < 0 || best_score[r.shape] < score) {
      best_score[r.shape] = score;
      c.best_plan = i;
      c.tokens = tokens;
      c.days = days;
      c.compute_days = out.compute_days;
      c.cost_usd = cost;
      c.loss = objective_loss(options, c.model, n_active, std::max(tokens, 1.0));
      c.feasible = ok;
    }
  }
  for (Candidate& c : result->candidates) fill_objective(options, &c);
  for (size_t s = 0; s < result->candidates.size(); ++s) {
    Candidate& c = result->candidates[s];
    if (c.feasible) {
      c.why = "";
    } else if (simulated[s] == 0 && c.memory_pruned == 0) {
      c.why = "no-layout";
    } else if (c.plans_fit == 0) {
      c.why = "memory";
    } else if (c.plans_in_time == 0) {
      c.why = "deadline";
    } else {
      c.why = "budget";
    }
  }
  result->pinned = options.pinned;
  result->best = -1;
  if (options.pinned) {
    if (!result->candidates.empty() && result->candidates[0].best_plan >= 0) result->best = 0;
    return;
  }
  for (int s = 0; s < static_cast<int>(result->candidates.size()); ++s) {
    const Candidate& c = result->candidates[s];
    if (!c.feasible) continue;
    if (s == result->naive_candidate && result->naive_off_grid) continue;
    if (result->best < 0) {
      result->best = s;
      continue;
    }
    if (better_candidate(options, c, result->candidates[result->best])) result->best = s;
  }
}

namespace {

// Appends `more` to `into` (shape and plan indices remapped), then sorts the
// candidates by parameter count.
void merge(SearchResult more, SearchResult* into) {
  const int shape_off = static_cast<int>(into->candidates.size());
  for (PlanResult& r : more.plans) r.shape += shape_off;
  into->candidates.insert(into->candidates.end(), more.candidates.begin(), more.candidates.end());
  into->plans.insert(into->plans.end(), more.plans.begin(), more.plans.end());
  into->plans_evaluated += more.plans_evaluated;
  std::vector<int> order(into->candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return into->candidates[a].params < into->candidates[b].params;
  });
  std::vector<int> new_index(order.size());
  std::vector<Candidate> sorted;
  for (int k = 0; k < static_cast<int>(order.size()); ++k) {
    new_index[order[k]] = k;
    sorted.push_back(into->candidates[order[k]]);
  }
  into->candidates = std::move(sorted);
  for (PlanResult& r : into->plans) r.shape = new_index[r.shape];
  if (into->naive_candidate >= 0) into->naive_candidate = new_index[into->naive_candidate];
  // Keep plans grouped by shape (stable), so CSV output reads in size order.
  std::stable_sort(into->plans.begin(), into->plans.end(),
                   [](const PlanResult& a, const PlanResult& b) { return a.shape < b.shape; });
}

bool contains(const std::vector<Candidate>& cs, const Model& m) {
  return std::any_of(cs.begin(), cs.end(), [&](const Candidate& c) { return c.model == m; });
}

}  // namespace

Result<SearchRun> SearchRun::start(const Cluster& cluster, const SearchOptions& options) {
  LLMPLAN_ASSIGN_OR_RETURN(SearchRun run, first_step(cluster, options));
  run.prune_ = pruning_unsafe_reason(options).empty();
  run.answer_prune_ = run.prune_ && answer_pruning_reason(options, run.shapes_).empty();
  run.answer_by_loss_ = options.objective == Objective::kLoss ||
                        (!run.shapes_.empty() && run.shapes_.front().is_moe());
  if (run.prune_) {
    run.roofline_ = std::make_shared<simulator::Roofline>(cluster);
    // The lowered bounds' pass times, shared by every step of the run
    // (simulator/lowering_cache.h) unless the caller shares one wider.
    if (!run.options_.lowering_cache) {
      run.options_.lowering_cache = std::make_shared<simulator::LoweringCache>();
    }
  }
  run.prepare(std::move(run.shapes_));
  if (run.tasks_.empty()) run.end_stage();
  return run;
}

Status SearchRun::check(const Cluster& cluster, const SearchOptions& options) {
  return first_step(cluster, options).status();
}

Result<SearchRun> SearchRun::first_step(const Cluster& cluster, const SearchOptions& options) {
  if (options.gpus <= 0) return Status::invalid_argument("--gpus must be a positive GPU count");
  if (options.gpus > Plan::kMaxGpus) {
    return Status::invalid_argument("--gpus: must be at most " + std::to_string(Plan::kMaxGpus) +
                                    ", got " + std::to_string(options.gpus));
  }
  if (!(options.days > 0) || !std::isfinite(options.days)) {
    return Status::invalid_argument("--days must be a positive number of days");
  }
  if (options.gpus < cluster.gpus_per_node) {
    return Status::invalid_argument("--gpus " + std::to_string(options.gpus) +
                                    " is fewer than one node of " + cluster.name + " (" +
                                    std::to_string(cluster.gpus_per_node) + " GPUs)");
  }
  if (cluster.max_gpus() > 0 && options.gpus > cluster.max_gpus()) {
    return Status::invalid_argument("--gpus " + std::to_string(options.gpus) + " exceeds cluster " +
                                    cluster.name + "'s " + std::to_string(cluster.max_gpus()) +
                                    " GPUs");
  }
  if (!(options.budget_usd >= 0) || !std::isfinite(options.budget_usd)) {
    return Status::invalid_argument("--budget-usd must be a finite number >= 0");
  }
  if (options.budget_usd > 0 && !(cluster.usd_per_gpu_hour > 0)) {
    return Status::invalid_argument("--budget-usd: cluster " + cluster.name +
                                    " has no usd_per_gpu_hour price");
  }
  if (!(options.tokens.tokens_per_param > 0) ||
      !(options.tokens.tokens_per_param <= kMaxTokensPerParam)) {
    return Status::invalid_argument("--tokens-per-param must be in (0, " +
                                    std::to_string(static_cast<int>(kMaxTokensPerParam)) + "]");
  }
  LLMPLAN_RETURN_IF_ERROR(scaling::validate(options.law));
  if (!options.law.ranks_moe() &&
      (options.family == Family::kMoe ||
       std::any_of(options.shapes.begin(), options.shapes.end(),
                   [](const Model& m) { return m.is_moe(); }))) {
    return Status::usage("--law " + options.law.name +
                         ": a dense law (loss in N and D) cannot rank MoE models; use --law "
                         "joint-moe or a law file with a \"joint_moe\" or \"moe\" term");
  }
  LLMPLAN_RETURN_IF_ERROR(validate(options.space).as_usage());
  if (options.band.confidence > 0 && !options.band.known) {
    return Status::usage("--confidence: " + cluster.gpu.name +
                                    " has no validation data (error unknown), so no quantile of "
                                    "its training time can be given");
  }
  LLMPLAN_RETURN_IF_ERROR(check_training_objective(options.training));
  if (options.pinned && options.shapes.size() != 1) {
    return Status::invalid_argument("--model: exactly one model is pinned");
  }

  SearchRun run(cluster, options);
  SearchResult& result = run.result_;
  // Naive baseline.
  scaling::GpuBudget naive{cluster.gpu.name, static_cast<double>(options.gpus), options.days,
                           cluster.gpu.peak_bf16_flops, 1.0};
  Result<double> naive_flops = scaling::budget_flops(naive);
  if (!naive_flops.ok()) {
    char days[32];
    std::snprintf(days, sizeof days, "%g", options.days);
    return Status::invalid_argument("--days: the compute budget " + std::to_string(options.gpus) +
                                    " GPUs x " + days +
                                    " days x peak FLOP/s overflows (not a finite number)");
  }
  result.naive_flops = *naive_flops;
  if (options.tokens.use_law) {
    LLMPLAN_ASSIGN_OR_RETURN(auto a, scaling::optimal_for_compute(options.law, result.naive_flops,
                                                                  scaling::AllocationRule::kLaw));
    result.naive_params = a.n_params;
    result.naive_tokens = a.n_tokens;
  } else {
    const double r = options.tokens.tokens_per_param;
    result.naive_params = std::sqrt(result.naive_flops / (6.0 * r));
    result.naive_tokens = r * result.naive_params;
  }
  // The moe family: the naive N as active parameters of the finest layout.
  const bool moe = options.family == Family::kMoe;
  run.naive_model_ =
      moe ? moe_shape_for_active(result.naive_params, options.shape_template,
                                 moe_shape_configs().back())
          : shape_for_params(result.naive_params, options.shape_template);

  std::vector<Model> coarse;
  if (!options.shapes.empty()) {
    coarse = options.shapes;
  } else if (moe) {
    if (!(options.moe_grid_step > 1) || !std::isfinite(options.moe_grid_step)) {
      return Status::invalid_argument("MoE grid step must be a finite ratio > 1");
    }
    double top = std::max(result.naive_params, 2e9);
    // --tokens: the largest N that trains them at the peak FLOP/s.
    if (options.training.tokens > 0) {
      top = std::max(top, std::min(result.naive_flops / (6.0 * options.training.tokens), 1e13));
    }
    coarse = moe_shape_grid(1e9, top, options.moe_grid_step, options.shape_template);
  } else {
    double top = std::max(result.naive_params, 2e8);
    if (options.training.tokens > 0) {
      top = std::max(top, std::min(result.naive_flops / (6.0 * options.training.tokens), 1e13));
    }
    coarse = shape_grid(1e8, top, 1.6, options.shape_template);
  }
  // A list flag that contradicts every shape is a usage error, not a table
  // of "no layout" rows.
  {
    Status first;
    int usable = 0;
    for (const Model& m : coarse) {
      Status st = check_against_model(options.space, m);
      if (st.ok()) ++usable;
      if (!st.ok() && first.ok()) first = st;
    }
    if (usable == 0 && !first.ok()) return first.as_usage();
  }
  // The naive model is the baseline's row (simulated for its days) in the
  // automatic grid; user shapes and a pinned model are searched alone.
  if (options.shapes.empty() &&
      std::none_of(coarse.begin(), coarse.end(), [&](const Model& m) { return m == run.naive_model_; })) {
    coarse.push_back(run.naive_model_);
    run.naive_off_grid_ = true;
  }
  // --inference-tokens' second pass: the compute-optimal reference is a
  // candidate (it reaches its own loss by the deadline).
  if (options.training.has_reference_model &&
      std::none_of(coarse.begin(), coarse.end(),
                   [&](const Model& m) { return m == options.training.reference_model; })) {
    coarse.push_back(options.training.reference_model);
  }
  run.shapes_ = std::move(coarse);
  return run;
}

void SearchRun::prepare(std::vector<Model> shapes) {
  shapes_ = std::move(shapes);
  StagePlans& st = stage_ == Stage::kFine ? fine_ : coarse_;
  if (stage_ == Stage::kFine) has_fine_ = true;
  st = StagePlans{};
  st.shapes = shapes_;
  enumerate_step(shapes_, cluster_, options_, &st.candidates, &st.all);
  const int n = static_cast<int>(st.all.size());
  st.results.assign(n, PlanResult{});
  st.state.assign(n, 0);
  st.order.assign(shapes_.size(), {});
  if (prune_) {
    // The FLOP bound of every plan first (cheap); the lowered bound later,
    // for plans it does not rule out (next_round).
    st.optimistic.assign(n, PlanOutcome{});
    st.bound_s.assign(n, 0.0);
    st.lowered.assign(n, 0);
    for (int i = 0; i < n; ++i) {
      st.bound_s[i] = iteration_time_lower_bound_s(shapes_[st.all[i].shape], st.all[i].plan, cluster_);
      set_optimistic(st, i);
    }
  }
  for (int i = 0; i < n; ++i) st.order[st.all[i].shape].push_back(i);
  if (prune_) {
    for (std::vector<int>& order : st.order) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return st.optimistic[b].score < st.optimistic[a].score;
      });
    }
  }
  next_round();
}

std::string answer_pruning_reason(const SearchOptions& options, const std::vector<Model>& shapes) {
  if (!pruning_unsafe_reason(options).empty()) return pruning_unsafe_reason(options);
  if (options.exact_rows) return "--exact-rows";
  if (options.pinned) return "a pinned model";
  if (trains_to_deadline(options)) return "tokens trained to the deadline depend on the plan";
  if (options.training.target_loss > 0 || options.training.inference_tokens > 0 ||
      options.training.unique_tokens > 0) {
    return "the objective's rank depends on more than the model";
  }
  // better_candidate() compares by loss when either shape is MoE: a mix of
  // MoE and dense shapes under `largest` is not one order.
  const bool any_moe = std::any_of(shapes.begin(), shapes.end(), [](const Model& m) { return m.is_moe(); });
  const bool any_dense = std::any_of(shapes.begin(), shapes.end(), [](const Model& m) { return !m.is_moe(); });
  if (options.objective != Objective::kLoss && any_moe && any_dense) {
    return "MoE and dense shapes are ranked by different keys";
  }
  return "";
}

double SearchRun::rank_key(const StagePlans& st, int s) const {
  const Candidate& c = st.candidates[s];
  if (!answer_by_loss_) return c.params;
  // select()'s loss: the objective's loss at the model's fixed tokens.
  const double n_active = c.active_params > 0 ? c.active_params : c.params;
  const double tokens = candidate_tokens(options_, c.model, n_active);
  return -objective_loss(options_, c.model, n_active, std::max(tokens, 1.0));
}

void SearchRun::set_optimistic(StagePlans& st, int i) const {
  // The plan's outcome at its lower-bound time: the best it could score
  // (plan_outcome is non-decreasing in tokens per second). No bound (0):
  // ok = 2, above any real score, so it is never pruned.
  const PlanTask& t = st.all[i];
  PlanOutcome& o = st.optimistic[i];
  const double bound_s = st.bound_s[i];
  if (!(bound_s > 0)) {
    o = PlanOutcome{};
    o.score.ok = 2;
    o.in_time = true;
    return;
  }
  PlanResult r;
  r.shape = t.shape;
  r.plan = t.plan;
  r.gpus_used = t.plan.world_size();
  r.fits = true;
  r.iteration_time_s = bound_s;
  r.tokens_per_s = static_cast<double>(t.plan.global_batch_size) * st.shapes[t.shape].seq_length / bound_s;
  o = plan_outcome(st.candidates[t.shape], r, cluster_, options_);
}

void SearchRun::next_round() {
  StagePlans& st = stage_ == Stage::kFine ? fine_ : coarse_;
  round_.clear();
  tasks_.clear();
  if (!prune_) {
    if (st.round++ == 0) {
      for (int i = 0; i < static_cast<int>(st.all.size()); ++i) round_.push_back(i);
    }
  } else {
    // Up to 2^(round+1) plans per shape, best optimistic score first. A plan
    // is pruned when its optimistic score is below the shape's best
    // simulated score (it cannot become the shape's best plan) and it
    // cannot change what the report counts of the shape beyond the counts:
    // a plan that could be in time is kept while no simulated plan is
    // (Candidate::why), and the naive model's plans while they could be
    // faster than its fastest fitting one (the baseline's days). A plan the
    // FLOP bound keeps gets the tighter lowered bound before it is taken.
    const size_t chunk = size_t{2} << std::min(st.round, 20);
    ++st.round;
    const int shapes = static_cast<int>(st.shapes.size());
    std::vector<char> have(shapes, 0), any_in_time(shapes, 0);
    std::vector<PlanScore> incumbent(shapes);
    std::vector<double> fastest(shapes, 0.0);
    for (int s = 0; s < shapes; ++s) {
      const Candidate& c = st.candidates[s];
      for (int i : st.order[s]) {
        if (st.state[i] != 1) continue;
        const PlanResult& r = st.results[i];
        if (!r.fits || !(r.tokens_per_s > 0)) continue;
        const PlanOutcome out = plan_outcome(c, r, cluster_, options_);
        if (!have[s] || incumbent[s] < out.score) incumbent[s] = out.score;
        have[s] = 1;
        any_in_time[s] = any_in_time[s] || out.in_time;
        fastest[s] = std::max(fastest[s], r.tokens_per_s);
      }
    }
    // The objective-aware stop: a shape ranked strictly below a feasible
    // shape (rank_key; select() keeps the earlier of equals, so a tie stays
    // in contention) cannot be the answer, and once it has a feasible plan
    // its row is known feasible: its other plans are not simulated (state 4,
    // Candidate::optimised false). The naive model keeps its fastest plan
    // (the baseline's days); the off-grid naive model is never the answer,
    // so it is no incumbent either.
    std::vector<char> settled(shapes, 0);
    if (answer_prune_) {
      double top = stage_ == Stage::kFine ? coarse_answer_key_
                                          : -std::numeric_limits<double>::infinity();
      std::vector<double> key(shapes);
      for (int s = 0; s < shapes; ++s) {
        key[s] = rank_key(st, s);
        const bool naive = st.shapes[s] == naive_model_;
        const bool selectable = !(naive && stage_ == Stage::kCoarse && naive_off_grid_);
        if (have[s] && incumbent[s].ok == 1 && selectable) top = std::max(top, key[s]);
      }
      for (int s = 0; s < shapes; ++s) {
        settled[s] = have[s] && incumbent[s].ok == 1 && key[s] < top &&
                     !(st.shapes[s] == naive_model_);
      }
    }
    // Whether plan i of shape s is ruled out now (and then marks it).
    auto prune = [&](int s, int i) {
      if (settled[s]) {
        st.state[i] = 4;
        return true;
      }
      const PlanOutcome& o = st.optimistic[i];
      const bool naive = stage_ == Stage::kCoarse && st.shapes[s] == naive_model_;
      if (have[s] && o.score < incumbent[s] && (any_in_time[s] || !o.in_time)) {
        const double bound_tps = st.bound_s[i] > 0
                                     ? static_cast<double>(st.all[i].plan.global_batch_size) *
                                           st.shapes[s].seq_length / st.bound_s[i]
                                     : 1e300;
        if (!naive || bound_tps <= fastest[s]) {
          st.state[i] = o.score.ok < incumbent[s].ok ? 2 : 3;
          return true;
        }
      }
      // answer_only: a plan that cannot be feasible changes neither the
      // model's feasibility nor its reason once the model has a fitting
      // plan and either a plan in time or this one cannot be in time.
      if (options_.answer_only && !naive && have[s] && o.score.ok == 0 &&
          (any_in_time[s] || !o.in_time)) {
        st.state[i] = 2;
        return true;
      }
      return false;
    };
    // Each shape's plans are scanned once per round, best optimistic score
    // first (pos: where the scan stands), until `chunk` are taken; a plan the
    // lowered bound then rules out frees its place for the next one.
    std::vector<size_t> pos(shapes, 0), taken(shapes, 0);
    // The lowered bound in two steps, the cheap one first: one stage's work
    // (stage_lower_bound_s, one lowered chunk), then, for a pipelined plan it
    // did not rule out, the pipeline bound (lowered_lower_bound_s, every
    // chunk kind). st.lowered: 0 neither, 1 the first, 2 both (or p = 1).
    std::vector<int> pending;  // plans due for the second step
    for (;;) {
      std::vector<int> to_lower = std::move(pending);
      pending.clear();
      for (int s = 0; s < shapes; ++s) {
        const std::vector<int>& order = st.order[s];
        for (; pos[s] < order.size() && taken[s] < chunk; ++pos[s]) {
          const int i = order[pos[s]];
          if (st.state[i] != 0 || prune(s, i)) continue;
          ++taken[s];
          (st.lowered[i] == 2 ? round_ : to_lower).push_back(i);
        }
      }
      if (to_lower.empty()) break;
      const long nl = static_cast<long>(to_lower.size());
      std::vector<double> lowered(nl, 0.0);
      const int threads = loop_threads(options_.threads, omp_get_max_threads(), nl);
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
      for (long k = 0; k < nl; ++k) {
        const int i = to_lower[k];
        const PlanTask& t = st.all[i];
        lowered[k] = st.lowered[i] == 0
                         ? stage_lower_bound_s(st.shapes[t.shape], t.plan, cluster_, *roofline_,
                                               options_.lowering_cache.get())
                         : lowered_lower_bound_s(st.shapes[t.shape], t.plan, cluster_, *roofline_);
      }
      for (long k = 0; k < nl; ++k) {
        const int i = to_lower[k];
        const int s = st.all[i].shape;
        st.lowered[i] = st.lowered[i] == 0 && st.all[i].plan.pipeline_parallel > 1 ? 1 : 2;
        st.bound_s[i] = std::max(st.bound_s[i], lowered[k]);
        set_optimistic(st, i);
        if (prune(s, i)) {
          --taken[s];
        } else {
          (st.lowered[i] == 2 ? round_ : pending).push_back(i);
        }
      }
    }
    std::sort(round_.begin(), round_.end());
  }
  for (int i : round_) tasks_.push_back(st.all[i]);
}

SearchResult SearchRun::stage_result(const StagePlans& st) const {
  std::vector<PlanTask> tasks;
  std::vector<PlanResult> results;
  for (int i = 0; i < static_cast<int>(st.all.size()); ++i) {
    if (st.state[i] != 1) continue;
    tasks.push_back(st.all[i]);
    results.push_back(st.results[i]);
  }
  return assemble_step(st.candidates, tasks, results);
}

bool SearchRun::complete_answer() {
  if (!prune_ || options_.answer_only || result_.best < 0) return false;
  const Model& m = result_.candidates[result_.best].model;
  for (StagePlans* st : {&coarse_, &fine_}) {
    if (st == &fine_ && !has_fine_) continue;
    for (int s = 0; s < static_cast<int>(st->shapes.size()); ++s) {
      if (!(st->shapes[s] == m)) continue;
      round_.clear();
      tasks_.clear();
      for (int i : st->order[s]) {
        if (st->state[i] >= 2) round_.push_back(i);
      }
      if (round_.empty()) return false;
      std::sort(round_.begin(), round_.end());
      for (int i : round_) tasks_.push_back(st->all[i]);
      complete_ = st;
      shapes_ = st->shapes;
      stage_ = Stage::kComplete;
      return true;
    }
  }
  return false;
}

void SearchRun::rebuild() {
  SearchResult r = stage_result(coarse_);
  r.naive_flops = result_.naive_flops;
  r.naive_params = result_.naive_params;
  r.naive_tokens = result_.naive_tokens;
  r.naive_candidate = -1;
  for (int i = 0; i < static_cast<int>(coarse_.shapes.size()); ++i) {
    if (coarse_.shapes[i] == naive_model_) r.naive_candidate = i;
  }
  r.naive_off_grid = result_.naive_off_grid;
  merge(SearchResult{}, &r);
  if (has_fine_) merge(stage_result(fine_), &r);
  select(cluster_, options_, &r);
  result_ = std::move(r);
}

void SearchRun::advance(const std::vector<PlanResult>& results) {
  StagePlans& st = stage_ == Stage::kComplete ? *complete_
                   : stage_ == Stage::kFine   ? fine_
                                              : coarse_;
  for (size_t k = 0; k < round_.size(); ++k) {
    const int i = round_[k];
    PlanResult& r = st.results[i];
    r = results[k];
    r.shape = st.all[i].shape;
    r.plan = st.all[i].plan;
    r.gpus_used = r.plan.world_size();
    st.state[i] = 1;
  }
  if (stage_ == Stage::kComplete) {
    rebuild();
    finish();
    return;
  }
  next_round();
  if (!tasks_.empty()) return;
  end_stage();
}

void SearchRun::end_stage() {
  const StagePlans& st = stage_ == Stage::kFine ? fine_ : coarse_;
  SearchResult step = stage_result(st);
  if (stage_ == Stage::kFine) {
    merge(std::move(step), &result_);
    select(cluster_, options_, &result_);
    if (complete_answer()) return;
    finish();
    return;
  }
  step.naive_flops = result_.naive_flops;
  step.naive_params = result_.naive_params;
  step.naive_tokens = result_.naive_tokens;
  step.naive_candidate = -1;
  for (int i = 0; i < static_cast<int>(shapes_.size()); ++i) {
    if (shapes_[i] == naive_model_) step.naive_candidate = i;
  }
  step.naive_off_grid = naive_off_grid_;
  result_ = std::move(step);
  merge(SearchResult{}, &result_);  // sort
  select(cluster_, options_, &result_);
  if (answer_prune_ && result_.best >= 0) {
    // The refinement's incumbent: the coarse answer's rank (rank_key's
    // formula on the merged candidate).
    const Candidate& c = result_.candidates[result_.best];
    if (!answer_by_loss_) {
      coarse_answer_key_ = c.params;
    } else {
      const double n_active = c.active_params > 0 ? c.active_params : c.params;
      coarse_answer_key_ = -objective_loss(
          options_, c.model, n_active,
          std::max(candidate_tokens(options_, c.model, n_active), 1.0));
    }
  }
  const bool moe = options_.family == Family::kMoe;
  // Refine between the best and its larger neighbour (and smaller one for loss).
  if (options_.shapes.empty() && !options_.pinned && result_.best >= 0) {
    const int b = result_.best;
    const int n = static_cast<int>(result_.candidates.size());
    std::vector<Model> fine;
    auto add_between = [&](int lo, int hi) {
      if (lo < 0 || hi >= n) return;
      const double lo_params = result_.candidates[lo].params;
      const double hi_params = result_.candidates[hi].params;
      for (const Model& m : shape_grid(lo_params, hi_params, 1.07, options_.shape_template)) {
        // Strictly between the two: a refinement never passes the larger
        // coarse size, so a larger coarse answer at more GPUs is never
        // smaller than the refined answer at fewer (G-independent grid).
        const double n = static_cast<double>(m.parameter_count());
        if (!(n > lo_params && n < hi_params)) continue;
        if (m == naive_model_) result_.naive_off_grid = false;
        if (!contains(result_.candidates, m) &&
            std::none_of(fine.begin(), fine.end(), [&](const Model& o) { return o == m; })) {
          fine.push_back(m);
        }
      }
    };
    // MoE: between the answer's active size and the next coarse size of the
    // same expert layout.
    auto add_moe_between = [&](int lo, double hi_active) {
      const Model& m = result_.candidates[lo].model;
      const MoeShapeConfig* config = nullptr;
      for (const MoeShapeConfig& c : moe_shape_configs()) {
        if (c.experts == m.num_experts && c.top_k == m.moe_top_k &&
            c.shared_experts == m.moe_shared_experts) {
          config = &c;
        }
      }
      if (config == nullptr) return;
      for (double a = result_.candidates[lo].active_params * 1.1; a < hi_active * 0.97; a *= 1.1) {
        Model x = moe_shape_for_active(a, options_.shape_template, *config);
        if (x == naive_model_) result_.naive_off_grid = false;
        if (!contains(result_.candidates, x) &&
            std::none_of(fine.begin(), fine.end(), [&](const Model& o) { return o == x; })) {
          fine.push_back(x);
        }
      }
    };
    if (moe) {
      add_moe_between(b, result_.candidates[b].active_params * options_.moe_grid_step);
    } else {
      add_between(b, b + 1);
      if (options_.objective == Objective::kLoss || options_.training.unique_tokens > 0 ||
          options_.training.target_loss > 0) {
        add_between(b - 1, b);  // ranked by loss or lifetime FLOPs: the optimum may lie below
      }
    }
    if (!fine.empty()) {
      stage_ = Stage::kFine;
      prepare(std::move(fine));
      if (!tasks_.empty()) return;
      end_stage();
      return;
    }
  }
  if (complete_answer()) return;
  finish();
}

void SearchRun::finish() {
  result_.pruning_off = prune_ ? "" : pruning_unsafe_reason(options_);
  result_.plans_pruned_deadline = result_.plans_pruned_incumbent = result_.plans_pruned_answer = 0;
  for (const StagePlans* st : {&coarse_, &fine_}) {
    for (char state : st->state) {
      result_.plans_pruned_deadline += state == 2 ? 1 : 0;
      result_.plans_pruned_incumbent += state == 3 ? 1 : 0;
      result_.plans_pruned_answer += state == 4 ? 1 : 0;
    }
    // A shape with a plan stopped by the objective-aware stop: its row is a
    // feasible plan, not necessarily its best.
    for (size_t s = 0; s < st->order.size(); ++s) {
      const bool stopped = std::any_of(st->order[s].begin(), st->order[s].end(),
                                       [&](int i) { return st->state[i] == 4; });
      if (!stopped) continue;
      for (Candidate& c : result_.candidates) {
        if (c.model == st->shapes[s]) c.optimised = false;
      }
    }
  }
  // Naive simulated days: its fastest fitting plan for the naive tokens.
  result_.naive_days = 0;
  for (const PlanResult& r : result_.plans) {
    if (r.shape != result_.naive_candidate || !r.fits) continue;
    const double d = training_days(r, result_.naive_tokens);
    if (result_.naive_days == 0 || d < result_.naive_days) result_.naive_days = d;
  }

  stage_ = Stage::kDone;
  shapes_.clear();
  tasks_.clear();
  step_candidates_.clear();
}

Result<SearchResult> search(const Cluster& cluster, const SearchOptions& options) {
  if (options.training.inference_tokens > 0 && !(options.training.target_loss > 0)) {
    return search_for_inference(cluster, options);
  }
  LLMPLAN_ASSIGN_OR_RETURN(SearchRun run, SearchRun::start(cluster, options));
  while (!run.done()) {
    run.advance(simulate_tasks(run.step_shapes(), run.step_tasks(), cluster, options));
  }
  return run.result();
}

void record_simulation(const simulator::StepReport& report, PlanResult* result) {
  result->iteration_time_s = report.iteration_time_s;
  result->mfu = report.mfu;
  result->peak_memory_bytes = report.peak_memory_bytes;
  result->fits = report.fits_in_memory;
  result->tokens_per_s = report.tokens_per_s;
  result->caveats = report.caveats;
}

}  // namespace llmplan::planner
