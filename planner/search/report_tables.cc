// The search as the report's tables (report_tables.h).
#include "planner/search/report_tables.h"

#include "planner/search/loss_verdict.h"
#include "planner/search/objective.h"
#include "planner/search/plan_space.h"
#include "planner/search/reliability.h"
#include "planner/search/search.h"
#include "planner/search/shapes.h"

namespace llmplan::planner {
namespace {

constexpr double kSecondsPerDay = 86400.0;

reports::BandRow band_row(const TimeBand& b) {
  return {b.known,      b.p_low,   b.p_high, b.low_ratio, b.high_ratio, b.confidence,
          b.confidence_ratio, b.samples, b.source, b.group};
}

// The band of candidate `c`'s best plan (TimeBand::of); the pooled band
// when it has none.
const TimeBand& candidate_band(const SearchOptions& o, const SearchResult& r, const Candidate& c) {
  if (c.best_plan < 0) return o.band;
  return o.band.of(c.model, r.plans[c.best_plan].plan);
}

// Days of plan `p` to train `tokens`: expected wall-clock days with
// failures (deadline_days), compute days with --no-interruptions.
double plan_days(const simulator::Cluster& cluster, const SearchOptions& o, const SearchResult& r,
                 const PlanResult& p, double tokens) {
  return deadline_days(r.candidates[p.shape].model, p, training_days(p, tokens), cluster, o);
}

// Indices into r.plans of the time-cost Pareto front of the answer's
// fitting plans (its tokens), sorted by time.
std::vector<int> answer_pareto(const simulator::Cluster& cluster, const SearchOptions& o,
                               const SearchResult& r) {
  if (r.best < 0) return {};
  const Candidate& c = r.candidates[r.best];
  std::vector<int> idx;
  std::vector<double> time, cost;
  for (int i = 0; i < static_cast<int>(r.plans.size()); ++i) {
    const PlanResult& p = r.plans[i];
    if (p.shape != r.best || !p.fits || !(p.tokens_per_s > 0)) continue;
    const double d = plan_days(cluster, o, r, p, c.tokens);
    idx.push_back(i);
    time.push_back(d);
    cost.push_back(d * 24.0 * p.gpus_used);  // GPU-hours (dollars when priced)
  }
  std::vector<int> out;
  for (int k : pareto_front(time, cost)) out.push_back(idx[k]);
  return out;
}

reports::CandidateRow candidate_row(const simulator::Cluster& cluster, const SearchOptions& o,
                                    const SearchResult& r, int i) {
  const Candidate& c = r.candidates[i];
  reports::CandidateRow row;
  row.model = c.model;
  row.params = c.params;
  row.active_params = c.active_params;
  row.tokens = c.tokens;
  row.best_plan = c.best_plan;
  row.days = c.days;
  row.compute_days = c.compute_days;
  row.cost_usd = c.cost_usd;
  row.loss = c.loss;
  row.feasible = c.feasible;
  row.why = c.why;
  row.plans_evaluated = c.plans_evaluated;
  row.layouts = c.layouts;
  row.most_layout_gpus = c.most_layout_gpus;
  row.batch_tokens = c.batch_tokens;
  row.memory_pruned = c.memory_pruned;
  row.plans_fit = c.plans_fit;
  row.plans_in_time = c.plans_in_time;
  row.plans_in_budget = c.plans_in_budget;
  row.optimised = c.optimised;
  row.epochs = c.epochs;
  row.repeat_penalty = c.repeat_penalty;
  row.lifetime_flops = c.lifetime_flops;
  row.band = band_row(candidate_band(o, r, c));
  if (c.batch_tokens > 0) {
    row.optimal_batch_tokens = compute_optimal_batch_tokens(
        6.0 * c.active_params * rule_tokens(o.tokens, o.law, c.active_params));
  }
  if (c.best_plan >= 0) row.loss_interval = candidate_loss_interval(o.law, c);
  row.loss_vs_answer = loss_vs_answer(o.law, r, i);
  if (o.reliability.enabled && c.best_plan >= 0) {
    row.goodput = goodput(c.model, r.plans[c.best_plan].plan, cluster, o.reliability,
                          c.compute_days * kSecondsPerDay);
  }
  return row;
}

reports::PlanRow plan_row(const simulator::Cluster& cluster, const SearchOptions& o,
                          const SearchResult& r, const PlanResult& p) {
  const Candidate& c = r.candidates[p.shape];
  const double tokens =
      c.tokens > 0 ? c.tokens
                   : rule_tokens(o.tokens, o.law, c.active_params > 0 ? c.active_params : c.params);
  return {p.shape,     p.plan,     p.iteration_time_s, p.mfu,
          p.peak_memory_bytes, p.fits, p.tokens_per_s, p.gpus_used,
          p.caveats,   plan_days(cluster, o, r, p, tokens)};
}

// `r`'s table, with the answer's Monte Carlo.
reports::ResultTable result_table(const simulator::Cluster& cluster, const SearchOptions& o,
                                  const SearchResult& r) {
  reports::ResultTable t;
  for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
    t.candidates.push_back(candidate_row(cluster, o, r, i));
  }
  t.plans.reserve(r.plans.size());
  for (const PlanResult& p : r.plans) t.plans.push_back(plan_row(cluster, o, r, p));
  t.best = r.best;
  t.plans_evaluated = r.plans_evaluated;
  t.naive_flops = r.naive_flops;
  t.naive_params = r.naive_params;
  t.naive_tokens = r.naive_tokens;
  t.naive_days = r.naive_days;
  t.naive_candidate = r.naive_candidate;
  t.pinned = r.pinned;
  t.inference_reference = r.inference_reference;
  t.pruning_off = r.pruning_off;
  t.plans_pruned_deadline = r.plans_pruned_deadline;
  t.plans_pruned_incumbent = r.plans_pruned_incumbent;
  t.plans_pruned_answer = r.plans_pruned_answer;
  t.failures = o.reliability.enabled;
  if (o.reliability.enabled && r.best >= 0) {
    const TimeBand& b = candidate_band(o, r, r.candidates[r.best]);
    const BandRatios band{b.known, b.p_low, b.p_high, b.low_ratio, b.high_ratio};
    t.answer_distribution = monte_carlo(t.candidates[r.best].goodput, band);
  }
  t.pareto = answer_pareto(cluster, o, r);
  return t;
}

reports::SearchInputs search_inputs(const SearchOptions& o) {
  reports::SearchInputs in;
  in.gpus = o.gpus;
  in.days = o.days;
  in.budget_usd = o.budget_usd;
  in.loss_objective = o.objective == Objective::kLoss;
  in.tokens_use_law = o.tokens.use_law;
  in.tokens_per_param = o.tokens.tokens_per_param;
  in.trains_to_deadline = trains_to_deadline(o);
  in.law = o.law;
  in.family = to_string(o.family);
  in.shape_template = o.shape_template;
  in.shapes = o.shapes;
  for (const MoeShapeConfig& c : moe_shape_configs()) {
    in.moe_layouts.push_back({c.experts, c.top_k, c.expert_ffn_per_hidden, c.shared_experts});
  }
  in.moe_grid_step = o.moe_grid_step;
  in.plan_space = describe(o.space);
  in.global_batch_tokens = o.space.global_batch_tokens;
  in.global_batch = o.space.global_batch;
  in.default_batch_ladder_tokens = default_batch_ladder_tokens();
  in.batch_ladder_top_tokens = kBatchLadderTopTokens;
  in.band = band_row(o.band);
  in.band_has_cells = !o.band.cells.empty();
  in.pricing = o.pricing;
  const TrainingObjective& t = o.training;
  in.training = {t.tokens, t.unique_tokens, t.inference_tokens, t.serving_mfu, t.target_loss};
  in.reliability = o.reliability;
  return in;
}

}  // namespace

reports::PlanReport plan_report_tables(const PlanReportView& v) {
  reports::PlanReport t;
  t.cluster = v.cluster;
  t.options = search_inputs(v.options);
  t.result = result_table(v.cluster, v.options, v.result);
  t.law_name = v.law_name;
  t.notes = v.notes;
  t.best_report = v.best_report;
  t.caveats = v.caveats;
  t.command_line = v.command_line;
  t.plots_written = v.plots_written;
  if (v.dense_result != nullptr && v.dense_options != nullptr) {
    t.has_dense = true;
    t.dense_law = v.dense_options->law.name;
    t.dense = result_table(v.cluster, *v.dense_options, *v.dense_result);
  }
  t.verdict = dense_verdict(v.options, v.result, v.dense_result);
  return t;
}

}  // namespace llmplan::planner
