// Every vTrain configuration of the paper's first case study (294 parallel
// plans of MT-NLG 530B on 12 to 50,400 A100s) must simulate, or be rejected
// with a reason naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "presets/sim_config.h"
#include "simulator/simulate.h"

namespace llmplan {
namespace {

// The case-study files all say num_gpus 3360 whatever their plan; vTrain
// asserts num_gpus == t*d*p, and so does llmplan by default.
TEST(VtrainCaseStudy, StaleGpuCountsAreRejectedByDefaultNamingTheField) {
  const std::filesystem::path dir =
      std::filesystem::path(LLMPLAN_DATA_DIR) / "vtrain" / "case_study_1";
  auto catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  int loaded = 0, rejected = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    auto config = presets::load_vtrain_config_file(entry.path().string(), *catalog);
    if (config.ok()) {
      EXPECT_EQ(config->plan.world_size(), 3360) << entry.path();
      ++loaded;
    } else {
      EXPECT_NE(config.status().message().find("num_gpus"), std::string::npos)
          << config.status().message();
      EXPECT_NE(config.status().message().find(entry.path().string()), std::string::npos);
      ++rejected;
    }
  }
  EXPECT_EQ(loaded + rejected, 295);
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}

TEST(VtrainCaseStudy, EveryConfigSimulatesWhenStaleGpuCountsAreIgnored) {
  const std::filesystem::path dir =
      std::filesystem::path(LLMPLAN_DATA_DIR) / "vtrain" / "case_study_1";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  auto catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    // The plans are config_mtnlg_{t}_{d}_{p}.json; config_test_mtnlg.json is
    // upstream's small test config and is simulated too.
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_EQ(paths.size(), 295u);
  const auto plans = std::count_if(paths.begin(), paths.end(), [](const std::string& p) {
    return p.find("/config_mtnlg_") != std::string::npos;
  });
  EXPECT_EQ(plans, 294);
  int simulated = 0, rejected = 0, fitting = 0;
  double fastest = 1e30, slowest = 0;
  for (const std::string& path : paths) {
    auto config = presets::load_vtrain_config_file(path, *catalog, {.ignore_stale_num_gpus = true});
    if (!config.ok()) {
      // A rejection must say which file and field.
      EXPECT_NE(config.status().message().find(path), std::string::npos) << config.status().message();
      ++rejected;
      continue;
    }
    auto report = simulator::simulate(config->model, config->plan, config->cluster);
    ASSERT_TRUE(report.ok()) << path << ": " << report.status().message();
    EXPECT_GT(report->iteration_time_s, 0) << path;
    EXPECT_GT(report->mfu, 0.01) << path;
    EXPECT_LT(report->mfu, 0.9) << path;
    fastest = std::min(fastest, report->iteration_time_s);
    slowest = std::max(slowest, report->iteration_time_s);
    fitting += report->fits_in_memory ? 1 : 0;
    ++simulated;
  }
  EXPECT_EQ(simulated + rejected, 295);
  EXPECT_EQ(simulated, 295) << "every plan of the case study is a valid Megatron plan";
  EXPECT_GT(fitting, 0);
  EXPECT_GT(slowest / fastest, 10) << "from 12 to 50,400 GPUs, iteration times span decades";
}

TEST(VtrainCaseStudy, ExampleConfigMatchesItsFlagsForm) {
  auto catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  auto config = presets::load_vtrain_config_file(
      std::string(LLMPLAN_DATA_DIR) + "/vtrain/config_example.json", *catalog);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->plan.world_size(), 3360);
  EXPECT_EQ(config->plan.tensor_parallel, 8);
  EXPECT_EQ(config->plan.data_parallel, 12);
  EXPECT_EQ(config->plan.pipeline_parallel, 35);
  EXPECT_EQ(config->plan.recompute, simulator::Recompute::kFull);
  EXPECT_EQ(config->model.num_layers, 105);
  auto report = simulator::simulate(config->model, config->plan, config->cluster);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->num_gpus, 3360);
}

}  // namespace
}  // namespace llmplan
