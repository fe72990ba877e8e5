// The planner's search (DESIGN.md section 6): candidate model shapes on a
// size grid, the parallel plans of each on a cluster, memory pruning,
// parallel simulation (OpenMP), selection of the largest (or lowest-loss)
// model that finishes by the deadline and within the budget, and the
// time-cost Pareto front of plans.
//
// Every function is pure apart from the optional progress callback; results
// are identical for any thread count (work is indexed, reduced in order).
#ifndef LLMPLAN_PLANNER_SEARCH_H_
#define LLMPLAN_PLANNER_SEARCH_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scaling/law.h"
#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "simulator/simulate.h"
#include "simulator/status.h"

namespace llmplan::planner {

enum class Objective { kLargest, kLoss };

// How many training tokens a model of N parameters gets (objective largest).
struct TokensRule {
  bool use_law = false;           // D = the law's compute-optimal D for N
  double tokens_per_param = 20.0; // otherwise D = tokens_per_param * N
};

struct SearchOptions {
  int gpus = 0;                 // G available
  double days = 0;              // deadline
  double budget_usd = 0;        // 0: no budget
  Objective objective = Objective::kLargest;
  TokensRule tokens;
  scaling::LossLaw law;
  int seq_length = 2048;
  int vocab_size = 51200;
  double target_batch_tokens = 4.0 * 1024 * 1024;  // global batch near this
  bool all_gpus_only = false;   // --max-gpus-used: only plans using the most GPUs
  int threads = 0;              // 0: OpenMP default
  std::shared_ptr<const simulator::CostModel> cost_model;
  std::vector<simulator::Model> shapes;  // user family (--shapes); empty: the grid
  // Called (from one thread at a time) after each batch of plans: done, total.
  std::function<void(long done, long total)> progress;
};

// One simulated plan of one model.
struct PlanResult {
  int shape = 0;                // index into SearchResult::shapes
  simulator::Plan plan;
  double iteration_time_s = 0;
  double mfu = 0;
  double peak_memory_bytes = 0;
  bool fits = false;
  double tokens_per_s = 0;
  int gpus_used = 0;
};

// Copies what the search keeps of a simulation into `result`.
void record_simulation(const simulator::StepReport& report, PlanResult* result);

// The outcome for one candidate shape.
struct Candidate {
  simulator::Model model;
  double params = 0;
  double tokens = 0;           // tokens it would train (rule or deadline-limited)
  int best_plan = -1;          // index into SearchResult::plans; -1: none fits
  double days = 0;             // with the best plan
  double cost_usd = 0;
  double loss = 0;
  bool feasible = false;       // finishes by the deadline within the budget
  std::string why;             // "", "memory", "deadline", "budget"
  int plans_evaluated = 0;
};

struct SearchResult {
  std::vector<Candidate> candidates;   // ascending params
  std::vector<PlanResult> plans;       // every simulated plan
  int best = -1;                       // index into candidates; -1: no feasible model
  long plans_evaluated = 0;
  // Naive baseline: G x days x peak, compute-optimal N, its simulated time.
  double naive_flops = 0, naive_params = 0, naive_tokens = 0, naive_days = 0;
  int naive_candidate = -1;            // index into candidates
};

// A GPT-style shape of about `params` parameters: head dim 128, hidden a
// multiple of 1024 (so t up to 8 divides heads; 256 below 2048), depth near
// hidden/128 (clamped to [4, 160]).
simulator::Model shape_for_params(double params, int seq_length, int vocab_size);

// Most sizes shape_grid() visits (1.07^1000 spans 29 orders of magnitude).
inline constexpr int kMaxGridSizes = 1000;
// Largest --tokens-per-param: far above any run so far (Llama 3 8B had about
// 1,900), and small enough that tokens = ratio x params stays finite.
inline constexpr double kMaxTokensPerParam = 1e6;

// Geometric size grid from min to max (ratio `step` > 1), deduplicated shapes,
// ascending parameter count; at most kMaxGridSizes sizes. Empty when the
// bounds are not finite and positive or step <= 1.
std::vector<simulator::Model> shape_grid(double min_params, double max_params, double step,
                                         int seq_length, int vocab_size);

// The plans worth simulating for `model` on at most `gpus` GPUs of `cluster`:
// t | heads, t <= GPUs per node; p with every stage getting layers; d the most
// that fits (and half of it unless all_gpus_only); b in {1,2,4}; global batch
// the multiple of d*b nearest target_batch_tokens/seq; interleaving (v=2);
// SP with t > 1; distributed optimizer; recompute none, or full when the
// analytic memory estimate says none does not fit. Plans whose weights and
// optimizer state alone overflow memory are dropped.
std::vector<simulator::Plan> enumerate_plans(const simulator::Model& model,
                                             const simulator::Cluster& cluster, int gpus,
                                             double target_batch_tokens, bool all_gpus_only);

// Tokens a model of `params` parameters trains under `rule`.
double rule_tokens(const TokensRule& rule, const scaling::LossLaw& law, double params);

// Days and dollars to train `tokens` with `plan_result`.
double training_days(const PlanResult& r, double tokens);
double training_cost_usd(const PlanResult& r, double days, double usd_per_gpu_hour);

// Indices of the time-cost Pareto front of points (time[i], cost[i]): no other
// point is at most as slow and as dear and strictly better in one. Sorted by
// time ascending, ties by index.
std::vector<int> pareto_front(const std::vector<double>& time, const std::vector<double>& cost);

// Evaluates `models` (all plans, in parallel) and fills candidates and plans.
// Selection is left to select().
SearchResult evaluate_shapes(const std::vector<simulator::Model>& models,
                             const simulator::Cluster& cluster, const SearchOptions& options);

// Fills each candidate's tokens/best plan/days/cost/loss/feasibility and
// picks `best` by the objective (largest params; or lowest loss), ties by
// lower index.
void select(const simulator::Cluster& cluster, const SearchOptions& options,
            SearchResult* result);

// The whole search: validates the options (one-line InvalidArgument naming
// the flag: gpus in [1, Plan::kMaxGpus], days and budget finite, a compute
// budget that does not overflow), computes the naive baseline, evaluates a coarse size grid, then
// refines between the largest feasible and the smallest infeasible size.
Result<SearchResult> search(const simulator::Cluster& cluster, const SearchOptions& options);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_H_
