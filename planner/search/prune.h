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
//   T >= model_flops_per_step(B) / (world_size x best_compute_rate) + iteration_overhead_s
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
// (1F1B, interleaved, ZB-H1). Tests check bound <= simulated on every
// preset model and many plans (tests/planner/prune_test.cc).
double iteration_time_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                                    const simulator::Cluster& cluster);

// A tighter lower bound from the lowered model chunks of one stage
// (simulator/lowering.h, the roofline `cost`), in seconds:
//
//   T >= m x sum over the stage's chunks c of (forward_s + backward_s of c)
//        + iteration_overhead_s
//
// with m = B / (d b) micro-batches per replica, the backward as its B and W
// passes under a split-backward schedule (ZB-H1), and the stage r = j mod p
// holding chunk j = 1 when the plan has three or more chunks (a middle one),
// else the last; an interleaved stage holds v chunks, r, r + p, ...,
// r + (v - 1) p (issue 30: counting only chunk j left interleaved plans'
// bound about v times too low). Proof: every micro-batch runs through every
// chunk; the pass durations are the ones the simulator's engine runs back
// to back on the compute stream of the stage holding the chunks
// (simulate_fast.cc, simulate_graph.cc; StageBreakdown's parts, which add
// up to the stage's end, include each pass op's duration x m), so that
// stage is busy at least m x the sum, whatever the schedule, and the
// iteration ends no earlier than its stage ends, plus the iteration
// overhead. 0 when the plan is invalid. v chunks' lowering, each about a
// third of simulate()'s set-up; the search computes it only for plans the
// FLOP bound did not already rule out.
//
// `cache` (may be null; simulator/lowering_cache.h), a cache of `cluster`
// and `roofline`, supplies the chunks' pass times, each key lowered once:
// the bound is the same, bit for bit, with or without it.
double lowered_lower_bound_s(const simulator::Model& model, const simulator::Plan& plan,
                             const simulator::Cluster& cluster,
                             const simulator::CostModel& roofline,
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
