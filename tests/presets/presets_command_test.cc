// `llmplan presets` through the CLI parser, as main runs it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "planner/cli/command.h"

namespace llmplan::planner {
namespace {

struct CommandRun {
  Status status;
  std::string out;
};

// Parses `args` (after the program name) with only the presets command
// registered, runs the chosen action and captures its stdout.
CommandRun run(std::vector<std::string> args) {
  CLI::App app;
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--preset-file", global.preset_files);
  Action action;
  add_presets_command(app, global, &action);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  EXPECT_TRUE(action) << "no action chosen";
  if (!action) return {Status::internal("no action"), ""};
  testing::internal::CaptureStdout();
  Status s = action();
  return {s, testing::internal::GetCapturedStdout()};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(PresetsCommand, ListsEveryKindAsTextOrJson) {
  CommandRun text = run({"presets"});
  ASSERT_TRUE(text.status.ok()) << text.status.message();
  for (const char* want :
       {"kind", "gpu          a100-40gb", "cluster      dgx-h100", "model        llama3-405b",
        "price        aws-p5en-2025", "collectives  a100-nvswitch-vtrain", "built-in"}) {
    EXPECT_TRUE(contains(text.out, want)) << want << "\n" << text.out;
  }
  CommandRun json = run({"presets", "--format", "json", "--kind", "cluster"});
  ASSERT_TRUE(json.status.ok()) << json.status.message();
  EXPECT_TRUE(contains(json.out, "\"name\": \"dgx-b200\"")) << json.out;
  EXPECT_FALSE(contains(json.out, "\"kind\": \"gpu\"")) << json.out;
}

TEST(PresetsCommand, ShowPrintsOnePresetOrFails) {
  CommandRun shown = run({"presets", "show", "dgx-a100-80gb"});
  ASSERT_TRUE(shown.status.ok()) << shown.status.message();
  EXPECT_TRUE(contains(shown.out, "\"gpu\": \"a100-80gb\"")) << shown.out;
  CommandRun missing = run({"presets", "show", "dgx-z100"});
  EXPECT_EQ(missing.status.code(), StatusCode::kNotFound);
  EXPECT_TRUE(missing.out.empty());
}

TEST(PresetsCommand, PresetFileEntriesReplaceBuiltins) {
  const std::string path = testing::TempDir() + "/llmplan_presets_command_test.json";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"prices": [{"name": "aws-p5-2025", "usd_per_gpu_hour": 4, "date": "2026-01"}]})",
             f);
  std::fclose(f);
  CommandRun text = run({"presets", "--kind", "price", "--preset-file", path});
  std::remove(path.c_str());
  ASSERT_TRUE(text.status.ok()) << text.status.message();
  const size_t at = text.out.find("aws-p5-2025 ");
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string line = text.out.substr(at, text.out.find('\n', at) - at);
  EXPECT_TRUE(contains(line, "$4.00/GPU-h as of 2026-01")) << line;
  EXPECT_TRUE(contains(line, path)) << line;
}

}  // namespace
}  // namespace llmplan::planner
