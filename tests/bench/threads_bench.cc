// Threads that don't fight: a one-plan sweep and a small planner search on 1
// and 2 OpenMP threads while another thread keeps one core busy (as another
// program, or another rank of `mpirun -n 2`, would on a 2-core machine).
// A parallel loop opens no more threads than it has items
// (base/threads.h): a thread with nothing to do would spin in libgomp's
// barrier (OMP_WAIT_POLICY's default spins ~300,000 times before sleeping)
// on the core the working thread needs. Before that, 2 threads took more
// than twice as long as 1 on the one-plan sweep; now 2 never lose to 1.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

#include "planner/cli/command.h"
#include "planner/search/search.h"
#include "presets/catalog.h"

namespace llmplan::planner {
namespace {

// stdout sent to /dev/null from construction to destruction (what a CLI
// action prints would otherwise land in the benchmark's own output).
class StdoutToDevNull {
 public:
  StdoutToDevNull() {
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      close(null);
    }
  }
  ~StdoutToDevNull() {
    std::fflush(stdout);
    if (saved_ >= 0) {
      dup2(saved_, STDOUT_FILENO);
      close(saved_);
    }
  }
  StdoutToDevNull(const StdoutToDevNull&) = delete;
  StdoutToDevNull& operator=(const StdoutToDevNull&) = delete;

 private:
  int saved_ = -1;
};

// A thread spinning on its own core from construction to destruction.
class BusyCore {
 public:
  BusyCore()
      : spinner_([this] {
          volatile unsigned long n = 0;
          while (!stop_.load(std::memory_order_relaxed)) n = n + 1;
        }) {}
  ~BusyCore() {
    stop_ = true;
    spinner_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread spinner_;
};

// `llmplan sweep` of one plan (data/examples/run.json), in-process, its
// files written to a scratch folder.
void BM_OnePlanSweepWithABusyCore(benchmark::State& state) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("llmplan_threads_bench_" + std::to_string(getpid())))
          .string();
  // t8 p4 d2 (64 GPUs) fits in memory (t4 p2 d8 did not: a plan the
  // simulator rejects as over memory is not the work being measured).
  const std::string command = "sweep --config " LLMPLAN_DATA_DIR
                              "/examples/run.json --tp 8 --pp 4 --dp 2 --out " +
                              out + " --threads " + std::to_string(state.range(0));
  BusyCore busy;
  for (auto _ : state) {
    CLI::App app{"bench"};
    GlobalOptions global;
    Action action;
    add_sweep_command(app, global, &action);
    app.parse(command);
    // The sweep prints its report to stdout: kept off it, so that
    // --benchmark_format=json stays valid JSON.
    Status status;
    {
      StdoutToDevNull quiet;
      status = action();
    }
    if (!status.ok()) state.SkipWithError(status.message().c_str());
  }
  std::filesystem::remove_all(out);
}
BENCHMARK(BM_OnePlanSweepWithABusyCore)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The planner's search for 3 shapes on 64 A100s (as BM_PlannerSearch).
void BM_SmallSearchWithABusyCore(benchmark::State& state) {
  const auto catalog = presets::Catalog::builtin();
  const simulator::Cluster cluster = catalog.value().cluster("dgx-a100-80gb").value();
  SearchOptions o;
  o.gpus = 64;
  o.days = 7;
  o.law = catalog.value().law("chinchilla").value();
  o.threads = static_cast<int>(state.range(0));
  o.shapes = {shape_for_params(1e9, 2048, 51200), shape_for_params(3e9, 2048, 51200),
              shape_for_params(7e9, 2048, 51200)};
  BusyCore busy;
  long plans = 0;
  for (auto _ : state) {
    auto r = search(cluster, o);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    plans += r.value().plans_evaluated;
  }
  state.counters["plans/s"] = benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SmallSearchWithABusyCore)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace llmplan::planner
