// Mixture-of-experts lowering (simulator/lowering.h): the reduction to the
// dense layer, the all-to-all volume, EP placement, load imbalance, FLOPs,
// the all-to-all overlap, expert gradient reduction, sliding windows, and
// the published Qwen3-235B layout through the CLI.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "simulator/lowering.h"
#include "simulator/layers/moe_dispatch.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "tests/planner/simulate_cli.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;
using testing::expert_plan;
using testing::layout_plan;
using testing::qwen_like;

// GEMMs and flash attention at FLOPs / 1e15 s, memory-bound kernels at
// bytes / 1e12 s, collectives at bytes / `comm_bytes_per_s` (default 1e11;
// any group of > 1 rank).
// With `free_routing` the MoE-only kernels (router GEMM, routing,
// permutation) and the optimizer step (whose bytes include the router's
// h x E parameters) cost nothing. No launch costs, no SM contention.
class StubCost final : public CostModel {
 public:
  explicit StubCost(bool free_routing, double comm_bytes_per_s = 1e11)
      : free_routing_(free_routing), comm_(comm_bytes_per_s) {}
  double kernel_time_s(const KernelDesc& k) const override {
    if (free_routing_ &&
        (k.kind == KernelKind::kRouterGemm || k.kind == KernelKind::kMoeRouting ||
         k.kind == KernelKind::kMoePermute || k.kind == KernelKind::kOptimizerStep)) {
      return 0.0;
    }
    if (is_gemm(k.kind) || k.kind == KernelKind::kFlashAttention) return k.flops / 1e15;
    return k.bytes / 1e12;
  }
  double collective_time_s(const CollectiveDesc& c) const override {
    if (c.kind == CollectiveKind::kAllToAll) a2a_.push_back(c);
    return c.group.size > 1 ? c.bytes / comm_ : 0.0;
  }
  double microbatch_overhead_s() const override { return 0.0; }
  double iteration_overhead_s() const override { return 0.0; }
  double comm_compute_slowdown() const override { return 0.0; }
  std::string describe() const override { return "moe test model"; }
  // The all-to-alls asked for so far (single-threaded tests only).
  const std::vector<CollectiveDesc>& all_to_alls() const { return a2a_; }

 private:
  bool free_routing_;
  double comm_;
  mutable std::vector<CollectiveDesc> a2a_;
};

Model dense_model() { return testing::modern_model("dense-test", 4, 2048, 16, 5632, 2048, 32000); }

// The dense model with each MLP replaced by one expert of the same width.
Model one_expert_model() {
  Model m = dense_model();
  m.name = "one-expert-test";
  m.num_experts = 1;
  m.moe_top_k = 1;
  m.moe_ffn_hidden_size = m.ffn_hidden_size;
  return m;
}

// The ops of one kernel kind in a lowered chunk: their summed duration and
// how many there are; each must be expert work.
struct NamedOps {
  double seconds = 0;
  int kernels = 0;
};
NamedOps named_ops(const std::vector<LoweredOp>& ops, const std::string& name) {
  NamedOps out;
  for (const LoweredOp& op : ops) {
    if (op.name != name) continue;
    out.seconds += op.duration_s;
    ++out.kernels;
    EXPECT_TRUE(op.expert) << name;
  }
  return out;
}

Cluster h100_like(int gpus_per_node = 8) {
  Cluster c = testing::a100_cluster_with("h100-test", 989e12, 1979e12, 3.35e12, 132);
  c.name = "test-h100";
  c.gpu.nvlink_bytes_per_s = 900e9;
  c.nic_bytes_per_s = 50e9;
  c.gpus_per_node = gpus_per_node;
  return c;
}

// The layout of the GPT-OSS kernel tests: dp 8 x ep 8, one sequence of
// 4096 per rank, lowered with the stub cost on an H100-like cluster.
Plan ep8_plan() { return expert_plan(1, 1, 8, 8, 8); }

ChunkProgram lower_ep8(const Model& model, const Plan& plan) {
  const Cluster cluster = h100_like();
  const StubCost cost(false);
  return lower_chunk(model, plan, place(plan, cluster), cost, 0);
}

double sum_if(const std::vector<LoweredOp>& ops, bool (*pred)(const LoweredOp&)) {
  double s = 0;
  for (const LoweredOp& op : ops) s += pred(op) ? op.duration_s : 0.0;
  return s;
}
bool is_a2a(const LoweredOp& op) { return op.category == OpCategory::kMoeA2a; }
bool is_expert_gemm(const LoweredOp& op) {
  const std::string n = op.name;
  return n == "expert_fc1_gemm" || n == "expert_fc2_gemm";
}

TEST(MoeLowering, OneExpertTopOneIsTheDenseModelWhenRoutingIsFree) {
  // 1 expert, top-1, expert FFN = FFN, ep = 1: the expert GEMMs are the
  // dense MLP's GEMMs, the all-to-alls have a group of one rank. Only the
  // router GEMM, routing and permutation kernels (and the router's
  // parameters in the optimizer) differ; made free, the times agree.
  const Model dense = dense_model(), moe = one_expert_model();
  // (BF16: in FP8 the optimizer's cast of the layer weights would see the
  // router's parameters too.)
  {
    const Plan plan = layout_plan(1, 2, 1, 8);
    SimOptions options;
    options.cost_model = std::make_shared<StubCost>(true);
    const auto a = simulate(dense, plan, a100_cluster(), options);
    const auto b = simulate(moe, plan, a100_cluster(), options);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_NEAR(b->iteration_time_s, a->iteration_time_s, 1e-9 * a->iteration_time_s);
    EXPECT_GT(b->breakdown.expert_compute_s, 0.0);
    EXPECT_EQ(b->breakdown.moe_a2a_s, 0.0);
  }
}

TEST(MoeLowering, OneExpertTopOneIsCloseToDenseOnTheRoofline) {
  // Not exact: the router GEMM ([T, h] x [h, 1], one tile column, so
  // paying a full wave), the routing and the permutation kernels (about
  // 1-2 % of a layer here) run only in the MoE model; with t = 2 the expert
  // GEMMs also see T/t tokens x full width instead of T x width/t. With
  // FP8 (t = 4) the dense MLP's sequence-parallel gathers move FP8 data
  // (Transformer Engine quantizes before it gathers) while the MoE layer
  // gathers its tokens in bf16 (Megatron-Core's dispatcher): 6 %.
  const Model dense = dense_model(), moe = one_expert_model();
  for (int t : {1, 2, 4}) {
    Plan plan = layout_plan(t, 2, 2, 16);
    plan.sequence_parallel = t > 1;
    plan.precision = t == 4 ? Precision::kFp8 : Precision::kBf16;
    const auto a = simulate(dense, plan, h100_like());
    const auto b = simulate(moe, plan, h100_like());
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_NEAR(b->iteration_time_s / a->iteration_time_s, 1.0, t == 4 ? 0.06 : 0.03) << "t " << t;
  }
}

TEST(MoeLowering, AllToAllBytesMatchAHandComputation) {
  // t 2 with SP, ep 8, b 1, s 4096: T_moe = 4096 / 2 = 2048 tokens per rank,
  // each sent to k = 8 experts: S = 2048 x 8 x 4096 x 2 B = 134217728 B,
  // over 8 ranks (stride etp = 1, in one node). Two per layer forward
  // (dispatch, combine), two backward.
  const Model model = qwen_like(4);
  Plan plan = expert_plan(2, 1, 4, 8, 4);
  plan.sequence_parallel = true;
  const Cluster cluster = h100_like();
  const StubCost cost(false);
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  ASSERT_EQ(cost.all_to_alls().size(), 4u * 4);
  for (const CollectiveDesc& c : cost.all_to_alls()) {
    EXPECT_EQ(c.bytes, 2048.0 * 8 * 4096 * 2);
    EXPECT_EQ(c.group, (CommGroup{8, 8}));
  }
  // Exposed on the passes: 8 all-to-alls of S / 1e11 s each way.
  EXPECT_NEAR(sum_if(prog.forward, is_a2a), 8 * 134217728.0 / 1e11, 1e-12);
  EXPECT_NEAR(sum_if(prog.backward, is_a2a), 8 * 134217728.0 / 1e11, 1e-12);
  // Imbalance 1.5: the busiest rank receives 1.5 S.
  plan.moe_imbalance = 1.5;
  const StubCost skewed(false);
  lower_chunk(model, plan, place(plan, cluster), skewed, 0);
  EXPECT_EQ(skewed.all_to_alls().front().bytes, 1.5 * 2048 * 8 * 4096 * 2);
}

// The flex dispatcher's distinct destination ranks (layers/moe_dispatch.h)
// against hand counts, and its all-to-all bytes.
TEST(MoeLowering, FlexDispatcherSendsATokenOncePerDestinationRank) {
  using lowering::flex_dispatch_byte_scale;
  using lowering::flex_dispatch_ranks_per_token;
  // 4 experts on 2 ranks, top-2: both on one rank with probability
  // 2 x C(2,2) / C(4,2) = 1/3, so R = 1/3 x 1 + 2/3 x 2 = 5/3.
  EXPECT_NEAR(flex_dispatch_ranks_per_token(4, 2, 2), 5.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(flex_dispatch_ranks_per_token(128, 8, 1), 1.0);
  EXPECT_NEAR(flex_dispatch_ranks_per_token(128, 8, 128), 8.0, 1e-12);  // one expert per rank
  EXPECT_NEAR(flex_dispatch_ranks_per_token(8, 8, 8), 8.0, 1e-12);      // every rank, always
  // Qwen3 (128 experts, top-8) over 8 ranks: 1 - C(112,8)/C(128,8) =
  // 1 - 0.33258 of the ranks: 5.3394 of 8 rows.
  EXPECT_NEAR(flex_dispatch_ranks_per_token(128, 8, 8), 5.3394, 5e-5);
  EXPECT_NEAR(flex_dispatch_byte_scale(128, 8, 8), 5.3394 / 8, 1e-5);
  EXPECT_DOUBLE_EQ(flex_dispatch_byte_scale(128, 8, 1), 1.0);
  // Group-limited: 8 experts in G = 2 groups over 4 ranks, a token's top-2
  // in L = 1 group: 2 ranks of 2 experts, 5/3 as above; DeepSeek-V3 (256
  // experts, top-8, 4 of 8 groups) over 8 ranks: 4 ranks of 32 experts,
  // 4 x (1 - C(96,8) / C(128,8)) = 3.6290; G above ep: uniform.
  EXPECT_NEAR(flex_dispatch_ranks_per_token(8, 2, 4, 2, 1), 5.0 / 3, 1e-12);
  EXPECT_NEAR(flex_dispatch_ranks_per_token(256, 8, 8, 8, 4), 3.6290, 5e-5);
  EXPECT_DOUBLE_EQ(flex_dispatch_ranks_per_token(256, 8, 4, 8, 4),
                   flex_dispatch_ranks_per_token(256, 8, 4));

  // The lowering: the hand-computed S of AllToAllBytesMatchAHandComputation
  // scaled by R / k; a capacity-factor model keeps its padded buffers.
  Model model = qwen_like(4);
  Plan plan = expert_plan(2, 1, 4, 8, 4);
  plan.sequence_parallel = true;
  plan.moe_flex_dispatcher = true;
  const Cluster cluster = h100_like();
  const StubCost flex(false);
  lower_chunk(model, plan, place(plan, cluster), flex, 0);
  ASSERT_EQ(flex.all_to_alls().size(), 4u * 4);
  for (const CollectiveDesc& c : flex.all_to_alls()) {
    EXPECT_NEAR(c.bytes, 2048.0 * 8 * 4096 * 2 * 5.3394 / 8, 2048.0 * 4096 * 2 * 1e-4);
  }
  model.moe_capacity_factor = 1.0;
  const StubCost padded(false), padded_flex(false);
  lower_chunk(model, plan, place(plan, cluster), padded_flex, 0);
  plan.moe_flex_dispatcher = false;
  lower_chunk(model, plan, place(plan, cluster), padded, 0);
  EXPECT_EQ(padded_flex.all_to_alls().front().bytes, padded.all_to_alls().front().bytes);
}

// Across nodes the flex dispatcher sends a token once per destination node
// over the NIC and forwards it over NVLink inside that node
// (layers/moe_dispatch.h): hand counts of the distinct nodes, and the
// all-to-all's off-node and in-node factors in the lowering.
TEST(MoeLowering, FlexDispatcherAcrossNodesSendsOneCopyPerNode) {
  using lowering::flex_dispatch_nodes_per_token;
  using lowering::flex_dispatch_ranks_per_token;
  // 128 experts, top-8, on 2 nodes: 2 x (1 - C(64,8) / C(128,8)) = 1.99381.
  EXPECT_NEAR(flex_dispatch_nodes_per_token(128, 8, 2), 1.99381, 5e-6);
  EXPECT_DOUBLE_EQ(flex_dispatch_nodes_per_token(128, 8, 1), 1.0);
  // A node is a block of experts like a rank: the same count as ranks.
  EXPECT_DOUBLE_EQ(flex_dispatch_nodes_per_token(128, 8, 8), flex_dispatch_ranks_per_token(128, 8, 8));
  // DeepSeek-V3's 4 of 8 groups on 4 nodes (2 groups each): at most the
  // nodes of the 4 chosen groups, 4 x (1 - C(6,4) / C(8,4)) = 22/7, below
  // the uniform 4 x (1 - C(192,8) / C(256,8)) = 3.6142.
  EXPECT_NEAR(flex_dispatch_nodes_per_token(256, 8, 4, 8, 4), 22.0 / 7, 1e-12);
  EXPECT_NEAR(flex_dispatch_nodes_per_token(256, 8, 4), 3.6142, 5e-5);

  // ep 8 on two 4-GPU nodes: R = 5.3394 rank copies per token, of which
  // the uniform model sends (8 - 4) / 8 off the node; one copy per remote
  // node is D / 2 = 0.99690 of them: off_node_scale 0.99690 / (5.3394 / 2);
  // NVLink carries the forwarded copies too: in_node_scale = 2 nodes.
  const Model model = qwen_like(2);
  Plan plan = ep8_plan();
  plan.moe_flex_dispatcher = true;
  const Cluster across = h100_like(4);
  const StubCost flex(false);
  lower_chunk(model, plan, place(plan, across), flex, 0);
  ASSERT_FALSE(flex.all_to_alls().empty());
  for (const CollectiveDesc& c : flex.all_to_alls()) {
    EXPECT_NEAR(c.off_node_scale, 0.99690 / (5.3394 / 2), 1e-4);
    EXPECT_DOUBLE_EQ(c.in_node_scale, 2.0);
  }
  // The alltoall dispatcher, or the flex one inside a node: both 1.
  plan.moe_flex_dispatcher = false;
  const StubCost nccl(false);
  lower_chunk(model, plan, place(plan, across), nccl, 0);
  plan.moe_flex_dispatcher = true;
  const StubCost in_node(false);
  lower_chunk(model, plan, place(plan, h100_like(8)), in_node, 0);
  for (const StubCost* s : {&nccl, &in_node}) {
    ASSERT_FALSE(s->all_to_alls().empty());
    EXPECT_DOUBLE_EQ(s->all_to_alls().front().off_node_scale, 1.0);
    EXPECT_DOUBLE_EQ(s->all_to_alls().front().in_node_scale, 1.0);
  }
  // With a 50 GB/s NIC the per-node copies make the flex all-to-all faster
  // than the same bytes sent once per rank.
  const Roofline r(across);
  plan.moe_flex_dispatcher = true;
  const ChunkProgram with_nodes = lower_chunk(model, plan, place(plan, across), r, 0);
  CollectiveDesc per_rank = flex.all_to_alls().front();
  per_rank.off_node_scale = 1.0;
  per_rank.in_node_scale = 1.0;
  const double per_node_s = r.collective_time_s(flex.all_to_alls().front());
  EXPECT_LT(per_node_s, 0.5 * r.collective_time_s(per_rank));
  EXPECT_GT(sum_if(with_nodes.forward, is_a2a), 0.0);
}

TEST(MoeLowering, ExpertParallelAcrossNodesIsSlower) {
  // ep 8 in one 8-GPU node vs the same plan on 4-GPU nodes (two nodes, the
  // off-node part over the NIC).
  const Model model = qwen_like(4);
  const Plan plan = expert_plan(1, 1, 8, 8, 16);
  const Cluster in_node = h100_like(8), across = h100_like(4);
  EXPECT_EQ(place(plan, in_node).expert, (CommGroup{8, 8}));
  EXPECT_EQ(place(plan, across).expert, (CommGroup{8, 4}));
  const Roofline rin(in_node), racross(across);
  const ChunkProgram a = lower_chunk(model, plan, place(plan, in_node), rin, 0);
  const ChunkProgram b = lower_chunk(model, plan, place(plan, across), racross, 0);
  EXPECT_GT(sum_if(b.forward, is_a2a), 1.5 * sum_if(a.forward, is_a2a));
  const auto ra = simulate(model, plan, in_node);
  const auto rb = simulate(model, plan, across);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_GT(rb->breakdown.moe_a2a_s, ra->breakdown.moe_a2a_s);
  EXPECT_GT(rb->iteration_time_s, ra->iteration_time_s);
}

TEST(MoeLowering, ImbalanceTwoDoublesTheExpertGemms) {
  const Model model = qwen_like(2);
  Plan plan = expert_plan(1, 1, 8, 8, 16);
  const Cluster cluster = h100_like();
  const Roofline cost(cluster);
  const ChunkProgram one = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  plan.moe_imbalance = 2.0;
  const ChunkProgram two = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  const double f1 = sum_if(one.forward, is_expert_gemm), f2 = sum_if(two.forward, is_expert_gemm);
  const double b1 = sum_if(one.backward, is_expert_gemm), b2 = sum_if(two.backward, is_expert_gemm);
  ASSERT_GT(f1, 0.0);
  // Tile and wave quantisation keep it from being exactly 2.
  EXPECT_NEAR(f2 / f1, 2.0, 0.1);
  EXPECT_NEAR(b2 / b1, 2.0, 0.1);
  EXPECT_NEAR(sum_if(two.forward, is_a2a) / sum_if(one.forward, is_a2a), 2.0, 0.1);
}

TEST(MoeLowering, CapacityFactorPadsEveryExpert) {
  // c = 1.25: each rank sends each expert ceil(1.25 x 4096 x 8 / 128) = 320
  // rows; an expert gets ep x 320 rows; no imbalance beyond capacity.
  Model model = qwen_like(1);
  model.moe_capacity_factor = 1.25;
  Plan plan = ep8_plan();
  plan.moe_imbalance = 3.0;
  const Cluster cluster = h100_like();
  const StubCost cost(false);
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  ASSERT_FALSE(cost.all_to_alls().empty());
  EXPECT_EQ(cost.all_to_alls().front().bytes, 128.0 * 320 * 4096 * 2);
  double fc1_flops = 0;
  for (const LoweredOp& op : prog.forward) {
    if (std::string(op.name) == "expert_fc1_gemm") fc1_flops += op.flops;
  }
  // 16 local experts x 2560 rows x [4096 x 3072].
  EXPECT_DOUBLE_EQ(fc1_flops, 2.0 * 16 * 2560 * 3072 * 4096);
}

TEST(MoeLowering, HardwareFlopsEqualActiveModelFlopsWithoutRecompute) {
  // Non-flash attention (its backward is 2x the forward, as the model-FLOPs
  // formula counts it), dense first layer, MoE every other layer after it,
  // a shared expert, GQA, t 2 with SP, ep 4, etp 2, two pipeline stages.
  Model model = qwen_like(6);
  model.seq_length = 1024;
  testing::add_experts(&model, 16, 2, model.moe_ffn_hidden_size);
  model.moe_shared_experts = 1;
  model.moe_first_dense = 1;
  model.moe_layer_every = 2;
  Plan plan = expert_plan(2, 2, 4, 4, 16);
  plan.sequence_parallel = true;
  plan.expert_tensor_parallel = 2;
  plan.flash_attention = false;
  for (Precision precision : {Precision::kBf16, Precision::kFp8}) {
    plan.precision = precision;
    const auto r = simulate(model, plan, h100_like());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NEAR(r->hardware_flops / r->model_flops, 1.0, 1e-6);
  }
}

TEST(MoeLowering, ParametersSplitExpertsOverEpTimesEtp) {
  Model model = qwen_like(4);
  model.moe_first_dense = 1;
  Plan plan = expert_plan(2, 2, 8, 8, 16);
  plan.sequence_parallel = true;
  plan.expert_tensor_parallel = 2;
  const Cluster cluster = h100_like();
  const StubCost cost(false);
  const Placement pl = place(plan, cluster);
  const ChunkProgram first = lower_chunk(model, plan, pl, cost, 0);
  const ChunkProgram last = lower_chunk(model, plan, pl, cost, 1);
  // Chunk 0: a dense layer and an MoE layer; chunk 1: two MoE layers.
  const double experts = static_cast<double>(model.expert_parameters_per_layer()) / 16;
  EXPECT_DOUBLE_EQ(first.expert_parameters, experts);
  EXPECT_DOUBLE_EQ(last.expert_parameters, 2 * experts);
  const double dense_layers =
      (static_cast<double>(model.layer_parameters()) + model.moe_layer_parameters() +
       2.0 * model.moe_layer_parameters() - 3.0 * model.expert_parameters_per_layer()) /
      2;
  const double total = first.parameters + last.parameters;
  const double embeddings =
      2.0 * model.vocab_size * model.hidden_size / 2 + model.hidden_size;  // untied, final norm
  EXPECT_NEAR(total, dense_layers + 3 * experts + embeddings, 1e-6 * total);
  EXPECT_DOUBLE_EQ(last.expert_grad_bytes, last.expert_parameters * 4);
  EXPECT_DOUBLE_EQ(last.grad_bytes, (last.parameters - last.expert_parameters) * 4);
}

TEST(MoeLowering, PlaceFoldsTheStageIntoEtpEpEdp) {
  Plan plan = expert_plan(2, 1, 8, 4, 1);
  plan.expert_tensor_parallel = 2;
  const Placement pl = place(plan, h100_like());
  EXPECT_EQ(pl.expert_tensor, (CommGroup{2, 2}));
  EXPECT_EQ(pl.expert, (CommGroup{4, 4}));       // stride 2: 4 in a node of 8
  EXPECT_EQ(pl.expert_data, (CommGroup{2, 1}));  // stride 8: one per node
  plan.expert_tensor_parallel = 1;
  plan.expert_parallel = 16;
  const Placement wide = place(plan, h100_like());
  EXPECT_EQ(wide.expert, (CommGroup{16, 8}));
  EXPECT_EQ(wide.expert_data, (CommGroup{1, 1}));
}

TEST(MoeLowering, AllToAllOverlapHidesUnderTheLayersCompute) {
  const Model model = qwen_like(2);
  Plan plan = expert_plan(2, 1, 4, 8, 4);
  plan.sequence_parallel = true;
  const Placement pl = place(plan, h100_like());
  Plan overlapped = plan;
  overlapped.moe_a2a_overlap = true;
  // At 10 TB/s the all-to-alls (S = 134 MB: 13 us each) are shorter than a
  // layer's compute: with the overlap none is exposed, all is hidden.
  const StubCost fast(false, 1e13);
  const ChunkProgram off = lower_chunk(model, plan, pl, fast, 0);
  const ChunkProgram on = lower_chunk(model, overlapped, pl, fast, 0);
  const double a2a = sum_if(off.forward, is_a2a) + sum_if(off.backward, is_a2a);
  ASSERT_GT(a2a, 0.0);
  EXPECT_EQ(sum_if(on.forward, is_a2a) + sum_if(on.backward, is_a2a), 0.0);
  EXPECT_NEAR(on.moe_a2a_hidden_s, a2a, 1e-12);
  EXPECT_NEAR(off.forward_s - on.forward_s, sum_if(off.forward, is_a2a), 1e-12);
  // At 1 GB/s they outlast the compute: per layer and pass the hidden part
  // is the layer's compute, the rest stays exposed.
  const StubCost slow(false, 1e9);
  const ChunkProgram exposed = lower_chunk(model, plan, pl, slow, 0);
  const ChunkProgram hidden = lower_chunk(model, overlapped, pl, slow, 0);
  const double total = sum_if(exposed.forward, is_a2a) + sum_if(exposed.backward, is_a2a);
  const double left = sum_if(hidden.forward, is_a2a) + sum_if(hidden.backward, is_a2a);
  EXPECT_GT(left, 0.0);
  EXPECT_NEAR(left + hidden.moe_a2a_hidden_s, total, 1e-9 * total);
  // The hidden time is the layers' compute: everything but the all-to-alls
  // and the TP collectives (no SM contention in the stub).
  double compute = 0;
  for (const auto* ops : {&exposed.forward, &exposed.backward}) {
    for (const LoweredOp& op : *ops) {
      const bool in_layer =
          op.category != OpCategory::kMoeA2a && op.category != OpCategory::kTensorComm &&
          std::string(op.name) != "embedding" && std::string(op.name) != "logits_gemm" &&
          std::string(op.name) != "cross_entropy";
      compute += in_layer ? op.duration_s : 0.0;
    }
  }
  EXPECT_LT(hidden.moe_a2a_hidden_s, compute);
  EXPECT_NEAR(exposed.forward_s + exposed.backward_s - hidden.forward_s - hidden.backward_s,
              hidden.moe_a2a_hidden_s, 1e-9 * total);
}

TEST(MoeLowering, ExpertGradientsReduceOverExpertData) {
  // t 1, d 4: ep 4 leaves edp 1 (no expert reduction), ep 2 leaves edp 2.
  const Model model = qwen_like(2);
  Plan plan = layout_plan(1, 1, 4, 8);
  plan.overlap_grad_reduce = false;
  SimOptions options;
  options.keep_timeline = true;
  auto count = [&](int ep, const char* what) {
    Plan p = plan;
    p.expert_parallel = ep;
    const auto r = simulate(model, p, h100_like(), options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    int n = 0;
    for (const TimelineEvent& e : r->timeline) n += e.name.find(what) != std::string::npos;
    return n;
  };
  EXPECT_EQ(count(4, "edp all_reduce expert gradients"), 0);
  EXPECT_GT(count(2, "edp all_reduce expert gradients"), 0);
  EXPECT_GT(count(4, "dp all_reduce gradients"), 0);
}

TEST(MoeLowering, CollapsedPassesEqualTheTaskLevelSimulation) {
  // MoE ops (all-to-alls on their own stream, expert buckets) keep the
  // collapsed simulation equal to the per-kernel one.
  Model model = qwen_like(4);
  model.moe_first_dense = 1;
  model.moe_shared_experts = 1;
  Plan plan = expert_plan(2, 2, 4, 4, 16);
  plan.sequence_parallel = true;
  plan.grad_bucket_bytes = 40000000;
  plan.distributed_optimizer = true;
  plan.moe_a2a_overlap = true;
  plan.precision = Precision::kFp8;
  SimOptions task_level;
  task_level.collapse_chains = false;
  const auto a = simulate(model, plan, h100_like());
  const auto b = simulate(model, plan, h100_like(), task_level);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(a->iteration_time_s, b->iteration_time_s, 1e-9 * b->iteration_time_s);
  EXPECT_GT(a->breakdown.moe_a2a_hidden_s, 0.0);
}

TEST(MoeLowering, ZeroThreeGathersExpertsOverExpertData) {
  // ZeRO-3, d 8, ep 4: each MoE layer's unit gathers its non-expert
  // parameters over the shard group (8 ranks) and its experts over the
  // expert-data group (edp 2), two collectives per unit.
  const Model model = qwen_like(2);
  Plan plan = expert_plan(1, 1, 8, 4, 8);
  plan.zero_stage = 3;
  const Cluster cluster = h100_like();
  const StubCost cost(false);
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  double dense = 0, experts = 0;
  int gathers = 0;
  for (const PassCollective& c : prog.forward_collectives) {
    if (c.kind != CollectiveKind::kAllGather) continue;
    ++gathers;
    (c.bytes == prog.expert_parameters / 2 * 2.0 ? experts : dense) += c.bytes;
  }
  // Embedding, 2 x (layer, its experts), head.
  EXPECT_EQ(gathers, 6);
  EXPECT_DOUBLE_EQ(experts, prog.expert_parameters * 2.0);
  EXPECT_DOUBLE_EQ(dense + experts, prog.parameters * 2.0);
  EXPECT_DOUBLE_EQ(prog.expert_parameters,
                   2.0 * model.expert_parameters_per_layer() / plan.expert_parallel);
}

TEST(MoeLowering, SlidingWindowShortensTheAttentionKernel) {
  // GPT-OSS style: window 128, every other layer full. Flash FLOPs of a
  // windowed layer: 4 heads s window d (instead of s^2).
  Model model = qwen_like(2);
  model.seq_length = 4096;
  model.sliding_window = 128;
  model.full_attention_every = 2;
  const Plan plan = ep8_plan();
  const Cluster cluster = h100_like();
  const StubCost cost(false);
  const ChunkProgram prog = lower_chunk(model, plan, place(plan, cluster), cost, 0);
  std::vector<double> flash;
  for (const LoweredOp& op : prog.forward) {
    if (std::string(op.name) == "flash_attention") flash.push_back(op.flops);
  }
  ASSERT_EQ(flash.size(), 2u);
  const double heads = 64, d = 128, s = 4096;
  EXPECT_DOUBLE_EQ(flash[0], 4 * heads * s * 128 * d);  // layer 0: windowed
  EXPECT_DOUBLE_EQ(flash[1], 4 * heads * s * s * d);    // layer 1: full
}

TEST(MoeLowering, ExpertBiasesAddTheWeightedFc2BiasPerExpert) {
  // GPT-OSS: experts with biases. Megatron-Core adds FC2's bias x routing
  // weight after the grouped GEMM in eager PyTorch: 12 B per element of
  // FC2's output forward, 16 B backward (moe.cc), over E_local x m_e x h =
  // T k h elements (b 1, s 4096, k 8, h 4096; ep 8). Without biases no such
  // kernel runs.
  Plan plan = ep8_plan();
  Model model = qwen_like(2);
  const ChunkProgram plain = lower_ep8(model, plan);
  EXPECT_EQ(named_ops(plain.forward, "moe_expert_bias").kernels, 0);
  EXPECT_EQ(named_ops(plain.backward, "moe_expert_bias").kernels, 0);
  model.linear_bias = true;
  const ChunkProgram biased = lower_ep8(model, plan);
  const double elements = 4096.0 * 8 * 4096;
  const NamedOps fwd = named_ops(biased.forward, "moe_expert_bias");
  EXPECT_NEAR(fwd.seconds, 2 * 12 * elements / 1e12, 1e-12);
  EXPECT_EQ(fwd.kernels, 2 * 2);
  const NamedOps bwd = named_ops(biased.backward, "moe_expert_bias");
  EXPECT_NEAR(bwd.seconds, 2 * 16 * elements / 1e12, 1e-12);
  EXPECT_EQ(bwd.kernels, 2 * 2);
}

TEST(MoeLowering, ActivationClampRunsUnfusedAroundTheExpertActivation) {
  // GPT-OSS: FC1's output clamped (gate half at most v, linear half in
  // [-v, v]) and concatenated in eager PyTorch before the fused activation
  // (Megatron-Core's weighted_bias_quick_geglu_impl): 8 B per element of
  // FC1's output forward (two clamps over halves, 4 B each per element of
  // their half; the cat 4 B), 15 B backward (PyTorch's clamp_backward:
  // comparison masks, logical_and and where per half, 11 B; the chunk's cat
  // 4 B), over E_local x m_e x 2 f_e
  // = T k 2 f_e elements (b 1, s 4096, k 8, f_e 1536; ep 8). With moe_act
  // recomputed the forward part runs again in the backward.
  Plan plan = ep8_plan();
  Model model = qwen_like(2);
  const ChunkProgram plain = lower_ep8(model, plan);
  EXPECT_EQ(named_ops(plain.forward, "moe_act_clamp").kernels, 0);
  EXPECT_EQ(named_ops(plain.backward, "moe_act_clamp").kernels, 0);
  model.activation_clamp = 7.0;
  ASSERT_TRUE(validate(model, plan).ok());
  const ChunkProgram clamped = lower_ep8(model, plan);
  const double elements = 4096.0 * 8 * 2 * 1536;
  const NamedOps fwd = named_ops(clamped.forward, "moe_act_clamp");
  EXPECT_NEAR(fwd.seconds, 2 * 8 * elements / 1e12, 1e-12);
  EXPECT_EQ(fwd.kernels, 2 * 3);
  const NamedOps bwd = named_ops(clamped.backward, "moe_act_clamp");
  EXPECT_NEAR(bwd.seconds, 2 * 15 * elements / 1e12, 1e-12);
  EXPECT_EQ(bwd.kernels, 2 * 7);
  plan.recompute_modules = kRecomputeMoeAct;
  const ChunkProgram recomputed = lower_ep8(model, plan);
  const NamedOps again = named_ops(recomputed.backward, "moe_act_clamp");
  EXPECT_NEAR(again.seconds, 2 * 23 * elements / 1e12, 1e-12);
  EXPECT_EQ(again.kernels, 2 * 10);
  // The clamp needs the gated activation.
  model.activation = Activation::kGelu;
  EXPECT_FALSE(validate(model).ok());
}

TEST(MoeLowering, Qwen3LayoutRunsFromTheCli) {
  // The published Qwen3-235B-A22B layout of the H100 runs file.
  const auto run = planner::testing_cli::run_simulate(
      "--model qwen3-235b-a22b --cluster dgx-h100 --tp 2 --sequence-parallel --pp 8 "
      "--virtual-stages 4 --schedule interleaved --ep 32 --dp 16 --micro-batch 1 "
      "--global-batch 8192 --precision fp8 --fp8-recipe current --distributed-optimizer "
      "--format json");
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const boost::json::value v = boost::json::parse(run.out);
  const boost::json::object& b = v.at("breakdown").as_object();
  EXPECT_GT(b.at("moe_a2a_s").to_number<double>(), 0.0);
  EXPECT_GT(b.at("expert_compute_s").to_number<double>(), 0.0);
  EXPECT_GT(v.at("total_params").to_number<double>(), v.at("active_params").to_number<double>());
}

}  // namespace
}  // namespace llmplan::simulator
