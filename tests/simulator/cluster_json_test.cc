#include "simulator/cluster_json.h"

#include <gtest/gtest.h>

#include "simulator/cluster.h"
#include "base/strict_json.h"
#include "tests/simulator/test_cluster.h"

namespace llmplan::simulator {
namespace {

using testing::parse_json;

GpuSpec test_gpu(const std::string& name) {
  GpuSpec g;
  g.name = name;
  g.peak_bf16_flops = 312e12;
  g.peak_fp16_flops = 300e12;
  g.hbm_bytes = 80e9;
  g.hbm_bytes_per_s = 2.039e12;
  g.nvlink_bytes_per_s = 600e9;
  g.tdp_w = 400;
  g.num_sms = 108;
  g.roofline.gemm_efficiency = 0.61;
  g.roofline.gemm_dim_half = 33;
  g.roofline.gemm_tile = 256;
  g.roofline.flash_attention_efficiency = 0.42;
  g.roofline.memory_efficiency = 0.83;
  g.roofline.kernel_overhead_s = 3e-6;
  g.roofline.microbatch_overhead_s = 1e-4;
  g.roofline.iteration_overhead_s = 0.02;
  g.roofline.host_run_ahead_s = 80e-6;
  return g;
}

Cluster test_cluster() {
  Cluster c;
  c.name = "lab";
  c.gpu = test_gpu("lab-gpu");
  c.gpus_per_node = 4;
  c.num_nodes = 16;
  c.nic_bytes_per_s = 12.5e9;
  c.network.nvlink_latency_s = 7e-6;
  c.network.nic_latency_s = 20e-6;
  c.network.nvlink_efficiency = 0.75;
  c.network.nic_efficiency = 0.9;
  c.usd_per_gpu_hour = 1.25;
  return c;
}

// A lookup that knows one GPU ("known-gpu") and one price ("known-price").
ClusterPresetLookup test_lookup() {
  ClusterPresetLookup lookup;
  lookup.gpu = [](const std::string& name) -> Result<GpuSpec> {
    if (name == "known-gpu") return test_gpu(name);
    return Status::not_found("unknown gpu preset \"" + name + "\" (gpu presets: known-gpu)");
  };
  lookup.usd_per_gpu_hour = [](const std::string& name) -> Result<double> {
    if (name == "known-price") return 6.88;
    return Status::not_found("unknown price preset \"" + name + "\"");
  };
  return lookup;
}

TEST(ClusterJson, RoundTripsEveryField) {
  const Cluster c = test_cluster();
  Cluster back;
  ASSERT_TRUE(apply_cluster_json(cluster_to_json(c), "c", &back).ok());
  EXPECT_EQ(back, c);
  GpuSpec g;
  ASSERT_TRUE(apply_gpu_json(gpu_to_json(c.gpu), "g", &g).ok());
  EXPECT_EQ(g, c.gpu);
}

// A rack-scale domain (GB200 NVL72: 18 trays of 4) reads, round-trips and
// is what nvlink_domain() answers; 0 leaves the node as the domain and is
// not written.
TEST(ClusterJson, NvlinkDomainReadsAndRoundTrips) {
  Cluster c = test_cluster();
  EXPECT_EQ(c.nvlink_domain(), 4);
  EXPECT_FALSE(cluster_to_json(c).as_object().contains("nvlink_domain_gpus"));
  ASSERT_TRUE(apply_cluster_json(parse_json(R"({"nvlink_domain_gpus": 72})"), "c", &c).ok());
  EXPECT_EQ(c.nvlink_domain_gpus, 72);
  EXPECT_EQ(c.nvlink_domain(), 72);
  Cluster back;
  ASSERT_TRUE(apply_cluster_json(cluster_to_json(c), "c", &back).ok());
  EXPECT_EQ(back, c);
}

// The NVLink domain holds whole nodes (here of 4 GPUs), at most
// kMaxGpusPerNode; 0 = the node.
TEST(ClusterJson, NvlinkDomainMustHoldWholeNodes) {
  for (int domain : {6, 2, 2048}) {
    Cluster c = test_cluster();
    c.nvlink_domain_gpus = domain;
    Status s = validate(c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << domain;
    EXPECT_NE(s.message().find("cluster.nvlink_domain_gpus: must be 0 (the node) or a multiple of "
                               "gpus_per_node (4) up to 1024"),
              std::string::npos)
        << s.message();
  }
  for (int domain : {0, 4, 72, 1024}) {
    Cluster c = test_cluster();
    c.nvlink_domain_gpus = domain;
    EXPECT_TRUE(validate(c).ok()) << domain;
  }
}

TEST(ClusterJson, ReadsMeasuredCollectivesInlineByNameOrNone) {
  Cluster c = test_cluster();
  c.collectives = {"lab-curves", {{2, {{1048576, 2097152}, {4e-5, 5e-5}}}, {4, {{1e6}, {6e-5}}}}};
  Cluster back;
  ASSERT_TRUE(apply_cluster_json(cluster_to_json(c), "c", &back).ok());
  EXPECT_EQ(back, c);

  ClusterPresetLookup lookup = test_lookup();
  lookup.collectives = [&](const std::string& name) -> Result<MeasuredCollectives> {
    if (name == "lab-curves") return c.collectives;
    return Status::not_found("unknown collectives preset \"" + name + "\"");
  };
  Cluster named = test_cluster();
  ASSERT_TRUE(
      apply_cluster_json(parse_json(R"({"collectives": "lab-curves"})"), "c", lookup, &named).ok());
  EXPECT_EQ(named.collectives, c.collectives);
  Status s = apply_cluster_json(parse_json(R"({"collectives": "nope"})"), "c", lookup, &named);
  EXPECT_EQ(s.message(), "c.collectives: unknown collectives preset \"nope\"");
  ASSERT_TRUE(apply_cluster_json(parse_json(R"({"collectives": null})"), "c", lookup, &named).ok());
  EXPECT_TRUE(named.collectives.empty());

  s = apply_cluster_json(
      parse_json(
          R"({"collectives": {"all_reduce": [{"group_size": 2, "bytes": [1, 2], "seconds": [1]}]}})"),
      "c", &named);
  EXPECT_EQ(s.message(),
            "c.collectives: all_reduce[0]: points: bytes and seconds differ in length");
  s = apply_cluster_json(
      parse_json(
          R"({"collectives": {"all_reduce": [{"group_size": 2, "bytes": [1], "secs": [1]}]}})"),
      "c", &named);
  EXPECT_NE(s.message().find("c.collectives.all_reduce[0]"), std::string::npos) << s.message();
}

TEST(ClusterJson, OverridesNestedFieldsOnly) {
  Cluster c = test_cluster();
  Status s = apply_cluster_json(
      parse_json(R"({"nodes": 2, "gpu": {"tdp_w": 350, "roofline": {"gemm_efficiency": 0.5}},
                "network": {"nic_efficiency": 0.7}})"),
      "c", &c);
  ASSERT_TRUE(s.ok()) << s.message();
  Cluster expected = test_cluster();
  expected.num_nodes = 2;
  expected.gpu.tdp_w = 350;
  expected.gpu.roofline.gemm_efficiency = 0.5;
  expected.network.nic_efficiency = 0.7;
  EXPECT_EQ(c, expected);
}

TEST(ClusterJson, ResolvesPresetNamesThroughTheLookup) {
  Cluster c = test_cluster();
  Status s = apply_cluster_json(parse_json(R"({"gpu": "known-gpu", "price": "known-price"})"), "c",
                                test_lookup(), &c);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(c.gpu, test_gpu("known-gpu"));
  EXPECT_DOUBLE_EQ(c.usd_per_gpu_hour, 6.88);

  // A GPU object may start from a preset and override fields.
  s = apply_cluster_json(parse_json(R"({"gpu": {"preset": "known-gpu", "hbm_bytes": 40e9}})"), "c",
                         test_lookup(), &c);
  ASSERT_TRUE(s.ok()) << s.message();
  GpuSpec expected = test_gpu("known-gpu");
  expected.hbm_bytes = 40e9;
  EXPECT_EQ(c.gpu, expected);
}

TEST(ClusterJson, ErrorsNameTheField) {
  struct Case {
    const char* json;
    StatusCode code;
    const char* message;
  };
  const Case cases[] = {
      {R"({"gpus": 8})", StatusCode::kInvalidArgument, "run.json: cluster: unknown key \"gpus\""},
      {R"({"gpus_per_node": 0})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpus_per_node: must be >= 1, got 0"},
      {R"({"nodes": -1})", StatusCode::kInvalidArgument, "run.json: cluster.nodes: must be >= 0"},
      {R"({"nic_bytes_per_s": 0})", StatusCode::kInvalidArgument,
       "run.json: cluster.nic_bytes_per_s: must be positive, got 0"},
      {R"({"nic_bytes_per_s": "fast"})", StatusCode::kInvalidArgument,
       "run.json: cluster.nic_bytes_per_s: expected a number, got a string"},
      {R"({"gpu": {"hbm_bytes": -80e9}})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpu.hbm_bytes: must be positive"},
      {R"({"gpu": {"num_sms": 0}})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpu.num_sms: must be >= 1"},
      {R"({"gpu": {"roofline": {"gemm_efficiency": 1.5}}})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpu.roofline.gemm_efficiency: must be in (0, 1], got 1.5"},
      {R"({"gpu": {"roofline": {"kernel_overhead": 1}}})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpu.roofline: unknown key \"kernel_overhead\""},
      {R"({"gpu": {"roofline": {"host_run_ahead_s": -1e-6}}})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpu.roofline.host_run_ahead_s: must be between 0 and 3600 s, got -1e-06"},
      {R"({"network": {"nic_latency_s": -1e-6}})", StatusCode::kInvalidArgument,
       "run.json: cluster.network.nic_latency_s: must be between 0 and 1 s, got -1e-06"},
      {R"({"network": {"nvlink_efficiency": 0}})", StatusCode::kInvalidArgument,
       "run.json: cluster.network.nvlink_efficiency: must be in (0, 1]"},
      {R"({"gpu": 5})", StatusCode::kInvalidArgument,
       "run.json: cluster.gpu: expected a GPU preset name or an object"},
      {R"({"gpu": "mystery"})", StatusCode::kNotFound,
       "run.json: cluster.gpu: unknown gpu preset \"mystery\" (gpu presets: known-gpu)"},
      {R"({"gpu": {"preset": "mystery"}})", StatusCode::kNotFound,
       "run.json: cluster.gpu.preset: unknown gpu preset \"mystery\""},
      {R"({"price": "free"})", StatusCode::kNotFound,
       "run.json: cluster.price: unknown price preset \"free\""},
      {R"({"price": "known-price", "usd_per_gpu_hour": 2})", StatusCode::kInvalidArgument,
       "run.json: cluster.price: give either a price preset or usd_per_gpu_hour, not both"},
      {R"({"usd_per_gpu_hour": -2})", StatusCode::kInvalidArgument,
       "run.json: cluster.usd_per_gpu_hour: must be >= 0"},
      {R"({"nvlink_domain_gpus": -8})", StatusCode::kInvalidArgument,
       "run.json: cluster.nvlink_domain_gpus: must be >= 0"},
  };
  for (const Case& c : cases) {
    Cluster cluster = test_cluster();
    Status s = apply_cluster_json(parse_json(c.json), "run.json: cluster", test_lookup(), &cluster);
    EXPECT_EQ(s.code(), c.code) << c.json << ": " << s.message();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
    EXPECT_EQ(cluster, test_cluster()) << "left unchanged on error: " << c.json;
  }
}

TEST(ClusterJson, PresetNamesNeedALookup) {
  Cluster c = test_cluster();
  Status s = apply_cluster_json(parse_json(R"({"gpu": "known-gpu"})"), "c", &c);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("c.gpu: GPU preset names need the preset catalog"), std::string::npos)
      << s.message();
  s = apply_cluster_json(parse_json(R"({"price": "known-price"})"), "c", &c);
  EXPECT_NE(s.message().find("c.price: price preset names need the preset catalog"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace llmplan::simulator
