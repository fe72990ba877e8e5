// ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism"): its order,
// its split backward, its timing against hand-worked cases and its memory.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <tuple>

#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/roofline.h"
#include "simulator/schedule.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;
using testing::GemmOnlyCost;
using testing::gpt;

Plan zb_plan(int p, int m) {
  Plan plan;
  plan.pipeline_parallel = p;
  plan.global_batch_size = m;
  plan.schedule = Schedule::kZbH1;
  return plan;
}

// A step as "F3", "B3" or "W3".
std::string name(const PipelineStep& s) {
  const char* kind = s.forward ? "F" : s.backward == BackwardKind::kWeight ? "W" : "B";
  return kind + std::to_string(s.micro_batch);
}

TEST(ZeroBubbleSchedule, WarmsUpLike1F1BAndDefersOneWPerStage) {
  // p = 3, m = 4: stage r warms up with 2 - r forwards and holds r W's back.
  const Plan plan = zb_plan(3, 4);
  const std::vector<std::string> want[] = {
      {"F0", "F1", "F2", "B0", "W0", "F3", "B1", "W1", "B2", "W2", "B3", "W3"},
      {"F0", "F1", "B0", "F2", "B1", "W0", "F3", "B2", "W1", "B3", "W2", "W3"},
      {"F0", "B0", "F1", "B1", "F2", "B2", "W0", "F3", "B3", "W1", "W2", "W3"}};
  for (int r = 0; r < 3; ++r) {
    std::vector<std::string> got;
    for (const PipelineStep& s : stage_schedule(plan, r)) got.push_back(name(s));
    EXPECT_EQ(got, want[r]) << "stage " << r;
  }
}

TEST(ZeroBubbleSchedule, EveryMicroBatchRunsFThenBThenWOnce) {
  for (int p : {2, 4, 8}) {
    for (int m : {1, 3, 8, 17}) {
      const Plan plan = zb_plan(p, m);
      for (int r = 0; r < p; ++r) {
        std::map<int, std::string> seen;  // micro-batch -> kinds in order
        for (const PipelineStep& s : stage_schedule(plan, r)) {
          seen[s.micro_batch] += name(s).substr(0, 1);
        }
        ASSERT_EQ(seen.size(), static_cast<size_t>(m));
        for (const auto& [mb, kinds] : seen) EXPECT_EQ(kinds, "FBW") << p << " " << m << " " << r;
      }
    }
  }
}

TEST(ZeroBubbleSchedule, KeepsOtherSchedulesWholeBackward) {
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.global_batch_size = 8;
  for (Schedule s : {Schedule::kGpipe, Schedule::kOneFOneB}) {
    plan.schedule = s;
    for (const PipelineStep& step : stage_schedule(plan, 1)) {
      EXPECT_EQ(step.backward, BackwardKind::kFull);
    }
  }
}

// Fixed pass times: the QKV GEMM's forward takes F, its data-gradient GEMM B
// and its weight-gradient GEMM W; every other kernel and every collective is
// free. With one layer per stage a stage's F, B and W steps take F, B and W.
class FixedPassCost final : public CostModel {
 public:
  FixedPassCost(double f, double b, double w) : f_(f), b_(b), w_(w) {}
  double kernel_time_s(const KernelDesc& k) const override {
    if (k.kind != KernelKind::kQkvGemm) return 0.0;
    return k.pass == Pass::kForward ? f_ : k.pass == Pass::kBackwardData ? b_ : w_;
  }
  double collective_time_s(const CollectiveDesc&) const override { return 0.0; }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  std::string describe() const override { return "fixed pass times"; }

 private:
  double f_, b_, w_;
};

// p = 3 stages, m = 4 micro-batches, F = 1 ms, B = 2 ms, W = 1 ms, no
// communication, worked by hand from the orders of the first test:
//   stage 2: F0 [2,3] B0 [3,5]; stage 1: B0 [5,7]; stage 0: F0 F1 F2 [0,3],
//   then waits for B0's gradient until 7: B0 [7,9] W0 [9,10] F3 [10,11]
//   B1 [11,13] W1 [13,14] B2 [14,16] W2 [16,17] B3 [17,19] W3 [19,20].
//   Its gradients come in time: stage 1 ends B1 at 10, B2 at 14, B3 at 17
//   (stage 1: F2 [7,8] B1 [8,10] W0 [10,11] F3 [11,12] B2 [12,14] W1 [14,15]
//   B3 [15,17] W2 W3 [17,19]; stage 2 ends its B3 at 15 and its W3 at 18).
// Iteration 20 ms; stage 0 is busy 4 x (1 + 2 + 1) = 16 ms, its one wait
// [3, 7] is the bubble: (p - 1) B = 4 ms (the paper's (p - 1)(F + B - W)
// with F = W). 1F1B, whose backward takes B + W = 3 ms and crosses each
// stage whole: m (F + B + W) + (p - 1)(F + B + W) = 16 + 8 = 24 ms, bubble
// 8 ms.
TEST(ZeroBubbleSimulate, EqualsTheHandWorkedCase) {
  const Model model = gpt(3, 256, 4, 128, 1000);
  SimOptions options;
  options.cost_model = std::make_shared<FixedPassCost>(1e-3, 2e-3, 1e-3);
  Plan plan = zb_plan(3, 4);
  auto zb = simulate(model, plan, a100_cluster(), options);
  ASSERT_TRUE(zb.ok()) << zb.status().message();
  EXPECT_NEAR(zb->iteration_time_s, 20e-3, 1e-12);
  EXPECT_EQ(zb->critical_stage, 0);
  EXPECT_NEAR(zb->breakdown.compute_s, 16e-3, 1e-12);
  EXPECT_NEAR(zb->breakdown.bubble_s, 4e-3, 1e-12);
  EXPECT_NEAR(zb->stages[1].time.end_s, 19e-3, 1e-12);
  EXPECT_NEAR(zb->stages[2].time.end_s, 18e-3, 1e-12);

  plan.schedule = Schedule::kOneFOneB;
  auto one = simulate(model, plan, a100_cluster(), options);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_NEAR(one->iteration_time_s, 24e-3, 1e-12);
  EXPECT_NEAR(one->breakdown.bubble_s, 8e-3, 1e-12);
}

// With F = B = W the bubble is (p - 1) F, a third of 1F1B's (p - 1) 3F
// (the paper's section 2.1), for any m >= p.
TEST(ZeroBubbleSimulate, BubbleIsAThirdOf1F1BsWithEqualPasses) {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{8, 16}, std::pair{3, 7}}) {
    const Model model = gpt(p, 256, 4, 128, 1000);
    SimOptions options;
    options.cost_model = std::make_shared<FixedPassCost>(1e-3, 1e-3, 1e-3);
    Plan plan = zb_plan(p, m);
    auto zb = simulate(model, plan, a100_cluster(), options);
    ASSERT_TRUE(zb.ok()) << zb.status().message();
    EXPECT_NEAR(zb->breakdown.bubble_s, (p - 1) * 1e-3, 1e-12) << p << " " << m;
    EXPECT_NEAR(zb->iteration_time_s, (3 * m + p - 1) * 1e-3, 1e-12) << p << " " << m;
    plan.schedule = Schedule::kOneFOneB;
    auto one = simulate(model, plan, a100_cluster(), options);
    ASSERT_TRUE(one.ok());
    EXPECT_NEAR(one->breakdown.bubble_s, 3 * zb->breakdown.bubble_s, 1e-12) << p << " " << m;
  }
}

// The check: 8 stages, the same micro-batches, the analytic cost
// model with communication, gradient buckets and data parallelism. A small
// vocabulary keeps the stages balanced (a large logits GEMM on the last stage
// makes a bubble in every schedule, which ZB-H1 does not remove). Here F =
// 3.1 ms, B = 3.9 ms and W = 2.0 ms per stage: (p - 1)(F + B - W) = 34 ms of
// fill and drain against 1F1B's (p - 1)(F + B + W) = 63 ms.
TEST(ZeroBubbleSimulate, EightStagesHaveASmallerBubbleAndIterationThan1F1B) {
  const Model model = gpt(32, 2048, 16, 2048, 1024);
  Plan plan;
  plan.tensor_parallel = 2;
  plan.pipeline_parallel = 8;
  plan.data_parallel = 2;
  plan.global_batch_size = 64;  // m = 32
  plan.sequence_parallel = true;
  plan.distributed_optimizer = true;
  plan.grad_bucket_bytes = 40'000'000;
  auto one = simulate(model, plan, a100_cluster());
  plan.schedule = Schedule::kZbH1;
  auto zb = simulate(model, plan, a100_cluster());
  ASSERT_TRUE(one.ok() && zb.ok());
  EXPECT_LT(zb->breakdown.bubble_s, 0.7 * one->breakdown.bubble_s);
  EXPECT_LT(zb->iteration_time_s, 0.95 * one->iteration_time_s);
  // The same work ran: hardware FLOPs equal; compute too, but for the host's
  // launch of each W pass (at most one launch interval per micro-batch).
  EXPECT_NEAR(zb->hardware_flops, one->hardware_flops, 1e-9 * one->hardware_flops);
  EXPECT_GE(zb->breakdown.compute_s, one->breakdown.compute_s);
  EXPECT_LE(zb->breakdown.compute_s - one->breakdown.compute_s,
            32 * a100_cluster().gpu.roofline.kernel_overhead_s + 1e-12);
}

TEST(ZeroBubbleLowering, SplitsTheBackwardIntoInputAndWeightGradients) {
  const Model model = gpt(4, 512, 8, 256, 1000);
  const Cluster cluster = a100_cluster();
  const GemmOnlyCost cost;
  Plan plan = zb_plan(2, 4);
  plan.data_parallel = 2;
  plan.global_batch_size = 8;
  for (int chunk : {0, 1}) {
    const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, chunk);
    ASSERT_TRUE(prog.split_backward);
    // GEMM-only costs and no launch queue: B + W is the whole backward.
    EXPECT_NEAR(prog.backward_input_s + prog.backward_weight_s, prog.backward_s,
                1e-12 * prog.backward_s);
    EXPECT_GT(prog.backward_weight_s, 0.3 * prog.backward_s);
    // W: the four weight-gradient GEMMs per layer, plus the logits' on the
    // last chunk and the embedding's gradient on the first.
    EXPECT_EQ(prog.backward_weight.size(), static_cast<size_t>(4 * prog.layers + 1)) << chunk;
    double ready = 0;
    for (const LoweredOp& op : prog.backward_weight) {
      EXPECT_TRUE(op.weight_grad);
      ready += op.grad_ready_bytes;
    }
    for (const LoweredOp& op : prog.backward_input) {
      EXPECT_FALSE(op.weight_grad);
      EXPECT_EQ(op.grad_ready_bytes, 0);
    }
    EXPECT_NEAR(ready, prog.grad_bytes, 1e-9 * prog.grad_bytes);
  }
  plan.schedule = Schedule::kOneFOneB;
  const ChunkProgram one = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  EXPECT_FALSE(one.split_backward);
  EXPECT_TRUE(one.backward_input.empty() && one.backward_weight.empty());
}

// ZeRO-3 with zb-h1: B gathers, W reduce-scatters; everything issued is
// either exposed or hidden, as under 1F1B.
TEST(ZeroBubbleLowering, ShardedCollectivesSplitBetweenBAndW) {
  const Model model = gpt(4, 512, 8, 256, 1000);
  Cluster cluster = a100_cluster();
  // No launch interval: a short pass whose host falls behind adds the wait
  // to whichever op waits, an exposed collective included.
  cluster.gpu.roofline.kernel_overhead_s = 0;
  Plan plan = zb_plan(2, 4);
  plan.data_parallel = 4;
  plan.global_batch_size = 16;
  plan.zero_stage = 3;
  plan.overlap_param_gather = true;
  const Roofline cost(cluster);
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 1);
  int gathers_in_b = 0, scatters_in_w = 0;
  for (const LoweredOp& op : prog.backward_input) {
    EXPECT_NE(op.category, OpCategory::kFsdpReduceScatter);
    gathers_in_b += op.category == OpCategory::kFsdpGather;
  }
  for (const LoweredOp& op : prog.backward_weight) {
    EXPECT_NE(op.category, OpCategory::kFsdpGather);
    scatters_in_w += op.category == OpCategory::kFsdpReduceScatter;
  }
  EXPECT_GE(gathers_in_b, 1);   // unit 0's gather at least
  EXPECT_GE(scatters_in_w, 1);  // the last unit's reduce-scatter at least
  auto report = simulate(model, plan, cluster);
  ASSERT_TRUE(report.ok()) << report.status().message();
  double issued = 0;
  for (const auto* list : {&prog.forward_collectives, &prog.backward_collectives}) {
    for (const PassCollective& c : *list) issued += c.time_s;
  }
  const StageBreakdown& b = report->stages[1].time;
  EXPECT_NEAR(b.fsdp_gather_exposed_s + b.fsdp_reduce_scatter_exposed_s + b.fsdp_hidden_s,
              4 * issued, 1e-9 * issued);
}

TEST(ZeroBubbleMemory, WeightGradientOperandsOfAGptLayerAre32sbh) {
  const Model model = gpt(4, 1024, 16, 512);
  Plan plan;
  plan.micro_batch_size = 2;
  EXPECT_DOUBLE_EQ(layer_weight_grad_bytes(model, plan), 32.0 * 512 * 2 * 1024);
  // Tensor parallelism splits the column- and row-parallel halves only.
  plan.tensor_parallel = 4;
  EXPECT_DOUBLE_EQ(layer_weight_grad_bytes(model, plan),
                   2.0 * 512 * 2 * (4 * 1024 + (3 * 1024 + 1024 + 4096 + 4096) / 4.0));
}

// Peak activations: the first stage's as 1F1B's (p forwards in flight); the
// last stage holds one forward and up to p - 1 deferred W's where 1F1B holds
// one forward.
TEST(ZeroBubbleMemory, FirstStageMatches1F1BAndTheLastHoldsDeferredW) {
  const int p = 4;
  const Model model = gpt(8, 1024, 16, 512);
  Plan plan;
  plan.pipeline_parallel = p;
  plan.global_batch_size = 8;
  const std::vector<double> params(p, 1e8);
  const auto one = stage_memory(model, plan, params, 0);
  plan.schedule = Schedule::kZbH1;
  const auto zb = stage_memory(model, plan, params, 0);
  const double act = layer_activation_bytes(model, plan);
  const double w = layer_weight_grad_bytes(model, plan);
  ASSERT_LT(w, act);
  EXPECT_DOUBLE_EQ(zb[0].activation_bytes, one[0].activation_bytes);
  EXPECT_EQ(zb[0].in_flight_micro_batches, p);
  // Last stage (2 layers): after F3 it holds F3's activations and W0..W2.
  EXPECT_DOUBLE_EQ(one[p - 1].activation_bytes, 2 * act);
  EXPECT_DOUBLE_EQ(zb[p - 1].activation_bytes, 2 * (act + (p - 1) * w));
  EXPECT_EQ(zb[p - 1].in_flight_micro_batches, p);
  EXPECT_EQ(peak_in_flight_split(plan, p - 1, act, w), (SplitInFlight{1, p - 1}));
  // The plan's peak (the maximum over stages) is 1F1B's.
  double peak_one = 0, peak_zb = 0;
  for (int r = 0; r < p; ++r) {
    peak_one = std::max(peak_one, one[r].activation_bytes);
    peak_zb = std::max(peak_zb, zb[r].activation_bytes);
    EXPECT_LE(zb[r].activation_bytes, one[0].activation_bytes) << r;
  }
  EXPECT_DOUBLE_EQ(peak_zb, peak_one);
}

}  // namespace
}  // namespace llmplan::simulator
