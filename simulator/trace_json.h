// Chrome-trace export of one simulated iteration: one process per pipeline
// stage, one thread (track) per stream, one complete event per task.
// Opens in Perfetto (ui.perfetto.dev) or chrome://tracing.
#ifndef LLMPLAN_SIMULATOR_TRACE_JSON_H_
#define LLMPLAN_SIMULATOR_TRACE_JSON_H_

#include <string>

#include "simulator/simulate.h"

namespace llmplan::simulator {

// The trace document. REQUIRES: report made with SimOptions::keep_timeline.
std::string chrome_trace_json(const StepReport& report);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_TRACE_JSON_H_
