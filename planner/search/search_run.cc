// SearchRun's start and rounds (search.h): the options' checks, the naive
// baseline and the coarse grid, then each stage's plans simulated in rounds,
// best lower bound first, with what the incumbents rule out pruned.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "planner/search/gpu_count.h"
#include "planner/search/prune.h"
#include "planner/search/search.h"
#include "planner/search/search_internal.h"
#include "base/threads.h"
#include "scaling/optimal.h"
#include "simulator/roofline.h"

namespace llmplan::planner {

using simulator::Cluster;
using simulator::Model;
using simulator::Plan;
using search_internal::enumerate_step;

namespace {

// search()'s one-line errors for options it cannot search, naming the flag.
Status check_search_options(const Cluster& cluster, const SearchOptions& options) {
  const GpuCountError gpus =
      check_gpu_count(options.gpus, {cluster.gpus_per_node, false, cluster.max_gpus()});
  if (gpus == GpuCountError::kNotPositive) {
    return Status::invalid_argument("--gpus must be a positive GPU count");
  }
  if (gpus == GpuCountError::kAboveMax) {
    return Status::invalid_argument("--gpus: must be at most " + std::to_string(Plan::kMaxGpus) +
                                    ", got " + std::to_string(options.gpus));
  }
  if (!(options.days > 0) || !std::isfinite(options.days)) {
    return Status::invalid_argument("--days must be a positive number of days");
  }
  if (gpus == GpuCountError::kBelowOneNode) {
    return Status::invalid_argument("--gpus " + std::to_string(options.gpus) +
                                    " is fewer than one node of " + cluster.name + " (" +
                                    std::to_string(cluster.gpus_per_node) + " GPUs)");
  }
  if (gpus == GpuCountError::kAboveCluster) {
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
  return Status();
}

// The naive baseline's compute budget (G x days x peak) and its
// compute-optimal parameters and tokens, into `result`.
Status naive_baseline(const Cluster& cluster, const SearchOptions& options, SearchResult* result) {
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
  result->naive_flops = *naive_flops;
  if (options.tokens.use_law) {
    LLMPLAN_ASSIGN_OR_RETURN(auto a, scaling::optimal_for_compute(options.law, result->naive_flops,
                                                                  scaling::AllocationRule::kLaw));
    result->naive_params = a.n_params;
    result->naive_tokens = a.n_tokens;
  } else {
    const double r = options.tokens.tokens_per_param;
    result->naive_params = std::sqrt(result->naive_flops / (6.0 * r));
    result->naive_tokens = r * result->naive_params;
  }
  return Status();
}

// The coarse stage's shapes before the naive and reference models: the
// user's shapes, else the family's size grid up to what the baseline (or
// --tokens at the peak FLOP/s) reaches.
Result<std::vector<Model>> coarse_grid(const SearchOptions& options, const SearchResult& result) {
  if (!options.shapes.empty()) return options.shapes;
  if (options.family == Family::kMoe) {
    if (!(options.moe_grid_step > 1) || !std::isfinite(options.moe_grid_step)) {
      return Status::invalid_argument("MoE grid step must be a finite ratio > 1");
    }
    double top = std::max(result.naive_params, 2e9);
    // --tokens: the largest N that trains them at the peak FLOP/s.
    if (options.training.tokens > 0) {
      top = std::max(top, std::min(result.naive_flops / (6.0 * options.training.tokens), 1e13));
    }
    return moe_shape_grid(1e9, top, options.moe_grid_step, options.shape_template);
  }
  double top = std::max(result.naive_params, 2e8);
  if (options.training.tokens > 0) {
    top = std::max(top, std::min(result.naive_flops / (6.0 * options.training.tokens), 1e13));
  }
  return shape_grid(1e8, top, 1.6, options.shape_template);
}

// A list flag that contradicts every shape is a usage error, not a table
// of "no layout" rows.
Status check_some_shape_usable(const PlanSpace& space, const std::vector<Model>& coarse) {
  Status first;
  int usable = 0;
  for (const Model& m : coarse) {
    Status st = check_against_model(space, m);
    if (st.ok()) ++usable;
    if (!st.ok() && first.ok()) first = st;
  }
  if (usable == 0 && !first.ok()) return first.as_usage();
  return Status();
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
  LLMPLAN_RETURN_IF_ERROR(check_search_options(cluster, options));
  SearchRun run(cluster, options);
  SearchResult& result = run.result_;
  LLMPLAN_RETURN_IF_ERROR(naive_baseline(cluster, options, &result));
  // The moe family: the naive N as active parameters of the finest layout.
  const bool moe = options.family == Family::kMoe;
  run.naive_model_ =
      moe ? moe_shape_for_active(result.naive_params, options.shape_template,
                                 moe_shape_configs().back())
          : shape_for_params(result.naive_params, options.shape_template);

  LLMPLAN_ASSIGN_OR_RETURN(std::vector<Model> coarse, coarse_grid(options, result));
  LLMPLAN_RETURN_IF_ERROR(check_some_shape_usable(options.space, coarse));
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

SearchRun::Incumbents SearchRun::incumbents(const StagePlans& st) const {
  const int shapes = static_cast<int>(st.shapes.size());
  Incumbents in;
  in.have.assign(shapes, 0);
  in.any_in_time.assign(shapes, 0);
  in.score.assign(shapes, PlanScore{});
  in.fastest.assign(shapes, 0.0);
  for (int s = 0; s < shapes; ++s) {
    const Candidate& c = st.candidates[s];
    for (int i : st.order[s]) {
      if (st.state[i] != 1) continue;
      const PlanResult& r = st.results[i];
      if (!r.fits || !(r.tokens_per_s > 0)) continue;
      const PlanOutcome out = plan_outcome(c, r, cluster_, options_);
      if (!in.have[s] || in.score[s] < out.score) in.score[s] = out.score;
      in.have[s] = 1;
      in.any_in_time[s] = in.any_in_time[s] || out.in_time;
      in.fastest[s] = std::max(in.fastest[s], r.tokens_per_s);
    }
  }
  // The objective-aware stop: a shape ranked strictly below a feasible
  // shape (rank_key; select() keeps the earlier of equals, so a tie stays
  // in contention) cannot be the answer, and once it has a feasible plan
  // its row is known feasible: its other plans are not simulated (state 4,
  // Candidate::optimised false). The naive model keeps its fastest plan
  // (the baseline's days); the off-grid naive model is never the answer,
  // so it is no incumbent either.
  in.settled.assign(shapes, 0);
  if (answer_prune_) {
    double top = stage_ == Stage::kFine ? coarse_answer_key_
                                        : -std::numeric_limits<double>::infinity();
    std::vector<double> key(shapes);
    for (int s = 0; s < shapes; ++s) {
      key[s] = rank_key(st, s);
      const bool naive = st.shapes[s] == naive_model_;
      const bool selectable = !(naive && stage_ == Stage::kCoarse && naive_off_grid_);
      if (in.have[s] && in.score[s].ok == 1 && selectable) top = std::max(top, key[s]);
    }
    for (int s = 0; s < shapes; ++s) {
      in.settled[s] = in.have[s] && in.score[s].ok == 1 && key[s] < top &&
                      !(st.shapes[s] == naive_model_);
    }
  }
  return in;
}

bool SearchRun::prune_plan(StagePlans& st, const Incumbents& in, int s, int i) const {
  if (in.settled[s]) {
    st.state[i] = 4;
    return true;
  }
  const PlanOutcome& o = st.optimistic[i];
  const bool naive = stage_ == Stage::kCoarse && st.shapes[s] == naive_model_;
  if (in.have[s] && o.score < in.score[s] && (in.any_in_time[s] || !o.in_time)) {
    const double bound_tps = st.bound_s[i] > 0
                                 ? static_cast<double>(st.all[i].plan.global_batch_size) *
                                       st.shapes[s].seq_length / st.bound_s[i]
                                 : 1e300;
    if (!naive || bound_tps <= in.fastest[s]) {
      st.state[i] = o.score.ok < in.score[s].ok ? 2 : 3;
      return true;
    }
  }
  // answer_only: a plan that cannot be feasible changes neither the
  // model's feasibility nor its reason once the model has a fitting
  // plan and either a plan in time or this one cannot be in time.
  if (options_.answer_only && !naive && in.have[s] && o.score.ok == 0 &&
      (in.any_in_time[s] || !o.in_time)) {
    st.state[i] = 2;
    return true;
  }
  return false;
}

void SearchRun::take_round(StagePlans& st, const Incumbents& in, size_t chunk) {
  const int shapes = static_cast<int>(st.shapes.size());
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
        if (st.state[i] != 0 || prune_plan(st, in, s, i)) continue;
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
      if (prune_plan(st, in, s, i)) {
        --taken[s];
      } else {
        (st.lowered[i] == 2 ? round_ : pending).push_back(i);
      }
    }
  }
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
    take_round(st, incumbents(st), chunk);
    std::sort(round_.begin(), round_.end());
  }
  for (int i : round_) tasks_.push_back(st.all[i]);
}

}  // namespace llmplan::planner
