#include "simulator/simulate.h"

#include <gtest/gtest.h>

#include <limits>
#include <utility>
#include <omp.h>

#include <random>

#include "simulator/lowering.h"
#include "simulator/roofline.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;
using testing::GemmOnlyCost;
using testing::gpt;

TEST(LaunchQueue, LongKernelsLetTheHostRunAhead) {
  auto op = [](OpCategory c, double s) {
    LoweredOp o;
    o.category = c;
    o.duration_s = s;
    return o;
  };
  const OpCategory k = OpCategory::kCompute;
  // Host work 1, then kernels of 0.5 / 5 / 0.5 / 0.5 / 0.5 with launches 2 apart.
  std::vector<LoweredOp> ops = {
      op(OpCategory::kHostOverhead, 1), op(k, 0.5), op(k, 5), op(k, 0.5), op(k, 0.5), op(k, 0.5)};
  const double inf = std::numeric_limits<double>::infinity();
  apply_launch_queue(2.0, inf, &ops);
  // Launches at 3, 5, 7, 9, 11. GPU: [3, 3.5], [5, 10], [10, 10.5], [10.5, 11], [11, 11.5].
  const std::vector<double> want = {1, 2.5, 6.5, 0.5, 0.5, 0.5};
  ASSERT_EQ(ops.size(), want.size());
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_DOUBLE_EQ(ops[i].duration_s, want[i]) << i;
  // Without a launch interval nothing changes.
  std::vector<LoweredOp> same = {op(OpCategory::kHostOverhead, 1), op(k, 0.5), op(k, 5)};
  apply_launch_queue(0.0, inf, &same);
  EXPECT_DOUBLE_EQ(same[0].duration_s, 1);
  EXPECT_DOUBLE_EQ(same[1].duration_s, 0.5);
  EXPECT_DOUBLE_EQ(same[2].duration_s, 5);
}

TEST(LaunchQueue, RunAheadWindowBoundsTheHostsLead) {
  auto op = [](double s) {
    LoweredOp o;
    o.category = OpCategory::kCompute;
    o.duration_s = s;
    return o;
  };
  auto durations = [](const std::vector<LoweredOp>& ops) {
    std::vector<double> d;
    for (const LoweredOp& o : ops) d.push_back(o.duration_s);
    return d;
  };
  // Launches 2 apart; a long kernel, then three short ones. Unbounded, the
  // host issues the short ones at 4, 6 and 8, inside the long kernel [2, 12],
  // and they run back to back.
  const std::vector<LoweredOp> pass = {op(10), op(1), op(1), op(1)};
  std::vector<LoweredOp> free_run = pass;
  apply_launch_queue(2.0, std::numeric_limits<double>::infinity(), &free_run);
  EXPECT_EQ(durations(free_run), (std::vector<double>{12, 1, 1, 1}));

  // A window of 3: each launch starts no earlier than 3 before the previous
  // kernel ends. Launches at max(2, 12 - 3) + 2 = 11, max(11, 13 - 3) + 2 = 13,
  // max(13, 14 - 3) + 2 = 15: GPU [12, 13], [13, 14], [15, 16].
  std::vector<LoweredOp> window = pass;
  apply_launch_queue(2.0, 3.0, &window);
  EXPECT_EQ(durations(window), (std::vector<double>{12, 1, 1, 2}));

  // A window of 0: every launch waits for the previous kernel, so each
  // kernel after the first costs the interval plus its GPU time.
  std::vector<LoweredOp> sync = pass;
  apply_launch_queue(2.0, 0.0, &sync);
  EXPECT_EQ(durations(sync), (std::vector<double>{12, 3, 3, 3}));
}

// GEMM time: compute at gemm_efficiency x the useful share of padded
// 128 x 128 output tiles run in waves over 108 SMs x k / (k + gemm_dim_half),
// or HBM traffic (A, B read and C written once) when that takes longer.
TEST(Roofline, GemmTimeIsTileLevelComputeOrHbmTraffic) {
  Cluster cluster = a100_cluster();
  RooflineConstants& r = cluster.gpu.roofline;
  r.gemm_efficiency = 0.8;
  r.gemm_dim_half = 0;
  r.gemm_tile = 128;
  r.memory_efficiency = 0.5;
  auto time = [&](int64_t m, int64_t n, int64_t k, int64_t batch) {
    KernelDesc g;
    g.kind = KernelKind::kQkvGemm;
    g.precision = Precision::kFp16;
    g.gemm = {m, n, k, batch};
    g.flops = 2.0 * m * n * k * batch;
    return Roofline(cluster).kernel_time_s(g);
  };
  const double peak = 312e12, hbm = 2.039e12 * 0.5;
  // 12 x 9 = 108 full tiles: one full wave, compute-bound.
  EXPECT_NEAR(time(1536, 1152, 4096, 1), 2.0 * 1536 * 1152 * 4096 / (peak * 0.8), 1e-12);
  // One row more: 13 x 9 = 117 tiles, the 13th row padded, two waves.
  const double useful = 1537.0 * 1152 / (2 * 108 * 128 * 128);
  EXPECT_NEAR(time(1537, 1152, 4096, 1), 2.0 * 1537 * 1152 * 4096 / (peak * 0.8 * useful), 1e-12);
  // Attention scores (s = 1024, d = 64, 64 heads): 151 MB of traffic, which
  // takes longer than its 8.6 GFLOP.
  const double bytes = 2.0 * 64 * (1024 * 64 * 2 + 1024 * 1024);
  EXPECT_NEAR(time(1024, 1024, 64, 64), bytes / hbm, 1e-12);
  // The per-tile fixed cost: k = gemm_dim_half halves the main loop's rate.
  r.gemm_dim_half = 4096;
  EXPECT_NEAR(time(1536, 1152, 4096, 1), 2.0 * 1536 * 1152 * 4096 / (peak * 0.8 * 0.5), 1e-12);
}

// Megatron's fused softmax needs b * a / t to be a multiple of 4; otherwise
// five PyTorch kernels (fp32 cast, scale, mask, softmax, half cast) run.
TEST(Lowering, UnfusedSoftmaxWhenAttentionBatchesAreNotAMultipleOfFour) {
  const Model model = gpt(4, 1024, 16, 1024);
  const Cluster cluster = a100_cluster();
  const Roofline cost(cluster);
  auto softmax_kernels = [&](int t, int b, bool flash) {
    Plan plan;
    plan.tensor_parallel = t;
    plan.micro_batch_size = b;
    plan.global_batch_size = b;
    plan.flash_attention = flash;
    const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
    int fwd = 0, bwd = 0;
    for (const LoweredOp& op : prog.forward) fwd += std::string(op.name) == "softmax";
    for (const LoweredOp& op : prog.backward) bwd += std::string(op.name) == "softmax";
    return std::pair<int, int>(fwd, bwd);
  };
  EXPECT_EQ(softmax_kernels(8, 2, false), std::make_pair(4, 4));    // 2 * 16 / 8 = 4: fused
  EXPECT_EQ(softmax_kernels(8, 1, false), std::make_pair(20, 20));  // 1 * 16 / 8 = 2: five a layer
  EXPECT_EQ(softmax_kernels(4, 1, false), std::make_pair(4, 4));    // 1 * 16 / 4 = 4: fused
  EXPECT_EQ(softmax_kernels(8, 1, true), std::make_pair(0, 0));     // flash attention: none
}

TEST(Simulate, SingleStageIsTheSumOfItsKernels) {
  const Model model = gpt(4, 1024, 16, 1024);
  Plan plan;
  plan.micro_batch_size = 2;
  plan.global_batch_size = 8;  // 4 micro-batches
  const Cluster cluster = a100_cluster();
  auto report = simulate(model, plan, cluster);
  ASSERT_TRUE(report.ok()) << report.status().message();

  const Roofline cost(cluster);
  const Placement placement = place(plan, cluster);
  const ChunkProgram prog = lower_chunk(model, plan, placement, cost, 0);
  double kernels = 0;
  for (const LoweredOp& op : prog.forward) kernels += op.duration_s;
  for (const LoweredOp& op : prog.backward) kernels += op.duration_s;
  KernelDesc adam;
  adam.kind = KernelKind::kOptimizerStep;
  adam.bytes = static_cast<double>(model.parameter_count()) * 30;
  const double expected = 4 * kernels + cost.kernel_time_s(adam);
  EXPECT_NEAR(report->iteration_time_s, expected, 1e-12 * expected);
  EXPECT_DOUBLE_EQ(report->breakdown.bubble_s, 0.0);
  EXPECT_DOUBLE_EQ(report->breakdown.pp_exposed_s, 0.0);
  EXPECT_EQ(prog.parameters, static_cast<double>(model.parameter_count()));
}

struct BubbleCase {
  Schedule schedule;
  int p, m, v;
};

class PipelineBubble : public ::testing::TestWithParam<BubbleCase> {};

TEST_P(PipelineBubble, MatchesTextbookFormula) {
  const BubbleCase c = GetParam();
  const Model model = gpt(c.p * c.v * 2, 1024, 16, 512);
  Plan plan;
  plan.pipeline_parallel = c.p;
  plan.schedule = c.schedule;
  plan.virtual_stages = c.v;
  plan.global_batch_size = c.m;
  SimOptions options;
  options.cost_model = std::make_shared<GemmOnlyCost>();
  auto report = simulate(model, plan, a100_cluster(), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  // Ideal: every stage busy all the time, m * (f + b) per stage.
  const StageBreakdown& b = report->breakdown;
  const double ideal = b.compute_s;
  const double expected_bubble = ideal * (c.p - 1) / (static_cast<double>(c.m) * c.v);
  EXPECT_NEAR(report->iteration_time_s - ideal, expected_bubble, 1e-9 * ideal);
  EXPECT_NEAR(b.bubble_s, expected_bubble, 1e-9 * ideal);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, PipelineBubble,
    ::testing::Values(BubbleCase{Schedule::kGpipe, 4, 8, 1}, BubbleCase{Schedule::kGpipe, 2, 5, 1},
                      BubbleCase{Schedule::kOneFOneB, 4, 8, 1},
                      BubbleCase{Schedule::kOneFOneB, 8, 32, 1},
                      BubbleCase{Schedule::kOneFOneB, 4, 3, 1},
                      BubbleCase{Schedule::kInterleaved, 4, 8, 2},
                      BubbleCase{Schedule::kInterleaved, 4, 16, 4},
                      BubbleCase{Schedule::kInterleaved, 2, 4, 3}));

TEST(Simulate, InterleavingDividesTheBubbleByV) {
  const Model model = gpt(16, 1024, 16, 512);
  SimOptions options;
  options.cost_model = std::make_shared<GemmOnlyCost>();
  Plan plan;
  plan.pipeline_parallel = 4;
  plan.global_batch_size = 16;
  auto plain = simulate(model, plan, a100_cluster(), options);
  plan.schedule = Schedule::kInterleaved;
  plan.virtual_stages = 4;
  auto interleaved = simulate(model, plan, a100_cluster(), options);
  ASSERT_TRUE(plain.ok() && interleaved.ok());
  EXPECT_NEAR(interleaved->breakdown.bubble_s * 4, plain->breakdown.bubble_s,
              1e-9 * plain->iteration_time_s);
}

Plan random_plan(std::mt19937_64& rng) {
  auto pick = [&rng](std::initializer_list<int> xs) {
    std::uniform_int_distribution<size_t> d(0, xs.size() - 1);
    return *(xs.begin() + d(rng));
  };
  Plan p;
  p.tensor_parallel = pick({1, 2, 4});
  p.pipeline_parallel = pick({1, 2, 3, 4});
  p.data_parallel = pick({1, 2, 4});
  p.micro_batch_size = pick({1, 2});
  const int m = p.pipeline_parallel * pick({1, 2, 3});
  p.global_batch_size = m * p.micro_batch_size * p.data_parallel;
  p.schedule = p.pipeline_parallel > 1 ? static_cast<Schedule>(pick({0, 1, 2, 3})) : Schedule::kOneFOneB;
  p.virtual_stages = p.schedule == Schedule::kInterleaved ? pick({1, 2}) : 1;
  p.recompute = static_cast<Recompute>(pick({0, 1, 2}));
  p.sequence_parallel = pick({0, 1}) == 1;
  p.distributed_optimizer = pick({0, 1}) == 1;
  p.flash_attention = pick({0, 1}) == 1;
  p.grad_bucket_bytes = pick({0, 1, 2}) * 4'000'000;
  p.overlap_grad_reduce = pick({0, 1}) == 1;
  p.pipeline_scatter_gather = pick({0, 1}) == 1;
  p.precision = pick({0, 1}) == 1 ? Precision::kBf16 : Precision::kFp16;
  p.zero_stage = pick({0, 1, 2, 3});
  if (p.sharding_stage() >= 1 && p.data_parallel > 1) p.fsdp_group = pick({0, 1, 2});
  p.tp_comm_overlap = pick({0, 1}) == 1;
  p.overlap_param_gather = pick({0, 1}) == 1;
  return p;
}

TEST(Simulate, CollapsedChainsEqualTaskLevelSimulation) {
  std::mt19937_64 rng(20261121);
  Model model = gpt(8, 512, 8, 256, 1000);
  Cluster cluster = a100_cluster();
  cluster.gpu.roofline.microbatch_overhead_s = 1e-4;
  cluster.gpus_per_node = 4;  // so that groups cross nodes too
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Plan plan = random_plan(rng);
    SimOptions fast, full;
    full.collapse_chains = false;
    auto a = simulate(model, plan, cluster, fast);
    auto b = simulate(model, plan, cluster, full);
    ASSERT_EQ(a.ok(), b.ok());
    if (!a.ok()) continue;
    ++compared;
    EXPECT_LT(a->num_tasks, b->num_tasks);
    const double tol = 1e-9 * b->iteration_time_s;
    EXPECT_NEAR(a->iteration_time_s, b->iteration_time_s, tol) << "trial " << trial;
    ASSERT_EQ(a->stages.size(), b->stages.size());
    for (size_t r = 0; r < a->stages.size(); ++r) {
      const StageBreakdown& x = a->stages[r].time;
      const StageBreakdown& y = b->stages[r].time;
      EXPECT_NEAR(x.end_s, y.end_s, tol);
      EXPECT_NEAR(x.bubble_s, y.bubble_s, tol);
      EXPECT_NEAR(x.pp_exposed_s, y.pp_exposed_s, tol);
      EXPECT_NEAR(x.dp_exposed_s, y.dp_exposed_s, tol);
      EXPECT_NEAR(x.compute_s, y.compute_s, tol);
      EXPECT_NEAR(x.tp_comm_s, y.tp_comm_s, tol);
      EXPECT_NEAR(x.fsdp_gather_exposed_s, y.fsdp_gather_exposed_s, tol);
      EXPECT_NEAR(x.fsdp_reduce_scatter_exposed_s, y.fsdp_reduce_scatter_exposed_s, tol);
      EXPECT_NEAR(x.overlap_slowdown_s, y.overlap_slowdown_s, tol);
      EXPECT_NEAR(x.tp_comm_hidden_s, y.tp_comm_hidden_s, tol);
      EXPECT_NEAR(x.dp_comm_hidden_s, y.dp_comm_hidden_s, tol);
      EXPECT_NEAR(x.fsdp_hidden_s, y.fsdp_hidden_s, tol);
    }
    EXPECT_EQ(a->peak_memory_bytes, b->peak_memory_bytes);
  }
  EXPECT_GE(compared, 40);
}

TEST(Simulate, SameResultOnOneAndManyThreads) {
  std::mt19937_64 rng(7);
  const Model model = gpt(12, 768, 12, 512, 5000);
  const Cluster cluster = a100_cluster();
  std::vector<Plan> plans;
  for (int i = 0; i < 64; ++i) plans.push_back(random_plan(rng));
  std::vector<double> serial(plans.size(), -1), parallel(plans.size(), -1);
  for (size_t i = 0; i < plans.size(); ++i) {
    auto r = simulate(model, plans[i], cluster);
    serial[i] = r.ok() ? r->iteration_time_s + r->peak_memory_bytes : -2;
  }
#pragma omp parallel for num_threads(4) schedule(dynamic, 1)
  for (size_t i = 0; i < plans.size(); ++i) {
    auto r = simulate(model, plans[i], cluster);
    parallel[i] = r.ok() ? r->iteration_time_s + r->peak_memory_bytes : -2;
  }
  for (size_t i = 0; i < plans.size(); ++i) EXPECT_EQ(serial[i], parallel[i]) << i;
}

TEST(Simulate, BreakdownAddsUpToStageTime) {
  const Model model = gpt(24, 2048, 16, 1024);
  Plan plan = testing::layout_plan(2, 4, 2, 64);
  plan.recompute = Recompute::kFull;
  auto r = simulate(model, plan, a100_cluster());
  ASSERT_TRUE(r.ok());
  for (const StageReport& s : r->stages) {
    const StageBreakdown& b = s.time;
    const double sum = b.compute_s + b.recompute_s + b.tp_comm_s + b.host_overhead_s +
                       b.pp_exposed_s + b.bubble_s + b.dp_exposed_s + b.optimizer_s +
                       b.fsdp_gather_exposed_s + b.fsdp_reduce_scatter_exposed_s +
                       b.cp_comm_s + b.overlap_slowdown_s + b.fp8_cast_s;
    EXPECT_NEAR(sum, b.end_s, 1e-9 * b.end_s) << "stage " << s.stage;
    EXPECT_GT(b.recompute_s, 0);
    EXPECT_GT(b.tp_comm_s, 0);
  }
  EXPECT_GT(r->hfu, r->mfu);
  // Full recomputation: hardware FLOPs are about 4/3 of model FLOPs.
  EXPECT_NEAR(r->hardware_flops / r->model_flops, 4.0 / 3.0, 0.05);
}

TEST(Simulate, MtNlgBenchmarkPlanRuns) {
  const Model model = gpt(105, 20480, 128, 2048);
  Plan plan = testing::layout_plan(8, 35, 12, 1920);
  plan.recompute = Recompute::kFull;
  auto r = simulate(model, plan, a100_cluster());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->iteration_time_s, 10);
  EXPECT_LT(r->iteration_time_s, 200);
  EXPECT_GT(r->mfu, 0.2);
  EXPECT_LT(r->mfu, 0.7);
  EXPECT_TRUE(r->fits_in_memory);
}

TEST(Simulate, OutOfMemoryIsAResultNotAnError) {
  const Model model = gpt(96, 12288, 96, 2048);
  Plan plan;
  plan.global_batch_size = 8;
  auto r = simulate(model, plan, a100_cluster());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->fits_in_memory);
  EXPECT_NEAR(r->memory_overflow_bytes, r->peak_memory_bytes - 80e9, 1);
  EXPECT_GT(r->peak_memory_bytes, 18 * 174e9);
}

TEST(Simulate, InvalidPlansAreErrorsNamingTheField) {
  const Model model = gpt(24, 2048, 16, 1024);
  const Cluster cluster = a100_cluster();
  Plan plan;
  plan.tensor_parallel = 3;
  EXPECT_NE(simulate(model, plan, cluster).status().message().find("plan.tp"), std::string::npos);
  plan = Plan();
  plan.data_parallel = 2;
  plan.global_batch_size = 3;
  EXPECT_NE(simulate(model, plan, cluster).status().message().find("plan.global_batch"),
            std::string::npos);
  plan = Plan();
  plan.micro_batch_size = 0;
  EXPECT_NE(simulate(model, plan, cluster).status().message().find("plan.micro_batch"),
            std::string::npos);
  plan = Plan();
  plan.pipeline_parallel = 48;
  EXPECT_NE(simulate(model, plan, cluster).status().message().find("plan.pp"), std::string::npos);
  Cluster small = cluster;
  small.num_nodes = 1;
  plan = Plan();
  plan.data_parallel = 16;
  plan.global_batch_size = 16;
  EXPECT_NE(simulate(model, plan, small).status().message().find("16 GPUs"), std::string::npos);
}

}  // namespace
}  // namespace llmplan::simulator
