#include "presets/catalog.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/presets/test_catalog.h"

namespace llmplan::presets {
namespace {

using fixtures::builtin;
using fixtures::contains;

// A complete GPU entry, TDP as given.
std::string gpu_entry(const std::string& name, int tdp_w) {
  return R"({"name": ")" + name + R"(", "peak_bf16_flops": 989e12, "peak_fp16_flops": 989e12,
      "hbm_bytes": 80e9, "hbm_bytes_per_s": 3.35e12, "nvlink_bytes_per_s": 900e9,
      "tdp_w": )" +
         std::to_string(tdp_w) + R"(, "num_sms": 132})";
}

TEST(Catalog, UserEntriesReplaceBuiltinsAndClustersSeeThem) {
  Catalog catalog = builtin();
  const Catalog before = catalog;  // copies keep the old state
  Status s = catalog.add_text(R"({"gpus": [)" + gpu_entry("h100-sxm", 500) + R"(],
      "prices": [{"name": "aws-p5-2025", "usd_per_gpu_hour": 2.5, "gpu": "h100-sxm"}]})",
                              "mine.json");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_DOUBLE_EQ(catalog.gpu("h100-sxm")->tdp_w, 500);
  EXPECT_DOUBLE_EQ(catalog.cluster("dgx-h100")->gpu.tdp_w, 500);
  EXPECT_DOUBLE_EQ(catalog.cluster("dgx-h100")->usd_per_gpu_hour, 2.5);
  EXPECT_DOUBLE_EQ(before.gpu("h100-sxm")->tdp_w, 700);
  EXPECT_DOUBLE_EQ(before.cluster("dgx-h100")->usd_per_gpu_hour, 55.04 / 8);
  int replaced = 0;
  for (const PresetInfo& info : catalog.list()) {
    if (info.name == "h100-sxm" || info.name == "aws-p5-2025") {
      EXPECT_EQ(info.origin, "mine.json");
      ++replaced;
    }
  }
  EXPECT_EQ(replaced, 2);
  EXPECT_EQ(catalog.list().size(), before.list().size());
}

TEST(Catalog, UserFileAddsNewPresets) {
  Catalog catalog = builtin();
  Status s = catalog.add_text(R"({"note": "lab", "gpus": [)" + gpu_entry("lab-gpu", 600) + R"(],
      "clusters": [{"name": "lab", "gpu": "lab-gpu", "gpus_per_node": 4, "nodes": 2,
                    "nic_bytes_per_s": 12.5e9, "usd_per_gpu_hour": 1.5}],
      "models": [{"name": "tiny", "layers": 2, "hidden": 256, "heads": 4, "seq": 128,
                  "vocab": 1000}]})",
                              "lab.json");
  ASSERT_TRUE(s.ok()) << s.message();
  Result<simulator::Cluster> lab = catalog.cluster("lab");
  ASSERT_TRUE(lab.ok()) << lab.status().message();
  EXPECT_EQ(lab->gpu.name, "lab-gpu");
  EXPECT_EQ(lab->max_gpus(), 8);
  EXPECT_EQ(catalog.model("tiny")->num_layers, 2);
}

TEST(Catalog, AddFileReadsAFileAndNamesMissingOnes) {
  const std::string path = testing::TempDir() + "/llmplan_catalog_test.json";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string text = R"({"gpus": [)" + gpu_entry("file-gpu", 300) + "]}";
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  Catalog catalog = builtin();
  ASSERT_TRUE(catalog.add_file(path).ok());
  EXPECT_DOUBLE_EQ(catalog.gpu("file-gpu")->tdp_w, 300);
  std::remove(path.c_str());

  Status s = catalog.add_file("/nonexistent/presets.json");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(s.message(), "/nonexistent/presets.json: cannot open file")) << s.message();
}

TEST(Catalog, BadFilesAreRejectedWithThePathAndLeaveTheCatalogUnchanged) {
  struct Case {
    std::string json;
    StatusCode code;
    std::string message;
  };
  const Case cases[] = {
      {"{\n  \"gpus\": [\n    {\"name\": \"x\",}\n  ]\n}", StatusCode::kParseError, "bad.json:3:"},
      {R"({"gpu": []})", StatusCode::kInvalidArgument, "bad.json: unknown key \"gpu\""},
      {R"({"gpus": {}})", StatusCode::kInvalidArgument, "bad.json: gpus: expected an array"},
      {R"({"gpus": [{"peak_bf16_flops": 1}]})", StatusCode::kInvalidArgument,
       "bad.json: gpus[0].name: missing required field"},
      {R"({"gpus": [)" + gpu_entry("ok-gpu", 100) + R"(, {"name": "h", "tdp": 1}]})",
       StatusCode::kInvalidArgument, "bad.json: gpus[1]: unknown key \"tdp\""},
      {R"({"gpus": [{"name": "half", "tdp_w": 100}]})", StatusCode::kInvalidArgument,
       "bad.json: gpus[0]: gpu.peak_bf16_flops: must be positive"},
      {R"({"gpus": [{"name": "neg", "hbm_bytes": -1}]})", StatusCode::kInvalidArgument,
       "bad.json: gpus[0].hbm_bytes: must be positive, got -1"},
      {R"({"models": [{"name": "m", "layers": "many"}]})", StatusCode::kInvalidArgument,
       "bad.json: models[0].layers: expected an integer, got a string"},
      {R"({"models": [{"name": "m", "layers": 0}]})", StatusCode::kInvalidArgument,
       "bad.json: models[0].layers: must be >= 1, got 0"},
      {R"({"models": [{"name": "m", "layers": 2, "hidden": 100, "heads": 3, "seq": 8,
           "vocab": 10}]})",
       StatusCode::kInvalidArgument, "bad.json: models[0]: model.heads: 3 heads do not divide"},
      {R"({"clusters": [{"name": "c", "gpu": "a100-90gb", "nic_bytes_per_s": 1e9}]})",
       StatusCode::kNotFound,
       "bad.json: clusters[0].gpu: unknown gpu preset \"a100-90gb\" (gpu presets: a100-40gb, "},
      {R"({"clusters": [{"name": "c", "gpu": "a100-40gb", "nic_bytes_per_s": 1e9,
           "price": "aws-p9"}]})",
       StatusCode::kNotFound, "bad.json: clusters[0].price: unknown price preset \"aws-p9\""},
      {R"({"prices": [{"name": "p", "usd_per_gpu_hour": 0}]})", StatusCode::kInvalidArgument,
       "bad.json: prices[0].usd_per_gpu_hour: must be positive"},
      {R"({"prices": [{"name": "p", "usd_per_gpu_hour": 1, "gpu": "tpu"}]})", StatusCode::kNotFound,
       "bad.json: prices[0].gpu: unknown gpu preset \"tpu\""},
      {R"({"gpus": [)" + gpu_entry("twice", 100) + R"(], "models": [{"name": "twice"}]})",
       StatusCode::kInvalidArgument,
       "bad.json: models[0].name: \"twice\" is already used by bad.json: gpus[0]"},
      {R"({"models": [{"name": "a100-80gb", "layers": 1, "hidden": 8, "heads": 1, "seq": 1,
           "vocab": 1}]})",
       StatusCode::kInvalidArgument,
       "bad.json: models[0].name: \"a100-80gb\" is already a gpu preset"},
  };
  for (const Case& c : cases) {
    Catalog catalog = builtin();
    const size_t count = catalog.list().size();
    Status s = catalog.add_text(c.json, "bad.json");
    EXPECT_EQ(s.code(), c.code) << c.json << "\n" << s.message();
    EXPECT_TRUE(contains(s.message(), c.message)) << s.message();
    EXPECT_EQ(catalog.list().size(), count) << "unchanged after: " << c.json;
    EXPECT_FALSE(catalog.gpu("ok-gpu").ok()) << "no partial commit";
  }
}

TEST(Catalog, NotFoundListsTheKnownNames) {
  const Catalog catalog = builtin();
  Result<simulator::GpuSpec> g = catalog.gpu("v100");
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(g.status().message(),
                       "unknown gpu preset \"v100\" (gpu presets: "
                       "a100-40gb, a100-80gb, h100-sxm, h200-sxm, b200, gb200, b300, gb300)"))
      << g.status().message();

  Result<simulator::GpuSpec> wrong_kind = catalog.gpu("dgx-h100");
  EXPECT_EQ(wrong_kind.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(
      contains(wrong_kind.status().message(), "\"dgx-h100\" is a cluster preset, not a gpu preset"))
      << wrong_kind.status().message();

  Result<simulator::Model> m = catalog.model("llama4");
  EXPECT_TRUE(contains(m.status().message(), "llama2-7b")) << m.status().message();
}

TEST(Catalog, ShowPrintsThePresetAsStoredOrSuggestsNames) {
  const Catalog catalog = builtin();
  Result<std::string> shown = catalog.show("dgx-a100-80gb");
  ASSERT_TRUE(shown.ok()) << shown.status().message();
  EXPECT_TRUE(contains(*shown, "\"name\": \"dgx-a100-80gb\"")) << *shown;
  EXPECT_TRUE(contains(*shown, "\"gpu\": \"a100-80gb\"")) << *shown;
  EXPECT_TRUE(contains(*shown, "\"price\": \"aws-p4de-2025\"")) << *shown;

  Result<std::string> typo = catalog.show("dgx-a100-80");
  EXPECT_EQ(typo.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(typo.status().message(), "unknown preset \"dgx-a100-80\" (similar: "))
      << typo.status().message();
  EXPECT_TRUE(contains(typo.status().message(), "dgx-a100-80gb")) << typo.status().message();
}

TEST(Catalog, ListGroupsByKindWithSummaries) {
  const Catalog catalog = builtin();
  std::vector<PresetInfo> infos = catalog.list();
  ASSERT_FALSE(infos.empty());
  for (size_t i = 1; i < infos.size(); ++i) {
    EXPECT_LE(static_cast<int>(infos[i - 1].kind), static_cast<int>(infos[i].kind));
  }
  for (const PresetInfo& info : infos) {
    const std::string& d = info.description;
    if (info.name == "llama2-7b") {
      EXPECT_TRUE(contains(d, "Llama 2 7B: 6.7B params, 32 layers")) << d;
    } else if (info.name == "dgx-b200") {
      EXPECT_TRUE(contains(d, "$14.24/GPU-h")) << d;
    } else if (info.name == "h100-sxm") {
      EXPECT_TRUE(contains(d, "989 TFLOP/s bf16")) << d;
    }
  }
}

}  // namespace
}  // namespace llmplan::presets
