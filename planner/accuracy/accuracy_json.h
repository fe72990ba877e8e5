// JSON forms for the accuracy commands: the validation report and the
// calibrated constants file (the preset format: a "roofline" and a "network"
// object, each with a "source" string).
#ifndef LLMPLAN_PLANNER_ACCURACY_ACCURACY_JSON_H_
#define LLMPLAN_PLANNER_ACCURACY_ACCURACY_JSON_H_

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "base/status.h"

namespace llmplan::planner {

// An error summary as JSON: {"rows", "mape", "median_ape", "max_ape",
// "mean_signed_error"} (fractions).
boost::json::object summary_json(const ErrorSummary& e);

// {"source": ..., "rows": N, "mape", "median_ape", "max_ape", "mean_signed_error",
//  "groups": {name: [{key, rows, mape, ...}]}, "runs": [{line, ..., measured_s, predicted_s, ape}]}
// Errors are fractions (0.05 = 5 %). InvalidArgument naming the JSON path if
// a number is not finite (JSON cannot hold it).
Result<std::string> validation_to_json(const std::string& source,
                                       const std::vector<AccuracyCase>& cases,
                                       const std::vector<double>& predicted,
                                       const std::vector<std::string>& notes);

// {"gpu": NAME, "roofline": {"source": ..., fields}, "network": {"source": ..., fields}}.
// InvalidArgument if a constant is not finite (an infinite host_run_ahead_s
// is left out, meaning no limit).
// `moe` (may be null): calibrate's mixture-of-experts figures, written as
// the "moe" object ({"rows", "in_sample_mape", "held_out_by_model": {model:
// {"rows", "mape"}}, "leave_one_model_out_mape", "held_out_by_release",
// "leave_one_release_out_mape"}; fractions, not percent).
// `hybrid` (may be null): calibrate --hybrid-only's figures, written as the
// "hybrid" object (fit_ssd_constant, planner/accuracy/calibrate_stages.h).
Result<std::string> constants_to_json(const std::string& gpu, const AccuracyConstants& constants,
                                      const std::string& roofline_source,
                                      const std::string& network_source,
                                      const boost::json::object* moe = nullptr,
                                      const boost::json::object* hybrid = nullptr);

// Reads a constants file as written above (or any object with optional
// "roofline" and "network" objects of preset fields, and optional "gpu",
// "source", "note", "description" strings and "moe" object, which is
// documentation and ignored) onto *constants. Errors, one
// line naming the file and JSON path: ParseError for malformed JSON,
// InvalidArgument for an unknown key, a wrong type or a bad value (then
// *constants is unchanged). The file is read with read_input_file
// (base/input_file.h: at most 16 MiB). Thread-safe.
Status read_constants_file(const std::string& path, AccuracyConstants* constants);
// The same for text in memory; `source_name` names it in messages.
Status read_constants_text(std::string_view text, const std::string& source_name,
                           AccuracyConstants* constants);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_ACCURACY_JSON_H_
