#include "simulator/collectives.h"

#include <gtest/gtest.h>

#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

TEST(CollectiveModel, InNodeRingFormulas) {
  Cluster c = testing::a100_cluster();
  c.network.nvlink_efficiency = 0.8;
  c.network.nvlink_latency_s = 5e-6;
  const CollectiveModel model(c);
  const double bw = 600e9 / 2 * 0.8;
  const double S = 256e6;
  for (int n : {2, 4, 8}) {
    const CommGroup g{n, n};
    EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, S, g}),
                     2.0 * (n - 1) / n * S / bw + 2.0 * (n - 1) * 5e-6);
    EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllGather, S, g}),
                     (n - 1.0) / n * S / bw + (n - 1) * 5e-6);
    EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kReduceScatter, S, g}),
                     (n - 1.0) / n * S / bw + (n - 1) * 5e-6);
  }
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, S, {1, 1}}), 0.0);
}

TEST(CollectiveModel, CrossNodeGroupsAreBoundByTheNics) {
  Cluster c = testing::a100_cluster();
  const CollectiveModel model(c);
  const double nic = 25e9 * 0.8;
  const double nvl_lat = c.network.nvlink_latency_s, nic_lat = c.network.nic_latency_s;
  const double S = 1e9;
  // Latency: (k-1) NVLink hops inside the node plus a log2(nodes) tree of
  // NIC hops, twice for an all-reduce.
  // One rank per node (t = 8): each rank's own NIC carries the ring.
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, S, {16, 1}}),
                   2.0 * 15 / 16 * S / nic + 2 * (4 * nic_lat));
  // Two ranks per node use two NICs in parallel: twice the bandwidth.
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, S, {16, 2}}),
                   2.0 * 15 / 16 * S / (2 * nic) + 2 * (nvl_lat + 3 * nic_lat));
  // Eight ranks per node: capped by NVLink, not 8 NICs.
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, S, {64, 8}}),
                   2.0 * 63 / 64 * S / std::min(8 * nic, 600e9 / 2 * 0.8) +
                       2 * (7 * nvl_lat + 3 * nic_lat));
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kSendRecv, S, {2, 1}}), S / nic + nic_lat);
}

TEST(CollectiveModel, MeasuredCurveReplacesFormulaInsideANode) {
  const Cluster c = testing::a100_cluster();
  CollectiveModel model(c);
  CollectiveCurve curve;
  curve.bytes = {1e6, 2e6};
  curve.seconds = {1e-4, 3e-4};
  model.add_in_node_curve(CollectiveKind::kAllReduce, 4, curve);
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, 1.5e6, {4, 4}}), 2e-4);
  // Other sizes, kinds and cross-node groups keep the formula.
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, 1.5e6, {8, 8}}),
                   model.formula_time_s({CollectiveKind::kAllReduce, 1.5e6, {8, 8}}));
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllGather, 1.5e6, {4, 4}}),
                   model.formula_time_s({CollectiveKind::kAllGather, 1.5e6, {4, 4}}));
}

TEST(CollectiveModel, UsesTheClustersMeasuredCurvesUnlessOverridden) {
  Cluster c = testing::a100_cluster();
  c.gpus_per_node = 4;
  InNodeCurve four{4, {{1e6, 2e6}, {1e-4, 3e-4}}};
  InNodeCurve eight{8, {{1e6}, {5e-4}}};  // larger than a node here: unused
  c.collectives = {"lab", {four, eight}};
  ASSERT_TRUE(validate(c).ok());
  CollectiveModel model(c);
  EXPECT_TRUE(model.has_curve(CollectiveKind::kAllReduce, 4));
  EXPECT_FALSE(model.has_curve(CollectiveKind::kAllReduce, 8));
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, 1.5e6, {4, 4}}), 2e-4);
  // Below the smallest measured size: the smallest size's time (latency floor).
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, 1e3, {4, 4}}), 1e-4);
  // A group spanning nodes keeps the formula.
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, 1.5e6, {8, 4}}),
                   model.formula_time_s({CollectiveKind::kAllReduce, 1.5e6, {8, 4}}));
  // add_in_node_curve (--allreduce-lut) replaces the cluster's curve.
  model.add_in_node_curve(CollectiveKind::kAllReduce, 4, CollectiveCurve{{1e6}, {7e-4}});
  EXPECT_DOUBLE_EQ(model.time_s({CollectiveKind::kAllReduce, 1e6, {4, 4}}), 7e-4);
}

TEST(MeasuredCollectives, ValidateNamesTheBadCurve) {
  MeasuredCollectives m{"x", {{2, {{1e6}, {1e-4}}}, {2, {{1e6}, {1e-4}}}}};
  EXPECT_EQ(validate(m).message(), "all_reduce[1].group_size: 2 appears twice");
  m.all_reduce[1] = {1, {{1e6}, {1e-4}}};
  EXPECT_EQ(validate(m).message(), "all_reduce[1].group_size: must be >= 2");
  m.all_reduce[1] = {4, {{2e6, 1e6}, {1e-4, 2e-4}}};
  EXPECT_EQ(validate(m).message(), "all_reduce[1]: points[1]: bytes must be strictly increasing");
  Cluster c = testing::a100_cluster();
  c.collectives = m;
  EXPECT_EQ(validate(c).message(),
            "cluster.collectives: all_reduce[1]: points[1]: bytes must be strictly increasing");
}

}  // namespace
}  // namespace llmplan::simulator
