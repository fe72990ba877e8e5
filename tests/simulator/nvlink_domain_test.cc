// Issue 26: NVLink (scale-up) domains larger than a node (GB200 NVL72: 4-GPU
// trays in a 72-GPU domain). Groups inside a domain run over NVLink, groups
// spanning domains over the NICs; all-to-alls inside a domain are bounded by
// nvlink_a2a_efficiency; a domain equal to the node changes nothing.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "simulator/collectives.h"
#include "simulator/lowering.h"
#include "simulator/simulate.h"
#include "tests/planner/simulate_cli.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

// An NVL72-like rack written out by hand: NVLink 5 (1.8 TB/s both
// directions), 4 GPUs per tray, 72 per NVLink domain, one 400 Gb/s NIC per
// GPU, the all-to-all bound of the Blackwell presets (0.286 of NVLink).
Cluster nvl72() {
  Cluster c = testing::a100_cluster_with("a100-test", 2500e12, /*fp8_flops=*/0, 8e12, 152);
  c.name = "test-nvl72";
  c.gpu.hbm_bytes = 186e9;
  c.gpu.nvlink_bytes_per_s = 1.8e12;
  c.gpus_per_node = 4;
  c.nvlink_domain_gpus = 72;
  c.nic_bytes_per_s = 50e9;
  c.network.nvlink_a2a_efficiency = 0.286;
  return c;
}

using testing::qwen_like;  // Qwen3-235B-A22B's layer shape

Plan moe_plan(int pp, int dp, int ep) {
  Plan p = testing::expert_plan(1, pp, dp, ep, 2 * dp * pp);
  p.distributed_optimizer = true;
  return p;
}

TEST(NvlinkDomain, ExpertGroupsOf32And64SitInsideTheDomain) {
  const Cluster c = nvl72();
  // The published layout: tp 1, pp 8, ep 32 on 256 GPUs (dp 32).
  const Placement a = place(moe_plan(8, 32, 32), c);
  EXPECT_EQ(a.expert, (CommGroup{32, 32}));
  EXPECT_EQ(a.expert.nodes(), 1);
  EXPECT_EQ(a.data, (CommGroup{32, 32}));
  // ep 64 inside the 72-GPU domain too.
  const Placement b = place(moe_plan(4, 64, 64), c);
  EXPECT_EQ(b.expert, (CommGroup{64, 64}));
  EXPECT_EQ(b.expert.nodes(), 1);
  // The same plan with the tray as the domain spans 8 (16) trays.
  Cluster trays = c;
  trays.nvlink_domain_gpus = 0;
  EXPECT_EQ(place(moe_plan(8, 32, 32), trays).expert, (CommGroup{32, 4}));
  EXPECT_EQ(place(moe_plan(4, 64, 64), trays).expert.nodes(), 16);
}

TEST(NvlinkDomain, DataParallelGroupsSpanDomainsAndPipelineStagesCrossThem) {
  const Cluster c = nvl72();
  // dp 144 (tp 1, pp 1): two domains of 72, each rank's NIC carries the ring.
  Plan p = moe_plan(1, 144, 16);
  const Placement pl = place(p, c);
  EXPECT_EQ(pl.data, (CommGroup{144, 72}));
  EXPECT_EQ(pl.data.nodes(), 2);
  // Stages of 32 ranks: stage r holds ranks 32r .. 32r+31; boundary r -> r+1
  // crosses when a rank pair lands in two 72-GPU domains: 0 -> 1 stays in
  // domain 0, the other six of the seven cross.
  const Placement pipe = place(moe_plan(8, 32, 32), c);
  ASSERT_EQ(pipe.pipe_crosses_node.size(), 8u);
  EXPECT_FALSE(pipe.pipe_crosses_node[0]);  // ranks 0..31 -> 32..63, domain 0
  EXPECT_TRUE(pipe.pipe_crosses_node[1]);   // 32..63 -> 64..95 straddles 72
  EXPECT_EQ(pipeline_domain_crossings(pipe), 6);
  const std::vector<GroupLink> links = group_links(moe_plan(8, 32, 32), pipe);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(describe_group_link(links[1], 72), "ep 32 over NVLink (domain 72)");
  EXPECT_EQ(describe_group_link(group_links(p, pl)[0], 72),
            "dp 144 over NVLink + NICs (2 domains of 72, 72 ranks in each)");
}

TEST(NvlinkDomain, AllToAllInsideTheDomainIsBoundByTheAchievedFigure) {
  const Cluster c = nvl72();
  const CollectiveModel model(c);
  // 900 GB/s per direction x min(nvlink_efficiency 0.8, 0.286).
  const double a2a_bw = 900e9 * 0.286;
  EXPECT_DOUBLE_EQ(model.nvlink_a2a_bytes_per_s(), a2a_bw);
  EXPECT_DOUBLE_EQ(model.nvlink_bytes_per_s(), 900e9 * 0.8);  // other collectives unchanged
  const double S = 512e6, lat = c.network.nvlink_latency_s;
  const double inside = model.time_s({CollectiveKind::kAllToAll, S, {32, 32}});
  EXPECT_DOUBLE_EQ(inside, 31.0 / 32 * S / a2a_bw + 31 * lat);
  // The same group over eight 4-GPU domains: 28/32 of the buffer through
  // one 50 GB/s NIC (x 0.8) per rank.
  Cluster trays = c;
  trays.nvlink_domain_gpus = 0;
  const double across = CollectiveModel(trays).time_s({CollectiveKind::kAllToAll, S, {32, 4}});
  EXPECT_DOUBLE_EQ(across, std::max(3.0 / 32 * S / a2a_bw, 28.0 / 32 * S / (50e9 * 0.8)) +
                               3 * lat + c.network.nic_latency_s);
  EXPECT_GT(across / inside, 5.0);
}

// Pre-Blackwell clusters carry no a2a bound (1): the all-to-all runs at
// nvlink_efficiency as before, and a domain equal to the node (or 0) places
// and simulates bit-identically.
TEST(NvlinkDomain, ADomainOfOneNodeChangesNothing) {
  Cluster a = testing::a100_cluster();
  const CollectiveModel model(a);
  EXPECT_DOUBLE_EQ(model.nvlink_a2a_bytes_per_s(), model.nvlink_bytes_per_s());
  Cluster b = a;
  b.nvlink_domain_gpus = 8;
  const Model m = qwen_like(4);
  const Plan p = moe_plan(2, 16, 16);
  const Placement pa = place(p, a), pb = place(p, b);
  EXPECT_EQ(pa.expert, pb.expert);
  EXPECT_EQ(pa.data, pb.data);
  EXPECT_EQ(pa.pipe_crosses_node, pb.pipe_crosses_node);
  Result<StepReport> ra = simulate(m, p, a), rb = simulate(m, p, b);
  ASSERT_TRUE(ra.ok()) << ra.status().message();
  ASSERT_TRUE(rb.ok()) << rb.status().message();
  EXPECT_EQ(ra->iteration_time_s, rb->iteration_time_s);
  EXPECT_EQ(ra->breakdown.moe_a2a_s, rb->breakdown.moe_a2a_s);
}

// End to end: the published Qwen3-235B layout's all-to-all costs several
// times less inside the 72-GPU domain than across 4-GPU trays.
TEST(NvlinkDomain, Qwen3LayoutIsFasterInsideTheDomain) {
  const Model m = qwen_like(8);
  const Plan p = moe_plan(8, 32, 32);
  Cluster trays = nvl72();
  trays.nvlink_domain_gpus = 0;
  Result<StepReport> in = simulate(m, p, nvl72()), out = simulate(m, p, trays);
  ASSERT_TRUE(in.ok()) << in.status().message();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_GT(in->breakdown.moe_a2a_s, 0);
  EXPECT_GT(out->breakdown.moe_a2a_s, 3 * in->breakdown.moe_a2a_s);
  EXPECT_LT(in->iteration_time_s, out->iteration_time_s);
}

// The published Qwen3-235B-A22B layout on GB200 NVL72 (tp 1, pp 8, ep 32 on
// 256 GPUs) through the CLI: --gpus sets dp, and the report says the
// all-to-all ran inside the NVLink domain, in text and JSON.
TEST(NvlinkDomain, SimulateShowsTheExpertGroupInsideTheDomain) {
  using planner::testing_cli::run_simulate;
  const std::string args =
      "--model qwen3-235b-a22b --cluster gb200-nvl72 --tp 1 --pp 8 --ep 32 --gpus 256 "
      "--global-batch 2048";
  const auto text = run_simulate(args);
  ASSERT_TRUE(text.status.ok()) << text.status.message();
  EXPECT_NE(text.out.find("(gb200-nvl72, 4 per node, NVLink domain 72)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("plan: tp 1 x pp 8 x dp 32, experts ep 32"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("placement: dp 32 over NVLink (domain 72); ep 32 over NVLink (domain "
                          "72); 6 of 7 pipeline boundaries cross a domain"),
            std::string::npos)
      << text.out;
  const auto json = run_simulate(args + " --format json");
  ASSERT_TRUE(json.status.ok()) << json.status.message();
  const boost::json::value v = boost::json::parse(json.out);
  const boost::json::object& pl = v.at("placement").as_object();
  EXPECT_EQ(pl.at("nvlink_domain_gpus").as_int64(), 72);
  const boost::json::object& ep = pl.at("groups").as_array().at(1).as_object();
  EXPECT_EQ(ep.at("group").as_string(), "ep");
  EXPECT_EQ(ep.at("size").as_int64(), 32);
  EXPECT_EQ(ep.at("domains").as_int64(), 1);
  EXPECT_EQ(ep.at("link").as_string(), "nvlink");
  // --gpus must be a multiple of the model-parallel ranks and agree with --dp.
  const auto bad = run_simulate("--model qwen3-235b-a22b --cluster gb200-nvl72 --pp 8 --gpus 250");
  EXPECT_EQ(bad.status.message(), "simulate: --gpus 250 is not a multiple of tp x cp x pp = 8");
  const auto both = run_simulate(args + " --dp 16");
  EXPECT_NE(both.status.message().find("--gpus 256 contradicts --dp 16"), std::string::npos)
      << both.status.message();
}

}  // namespace
}  // namespace llmplan::simulator
