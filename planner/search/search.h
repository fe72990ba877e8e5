// The planner's search (DESIGN.md section 6): candidate model shapes on a
// size grid, the parallel plans of each on a cluster, memory pruning,
// parallel simulation (OpenMP), selection of the largest (or lowest-loss)
// model that finishes by the deadline and within the budget, and the
// time-cost Pareto front of plans. The model families and the sizing of a
// shape to a parameter count are shapes.h's.
//
// Every function is pure apart from the optional progress callback; results
// are identical for any thread count (work is indexed, reduced in order).
#ifndef LLMPLAN_PLANNER_SEARCH_SEARCH_H_
#define LLMPLAN_PLANNER_SEARCH_SEARCH_H_

#include <cstdint>
#include <functional>
#include <limits>
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
#include "simulator/simulate.h"
#include "base/status.h"

namespace llmplan::planner {

enum class Objective { kLargest, kLoss };

// How many training tokens a model of N parameters gets (objective largest).
struct TokensRule {
  bool use_law = false;           // D = the law's compute-optimal D for N
  double tokens_per_param = 20.0; // otherwise D = tokens_per_param * N
};

// experts / top_k: the expansion the MoE law reads (1 for a dense model).
double moe_expansion(const simulator::Model& m);

// Parameters a token uses (Model::active_parameter_count(); all of them for
// a dense model), as a double.
double active_params(const simulator::Model& m);

// The law's predicted loss of `m` trained on `tokens` tokens:
// law.moe_loss(active, expansion, tokens) (law.loss(N, D) for dense models).
double predicted_loss(const scaling::LossLaw& law, const simulator::Model& m, double tokens);

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

// Copies what the search keeps of a simulation into `result`.
void record_simulation(const simulator::StepReport& report, PlanResult* result);

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
  bool operator<(const PlanScore& o) const {
    if (ok != o.ok) return ok < o.ok;
    if (primary != o.primary) return primary < o.primary;
    return neg_cost < o.neg_cost;
  }
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
PlanOutcome plan_outcome(const Candidate& c, const PlanResult& r, const simulator::Cluster& cluster,
                         const SearchOptions& options);

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

// enumerate_plans (plan_space.h) with the automatic space and one global
// batch near `target_batch_tokens` (for `schedule`).
std::vector<simulator::Plan> enumerate_plans(const simulator::Model& model,
                                             const simulator::Cluster& cluster, int gpus,
                                             double target_batch_tokens, bool all_gpus_only);

// Tokens a model of `params` parameters trains under `rule`.
double rule_tokens(const TokensRule& rule, const scaling::LossLaw& law, double params);

// Days and dollars to train `tokens` with `plan_result`.
double training_days(const PlanResult& r, double tokens);
double training_cost_usd(const PlanResult& r, double days, double usd_per_gpu_hour);

// The days that count against the deadline for `compute_days` of training
// with `r`: the expected wall-clock days including interruptions, restarts
// and checkpoints when options.reliability is enabled, else compute_days.
// The one place the deadline is tested from (select()). Provable pruning
// relies on both: wall days >= compute days, and wall days increasing in
// compute days (so in iteration time) -- see reliability.h.
double deadline_days(const simulator::Model& model, const PlanResult& r, double compute_days,
                     const simulator::Cluster& cluster, const SearchOptions& options);

// Indices of the time-cost Pareto front of points (time[i], cost[i]): no other
// point is at most as slow and as dear and strictly better in one. Sorted by
// time ascending, ties by index.
std::vector<int> pareto_front(const std::vector<double>& time, const std::vector<double>& cost);

// One plan of one shape to simulate; `shape` indexes the shapes of the same
// step (SearchRun::step_shapes).
struct PlanTask {
  int shape = 0;
  simulator::Plan plan;
};

// Simulates `plan` of `model` on `cluster`: a PlanResult with `plan`,
// gpus_used and what record_simulation keeps (fits false and zero rates when
// the simulator rejects the plan); shape 0. Pure: the same inputs always
// give the same result, so a simulation may be shared between searches.
PlanResult simulate_task(const simulator::Model& model, const simulator::Plan& plan,
                         const simulator::Cluster& cluster, const simulator::SimOptions& sim);
// The same with the cluster and cost model set up once (simulator::SimSetup,
// shared by many simulations on many threads): an identical result.
PlanResult simulate_task(const simulator::Model& model, const simulator::Plan& plan,
                         const simulator::SimSetup& setup, const simulator::SimOptions& sim);

// Simulates every task (OpenMP, options.threads; options.progress after
// each batch), results in task order with their shape index.
std::vector<PlanResult> simulate_tasks(const std::vector<simulator::Model>& shapes,
                                       const std::vector<PlanTask>& tasks,
                                       const simulator::Cluster& cluster,
                                       const SearchOptions& options);

// Evaluates `models` (all plans, in parallel) and fills candidates and plans.
// Selection is left to select().
SearchResult evaluate_shapes(const std::vector<simulator::Model>& models,
                             const simulator::Cluster& cluster, const SearchOptions& options);

// The search as a sequence of steps (the coarse size grid, then the
// refinement around its answer), each a list of plans to simulate, for
// drivers that share simulations between many searches (planner/study/frontier.h)
// or split them over processes. search() runs it with simulate_tasks, so a
// driver that supplies the same simulations gets the same answer, byte for
// byte:
//   SearchRun run = SearchRun::start(cluster, options).value();
//   while (!run.done()) run.advance(simulate(run.step_shapes(), run.step_tasks()));
//   const SearchResult& r = run.result();
class SearchRun {
 public:
  // Validates the options (search()'s errors) and prepares the first step.
  static Result<SearchRun> start(const simulator::Cluster& cluster, const SearchOptions& options);
  // start()'s errors without preparing the first step (no plan is
  // enumerated): a cheap check of many searches' options.
  static Status check(const simulator::Cluster& cluster, const SearchOptions& options);

  bool done() const { return stage_ == Stage::kDone; }
  // The current step's shapes and the plans of them to simulate (in the
  // plan space's order). REQUIRES: !done().
  const std::vector<simulator::Model>& step_shapes() const { return shapes_; }
  const std::vector<PlanTask>& step_tasks() const { return tasks_; }
  // results[i] is step_tasks()[i] simulated (simulate_task; its shape index
  // is ignored). Selects, then prepares the next step or finishes.
  // REQUIRES: !done(), results.size() == step_tasks().size().
  void advance(const std::vector<PlanResult>& results);
  // The whole search's result. REQUIRES: done().
  const SearchResult& result() const { return result_; }

 private:
  enum class Stage { kCoarse, kFine, kComplete, kDone };
  // One stage's plans (the coarse grid, the refinement) while they are
  // simulated in rounds, best lower bound first (planner/search/prune.h).
  struct StagePlans {
    std::vector<simulator::Model> shapes;
    std::vector<Candidate> candidates;
    std::vector<PlanTask> all;          // every enumerated plan, plan-space order
    std::vector<PlanResult> results;    // by index into `all`
    std::vector<char> state;            // 0 pending, 1 simulated, 2 pruned (deadline), 3 pruned (incumbent), 4 pruned (answer)
    std::vector<PlanOutcome> optimistic;  // plan_outcome at the lower-bound time
    std::vector<double> bound_s;          // the lower bound on its iteration time (0: none)
    std::vector<char> lowered;            // bound_s includes: 1 stage_lower_bound_s, 2 also lowered_lower_bound_s
    std::vector<std::vector<int>> order;  // per shape: indices into `all`, best optimistic first
    int round = 0;
  };
  SearchRun(const simulator::Cluster& cluster, const SearchOptions& options)
      : cluster_(cluster), options_(options) {}
  // start() without prepare(): validated, the naive baseline and the coarse
  // grid in shapes_.
  static Result<SearchRun> first_step(const simulator::Cluster& cluster,
                                      const SearchOptions& options);
  void prepare(std::vector<simulator::Model> shapes);
  void finish();
  // The next round of the current stage's plans into tasks_ (empty: the
  // stage is complete); prunes what the incumbents rule out.
  void next_round();
  // st.optimistic[i] from st.bound_s[i].
  void set_optimistic(StagePlans& st, int i) const;
  // A shape's rank under the objective when it does not depend on the plan
  // (answer_prune_): parameters (largest, dense) or minus the predicted loss
  // at its fixed tokens (loss ranking); a higher key wins (better_candidate).
  double rank_key(const StagePlans& st, int s) const;
  // The current stage's simulated plans as a step result (plan-space order).
  SearchResult stage_result(const StagePlans& st) const;
  // After the stages: the answer's shape gets every plan simulated (its
  // Pareto front and plots); false when nothing is left to simulate.
  bool complete_answer();
  // result_ from the stages' simulated plans (the same merges and selects
  // as the exhaustive path).
  void rebuild();
  void end_stage();

  simulator::Cluster cluster_;
  SearchOptions options_;
  Stage stage_ = Stage::kCoarse;
  SearchResult result_;       // naive baseline fields, then the merged steps
  simulator::Model naive_model_;
  bool naive_off_grid_ = false;  // appended to the coarse grid (SearchResult::naive_off_grid)
  std::vector<simulator::Model> shapes_;
  std::vector<Candidate> step_candidates_;
  std::vector<PlanTask> tasks_;
  bool prune_ = false;
  // The objective-aware stop (answer_pruning_reason empty): a model ranked
  // below a feasible one stops at its first feasible plan.
  bool answer_prune_ = false;
  bool answer_by_loss_ = false;  // rank_key: by predicted loss (else parameters)
  // The coarse stage's answer's rank key (rank_key) while the fine stage
  // runs; -inf before it or when the coarse stage has none.
  double coarse_answer_key_ = -std::numeric_limits<double>::infinity();
  std::shared_ptr<const simulator::CostModel> roofline_;  // the bounds' cost model (prune_)
  StagePlans coarse_, fine_;
  bool has_fine_ = false;
  std::vector<int> round_;   // indices into the current stage's `all` of tasks_
  StagePlans* complete_ = nullptr;  // kComplete: the stage holding the answer's shape
};

// Fills each candidate's tokens/best plan/days/cost/loss/feasibility and
// picks `best` by the objective (largest params; or lowest loss), ties by
// lower index. MoE candidates under "largest" are ranked by predicted loss
// at the rule's tokens: total parameters alone would reward idle experts,
// and for dense models the two orders agree.
void select(const simulator::Cluster& cluster, const SearchOptions& options,
            SearchResult* result);

// Whether the search may stop a model at its first feasible plan once a
// feasible model outranks it (issue 30's objective-aware search over
// sizes): "" when it may, otherwise why not. It may when a model's rank
// does not depend on its plan: tokens fixed per model (not trained to the
// deadline), no --target-loss / --inference-tokens / --unique-tokens, not
// pinned, and one comparison for every pair of shapes (all ranked by
// parameters: largest, dense; or all by predicted loss: the loss objective
// or MoE shapes; a mix of the two is not a total order). Also off under
// --exact-rows and whenever the bound's pruning is off.
std::string answer_pruning_reason(const SearchOptions& options,
                                  const std::vector<simulator::Model>& shapes);

// The whole search: validates the options (one-line InvalidArgument naming
// the flag: gpus in [1, Plan::kMaxGpus], days and budget finite, a compute
// budget that does not overflow), computes the naive baseline, evaluates a coarse size grid, then
// refines between the largest feasible and the smallest infeasible size.
//
// Monotone answers (issue 25): the coarse grid's sizes do not depend on G,
// days or budget (only how far it reaches), the naive model (which does)
// is never the answer, a refinement stays strictly between two coarse
// sizes, and a shape's plan space for 2G holds its layouts for G
// (data_parallel_widths). So for the largest dense model the answer never
// shrinks along G -> 2G, and with more days or budget; ranked by loss (the
// loss objective, MoE) it holds while the coarse answer moves by at most
// one size, which the property tests and tests/bench/ladder.sh check up to
// 2^20 GPUs.
Result<SearchResult> search(const simulator::Cluster& cluster, const SearchOptions& options);

// --inference-tokens (objective.h): search() without it for the
// compute-optimal reference, then again with every candidate training to the
// reference's loss; the answer has the least lifetime compute. search()
// calls it when options.training.inference_tokens > 0 and no target is set.
Result<SearchResult> search_for_inference(const simulator::Cluster& cluster,
                                          const SearchOptions& options);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_SEARCH_H_
