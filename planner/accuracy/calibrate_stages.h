// The stages `llmplan calibrate` runs after (or instead of) the dense fit
// on runs files (#27): the mixture-of-experts constants on the MoE rows and
// ssd_scan_efficiency on the rows of models with Mamba layers, each fitted
// with every other constant held and then held out by model (and, for MoE,
// by release). Each stage prints its figures as whole lines through
// `on_line` (each ends in "\n") as it goes, and records them as the JSON
// object constants_to_json writes (accuracy_json.h).
#ifndef LLMPLAN_PLANNER_ACCURACY_CALIBRATE_STAGES_H_
#define LLMPLAN_PLANNER_ACCURACY_CALIBRATE_STAGES_H_

#include <boost/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "planner/accuracy/accuracy.h"

namespace llmplan::planner {

// Where a staged calibration prints its result lines.
using LineSink = std::function<void(const std::string& line)>;

// The mixture-of-experts stage of calibrate (#27): the MoE constants
// (calibrate_moe) fitted on the MoE rows of the latest release of each
// system, model and precision (every MoE row when `latest` is empty), with
// the dense fit's constants held; then held out by model (each model's
// latest rows predicted by a fit on the other models' latest rows) and by
// release (each release's rows predicted by a fit on the other releases'
// MoE rows). Sets the two MoE constants of `*constants`; `report` gets
// {"rows", "in_sample_mape", "at_bound", "held_out_by_model", ...}
// (fractions). Nothing when no row is MoE. Errors: the fits'.
Status fit_moe_constants(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                         const CalibrationOptions& copt, const LineSink& on_line,
                         AccuracyConstants* constants, boost::json::object* report);

// The hybrid stage of calibrate (#27): ssd_scan_efficiency (calibrate_ssd)
// fitted on the rows of models with Mamba layers of the latest release of
// each system, model and precision (every such row when `latest` is empty),
// every other constant held; then held out by model (each model's latest
// rows predicted by a fit on the other models' latest rows). Sets
// ssd_scan_efficiency of `*constants`; `report` gets {"rows",
// "ssd_scan_efficiency", "in_sample_mape", "all_rows_mape",
// "held_out_by_model": {model: {"rows", "mape", "ssd_scan_efficiency"}},
// "leave_one_model_out_mape"} (fractions). Nothing when no row has Mamba
// layers. Errors: the fits'.
Status fit_ssd_constant(const std::vector<AccuracyCase>& cases, const std::vector<bool>& latest,
                        const LineSink& on_line, AccuracyConstants* constants,
                        boost::json::object* report);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_CALIBRATE_STAGES_H_
