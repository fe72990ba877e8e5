// Provable pruning for the planner's search (issue 30): a lower bound on a
// plan's iteration time that needs no simulation, and the predicate that
// says when the search may use it. The search (search.cc, SearchRun) skips a
// plan only when the bound proves it cannot become its shape's best plan, so
// every candidate's best plan, the answer and the answer's Pareto front are
// those of the exhaustive search (--exhaustive); what is skipped is counted
// (SearchResult::plans_pruned_*).
#ifndef LLMPLAN_PLANNER_SEARCH_PRUNE_H_
#define LLMPLAN_PLANNER_SEARCH_PRUNE_H_

#include <string>

#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/lowering_cache.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::planner {

struct SearchOptions;

// The fastest any kernel of `plan` computes on `cluster`'s GPU under the
// roofline cost model, FLOP/s: the peak of each precision the plan's kernels
// may run in times the largest efficiency the roofline applies to it
// (roofline.h: a GEMM runs at gemm_efficiency (fp8_gemm_efficiency,
// fp4_gemm_efficiency) times shape factors in (0, 1], flash attention at
// flash_attention_efficiency times a factor <= 1; memory-bound kernels do no
// model FLOPs).
double best_compute_rate_flops_per_s(const simulator::Plan& plan, const simulator::GpuSpec& gpu);

// A lower bound on simulate(model, plan, cluster).iteration_time_s with the
// roofline cost model (SimOptions::cost_model null), in seconds, computed
// without lowering or replay:
//
//   T >= g x model_flops_per_step(B) / (world_size x best_compute_rate) + iteration_overhead_s
//
// with g = (p / m) / (1 - (1 - 1/m)^p) >= 1 for 1F1B and GPipe plans with p >
// 1 and v = 1 (m micro-batches per replica), g = 1 otherwise.
//
// Proof. simulate() returns the critical stage's end time plus the
// iteration overhead. Every model FLOP of the step (Model::
// model_flops_per_step: the projection, attention and MLP/expert GEMMs and
// the logits) is executed by a GEMM or flash-attention kernel on some GPU;
// the t x cp x d GPUs of a stage split their stage's work (expert
// imbalance only adds to the busiest), so the busiest GPU computes at least
// model_flops / world_size FLOPs, serially on its compute stream, at no more
// than best_compute_rate each (recomputation, communication, the pipeline
// bubble, host overheads and SM contention only add time). The bubble is
// left out, which keeps the bound valid for every schedule of the plan space
// (1F1B, interleaved, ZB-H1) with g = 1.
//
// The factor g (the pipeline's fill and drain without per-stage FLOPs). Let
// w_r be stage r's pass time per micro-batch (forward + backward, all its
// passes) and W = sum over r of w_r. Under 1F1B and GPipe (v = 1, full
// backward passes) lowered_bound's argument below gives, sends and the
// optimizer left out, T >= max over r of (m w_r + sum over j < r of w_j):
// stage r starts after micro-batch 0's forwards through stages 0 .. r - 1,
// runs m w_r, and after its last backward the last micro-batch's backwards
// through stages r - 1 .. 0 still run, and F_j + B_j = w_j. For any w_r >= 0
// with sum W that maximum is at least c = W / (1 - (1 - 1/m)^p): were every
// term below c, P_(r+1) = P_r + w_r < P_r + (c - P_r) / m for the prefix sums
// P_r, so c - P_p > c (1 - 1/m)^p, i.e. W < c (1 - (1 - 1/m)^p), a
// contradiction. And W >= model_flops / (m d t cp rate) = p x
// model_flops / (m x world_size x rate): each stage's device computes at
// least its stage's share of each micro-batch's model FLOPs (the argument
// above), at no more than the rate. So T >= g x model_flops / (world_size x
// rate) with g = (p / m) / (1 - (1 - 1/m)^p) (g = 1 at p = 1; about 1.5 at m
// = p = 8; m = 1: the stages' work one after another). Interleaved and zb-h1
// plans keep g = 1 (their chain is not the stages' whole work).
// Tests check bound <= simulated on every preset model and many plans
// (tests/planner/prune_test.cc).
double iteration_time_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                                    const simulator::Cluster& cluster);

// A tighter lower bound from the plan's lowered model chunks
// (simulator/lowering.h, lower_plan_chunks with the roofline `cost`): the
// busiest stage's work plus the pipeline's unavoidable fill and drain.
//
// Notation: m = B / (d b) micro-batches per replica; chunk j = c p + r runs
// on stage r (c < v); F_j, B_j its forward and backward pass durations as
// the engine runs them on the compute stream (ChunkProgram::forward_s,
// backward_s; with a split backward (zb-h1) B_j is the input-gradient pass
// backward_input_s and W_j the weight pass backward_weight_s, else W_j = 0);
// sf_j, sb_j the pipeline transfers chunk j sends forward (to j + 1) and
// backward (to j - 1) (simulator::pipeline_transfer_s). Stage r runs
//   busy_r = m x sum over its chunks j of (F_j + B_j + W_j)
// and, for each stage r, with k_r the number of W steps its schedule runs
// after its last B step (zb-h1; 0 otherwise):
//   fill_r  = sum over j < r of (F_j + sf_j)
//   D_r     = max over t <= r of [ sum over t <= u < r of (sb_(u+1) + B_u) + k_t W_t ]
//   T >= max over r of [ fill_r + busy_r - k_r W_r + D_r ] + iteration_overhead_s.
//
// Proof, from the engine's dependency rules (simulate_internal.h,
// simulate_fast.cc, simulate_reference.cc; tests/simulator check that the
// fast path and the reference engine agree bit for bit): (1) a stage runs
// its steps one after another on its compute stream in stage_schedule()'s
// order, each pass starting no earlier than the previous one ended and
// lasting its duration (a pass cut into pieces for data-parallel buckets
// runs its pieces back to back, the same ops' sum); (2) the forward of chunk
// j > 0 for micro-batch i starts no earlier than the end of chunk j - 1's
// forward of i plus sf_(j-1) (the send runs on the pipe stream after that
// pass, and the consumer waits for the send's end), and the backward (B
// step) of chunk j < p v - 1 no earlier than chunk j + 1's backward of i
// plus sb_(j+1); W steps wait only for their stage; (3) the iteration time
// is the latest stage end plus the iteration overhead, and a stage ends
// with its optimizer step, after its last pass. The first step of every
// schedule of the plan space (GPipe, 1F1B, zb-h1, interleaved) on stage r
// is the forward of micro-batch 0 through its first chunk, j = r, so by (2)
// it starts at >= fill_r (chunks 0 .. r - 1 run on stages 0 .. r - 1). Its
// last step other than a W is the backward of micro-batch m - 1 through
// chunk r (GPipe, 1F1B and zb-h1 run the B's in micro-batch order;
// interleaved, with m a multiple of p as validate() requires, ends its
// backward order with virtual chunk 0 of the last micro-batch). By (1) that
// backward ends at >= fill_r + busy_r - k_r W_r (every pass of the stage but
// the k_r W's after it ran before it). By (2) the backward of micro-batch m
// - 1 through chunk t < r ends sum over t <= u < r of (sb_(u+1) + B_u)
// later, and stage t still runs its k_t W steps after it; the stage's end,
// and T, are at least that (t = r: the stage's own k_r W's, so the bound is
// never below fill_r + busy_r). Durations and transfers are >= 0. Without
// the fill and drain this is the busiest stage's m x work (every schedule
// runs all of it); with equal stages and no transfers 1F1B's term is the
// textbook (p - 1)(F + B) bubble, zb-h1's (p - 1)(F + B - W) and
// interleaved's about 1 / v of 1F1B's. Transfers count only where a pass
// waits for them by (2); the optimizer step and data-parallel communication
// are left out (they only add). Tests check bound <= simulated on every
// preset model and many plans, and that the fill and drain raise it where
// the bubble is large (tests/planner/prune_test.cc).
//
// Cost: the lowering of the plan's few distinct chunk kinds (first, middle,
// last; about simulate()'s set-up) and O(p v) sums; the search computes it
// only for plans the FLOP bound did not already rule out. Thread-safe when
// `cost` is; pure.
struct LoweredBound {
  // Each with the iteration overhead and the rounding slack; 0 when the plan
  // is invalid or a duration is not finite.
  double busiest_stage_s = 0;  // max over r of busy_r (no fill or drain)
  double pipeline_s = 0;       // the bound above; >= busiest_stage_s
};
LoweredBound lowered_bound(const simulator::Model& model, const simulator::Plan& plan,
                           const simulator::Cluster& cluster, const simulator::CostModel& cost);

// lowered_bound(...).pipeline_s.
double lowered_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                             const simulator::Cluster& cluster,
                             const simulator::CostModel& roofline);

// A cheaper lowered bound, one stage's work without the pipeline's fill and
// drain, in seconds:
//
//   T >= m x sum over the stage's chunks c of (forward_s + backward_s of c)
//        + iteration_overhead_s
//
// (the backward as its B and W passes under zb-h1) for the stage r = j mod p
// holding chunk j = 1 when the plan has three or more chunks (a middle one),
// else the last; an interleaved stage's v chunks r, r + p, ... Proof: the
// stage runs all those passes one after another on its compute stream (rule
// (1) of lowered_bound), so it is busy at least that long, and the
// iteration ends no earlier than its stage ends. It is at most
// lowered_bound's busiest_stage_s, and lowers only the stage's v chunks (one
// without interleaving), so the search computes it first and the pipeline
// bound only for plans it does not rule out. 0 when the plan is invalid.
//
// `cache` (may be null; simulator/lowering_cache.h), a cache of `cluster`
// and `cost`, supplies the chunks' pass times, each key lowered once: the
// bound is the same, bit for bit, with or without it.
double stage_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                           const simulator::Cluster& cluster, const simulator::CostModel& cost,
                           simulator::LoweringCache* cache = nullptr);

// Whether the search may prune with the bound under `options`: "" when it
// may, otherwise why not (the search then simulates every plan, as
// --exhaustive does). Pruning is proven only for the roofline cost model
// (a --profile or --allreduce-lut cost model has no known ceiling) and for
// the objectives `largest` and `loss` as select() scores them today; any
// other objective or mode must be added here once its score is shown to be
// monotone in a plan's tokens per second.
std::string pruning_unsafe_reason(const SearchOptions& options);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_PRUNE_H_
