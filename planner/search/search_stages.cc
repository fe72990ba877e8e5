// SearchRun's stages (search.h): a stage's result, the refinement around
// the coarse answer, the answer's remaining plans, and the final counts.
#include <algorithm>
#include <numeric>

#include "planner/search/prune.h"
#include "planner/search/search.h"
#include "planner/search/search_internal.h"

namespace llmplan::planner {

using simulator::Cluster;
using simulator::Model;
using search_internal::assemble_step;
using search_internal::contains;
using search_internal::merge;

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

}  // namespace llmplan::planner
