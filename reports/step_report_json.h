// JSON form of one simulated iteration. Keys are a contract for scripts:
// iteration_time_s, tokens_per_s, mfu, hfu, peak_memory_bytes,
// fits_in_memory, breakdown, caveats (an array of {"code", "text"},
// simulator/caveats.h; empty when none) (+ stages, model, plan, cluster,
// notes).
#ifndef LLMPLAN_REPORTS_STEP_REPORT_JSON_H_
#define LLMPLAN_REPORTS_STEP_REPORT_JSON_H_

#include <boost/json.hpp>

#include "reports/step_report.h"

namespace llmplan::reports {

boost::json::object breakdown_to_json(const simulator::StageBreakdown& b);
boost::json::object step_report_to_json(const SimulationView& view);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_STEP_REPORT_JSON_H_
