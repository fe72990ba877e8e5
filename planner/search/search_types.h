// The search's shared types (DESIGN.md section 6): what a search is asked
// (SearchOptions, with the token rule and the training-time band), what it
// simulates (PlanTask, PlanResult), how a plan ranks within its shape
// (PlanScore, PlanOutcome) and what it returns (Candidate, SearchResult).
// Plain values, read by the search (search.h), the pruning (prune.h), the
// reports and the studies; the functions that fill them are search.h's.
#ifndef LLMPLAN_PLANNER_SEARCH_SEARCH_TYPES_H_
#define LLMPLAN_PLANNER_SEARCH_SEARCH_TYPES_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "planner/search/enumeration_cache.h"
#include "planner/search/objective.h"
#include "planner/search/plan_space.h"
#include "planner/search/pricing.h"
#include "planner/search/reliability.h"
#include "planner/search/shapes.h"
#include "scaling/law.h"
#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/error_band.h"
#include "simulator/lowering_cache.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::planner {

enum class Objective { kLargest, kLoss };

// How many training tokens a model of N parameters gets (objective largest).
struct TokensRule {
  bool use_law = false;           // D = the law's compute-optimal D for N
  double tokens_per_param = 20.0; // otherwise D = tokens_per_param * N
};

// The training-time band from a GPU preset's held-out validation errors:
// measured/predicted iteration-time ratios at two probabilities, and the
// ratio at the requested confidence (the feasibility test uses days x
// confidence_ratio). Unknown: no validation data ("error unknown").
// The ratios depend on the plan (simulator::error_band(gpu, features)):
// the top-level ones are the pooled band, `cells` the band of each plan
// feature combination, and of() picks a plan's.
struct TimeBand {
  bool known = false;
  double p_low = 0.1, p_high = 0.9;
  double low_ratio = 1.0, high_ratio = 1.0;
  double confidence = 0;           // 0: the point estimate decides
  double confidence_ratio = 1.0;   // ratio at `confidence`
  int samples = 0;
  std::string source;
  // The runs the ratios come from (simulator::band_group_keys, or
  // simulator::kPooledBandKey).
  std::string group = simulator::kPooledBandKey;
  // Indexed by cell_index(); empty: the pooled band for every plan.
  std::vector<TimeBand> cells;

  // A planner plan's features (the Megatron-Core stack) as an index into
  // `cells`: moe, fp8, pp > 1, ZeRO 2-3 as bits, the GPU bucket above them.
  static constexpr int kCells = 16 * 3;
  static int cell_index(const simulator::BandFeatures& f) {
    return (f.moe ? 1 : 0) + (f.fp8 ? 2 : 0) + (f.pipeline ? 4 : 0) + (f.sharded ? 8 : 0) +
           16 * f.gpu_bucket;
  }
  // The band of `plan` on `model`. Thread-safe.
  const TimeBand& of(const simulator::Model& model, const simulator::Plan& plan) const {
    if (cells.empty()) return *this;
    return cells[cell_index(simulator::band_features(model, plan))];
  }
};

struct SearchOptions {
  int gpus = 0;                 // G available
  double days = 0;              // deadline
  double budget_usd = 0;        // 0: no budget
  Objective objective = Objective::kLargest;
  TokensRule tokens;
  scaling::LossLaw law;
  // The automatic grid's template (family_template); its seq and vocab are
  // also the defaults of --shapes entries.
  Family family = Family::kGpt;
  simulator::Model shape_template = family_template(Family::kGpt);
  PlanSpace space;              // the plans tried for every shape
  TimeBand band;                // error band; confidence_ratio scales days for feasibility
  // How far apart the MoE grid's active sizes are (ratio > 1): the coarse
  // grid of the moe family (refined 1.07 around the answer).
  double moe_grid_step = 2.0;
  int threads = 0;              // 0: OpenMP default
  std::shared_ptr<const simulator::CostModel> cost_model;
  std::vector<simulator::Model> shapes;  // user family (--shapes, --model); empty: the grid
  // --model: one pinned model; the answer is its best plan whether or not
  // it meets the deadline (Candidate::feasible says whether it does).
  bool pinned = false;
  // How a GPU-hour is priced (--cost-model), for the reports; the search
  // itself prices with the cluster's usd_per_gpu_hour, which the CLI sets to
  // pricing.usd_per_gpu_hour().
  Pricing pricing;
  // --tokens, --unique-tokens, --inference-tokens (objective.h); zero: off.
  TrainingObjective training;
  // Failures, checkpoints and restarts (issue 28): when enabled, the
  // deadline counts expected wall-clock days (deadline_days); disabled
  // (--no-interruptions), wall days are compute days, as before.
  Reliability reliability;
  // Called (from one thread at a time) after each batch of plans: done, total.
  std::function<void(long done, long total)> progress;
  // --exhaustive: simulate every plan of every shape (no pruning with the
  // iteration-time lower bound, planner/search/prune.h).
  bool exhaustive = false;
  // --exact-rows: every model's row keeps its best plan. Off (the default),
  // a model that cannot change the answer (answer_pruning_reason) stops at
  // its first feasible plan: its row shows a feasible plan, not the best.
  bool exact_rows = false;
  // Only the answer (its model and best plan) and each model's feasibility
  // and reason (Candidate::feasible, why) are wanted: the frontier's cells.
  // The search then also skips a plan that cannot be feasible once its model
  // has a fitting plan (and a plan in time, or the plan cannot be in time),
  // so an infeasible model's "at best" row is not exact, and does not
  // simulate the answer's model's other plans (no Pareto front or plots).
  // The answer's best plan is exact either way: the bound never prunes a
  // plan that could tie its model's best.
  bool answer_only = false;
  // Enumerations shared with other searches of the same cluster and plan
  // space (enumeration_cache.h; the frontier's cells); null: each search
  // enumerates its own. Results are identical either way.
  std::shared_ptr<EnumerationCache> enumeration_cache;
  // Pass times of lowered chunks shared by the search's lowered bounds
  // (prune.h, simulator/lowering_cache.h), across its steps and with other
  // searches of the same cluster and cost model (the frontier's cells of
  // one hardware entry). Null: a pruning SearchRun keeps its own. Results
  // are identical either way.
  std::shared_ptr<simulator::LoweringCache> lowering_cache;
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
  uint32_t caveats = 0;         // simulator caveat bits (StepReport)
};

// The outcome for one candidate shape.
struct Candidate {
  simulator::Model model;
  double params = 0;           // all parameters (every expert)
  double active_params = 0;    // per token (= params for a dense model); tokens and 6 N D use it
  double tokens = 0;           // tokens it would train (rule or deadline-limited)
  int best_plan = -1;          // index into SearchResult::plans; -1: none fits
  double days = 0;             // with the best plan: wall-clock days (deadline_days)
  double compute_days = 0;     // the same without interruptions (tokens / tokens per s)
  double cost_usd = 0;
  double loss = 0;
  bool feasible = false;       // finishes by the deadline within the budget
  // "" (feasible), "no-layout" (the plan space has no layout for this many
  // GPUs), "memory" (no layout fits in GPU memory), "deadline", "budget".
  std::string why;
  int plans_evaluated = 0;     // simulated
  long layouts = 0;            // layouts the plan space has for this shape
  long most_layout_gpus = 0;   // the most GPUs one of them uses (the batch bounds it)
  double batch_tokens = 0;     // the automatic ladder's rung for it (0: listed batches)
  long memory_pruned = 0;      // layouts dropped by the analytic memory estimate
  int plans_fit = 0;           // simulated plans that fit in memory
  int plans_in_time = 0;       // of those, finishing by the deadline (at the confidence)
  int plans_in_budget = 0;     // of those, also within the budget
  // false: the search stopped at the model's first feasible plan because it
  // ranks below a feasible model (it cannot change the answer; issue 30), so
  // best_plan, days and cost are one feasible plan's, an upper bound on its
  // best days. --exact-rows and --exhaustive keep every row optimised.
  bool optimised = true;
  // The training objective's numbers (objective.h; 0 when off):
  double epochs = 0;           // --unique-tokens: tokens / unique tokens
  double repeat_penalty = 0;   // --unique-tokens: loss minus the loss on as many distinct tokens
  double lifetime_flops = 0;   // --inference-tokens: 6 N D + 2 N T (N active)
};

// A plan's rank within its shape (select()): feasible first, then fewest
// days (largest, pinned) / most tokens (loss), then cheapest; compared
// lexicographically.
struct PlanScore {
  int ok = 0;
  double primary = 0, neg_cost = 0;
  // Member order: ok, then primary, then neg_cost (a NaN compares false).
  auto operator<=>(const PlanScore& o) const = default;
};

// What select() makes of one fitting plan of candidate `c`: tokens, days,
// cost, the deadline test and the score. Non-decreasing in r.tokens_per_s
// (the pruning's bound relies on it: planner/search/prune.h); every
// deadline and budget comparison of the search goes through here.
struct PlanOutcome {
  double tokens = 0, days = 0, cost_usd = 0;
  double compute_days = 0;  // days without interruptions (issue 28); = days when off
  bool in_time = false;
  PlanScore score;
};

struct SearchResult {
  std::vector<Candidate> candidates;   // ascending params
  std::vector<PlanResult> plans;       // every simulated plan
  int best = -1;                       // index into candidates; -1: no feasible model
  long plans_evaluated = 0;
  // Naive baseline: G x days x peak, compute-optimal N, its simulated time.
  double naive_flops = 0, naive_params = 0, naive_tokens = 0, naive_days = 0;
  int naive_candidate = -1;            // index into candidates
  // The naive model is not a shape of the size grid (it depends on G and
  // the days): it is simulated for the baseline but never the answer, so
  // the answer comes from grids that do not move with G (issue 25).
  bool naive_off_grid = false;
  bool pinned = false;                 // SearchOptions::pinned: best is the pinned model if any plan fits
  // --inference-tokens: the compute-optimal answer matched (objective.h).
  InferenceReference inference_reference;
  // Pruning (planner/search/prune.h): "" when the lower bound was used,
  // otherwise why every plan was simulated (pruning_unsafe_reason).
  std::string pruning_off;
  // Plans enumerated but never simulated, by the bound that proved them
  // unable to be their shape's best plan: their lower-bound time already
  // misses the deadline or the budget while the shape has a feasible plan
  // (deadline), or cannot beat the shape's best simulated plan (incumbent).
  long plans_pruned_deadline = 0;
  long plans_pruned_incumbent = 0;
  // Plans of models that rank below a feasible model under the objective
  // (they cannot be the answer), not simulated once their model had a
  // feasible plan (Candidate::optimised false).
  long plans_pruned_answer = 0;
};

// Largest --tokens-per-param: far above any run so far (Llama 3 8B had about
// 1,900), and small enough that tokens = ratio x params stays finite.
inline constexpr double kMaxTokensPerParam = 1e6;

// One plan of one shape to simulate; `shape` indexes the shapes of the same
// step (SearchRun::step_shapes).
struct PlanTask {
  int shape = 0;
  simulator::Plan plan;
};


}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_SEARCH_TYPES_H_
