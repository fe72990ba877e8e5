// Internal to the lowering: ZeRO-2/3 (FSDP) data-parallel collectives inside
// the passes, and how much of them compute hides.
//
// With sharding_stage() >= 2 and a shard group of S > 1 ranks, the pass is
// cut into units (embedding, each layer, head; in backward order for the
// backward). Stage 3 all-gathers each unit's bf16 parameters (2 bytes per
// parameter of this TP rank, over the shard group) before its forward and
// again before its backward (with full recomputation that gather serves the
// recomputed forward too); stages 2 and 3 reduce-scatter each unit's
// gradients (grad_reduce_bytes() per parameter) after its backward, every
// micro-batch. With overlap_param_gather the gather of unit i+1 is
// prefetched during unit i's compute; with overlap_grad_reduce the
// reduce-scatter of unit i runs during unit i+1's backward. The collectives
// running during a unit share one network and run back to back: exposed =
// max(0, their sum - the unit's compute), the rest hidden (and costs
// comm_compute_slowdown() x itself on the unit's last kernel). Unit 0's
// gather, the last unit's reduce-scatter and every collective whose overlap
// is off are exposed in full. Units of a chunk are equal layers, so this
// per-unit rule is the steady state of FSDP's prefetch (one unit ahead).
// An MoE layer's routed-expert parameters go over Placement::expert_data,
// back to back with the rest of the unit's.
//
// Split backward (zb-h1, passes.h): ZeRO-3 gathers each unit's parameters
// before its B (W = X^T dY reads no parameters); ZeRO-2/3 reduce-scatter
// each unit's gradients after its W (the gradient is final only then),
// overlapped with the next unit's W.
#ifndef LLMPLAN_SIMULATOR_LOWERING_SHARDING_H_
#define LLMPLAN_SIMULATOR_LOWERING_SHARDING_H_

#include <cstddef>
#include <vector>

#include "simulator/cost_model.h"
#include "simulator/lowering.h"
#include "simulator/plan.h"

namespace llmplan::simulator::lowering {

// A run of ops of one pass that holds one unit's parameters (the embedding,
// a layer, the head): [begin, end) in the pass, with its parameters on this
// TP rank.
struct Unit {
  size_t begin = 0, end = 0;
  double parameters = 0;         // sharded over the shard group
  double expert_parameters = 0;  // routed experts: sharded over Placement::expert_data
};

// The units of a chunk's passes, as lowered (input and weight: the split
// backward's B and W passes, empty without one).
struct PassUnits {
  std::vector<Unit> forward, backward, input, weight;
};

// Inserts the ZeRO-2/3 collectives' exposed parts into the passes of `prog`
// (forward, backward and, when split, B and W), sets prog->fsdp_hidden_s
// and the collectives the forward and backward issue. Nothing below
// sharding stage 2 or when no group shards anything.
void shard_passes(const Plan& plan, const Placement& placement, const CostModel& cost,
                  const PassUnits& units, ChunkProgram* prog);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_SHARDING_H_
