#include "simulator/plan_json.h"

#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::parse_json;

Plan unusual_plan() {
  Plan p = testing::layout_plan(4, 8, 16, 1024);
  p.micro_batch_size = 2;
  p.virtual_stages = 3;
  p.schedule = Schedule::kInterleaved;
  p.recompute = Recompute::kSelective;
  p.sequence_parallel = true;
  p.distributed_optimizer = true;
  p.flash_attention = false;
  p.precision = Precision::kFp16;
  p.grad_bucket_bytes = 40LL << 20;
  p.overlap_grad_reduce = false;
  p.pipeline_scatter_gather = true;
  p.grad_reduce_in_fp32 = false;
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  return p;
}

TEST(PlanJson, RoundTripsEveryField) {
  const Plan p = unusual_plan();
  Plan back;
  ASSERT_NE(back, p);
  ASSERT_TRUE(apply_plan_json(plan_to_json(p), "p", &back).ok());
  EXPECT_EQ(back, p);
}

TEST(PlanJson, AppliesOnlyTheFieldsPresent) {
  Plan p = unusual_plan();
  ASSERT_TRUE(
      apply_plan_json(parse_json(R"({"tp": 2, "schedule": "1f1b", "virtual_stages": 1})"), "p", &p)
          .ok());
  Plan expected = unusual_plan();
  expected.tensor_parallel = 2;
  expected.schedule = Schedule::kOneFOneB;
  expected.virtual_stages = 1;
  EXPECT_EQ(p, expected);
}

TEST(PlanJson, ReadsZeroBubbleSchedule) {
  Plan p = testing::layout_plan(1, 4, 1, 8);
  ASSERT_TRUE(apply_plan_json(parse_json(R"({"schedule": "zb-h1"})"), "p", &p).ok());
  EXPECT_EQ(p.schedule, Schedule::kZbH1);
  EXPECT_EQ(plan_to_json(p).as_object().at("schedule").as_string(), "zb-h1");
  EXPECT_TRUE(validate(p).ok());
  p.virtual_stages = 2;
  const Status s = validate(p);
  EXPECT_NE(s.message().find("plan.virtual_stages: zb-h1 needs virtual_stages = 1"),
            std::string::npos)
      << s.message();
}

TEST(PlanJson, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"tensor_parallel": 2})", "run.json: plan: unknown key \"tensor_parallel\""},
      {R"({"tp": "two"})", "run.json: plan.tp: expected an integer, got a string"},
      {R"({"dp": 0})", "run.json: plan.dp: must be >= 1, got 0"},
      {R"({"micro_batch": -4})", "run.json: plan.micro_batch: must be >= 1, got -4"},
      {R"({"grad_bucket_bytes": -1})", "run.json: plan.grad_bucket_bytes: must be >= 0, got -1"},
      {R"({"schedule": "zero-bubble"})",
       "run.json: plan.schedule: unknown value \"zero-bubble\" (expected one of: gpipe, 1f1b, "
       "interleaved, zb-h1)"},
      {R"({"recompute": true})", "run.json: plan.recompute: expected a string, got a boolean"},
      {R"({"precision": "fp4"})", "run.json: plan.precision: unknown value \"fp4\""},
      {R"({"flash_attention": "yes"})", "run.json: plan.flash_attention: expected true or false"},
  };
  for (const Case& c : cases) {
    Plan p = unusual_plan();
    Status s = apply_plan_json(parse_json(c.json), "run.json: plan", &p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
    EXPECT_EQ(p, unusual_plan()) << "left unchanged on error: " << c.json;
  }
}

}  // namespace
}  // namespace llmplan::simulator
