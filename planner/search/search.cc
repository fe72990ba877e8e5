#include "planner/search/search.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "planner/search/prune.h"
#include "planner/search/search_internal.h"
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

namespace search_internal {

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

}  // namespace search_internal

using search_internal::assemble_step;
using search_internal::enumerate_step;

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
