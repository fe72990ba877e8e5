// JSON form of a LossLaw, as stored in presets/laws.json and in users' law
// files (a result of `llmplan fit` is accepted too: law_from_fit_json):
//
//   {"name": "chinchilla", "description": "...", "source": "...",
//    "E": 1.69, "A": {"value": 406.4, "source": "..."}, "B": ..., "alpha": ...,
//    "beta": ...,
//    "moe": {"a": ..., "b": ..., "c": ..., "d": ..., "e_start": ..., "e_max": ...,
//            "max_fitted_active_params": ..., "max_fitted_expansion": ...,
//            "source": "...", "assumption": "..."}}
//
// "moe" is optional (scaling/law.h MoeLawTerm); without it the law is dense.
// Each constant may be a bare number or a {value, source} object. Boost.JSON
// stays in this adapter; the rest of scaling/ sees plain LossLaw values.
#ifndef LLMPLAN_SCALING_LAW_JSON_H_
#define LLMPLAN_SCALING_LAW_JSON_H_

#include <boost/json.hpp>
#include <string>

#include "scaling/law.h"
#include "base/status.h"

namespace llmplan::scaling {

// Reads one law object. `path` names it in messages ("laws.json: laws[0]").
// Required: name, E, A, B, alpha, beta; optional: source, description, moe
// (required inside it: a, b, c, d, e_start, e_max).
// Errors (InvalidArgument, one line, naming path.field): a missing or
// mistyped field, an unknown key, or constants that fail validate().
// Thread-safe.
Result<LossLaw> law_from_json(const boost::json::value& v, const std::string& path);

// The law in a result of `llmplan fit` (scaling::fit_to_json: E, A, B,
// alpha, beta and the solver's keys), named "fit" with the file as its
// source. Errors (InvalidArgument naming path.field): a missing constant, a
// key fit_to_json does not write, "converged": false (an unconverged fit is
// not a law to plan with), or constants that fail validate(). Thread-safe.
Result<LossLaw> law_from_fit_json(const boost::json::value& v, const std::string& path);

// The inverse of law_from_json, with bare numbers (round-trips exactly);
// empty source/description are left out. Thread-safe.
boost::json::value law_to_json(const LossLaw& law);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LAW_JSON_H_
