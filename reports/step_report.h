// Reports of one simulated iteration (`llmplan simulate`): aligned text for
// terminals, Markdown for documents. JSON lives in step_report_json.h.
#ifndef LLMPLAN_REPORTS_STEP_REPORT_H_
#define LLMPLAN_REPORTS_STEP_REPORT_H_

#include <string>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "simulator/simulate.h"

namespace llmplan::reports {

// Everything a report of one simulation shows. Holds references: the
// referenced values must outlive it.
struct SimulationView {
  const simulator::Model& model;
  const simulator::Plan& plan;
  const simulator::Cluster& cluster;
  const simulator::StepReport& report;
  const std::vector<std::string>& notes;  // how the input was read
};

// One line describing a plan: "tp 8 x pp 16 x dp 8, mb 1, gb 1536, 1f1b, full recompute".
std::string describe_plan(const simulator::Plan& plan);

// Where the plan's communicators run on the cluster's NVLink domains, e.g.
// "ep 32 over NVLink (domain 72); dp 32 over NVLink + NICs (4 domains of 72,
// 8 ranks in each); 7 of 7 pipeline boundaries cross a domain". Empty unless
// the plan has expert parallelism or the domain is larger than a node (the
// HGX/DGX dense reports stay as they were).
std::string placement_line(const simulator::Plan& plan, const simulator::Cluster& cluster);
bool shows_placement(const simulator::Plan& plan, const simulator::Cluster& cluster);

std::string step_report_text(const SimulationView& view);
std::string step_report_markdown(const SimulationView& view);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_STEP_REPORT_H_
