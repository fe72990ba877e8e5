// The plan report's own helpers shared by its files (plan_report.cc: the
// CSVs and plots; plan_report_markdown.cc: report.md). Not part of the
// report's interface (plan_report.h).
#ifndef LLMPLAN_REPORTS_PLAN_REPORT_INTERNAL_H_
#define LLMPLAN_REPORTS_PLAN_REPORT_INTERNAL_H_

#include <cstdint>
#include <string>

#include "reports/plan_report.h"
#include "reports/table.h"

namespace llmplan::reports::plan_report_internal {

// Days to one decimal ("inf" beyond 1e9).
std::string days_str(double d);
// Dollars (usd_human), "n/a" without a price.
std::string usd_str(double usd, double price);
// "SwiGLU", "GELU", "squared ReLU".
const char* activation_name(const simulator::Model& m);
// Why candidate `c` is not feasible, in words.
std::string why_text(const CandidateRow& c, const PlanReport& v);
// "P10–P90 a–b days" of candidate `c`, or "error unknown".
std::string band_text(const CandidateRow& c);
// The candidates' table: every candidate (`all`) or the top ones.
Table candidate_table(const PlanReport& v, bool all);
// "uncalibrated-gpu;mfu-above-validated": the codes of a caveat mask.
std::string caveat_codes(uint32_t mask);
// A number for CSV: plain, full precision, empty when not finite.
std::string num(double x);

}  // namespace llmplan::reports::plan_report_internal

#endif  // LLMPLAN_REPORTS_PLAN_REPORT_INTERNAL_H_
