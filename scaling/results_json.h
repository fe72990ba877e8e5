// JSON forms of scaling results, for `llmplan fit --format json` and
// `llmplan optimal --format json`, as pretty-printed text (so callers need
// no JSON library). Non-finite numbers are written as null.
#ifndef LLMPLAN_SCALING_RESULTS_JSON_H_
#define LLMPLAN_SCALING_RESULTS_JSON_H_

#include <string>

#include "scaling/fit.h"
#include "scaling/law.h"
#include "scaling/optimal.h"

namespace llmplan::scaling {

// Keys: E, A, B, alpha, beta, a, b, objective, huber_delta, converged, solver_report,
// iterations, n_points, starts, starts_polished, polished_converged,
// polished_at_best, seconds, data (when `data_description` is not empty),
// and, after a bootstrap, "bootstrap": {samples, failed, confidence_level,
// seed} and "ci": {E: {low, high, std_error}, A, B, alpha, beta, a, b}.
// Thread-safe.
std::string fit_to_json(const ScalingFit& fit, const std::string& data_description);

// Keys: rule, law (law_to_json), flops, n_params, n_tokens,
// tokens_per_param, loss, limited_by_params, limited_by_tokens, and
// "budget": {gpu, gpus, days, peak_flops_per_s, mfu} when `budget` is not
// null. Thread-safe.
std::string allocation_to_json(const Allocation& allocation, const LossLaw& law,
                               const GpuBudget* budget);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_RESULTS_JSON_H_
