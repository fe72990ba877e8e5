// Issue 30's questions as search benchmarks, each pruned (the default) and
// --exhaustive, one thread (run with OMP_NUM_THREADS=1 for CPU figures):
//   0 frontier --gpus 1024,2048,4096,8192,16384 --days 14,30,60,90 --gpu a100-80gb,h100-sxm
//   1 --family moe --gpus 4096 --days 60 --gpu h100-sxm
//   2 --gpus 4096 --days 90 --gpu h100-sxm
//   3 the main job, --gpus 3360 --days 30 (dgx-a100-80gb)
// Arguments: (question, exhaustive). Each runs the CLI command in process,
// its stdout sent to /dev/null (so --benchmark_format=json stays JSON).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "planner/cli/command.h"

namespace llmplan::planner {
namespace {

const char* const kQuestions[] = {
    "frontier --gpus 1024,2048,4096,8192,16384 --days 14,30,60,90 --gpu a100-80gb,h100-sxm",
    "--family moe --gpus 4096 --days 60 --gpu h100-sxm",
    "--gpus 4096 --days 90 --gpu h100-sxm",
    "--gpus 3360 --days 30",
};

void BM_SearchQuestion(benchmark::State& state) {
  const std::string question = kQuestions[state.range(0)];
  const bool frontier = question.rfind("frontier ", 0) == 0;
  const std::string command = (frontier ? question.substr(9) : question) + " --threads 1" +
                              (state.range(1) != 0 ? " --exhaustive" : "");
  for (auto _ : state) {
    CLI::App app{"bench"};
    GlobalOptions global;
    Action action;
    if (frontier) {
      add_frontier_command(app, global, &action);
      app.parse("frontier " + command);
    } else {
      add_plan_options(app, global, &action);
      app.parse(command);
    }
    std::fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      close(null);
    }
    const Status status = action();
    std::fflush(stdout);
    if (saved >= 0) {
      dup2(saved, STDOUT_FILENO);
      close(saved);
    }
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
  }
  state.SetLabel(question + (state.range(1) != 0 ? " --exhaustive" : ""));
}
BENCHMARK(BM_SearchQuestion)
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace llmplan::planner
