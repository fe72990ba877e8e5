// Context parallelism (Plan::context_parallel, simulator/lowering.h): tokens
// per rank, attention FLOPs, the ring's exposed time, the all-gather
// variant, memory, rank layout, validation and JSON, on small cases worked
// by hand.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "reports/step_report_json.h"
#include "simulator/lowering.h"
#include "simulator/memory.h"
#include "simulator/plan_json.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "base/strict_json.h"
#include "tests/simulator/expect_rel.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;
using testing::gpt;

// Only flash attention and collectives cost time: flash at `flash_flops_per_s`
// of its FLOPs, every collective bytes / `comm_bytes_per_s` (no latency, any
// group). No launch costs, no SM contention.
class RingCost final : public CostModel {
 public:
  RingCost(double flash_flops_per_s, double comm_bytes_per_s)
      : flash_(flash_flops_per_s), comm_(comm_bytes_per_s) {}
  double kernel_time_s(const KernelDesc& k) const override {
    return k.kind == KernelKind::kFlashAttention ? k.flops / flash_ : 0.0;
  }
  double collective_time_s(const CollectiveDesc& c) const override {
    return c.group.size > 1 ? c.bytes / comm_ : 0.0;
  }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  double comm_compute_slowdown() const override { return 0.0; }
  std::string describe() const override { return "ring test model"; }

 private:
  double flash_, comm_;
};

// 1 layer, h 512, 8 heads (d = 64, no GQA), s 1024, cp 4: a rank holds 256
// tokens. A block (256 queries x 256 keys, 8 heads) has 4 * 8 * 256^2 * 64
// = 134217728 FLOPs; its KV chunk is 256 * 2 * 8 * 64 * 2 = 524288 bytes.
constexpr double kBlockFlops = 134217728.0;
constexpr double kChunkBytes = 524288.0;
const Model kModel = gpt(1, 512, 8, 1024, 1000);

Plan cp_plan(int cp) {
  Plan plan;
  plan.context_parallel = cp;
  plan.global_batch_size = 1;
  return plan;
}

// A cost model where a forward block takes 1 ms (backward 2.5 ms) and a KV
// chunk's transfer `kv_ms`.
RingCost ring_cost(double kv_ms) { return RingCost(kBlockFlops / 1e-3, kChunkBytes / (kv_ms * 1e-3)); }

double sum_category(const std::vector<LoweredOp>& ops, OpCategory cat) {
  double s = 0;
  for (const LoweredOp& op : ops) s += op.category == cat ? op.duration_s : 0.0;
  return s;
}

double flash_flops(const std::vector<LoweredOp>& ops) {
  double f = 0;
  for (const LoweredOp& op : ops) {
    if (std::string(op.name) == "flash_attention") f += op.flops;
  }
  return f;
}

double gemm_flops(const std::vector<LoweredOp>& ops) {
  double f = 0;
  for (const LoweredOp& op : ops) f += op.gemm ? op.flops : 0.0;
  return f;
}

TEST(ContextParallel, TokensPerRankAreSOverCp) {
  // Pipeline message and every per-token GEMM scale with b * s / cp.
  const Model model = gpt(4, 512, 8, 1024, 1000);
  const Cluster cluster = a100_cluster();
  const Roofline cost(cluster);
  Plan one = cp_plan(1);
  one.pipeline_parallel = 2;
  one.global_batch_size = 4;
  Plan two = one;
  two.context_parallel = 2;
  const ChunkProgram a = lower_chunk(model, one, place(one, cluster), cost, 0);
  const ChunkProgram b = lower_chunk(model, two, place(two, cluster), cost, 0);
  EXPECT_REL(a.activation_send_bytes, 1024.0 * 512 * 2);
  EXPECT_REL(b.activation_send_bytes, 512.0 * 512 * 2);
  EXPECT_REL(gemm_flops(b.forward), gemm_flops(a.forward) / 2);
  EXPECT_REL(gemm_flops(b.backward), gemm_flops(a.backward) / 2);
}

TEST(ContextParallel, AttentionFlopsPerRankAreTheSequencesOverCp) {
  // cp 1: one kernel of 4 * 8 * 1024^2 * 64 FLOPs forward (x 2.5 backward).
  // cp 2: two blocks of 4 * 8 * 512^2 * 64 each: half.
  const Cluster cluster = a100_cluster();
  const Roofline cost(cluster);
  const Plan one = cp_plan(1), two = cp_plan(2);
  const ChunkProgram a = lower_chunk(kModel, one, place(one, cluster), cost, 0);
  const ChunkProgram b = lower_chunk(kModel, two, place(two, cluster), cost, 0);
  EXPECT_REL(flash_flops(a.forward), 4.0 * 8 * 1024 * 1024 * 64);
  EXPECT_REL(flash_flops(a.backward), 2.5 * 4.0 * 8 * 1024 * 1024 * 64);
  EXPECT_REL(flash_flops(b.forward), flash_flops(a.forward) / 2);
  EXPECT_REL(flash_flops(b.backward), flash_flops(a.backward) / 2);
}

TEST(ContextParallel, ModelAndHardwareFlopsDoNotDependOnCp) {
  // The cp ranks of a group split the work: model FLOPs, hardware FLOPs over
  // all GPUs, and so MFU per unit time, are those of cp = 1 on cp x fewer
  // replicas.
  const Model model = gpt(4, 512, 8, 1024, 1000);
  const Cluster cluster = a100_cluster();
  Plan one = cp_plan(1);
  one.data_parallel = 2;
  one.global_batch_size = 8;
  Plan two = one;
  two.context_parallel = 2;
  Result<StepReport> a = simulate(model, one, cluster);
  Result<StepReport> b = simulate(model, two, cluster);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->num_gpus, 4);
  EXPECT_REL(b->model_flops, a->model_flops);
  EXPECT_REL(b->hardware_flops, a->hardware_flops);
}

TEST(ContextParallel, RingTransferLongerThanBlockIsExposed) {
  // cp 4, block 1 ms forward / 2.5 ms backward, KV chunk transfer 3 ms (KV
  // plus dKV: 6 ms).
  // Forward: 3 transfers (3 ms each) under blocks of 1 ms: exposed
  //   3 x (3 - 1) = 6 ms, hidden 3 x 1 = 3 ms; the attention takes
  //   4 + 6 = 10 ms = first block + 3 x max(3, 1).
  // Backward: transfers 3 (KV), 6, 6 (KV + dKV), 3 (dKV) under 2.5 ms
  //   blocks: exposed 0.5 + 3.5 + 3.5 + 0.5 = 8 ms, hidden 4 x 2.5 = 10 ms.
  const Plan plan = cp_plan(4);
  const RingCost cost = ring_cost(3.0);
  const ChunkProgram prog = lower_chunk(kModel, plan, place(plan, a100_cluster()), cost, 0);
  EXPECT_NEAR(sum_category(prog.forward, OpCategory::kContextComm), 6e-3, 1e-12);
  EXPECT_NEAR(sum_category(prog.backward, OpCategory::kContextComm), 8e-3, 1e-12);
  EXPECT_NEAR(prog.forward_s, 10e-3, 1e-12);
  EXPECT_NEAR(prog.backward_s, 4 * 2.5e-3 + 8e-3, 1e-12);
  EXPECT_NEAR(prog.cp_hidden_s, 3e-3 + 10e-3, 1e-12);
}

TEST(ContextParallel, RingTransferShorterThanBlockIsHidden) {
  // KV transfer 0.5 ms: forward 3 x 0.5 = 1.5 ms hidden under 1 ms blocks,
  // backward 0.5 + 1 + 1 + 0.5 = 3 ms under 2.5 ms blocks; nothing exposed,
  // the attention takes its 4 blocks.
  const Plan plan = cp_plan(4);
  const RingCost cost = ring_cost(0.5);
  const ChunkProgram prog = lower_chunk(kModel, plan, place(plan, a100_cluster()), cost, 0);
  EXPECT_EQ(sum_category(prog.forward, OpCategory::kContextComm), 0.0);
  EXPECT_EQ(sum_category(prog.backward, OpCategory::kContextComm), 0.0);
  EXPECT_NEAR(prog.forward_s, 4e-3, 1e-12);
  EXPECT_NEAR(prog.backward_s, 10e-3, 1e-12);
  EXPECT_NEAR(prog.cp_hidden_s, 1.5e-3 + 3e-3, 1e-12);
}

TEST(ContextParallel, AllGatherVariantExposesItsCollectives) {
  // KV of the 4 chunks (4 x 3 ms) gathered before the forward blocks and
  // again before the backward ones; dKV reduce-scattered after (12 ms).
  Plan plan = cp_plan(4);
  plan.cp_comm = CpComm::kAllGather;
  const RingCost cost = ring_cost(3.0);
  const ChunkProgram prog = lower_chunk(kModel, plan, place(plan, a100_cluster()), cost, 0);
  EXPECT_NEAR(sum_category(prog.forward, OpCategory::kContextComm), 12e-3, 1e-12);
  EXPECT_NEAR(sum_category(prog.backward, OpCategory::kContextComm), 24e-3, 1e-12);
  EXPECT_NEAR(prog.forward_s, 4e-3 + 12e-3, 1e-12);
  EXPECT_EQ(prog.cp_hidden_s, 0.0);
  EXPECT_REL(flash_flops(prog.forward), 4 * kBlockFlops);
}

TEST(ContextParallel, BreakdownShowsTheRing) {
  // Through simulate(): the exposed and hidden ring time per micro-batch
  // times the micro-batches, and the parts still add up to the end time.
  Plan plan = cp_plan(4);
  plan.global_batch_size = 3;  // 3 micro-batches
  SimOptions options;
  options.cost_model = std::make_shared<RingCost>(ring_cost(3.0));
  Result<StepReport> r = simulate(kModel, plan, a100_cluster(), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const StageBreakdown& b = r->breakdown;
  EXPECT_NEAR(b.cp_comm_s, 3 * (6e-3 + 8e-3), 1e-9);
  EXPECT_NEAR(b.cp_comm_hidden_s, 3 * 13e-3, 1e-9);
  const double parts = b.compute_s + b.recompute_s + b.tp_comm_s + b.host_overhead_s +
                       b.pp_exposed_s + b.bubble_s + b.dp_exposed_s + b.optimizer_s +
                       b.fsdp_gather_exposed_s + b.fsdp_reduce_scatter_exposed_s +
                       b.cp_comm_s + b.overlap_slowdown_s;
  EXPECT_NEAR(parts, b.end_s, 1e-9);
  const boost::json::object j = reports::breakdown_to_json(b);
  EXPECT_NEAR(j.at("cp_comm_s").as_double(), b.cp_comm_s, 1e-12);
  EXPECT_NEAR(j.at("cp_comm_hidden_s").as_double(), b.cp_comm_hidden_s, 1e-12);
}

TEST(ContextParallel, ActivationMemoryHalvesWithCpTwo) {
  const Model model = gpt(8, 1024, 16, 4096, 1000);
  Plan one;
  one.tensor_parallel = 2;
  one.sequence_parallel = true;
  Plan two = one;
  two.context_parallel = 2;
  EXPECT_REL(layer_activation_bytes(model, two), layer_activation_bytes(model, one) / 2);
  const std::vector<MemoryBreakdown> a = stage_memory(model, one, {1e8}, 0);
  const std::vector<MemoryBreakdown> b = stage_memory(model, two, {1e8}, 0);
  EXPECT_REL(b[0].activation_bytes, a[0].activation_bytes / 2);
  EXPECT_REL(b[0].logits_bytes, a[0].logits_bytes / 2);
  // The ring's buffers: a chunk is 1 * 2048 * 2 * 16 * 64 / 2 * 2 = 4 MiB;
  // 4 of them (two slots of KV + dKV in the backward).
  EXPECT_EQ(a[0].context_parallel_bytes, 0.0);
  EXPECT_REL(b[0].context_parallel_bytes, 4 * 4194304.0);
  two.cp_comm = CpComm::kAllGather;  // gathered KV and its gradient: 2 cp chunks
  EXPECT_REL(context_parallel_buffer_bytes(model, two), 2 * 2 * 4194304.0);
  // One more communicator (the CP group; the gradient group is d * cp = 2).
  EXPECT_REL(framework_buffer_bytes(two) - framework_buffer_bytes(one), 2 * 0.5 * 1073741824.0);
}

TEST(ContextParallel, ShardedStateSplitsOverDpTimesCp) {
  Plan plan;
  plan.data_parallel = 4;
  plan.context_parallel = 2;
  plan.zero_stage = 3;
  EXPECT_EQ(plan.shard_ranks(), 8);
  EXPECT_EQ(plan.grad_reduce_ranks(), 8);
  EXPECT_REL(state_bytes_per_parameter(plan), 16.0 / 8);
}

TEST(ContextParallel, RankLayoutPutsCpInsideANodeFirst) {
  const Cluster cluster = a100_cluster();  // 8 GPUs per node
  Plan plan;
  plan.tensor_parallel = 4;
  plan.context_parallel = 2;
  plan.data_parallel = 4;
  plan.pipeline_parallel = 2;
  plan.global_batch_size = 8;
  Placement pl = place(plan, cluster);
  EXPECT_EQ(pl.tensor, (CommGroup{4, 4}));
  EXPECT_EQ(pl.context, (CommGroup{2, 2}));  // t * cp = 8: one node
  EXPECT_EQ(pl.data, (CommGroup{8, 2}));     // d * cp = 8 ranks, 4 apart: 2 per node
  EXPECT_EQ(pl.shard, pl.data);
  // A stage is t * cp * d = 32 ranks: every pipeline hop crosses nodes.
  EXPECT_TRUE(pl.pipe_crosses_node[0]);
  plan.tensor_parallel = 2;
  plan.context_parallel = 4;
  pl = place(plan, cluster);
  EXPECT_EQ(pl.context, (CommGroup{4, 4}));  // t * cp = 8: still one node
  plan.tensor_parallel = 8;
  plan.context_parallel = 2;
  pl = place(plan, cluster);
  EXPECT_EQ(pl.context, (CommGroup{2, 1}));  // t * cp = 16: one rank per node
  // Hybrid sharding: groups of S = 2 DP ranks times cp.
  plan.tensor_parallel = 1;
  plan.context_parallel = 2;
  plan.zero_stage = 1;
  plan.fsdp_group = 2;
  pl = place(plan, cluster);
  EXPECT_EQ(pl.shard, (CommGroup{4, 4}));
  EXPECT_EQ(pl.replica, (CommGroup{2, 2}));  // 4 ranks apart
}

TEST(ContextParallel, ValidateNamesTheChunking) {
  const Model model = gpt(4, 512, 8, 1000, 1000);
  Plan plan;
  plan.context_parallel = 3;  // 6 chunks do not divide 1000 tokens
  Status s = validate(model, plan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("plan.cp"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("2 * cp = 6"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("1000"), std::string::npos) << s.message();
  plan.context_parallel = 2;  // 4 chunks of 250
  EXPECT_TRUE(validate(model, plan).ok());
  plan.flash_attention = false;
  s = validate(model, plan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("flash attention"), std::string::npos) << s.message();
  plan.flash_attention = true;
  plan.context_parallel = 0;
  EXPECT_NE(validate(plan).message().find("plan.cp: must be >= 1"), std::string::npos);
  // The world size t * cp * pp * dp is bounded (formed in 64 bits).
  plan.context_parallel = 1024;
  plan.tensor_parallel = 1024;
  plan.data_parallel = 1024;
  plan.global_batch_size = 1024;
  s = validate(plan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tp * cp * pp * dp"), std::string::npos) << s.message();
  // Sequence parallelism splits the rank's s/cp tokens over t.
  const Model small = gpt(4, 512, 8, 24, 1000);
  Plan sp;
  sp.tensor_parallel = 4;
  sp.sequence_parallel = true;
  sp.context_parallel = 3;  // 6 chunks of 4; 8 tokens per rank over 4 TP ranks
  EXPECT_TRUE(validate(small, sp).ok());
  sp.tensor_parallel = 8;  // 8 tokens per rank over 8 TP ranks: fine
  EXPECT_TRUE(validate(small, sp).ok());
  sp.context_parallel = 6;  // 12 chunks of 2; 4 tokens per rank over 8 TP ranks: no
  s = validate(small, sp);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("plan.sequence_parallel"), std::string::npos) << s.message();
}

TEST(ContextParallel, PlanJsonRoundTrip) {
  Plan p;
  p.context_parallel = 4;
  p.cp_comm = CpComm::kAllGather;
  const boost::json::value j = plan_to_json(p);
  EXPECT_EQ(j.at("cp").as_int64(), 4);
  EXPECT_EQ(j.at("cp_comm").as_string(), "all_gather");
  Plan back;
  ASSERT_TRUE(apply_plan_json(j, "p", &back).ok());
  EXPECT_EQ(back, p);
  Result<boost::json::value> bad = json::parse(R"({"cp_comm": "ring"})", "t");
  ASSERT_TRUE(bad.ok());
  const Status s = apply_plan_json(*bad, "plan", &back);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cp_comm"), std::string::npos) << s.message();
  bad = json::parse(R"({"cp": 0})", "t");
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(apply_plan_json(*bad, "plan", &back).ok());
}

}  // namespace
}  // namespace llmplan::simulator
