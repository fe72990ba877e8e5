// Predicted losses with their law's uncertainty in the planner's report
// (issue 29): the interval of each candidate's loss, whether a candidate is
// distinguishable from the answer, the dense-vs-MoE verdict of --family moe,
// and the caveat that scales with how far the law is extrapolated.
//
// Computed for the reported candidates only (never inside the search), with
// scaling/loss_interval.h's seeded paired draws: identical for any thread
// count. Pure functions of the search result.
#ifndef LLMPLAN_PLANNER_SEARCH_LOSS_VERDICT_H_
#define LLMPLAN_PLANNER_SEARCH_LOSS_VERDICT_H_

#include <string>

#include "planner/search/search_types.h"
#include "reports/plan_report_table.h"
#include "scaling/loss_interval.h"

namespace llmplan::planner {

// The law's query for a candidate: its active parameters, experts / top_k
// and tokens.
scaling::LossQuery loss_query(const Candidate& c);

// The interval of candidate `c`'s predicted loss under `law`.
scaling::LossInterval candidate_loss_interval(const scaling::LossLaw& law, const Candidate& c);

// Candidate i of `r` against its answer by predicted loss under `law`:
// "answer", "indistinguishable" (the paired difference lies within the law's
// uncertainty), "higher" / "lower" (beyond it), "unjudged" (the law has no
// uncertainty), "" (no plan, or no answer).
std::string loss_vs_answer(const scaling::LossLaw& law, const SearchResult& r, int i);

// The dense-vs-MoE verdict of --family moe under the chosen objective: both
// answers' predicted losses under the same law, compared with paired draws.
// Under --objective largest the two are compared by predicted loss too (MoE
// candidates are ranked by loss there already: total parameters would reward
// idle experts), so the headline is the lower-loss answer under either
// objective.
using reports::DenseVerdict;
DenseVerdict dense_verdict(const SearchOptions& o, const SearchResult& moe, const SearchResult* dense);

// How far `c` lies beyond the range `law` was fitted on (active and total
// parameters, experts, tokens per active parameter), as one caveat line, or
// "" when within it or the law states no range. Wording scales with the
// largest factor: slightly (< 2x), beyond (< 10x), far beyond (< 100x), more
// than 100x beyond.
std::string law_extrapolation_caveat(const scaling::LossLaw& law, const Candidate& c);

// The largest of those factors (1 within range, 0 when the law states none).
double law_extrapolation_factor(const scaling::LossLaw& law, const Candidate& c);

// The MoE law's caveat for `m` (one line), or "" when the law has no MoE
// term, the model is dense, or it lies within the range the term was fitted
// on (active parameters, expansion experts / top_k).
std::string moe_law_caveat(const scaling::LossLaw& law, const simulator::Model& m);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_LOSS_VERDICT_H_
