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
#include "planner/search/search_types.h"
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

// experts / top_k: the expansion the MoE law reads (1 for a dense model).
double moe_expansion(const simulator::Model& m);

// Parameters a token uses (Model::active_parameter_count(); all of them for
// a dense model), as a double.
double active_params(const simulator::Model& m);

// The law's predicted loss of `m` trained on `tokens` tokens:
// law.moe_loss(active, expansion, tokens) (law.loss(N, D) for dense models).
double predicted_loss(const scaling::LossLaw& law, const simulator::Model& m, double tokens);

// Copies what the search keeps of a simulation into `result`.
void record_simulation(const simulator::StepReport& report, PlanResult* result);

// What select() makes of plan `r` of candidate `c` (PlanOutcome,
// search_types.h): tokens, days, cost, the deadline test and the score.
PlanOutcome plan_outcome(const Candidate& c, const PlanResult& r, const simulator::Cluster& cluster,
                         const SearchOptions& options);

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
  // Per shape of a stage, what its simulated plans establish for pruning:
  // whether it has a fitting plan, whether one is in time, the best score,
  // the most tokens per second, and whether the objective-aware stop has
  // settled it (answer_prune_).
  struct Incumbents {
    std::vector<char> have, any_in_time, settled;
    std::vector<PlanScore> score;
    std::vector<double> fastest;
  };
  Incumbents incumbents(const StagePlans& st) const;
  // Whether plan i of shape s is ruled out now (and then marks its state).
  bool prune_plan(StagePlans& st, const Incumbents& in, int s, int i) const;
  // Takes up to `chunk` plans per shape into round_ that the bounds (the
  // lowered ones computed as needed) do not rule out.
  void take_round(StagePlans& st, const Incumbents& in, size_t chunk);
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
