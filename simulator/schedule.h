// The order in which one pipeline stage runs its forward and backward
// micro-batch work under GPipe, 1F1B and interleaved 1F1B (Megatron-LM's
// orders, including its warm-up counts), and ZB-H1 (Qi et al. 2024, "Zero
// Bubble Pipeline Parallelism", ICLR, section 2.1), whose backward steps are
// split into B (input gradient) and W (weight gradient).
#ifndef LLMPLAN_SIMULATOR_SCHEDULE_H_
#define LLMPLAN_SIMULATOR_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "simulator/plan.h"

namespace llmplan::simulator {

// Which part of a micro-batch's backward a step runs: all of it (GPipe,
// 1F1B, interleaved), or, in schedules that split it (zb-h1), the input
// gradient B (which the stage sends upstream as soon as it ends) or the
// weight gradient W (which only this stage needs, so it may wait).
enum class BackwardKind : uint8_t { kFull, kInput, kWeight };

// One unit of pipeline work on a stage: the forward or backward pass of one
// micro-batch through one of the stage's model chunks (virtual stage).
struct PipelineStep {
  bool forward = true;
  int virtual_chunk = 0;  // 0 .. v-1 on this stage; model chunk = virtual_chunk * p + stage
  int micro_batch = 0;    // 0 .. m-1
  BackwardKind backward = BackwardKind::kFull;  // backward steps only
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

// The steps of `stage` (0 .. p-1) in execution order: 2 * m * v steps, or
// 3 * m for zb-h1 (F, B and W per micro-batch).
//
// ZB-H1 on stage r with w = min(p - r - 1, m) warm-up forwards (as 1F1B) and
// a lag of L = min(r, m - w) deferred weight gradients:
//   warm-up    F(0) .. F(w-1)
//   steady     for k = 0 .. m-w-1: F(w+k), B(k), then W(k-L) if k >= L
//   cool-down  for k = m-w .. m-1: B(k), then the oldest pending W
//   tail       the L W's still pending
// B runs where 1F1B runs its backward, so gradients travel upstream after B
// alone; stage r holds back r W's, the ones the cool-down bubble of 1F1B
// would leave idle time for: the last stage finishes its B's early and ends
// with p - 1 W's while the stages before it still wait for gradients. Every
// stage then has up to w + 1 + L = p micro-batches in flight (from F to W),
// the first stage's count under 1F1B, so the peak (the first stage's)
// matches 1F1B's (the paper's Figure 3, top) as long as what a deferred W
// keeps is less than what a forward stores (not so with full recomputation,
// memory.h); with equal F, B and W times
// the bubble is (p - 1)(F + B - W), a third of 1F1B's (p - 1)(F + B + W).
// REQUIRES: validate(plan).ok().
std::vector<PipelineStep> stage_schedule(const Plan& plan, int stage);

// Step k (0 .. 3m - 1) of `stage`'s zb-h1 order, exactly as stage_schedule()
// lists it, computed from k alone (no list built; the simulator's fast path
// uses it).
// REQUIRES: 0 <= stage < p, m >= 1, 0 <= k < 3m.
PipelineStep zb_h1_step(int p, int m, int stage, int k);

// The largest number of micro-batch forwards whose backward (for zb-h1: its
// B step) has not run yet, per virtual chunk, over the stage's schedule (what
// sets activation memory). Returns one count per virtual chunk, taken at the
// instant the total peaks.
std::vector<int> peak_in_flight(const Plan& plan, int stage);
// The same, always by walking stage_schedule() (peak_in_flight uses closed
// forms for GPipe and 1F1B; tests compare the two).
std::vector<int> peak_in_flight_by_steps(const Plan& plan, int stage);

// Micro-batches in flight at the memory peak of a zb-h1 stage: forwards whose
// B has not run (holding all their activations) and B's whose W has not run
// (holding what the weight-gradient GEMMs read).
struct SplitInFlight {
  int forwards = 0;
  int deferred_weight_grads = 0;
  friend bool operator==(const SplitInFlight&, const SplitInFlight&) = default;
};

// The instant of the stage's schedule where forwards * forward_bytes +
// deferred_weight_grads * weight_grad_bytes is largest (the first such
// instant), and the two counts there. For schedules without split backward
// steps deferred_weight_grads is 0 and forwards the peak_in_flight total.
// REQUIRES: validate(plan).ok(); virtual_stages == 1 for zb-h1 (validate).
SplitInFlight peak_in_flight_split(const Plan& plan, int stage, double forward_bytes,
                                   double weight_grad_bytes);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_SCHEDULE_H_
