// Issue 14: context parallelism as an axis of the plan space (--cp LIST),
// shared by the planner, `sweep` and `schedule`.
#include <gtest/gtest.h>

#include <set>

#include "planner/cli/plan_space_flags.h"
#include "planner/search/plan_space.h"
#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

presets::Catalog catalog() { return fixtures::builtin_catalog(); }
simulator::Cluster h100() { return fixtures::builtin_cluster("dgx-h100"); }

simulator::Model llama_at(int seq) {
  simulator::Model m = catalog().model("llama3-70b").value();
  m.seq_length = seq;
  return m;
}

std::set<int> cps_of(const std::vector<simulator::Plan>& plans) {
  std::set<int> out;
  for (const simulator::Plan& p : plans) out.insert(p.context_parallel);
  return out;
}

TEST(PlanSpaceCp, AutomaticSizesFollowTheSequence) {
  EXPECT_EQ(auto_context_parallel(llama_at(2048)), (std::vector<int>{1}));
  EXPECT_EQ(auto_context_parallel(llama_at(8192)), (std::vector<int>{1}));
  EXPECT_EQ(auto_context_parallel(llama_at(32768)), (std::vector<int>{1, 2, 4, 8}));
  // 2 * cp must divide the sequence: 12 * 1024 + 4 tokens take cp 2 only.
  EXPECT_EQ(auto_context_parallel(llama_at(12 * 1024 + 4)), (std::vector<int>{1, 2}));
}

TEST(PlanSpaceCp, EnumeratesCpWhereItSplitsTheSequence) {
  PlanSpace s;
  s.tp = {8};
  s.pp = {4};
  s.micro_batch = {1};
  s.virtual_stages = {1};
  s.global_batch = {64};
  s.recompute = {simulator::Recompute::kFull};
  // Default at 8192 tokens: cp 1 only.
  EXPECT_EQ(cps_of(enumerate_plans(llama_at(8192), h100(), 512, s)), (std::set<int>{1}));
  // Default at 32K tokens: 1, 2, 4, 8, each using t * cp * p * d <= 512 GPUs.
  const auto plans = enumerate_plans(llama_at(32768), h100(), 512, s);
  EXPECT_EQ(cps_of(plans), (std::set<int>{1, 2, 4, 8}));
  std::set<std::pair<int, int>> cp_d;
  for (const simulator::Plan& p : plans) {
    EXPECT_LE(p.world_size(), 512);
    // d the most that fits, 512 / (8 * cp * 4), or that halved k times
    // (data_parallel_widths), never below 64 / 4 / 8 = 2.
    const int d_max = 16 / p.context_parallel;
    EXPECT_TRUE(d_max % p.data_parallel == 0 && ((d_max / p.data_parallel) & (d_max / p.data_parallel - 1)) == 0)
        << p.context_parallel << " " << p.data_parallel;
    EXPECT_GE(p.data_parallel, std::min(d_max / 2, 2));
    cp_d.emplace(p.context_parallel, p.data_parallel);
  }
  for (int cp : {1, 2, 4, 8}) {
    EXPECT_TRUE(cp_d.count({cp, 16 / cp})) << cp;
    EXPECT_TRUE(cp_d.count({cp, 8 / cp})) << cp;
  }
  // Listed values are exactly the ones tried; a size that does not split the
  // sequence (3: 6 chunks of 8192) is skipped.
  s.context_parallel = {2, 3};
  EXPECT_EQ(cps_of(enumerate_plans(llama_at(8192), h100(), 512, s)), (std::set<int>{2}));
}

TEST(PlanSpaceCp, ShardingAxesCountTheCpRanks) {
  // d = 1 but cp = 2: the gradients are still shared by 2 ranks, so ZeRO and
  // the gradient-reduce overlap keep their meaning.
  simulator::Plan base;
  base.context_parallel = 2;
  PlanSpace s;
  s.zero_stage = {0, 1};
  const auto plans = expand_sharding_axes(s, base);
  std::set<int> stages;
  for (const simulator::Plan& p : plans) stages.insert(p.zero_stage);
  EXPECT_EQ(stages, (std::set<int>{0, 1}));
}

TEST(PlanSpaceCp, FlagParsesAndContradictionsNameIt) {
  PlanSpaceFlags f;
  f.cp = "1,2,4";
  Result<PlanSpace> s = to_plan_space(f);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->context_parallel, (std::vector<int>{1, 2, 4}));
  f.cp = "0";
  EXPECT_EQ(to_plan_space(f).status().message(), "--cp: must be an integer from 1 to 1048576, got 0");
  f.cp = "";
  f.given.insert("--cp");
  EXPECT_EQ(to_plan_space(f).status().message(), "--cp: empty list (give comma-separated values)");
  PlanSpace bad;
  bad.context_parallel = {3, 5};
  const Status st = check_against_model(bad, llama_at(8192));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--cp 3,5"), std::string::npos) << st.message();
  EXPECT_NE(describe(*s).find("cp 1,2,4"), std::string::npos) << describe(*s);
}

}  // namespace
}  // namespace llmplan::planner
