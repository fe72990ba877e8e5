// The MoE cost model (#27): the grouped expert GEMMs' per-expert overhead,
// the MoE all-to-all efficiencies (NVLink and NIC), node-limited routing
// (router_groups / router_group_limit: validation, JSON, inter-node bytes)
// and the sliding-window flash-attention factor.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "simulator/cluster_json.h"
#include "simulator/collectives.h"
#include "simulator/model_json.h"
#include "simulator/roofline.h"
#include "simulator/simulate.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::a100_cluster;
using testing::parse_json;

KernelDesc expert_gemm(int64_t m, int64_t n, int64_t k, int64_t experts) {
  KernelDesc d;
  d.kind = KernelKind::kExpertFc1Gemm;
  d.gemm = {m, n, k, experts};
  d.flops = 2.0 * m * n * k * experts;
  return d;
}

// Each local expert of a grouped GEMM costs grouped_gemm_expert_overhead_s
// on top of the roofline time; dense GEMMs do not.
TEST(MoeCost, GroupedGemmPaysItsOverheadPerLocalExpert) {
  Cluster c = a100_cluster();
  const double base = Roofline(c).kernel_time_s(expert_gemm(1024, 5760, 2880, 16));
  c.gpu.roofline.grouped_gemm_expert_overhead_s = 5e-6;
  const Roofline r(c);
  EXPECT_NEAR(r.kernel_time_s(expert_gemm(1024, 5760, 2880, 16)) - base, 16 * 5e-6, 1e-12);
  EXPECT_NEAR(r.kernel_time_s(expert_gemm(1024, 5760, 2880, 2)) -
                  Roofline(a100_cluster()).kernel_time_s(expert_gemm(1024, 5760, 2880, 2)),
              2 * 5e-6, 1e-12);
  KernelDesc dense = expert_gemm(4096, 4096, 4096, 1);
  dense.kind = KernelKind::kFc1Gemm;
  EXPECT_EQ(r.kernel_time_s(dense), Roofline(a100_cluster()).kernel_time_s(dense));
}

// moe_a2a_efficiency replaces the cluster's NVLink all-to-all bound, and
// moe_a2a_nic_efficiency the NIC efficiency of the all-to-all's inter-node
// part; other collectives keep the cluster's figures; 0 keeps the cluster's.
TEST(MoeCost, AllToAllEfficienciesReplaceTheClustersFigures) {
  Cluster c = a100_cluster();
  c.gpu.nvlink_bytes_per_s = 900e9;  // per GPU, both directions
  c.nic_bytes_per_s = 50e9;
  c.network.nvlink_efficiency = 0.8;
  c.network.nic_efficiency = 0.8;
  c.network.nvlink_a2a_efficiency = 0.286;
  const CollectiveModel before(c);
  EXPECT_DOUBLE_EQ(before.nvlink_a2a_bytes_per_s(), 450e9 * 0.286);
  c.gpu.roofline.moe_a2a_efficiency = 0.75;
  c.gpu.roofline.moe_a2a_nic_efficiency = 0.9;
  const CollectiveModel after(c);
  EXPECT_DOUBLE_EQ(after.nvlink_a2a_bytes_per_s(), 450e9 * 0.75);
  EXPECT_DOUBLE_EQ(after.nvlink_bytes_per_s(), 450e9 * 0.8);
  EXPECT_DOUBLE_EQ(after.nic_bytes_per_s(), 50e9 * 0.8);
  const double S = 1e9, lat = c.network.nvlink_latency_s;
  // 8 ranks in one node: 7/8 of S over NVLink at 0.75.
  EXPECT_DOUBLE_EQ(after.time_s({CollectiveKind::kAllToAll, S, {8, 8}}),
                   7.0 / 8 * S / (450e9 * 0.75) + 7 * lat);
  // 16 ranks on 2 nodes: 8/16 of S through the NIC at 0.9 (slower than the
  // NVLink part), 7 NVLink latencies and one NIC latency.
  EXPECT_DOUBLE_EQ(after.time_s({CollectiveKind::kAllToAll, S, {16, 8}}),
                   8.0 / 16 * S / (50e9 * 0.9) + 7 * lat + c.network.nic_latency_s);
  // An all-reduce is untouched.
  EXPECT_DOUBLE_EQ(after.time_s({CollectiveKind::kAllReduce, S, {16, 8}}),
                   before.time_s({CollectiveKind::kAllReduce, S, {16, 8}}));
  // off_node_scale (node-limited routing) scales only the NIC part.
  CollectiveDesc limited{CollectiveKind::kAllToAll, S, {16, 8}};
  limited.off_node_scale = 0.5;
  EXPECT_DOUBLE_EQ(after.time_s(limited),
                   std::max(7.0 / 16 * S / (450e9 * 0.75), 8.0 / 16 * S * 0.5 / (50e9 * 0.9)) +
                       7 * lat + c.network.nic_latency_s);
  // in_node_scale (the flex dispatcher's NVLink forwarding) scales only the
  // NVLink part.
  CollectiveDesc forwarded{CollectiveKind::kAllToAll, S, {16, 8}};
  forwarded.off_node_scale = 0.25;
  forwarded.in_node_scale = 2.0;
  EXPECT_DOUBLE_EQ(after.time_s(forwarded),
                   std::max(7.0 / 16 * S * 2.0 / (450e9 * 0.75), 8.0 / 16 * S * 0.25 / (50e9 * 0.9)) +
                       7 * lat + c.network.nic_latency_s);
}

// A 128-token window runs at 0.5 x 128 / (128 + 428) = 0.1151 of the full
// kernel's rate per computed pair (the profile's 0.23 of the causal rate,
// which counts the masked half); full attention is unchanged.
TEST(MoeCost, SlidingWindowAttentionRunsAtItsMeasuredRate) {
  EXPECT_NEAR(Roofline::windowed_attention_factor({4096, 128, 64, 64}), 0.1151, 1e-4);
  EXPECT_EQ(Roofline::windowed_attention_factor({4096, 4096, 64, 64}), 1.0);
  const Roofline r(a100_cluster());
  KernelDesc full;
  full.kind = KernelKind::kFlashAttention;
  full.gemm = {4096, 4096, 64, 64};
  full.flops = 4.0 * 64 * 4096 * 4096 * 64;
  KernelDesc window = full;
  window.gemm.n = 128;
  window.flops = 4.0 * 64 * 4096 * 128 * 64;
  // 32x fewer pairs, 0.1151 of the rate: 0.27 of the full kernel's time.
  EXPECT_NEAR(r.kernel_time_s(window) / r.kernel_time_s(full), 1.0 / 32 / 0.11511, 1e-3);
}

// DeepSeek-V3-like layer: 256 experts of 2048, top-8, 8 groups, top-4 groups.
Model grouped_moe(int groups, int limit) {
  Model m = testing::modern_model("grouped", 4, 7168, 56, 18432, 4096, 129280);
  m.num_kv_heads = 8;
  m.head_dim_size = 128;
  testing::add_experts(&m, 256, 8, 2048);
  m.moe_router_groups = groups;
  m.moe_router_group_limit = limit;
  return m;
}

TEST(MoeCost, RouterGroupsAreValidatedWithOneLineErrors) {
  EXPECT_TRUE(validate(grouped_moe(8, 4)).ok());
  EXPECT_TRUE(validate(grouped_moe(0, 0)).ok());
  const struct {
    int groups, limit;
    const char* message;
  } bad[] = {
      {7, 4, "model.router_groups: must divide experts (256), got 7"},
      {8, 9, "model.router_group_limit"},
      {8, 0, "model.router_group_limit"},
      {0, 4, "model.router_group_limit: needs router_groups"},
      {-8, 4, "model.router_groups"},
  };
  for (const auto& b : bad) {
    const Status s = validate(grouped_moe(b.groups, b.limit));
    ASSERT_FALSE(s.ok()) << b.groups << " " << b.limit;
    EXPECT_NE(s.message().find(b.message), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
  Model dense = grouped_moe(0, 0);
  dense.num_experts = dense.moe_top_k = dense.moe_ffn_hidden_size = 0;
  dense.moe_router_groups = 8;
  EXPECT_NE(validate(dense).message().find("model.router_groups: needs experts"),
            std::string::npos);
}

TEST(MoeCost, RouterGroupsRoundTripThroughJson) {
  const Model m = grouped_moe(8, 4);
  Model back;
  ASSERT_TRUE(apply_model_json(model_to_json(m), "m", &back).ok());
  EXPECT_EQ(back.moe_router_groups, 8);
  EXPECT_EQ(back.moe_router_group_limit, 4);
  // Off: the keys are not written (other MoE models' JSON is unchanged).
  const boost::json::object o = model_to_json(grouped_moe(0, 0)).as_object();
  EXPECT_EQ(o.count("router_groups"), 0u);
  Model bad;
  const Status s = apply_model_json(
      parse_json(R"({"router_groups": "eight"})"), "cfg: model", &bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("router_groups"), std::string::npos) << s.message();
}

// The roofline block's MoE keys read back, and a fraction above 1 is a
// one-line error naming the key.
TEST(MoeCost, RooflineMoeKeysReadAndBadValuesAreRejected) {
  RooflineConstants c;
  ASSERT_TRUE(apply_roofline_json(parse_json(R"({"grouped_gemm_expert_overhead_s": 4e-6,
      "moe_a2a_efficiency": 0.7, "moe_a2a_nic_efficiency": 0.9})"), "gpu.roofline", &c)
                  .ok());
  EXPECT_DOUBLE_EQ(c.grouped_gemm_expert_overhead_s, 4e-6);
  EXPECT_DOUBLE_EQ(c.moe_a2a_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(c.moe_a2a_nic_efficiency, 0.9);
  const Status s =
      apply_roofline_json(parse_json(R"({"moe_a2a_efficiency": 1.5})"), "gpu.roofline", &c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gpu.roofline.moe_a2a_efficiency"), std::string::npos);
  const Status neg = apply_roofline_json(parse_json(R"({"grouped_gemm_expert_overhead_s": -1})"),
                                         "gpu.roofline", &c);
  EXPECT_FALSE(neg.ok());
}

// Node-limited routing: EP 64 over 8 nodes, top-8 within 4 of 8 groups:
// each token reaches at most 4 nodes, the inter-node bytes halve; inside one
// node (EP 8) nothing changes.
TEST(MoeCost, NodeLimitedRoutingHalvesTheInterNodeAllToAll) {
  Cluster c = a100_cluster();
  Plan p;
  p.micro_batch_size = 1;
  p.global_batch_size = 64;
  p.data_parallel = 64;
  p.expert_parallel = 64;
  p.flash_attention = true;
  p.distributed_optimizer = true;
  Result<StepReport> free_r = simulate(grouped_moe(0, 0), p, c);
  Result<StepReport> limited = simulate(grouped_moe(8, 4), p, c);
  ASSERT_TRUE(free_r.ok()) << free_r.status().message();
  ASSERT_TRUE(limited.ok()) << limited.status().message();
  EXPECT_LT(limited->breakdown.moe_a2a_s, 0.75 * free_r->breakdown.moe_a2a_s);
  EXPECT_GT(limited->breakdown.moe_a2a_s, 0.4 * free_r->breakdown.moe_a2a_s);
  p.data_parallel = 8;
  p.expert_parallel = 8;
  p.global_batch_size = 8;
  Result<StepReport> in_a = simulate(grouped_moe(0, 0), p, c);
  Result<StepReport> in_b = simulate(grouped_moe(8, 4), p, c);
  ASSERT_TRUE(in_a.ok() && in_b.ok());
  EXPECT_EQ(in_a->iteration_time_s, in_b->iteration_time_s);
}

}  // namespace
}  // namespace llmplan::simulator
