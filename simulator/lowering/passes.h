// Internal to the lowering: what the driver does to a whole lowered pass
// once its layers are emitted -- tp_comm_overlap, the split of a backward
// into B and W passes (zb-h1), and the host's launch queue
// (apply_launch_queue, lowering.h). ZeRO-2/3's collectives are sharding.h's.
//
// Overlap is done analytically here so that a pass stays one task (the
// planner runs ~10^5 simulations; splitting passes per layer would multiply
// the task graph). What cannot be hidden stays an op on the pass; what is
// hidden is accounted in ChunkProgram, and costs the compute it overlaps
// cost.comm_compute_slowdown() x the hidden time (SM contention, added to
// the overlapped kernel and recorded in its LoweredOp::slowdown_s).
//  - tp_comm_overlap (Megatron-Core / Transformer Engine userbuffers): each
//    TP all-gather is pipelined with the GEMM that consumes it, each
//    reduce-scatter / all-reduce with the GEMM that produces it, in t chunks,
//    by Transformer Engine's default methods (module/base.py, initialize_ub).
//    A reduction runs as a pipeline of n = t equal chunks, which leaves
//      comm / n + (n - 1) / n x max(0, comm - gemm)
//    exposed (the last chunk's transfer follows the whole GEMM, the rest
//    shows only as far as it is longer than the GEMM). An all-gather runs as
//    a ring exchange: the GEMM starts on the local chunk and each of the
//    n - 1 steps overlaps the next chunk's GEMM, so only
//      max(0, comm - (n - 1) / n x gemm)
//    shows. Collectives next to no GEMM (embedding, cross-entropy) stay
//    exposed.
//
// Split backward (zb-h1, schedule.h): the backward is also lowered as two
// passes. B, the input gradient, is the backward without the parameters'
// weight-gradient kernels (LoweredOp::weight_grad: the weight-gradient GEMMs
// of QKV, output projection, FC1, FC2, the experts and the logits, and the
// embedding's gradient scatter); W is those kernels, unit by unit. LayerNorm
// weight gradients stay fused in B's LayerNorm kernels. Each pass is lowered
// as above on its own: tp_comm_overlap pairs B's collectives with the GEMMs
// of B (a reduction of a data-gradient GEMM's output with that GEMM, which
// produces it, rather than with the weight-gradient GEMM Megatron overlaps it
// with under 1F1B); W has no TP collectives. A unit's data-parallel gradient
// bytes (grad_ready_bytes) are ready after its last W kernel. The host's
// per-micro-batch overhead stays with B (one per backward, as 1F1B).
#ifndef LLMPLAN_SIMULATOR_LOWERING_PASSES_H_
#define LLMPLAN_SIMULATOR_LOWERING_PASSES_H_

#include <vector>

#include "simulator/cost_model.h"
#include "simulator/lowering.h"
#include "simulator/lowering/sharding.h"
#include "simulator/plan.h"

namespace llmplan::simulator::lowering {

// Splits prog->backward into prog->backward_input (B) and
// prog->backward_weight (W), unit by unit, with the units of each in
// units->input and units->weight. A unit's ready gradient bytes move to its
// last W op (it has one whenever it holds parameters whose gradient a GEMM
// or the embedding computes); ops outside the units (host overhead, the
// pipeline all-gather) stay in B.
void split_backward(ChunkProgram* prog, PassUnits* units);

// tp_comm_overlap with t > 1: pipelines each TP collective of prog's passes
// with its paired GEMM and sets prog->tp_hidden_s. Nothing otherwise.
void overlap_tp(const Plan& plan, const CostModel& cost, ChunkProgram* prog);

// Puts each pass of `prog` through the launch queue (apply_launch_queue with
// the cost model's interval and run-ahead window) and sums the passes'
// durations (forward_s, backward_s, and B's and W's when split).
void queue_launches(const CostModel& cost, ChunkProgram* prog);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_PASSES_H_
