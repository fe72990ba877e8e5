// The order in which one pipeline stage runs its forward and backward
// micro-batch work under GPipe, 1F1B and interleaved 1F1B (Megatron-LM's
// orders, including its warm-up counts).
#ifndef LLMPLAN_SIMULATOR_SCHEDULE_H_
#define LLMPLAN_SIMULATOR_SCHEDULE_H_

#include <vector>

#include "simulator/plan.h"

namespace llmplan::simulator {

// One unit of pipeline work on a stage: the forward or backward pass of one
// micro-batch through one of the stage's model chunks (virtual stage).
struct PipelineStep {
  bool forward = true;
  int virtual_chunk = 0;  // 0 .. v-1 on this stage; model chunk = virtual_chunk * p + stage
  int micro_batch = 0;    // 0 .. m-1
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

// The steps of `stage` (0 .. p-1) in execution order: 2 * m * v steps.
// REQUIRES: validate(plan).ok().
std::vector<PipelineStep> stage_schedule(const Plan& plan, int stage);

// The largest number of micro-batch forwards whose backward has not run yet,
// per virtual chunk, over the stage's schedule (what sets activation memory).
// Returns one count per virtual chunk, taken at the instant the total peaks.
std::vector<int> peak_in_flight(const Plan& plan, int stage);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_SCHEDULE_H_
