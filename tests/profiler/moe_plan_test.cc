#include "profiler/moe_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "profiler/moe_profile_json.h"

namespace llmplan::profiler {
namespace {

using simulator::Pass;

MoeModel qwen3_30b() { return {2048, 128, 8, 768, RouterScore::kSoftmax}; }

size_t count(const std::vector<MoeJob>& jobs, MoeOp op, int64_t e = -1) {
  return static_cast<size_t>(std::count_if(jobs.begin(), jobs.end(), [&](const MoeJob& j) {
    return j.op == op && (e < 0 || j.local_experts == e);
  }));
}

TEST(MoePlan, GridFollowsLocalExpertsTokensAndRowCap) {
  MoeSettings s;
  s.models = {qwen3_30b()};
  s.local_experts = {1, 32};
  s.m_sweep = {16, 4096};
  s.tokens = {4096};
  ASSERT_TRUE(validate_moe_settings(s).ok());
  const std::vector<MoeJob> jobs = plan_moe_jobs(s);
  // e=1: m 16, 4096 and the balanced 4096*8/1 = 32768; strided + grouped, no skew.
  EXPECT_EQ(count(jobs, MoeOp::kExpertFc1, 1), 3u * 3 * 2);
  // e=32: m 16 and 4096*8/32 = 1024 (m=4096 is 131072 rows > 65536); four variants.
  EXPECT_EQ(count(jobs, MoeOp::kExpertFc1, 32), 2u * 3 * 4);
  EXPECT_EQ(count(jobs, MoeOp::kExpertFc2), count(jobs, MoeOp::kExpertFc1));
  EXPECT_EQ(count(jobs, MoeOp::kRouterGemm), 3u);
  EXPECT_EQ(count(jobs, MoeOp::kRouterTopk), 2u);
  EXPECT_EQ(count(jobs, MoeOp::kPermute), 2u);
  EXPECT_EQ(count(jobs, MoeOp::kUnpermute), 2u);
  EXPECT_EQ(jobs.size(), 36u + 48u + 9u);
  for (const MoeJob& j : jobs) {
    if (j.op != MoeOp::kExpertFc1 && j.op != MoeOp::kExpertFc2) continue;
    EXPECT_LE(j.local_experts * j.m, s.max_rows) << describe_moe_job(j);
    ASSERT_EQ(j.expert_m.size(), static_cast<size_t>(j.local_experts));
    EXPECT_EQ(std::accumulate(j.expert_m.begin(), j.expert_m.end(), int64_t{0}),
              j.local_experts * j.m);
  }
  const auto fc1 = std::find_if(jobs.begin(), jobs.end(), [](const MoeJob& j) {
    return j.op == MoeOp::kExpertFc1 && j.local_experts == 32 && j.m == 1024 &&
           j.pass == Pass::kBackwardWeight && j.impl == GroupedImpl::kLoop;
  });
  ASSERT_NE(fc1, jobs.end());
  EXPECT_EQ(fc1->n, 2 * 768);
  EXPECT_EQ(fc1->k, 2048);
  EXPECT_EQ(fc1->split, TokenSplit::kSkewed);
  EXPECT_DOUBLE_EQ(fc1->flops, 2.0 * 32 * 1024 * 2048 * 1536);
}

TEST(MoePlan, SkewedSplitKeepsTotalAndAlignment) {
  for (int64_t e : {2, 4, 8, 16, 32}) {
    for (int64_t m : {16, 64, 512, 16384}) {
      const std::vector<int64_t> split = skewed_split(m, e);
      ASSERT_EQ(split.size(), static_cast<size_t>(e));
      EXPECT_EQ(std::accumulate(split.begin(), split.end(), int64_t{0}), e * m);
      for (int64_t x : split) {
        EXPECT_GE(x, 0);
        EXPECT_EQ(x % 16, 0) << "e=" << e << " m=" << m;
      }
    }
  }
  EXPECT_EQ(skewed_split(1024, 8),
            (std::vector<int64_t>{128, 384, 640, 896, 1152, 1408, 1664, 1920}));
}

TEST(MoePlan, SharedKernelsAreListedOnceAndBadCountsSkipped) {
  MoeSettings s;
  MoeModel mixtral{4096, 8, 2, 14336, RouterScore::kSoftmax};
  s.models = {mixtral, mixtral};
  s.local_experts = {1, 3, 16};  // 3 does not divide 8; 16 exceeds it
  s.m_sweep = {64};
  s.tokens = {1024};
  const std::vector<MoeJob> jobs = plan_moe_jobs(s);
  s.models = {mixtral};
  EXPECT_EQ(plan_moe_jobs(s).size(), jobs.size());
  for (const MoeJob& j : jobs) EXPECT_LE(j.local_experts, 1) << describe_moe_job(j);
  // Router jobs of another model with the same E, k and score share the top-k.
  MoeModel other = mixtral;
  other.hidden = 2048;
  s.models = {mixtral, other};
  const std::vector<MoeJob> two = plan_moe_jobs(s);
  EXPECT_EQ(count(two, MoeOp::kRouterTopk), 2u);
  EXPECT_EQ(count(two, MoeOp::kRouterGemm), 6u);
  EXPECT_EQ(count(two, MoeOp::kPermute), 4u);
}

TEST(MoePlan, MemoryBoundOpsCountBytes) {
  MoeSettings s;
  s.models = {{7168, 256, 8, 2048, RouterScore::kSigmoid}};
  s.local_experts = {4};
  s.m_sweep = {16};
  s.tokens = {4096};
  const std::vector<MoeJob> jobs = plan_moe_jobs(s);
  const double rows = 4096.0 * 8, h = 7168;
  for (const MoeJob& j : jobs) {
    if (j.op == MoeOp::kPermute && j.pass == Pass::kForward) {
      EXPECT_DOUBLE_EQ(j.bytes, 2 * rows * h * 2);
    }
    if (j.op == MoeOp::kUnpermute && j.pass == Pass::kBackward) {
      EXPECT_DOUBLE_EQ(j.bytes, 4096 * h * 2 + 2 * rows * h * 2);
    }
    if (j.op == MoeOp::kRouterTopk && j.pass == Pass::kForward) {
      EXPECT_DOUBLE_EQ(j.bytes, 4096.0 * 256 * 2 + rows * 8);
      EXPECT_EQ(j.model.score, RouterScore::kSigmoid);
    }
  }
  const std::string listing = format_moe_plan(s, jobs);
  EXPECT_NE(listing.find("h=7168 E=256 k=8 f=2048 sigmoid"), std::string::npos) << listing;
  EXPECT_NE(listing.find("router_topk fwd sigmoid T=4096 E=256 k=8"), std::string::npos);
  EXPECT_NE(listing.find("MoE kernels (" + std::to_string(jobs.size()) + ")"), std::string::npos);
}

TEST(MoePlan, ValidationNamesTheFlag) {
  struct Case {
    MoeModel model;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {{2048, 8, 9, 768, RouterScore::kSoftmax}, "--moe-top-k"},
           {{2050, 8, 2, 768, RouterScore::kSoftmax}, "--moe-hidden"},
           {{2048, 1024, 8, 768, RouterScore::kSoftmax}, "--moe-experts"},
           {{2048, 8, 2, 0, RouterScore::kSoftmax}, "--moe-expert-ffn"},
       }) {
    MoeSettings s;
    s.models = {c.model};
    const Status st = validate_moe_settings(s);
    ASSERT_FALSE(st.ok()) << c.expect;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
  }
  MoeSettings s;
  s.models = {qwen3_30b()};
  s.m_sweep = {0};
  EXPECT_NE(validate_moe_settings(s).message().find("--moe-m"), std::string::npos);
  s.m_sweep = {16};
  s.max_rows = 0;
  EXPECT_NE(validate_moe_settings(s).message().find("--moe-max-rows"), std::string::npos);
  EXPECT_FALSE(validate_moe_settings(MoeSettings{}).ok());
}

TEST(MoeProfileJson, WritesKindGridAndRates) {
  MoeSettings s;
  s.models = {qwen3_30b()};
  s.local_experts = {4};
  s.m_sweep = {64};
  s.tokens = {256};
  MoeProfile p;
  p.header.gpu.name = "NVIDIA H100 80GB HBM3";
  p.header.software.cublas = "13.1.0";
  p.command_line = "llmplan-profile --moe ...";
  p.settings = s;
  for (const MoeJob& j : plan_moe_jobs(s)) {
    OpTiming t;
    t.time_s = t.min_time_s = t.max_time_s = t.event_time_s = 1e-4;
    t.repeats = 3;
    t.kernel_names = {"k"};
    p.entries.push_back({j, t});
  }
  Result<std::string> text = moe_profile_to_json(p);
  ASSERT_TRUE(text.ok()) << text.status().message();
  const boost::json::object root = boost::json::parse(*text).as_object();
  EXPECT_EQ(root.at("kind").as_string(), "llmplan-moe-profile");
  EXPECT_EQ(root.at("gpu").at("name").as_string(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(root.at("software").at("cublas").as_string(), "13.1.0");
  EXPECT_EQ(root.at("command_line").as_string(), "llmplan-profile --moe ...");
  EXPECT_EQ(root.at("grid").at("models").as_array().size(), 1u);
  const boost::json::array& kernels = root.at("kernels").as_array();
  ASSERT_EQ(kernels.size(), p.entries.size());
  const boost::json::object& first = kernels[0].as_object();
  EXPECT_EQ(first.at("op").as_string(), "expert_fc1");
  EXPECT_EQ(first.at("impl").as_string(), "strided_batched");
  EXPECT_FALSE(first.contains("expert_m"));
  EXPECT_NEAR(first.at("tflops").as_double(), p.entries[0].job.flops / 1e-4 / 1e12, 1e-9);
  const auto skewed = std::find_if(kernels.begin(), kernels.end(), [](const boost::json::value& v) {
    return v.at("op").as_string() == "expert_fc1" && v.at("split").as_string() == "skewed";
  });
  ASSERT_NE(skewed, kernels.end());
  EXPECT_EQ(skewed->at("expert_m").as_array().size(), 4u);
  const boost::json::object& last = kernels.back().as_object();
  EXPECT_EQ(last.at("op").as_string(), "unpermute");
  EXPECT_TRUE(last.contains("gbps"));
  // A zero time makes an infinite rate: refused rather than written as null.
  p.entries[0].timing.time_s = 0;
  EXPECT_FALSE(moe_profile_to_json(p).ok());
}

}  // namespace
}  // namespace llmplan::profiler
