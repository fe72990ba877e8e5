// `llmplan simulate --cp N --cp-comm ...` through the CLI layer: the issue's
// acceptance command (in bf16), the breakdown's CP ring, one-line errors.
#include <gtest/gtest.h>

#include <string>

#include "planner/cli/command.h"
#include "base/strict_json.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner {
namespace {

using testing_cli::CliRun;
using testing_cli::run_simulate;

constexpr const char* kAcceptance =
    "--model llama3-70b --cluster dgx-h100 --tp 8 --pp 4 --cp 2 --dp 8 --zero 3 "
    "--global-batch 512 --tp-comm-overlap --format json";

TEST(ContextParallelCli, AcceptanceCommandShowsTheRing) {
  const CliRun r = run_simulate(kAcceptance);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Result<boost::json::value> v = json::parse(r.out, "stdout");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const boost::json::object& o = v->as_object();
  EXPECT_EQ(o.at("num_gpus").as_int64(), 512);  // 8 * 2 * 4 * 8
  EXPECT_EQ(o.at("plan").as_object().at("cp").as_int64(), 2);
  EXPECT_EQ(o.at("plan").as_object().at("cp_comm").as_string(), "p2p");
  const boost::json::object& b = o.at("breakdown").as_object();
  ASSERT_TRUE(b.contains("cp_comm_s"));
  // Llama 3 70B at s = 8192, t = 8: a TP rank's KV chunk (4096 tokens, 1 kv
  // head of 128) is 4096 * 2 * 128 * 2 = 2 MiB; t * cp = 16 puts the ring
  // across nodes, but a block of attention (8 query heads over 4096 x 4096)
  // is longer: the ring is hidden.
  EXPECT_GT(b.at("cp_comm_hidden_s").as_double(), 0.0);
  EXPECT_EQ(b.at("cp_comm_s").as_double(), 0.0);
  EXPECT_GT(o.at("stages").as_array()[0].as_object().at("memory").as_object()
                .at("context_parallel_bytes").as_double(),
            0.0);
}

TEST(ContextParallelCli, AllGatherVariantIsExposed) {
  const CliRun r = run_simulate(std::string(kAcceptance) + " --cp-comm all-gather");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Result<boost::json::value> v = json::parse(r.out, "stdout");
  ASSERT_TRUE(v.ok());
  const boost::json::object& o = v->as_object();
  EXPECT_EQ(o.at("plan").as_object().at("cp_comm").as_string(), "all_gather");
  EXPECT_GT(o.at("breakdown").as_object().at("cp_comm_s").as_double(), 0.0);
  EXPECT_EQ(o.at("breakdown").as_object().at("cp_comm_hidden_s").as_double(), 0.0);
}

TEST(ContextParallelCli, TextNamesContextParallelism) {
  const CliRun r = run_simulate(
      "--layers 8 --hidden 1024 --heads 8 --seq 32768 --tp 2 --cp 8 --dp 2 --global-batch 8 "
      "--cp-comm all-gather");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.out.find("x cp 8 (KV all-gather)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("context-parallel KV exchange (exposed)"), std::string::npos) << r.out;
}

TEST(ContextParallelCli, ChunkingErrorIsOneLine) {
  // Llama 3 70B's 8192 tokens do not split into 2 * 3 = 6 chunks.
  const CliRun r = run_simulate("--model llama3-70b --cluster dgx-h100 --tp 8 --cp 3");
  ASSERT_FALSE(r.status.ok());
  const std::string& m = r.status.message();
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find("plan.cp"), std::string::npos) << m;
  EXPECT_NE(m.find("8192"), std::string::npos) << m;
}

TEST(ContextParallelCli, BadFlagValuesAreParseErrors) {
  for (const char* args : {"--cp 0", "--cp -2", "--cp x", "--cp-comm ring"}) {
    CLI::App app{"test"};
    GlobalOptions global;
    Action action;
    add_simulate_command(app, global, &action);
    EXPECT_THROW(app.parse(std::string("simulate --layers 2 --hidden 64 --heads 2 ") + args),
                 CLI::ParseError)
        << args;
  }
}

}  // namespace
}  // namespace llmplan::planner
