// Planner throughput: candidate shapes and plans evaluated per second for a
// small search (3 shapes on 64 A100s).
#include <benchmark/benchmark.h>

#include "planner/search/search.h"
#include "presets/catalog.h"

namespace llmplan::planner {
namespace {

void BM_PlannerSearch(benchmark::State& state) {
  const simulator::Cluster cluster = presets::Catalog::builtin().value().cluster("dgx-a100-80gb").value();
  SearchOptions o;
  o.gpus = 64;
  o.days = 7;
  o.law = presets::Catalog::builtin().value().law("chinchilla").value();
  o.threads = static_cast<int>(state.range(0));
  o.shapes = {shape_for_params(1e9, 2048, 51200), shape_for_params(3e9, 2048, 51200),
              shape_for_params(7e9, 2048, 51200)};
  long plans = 0, candidates = 0;
  for (auto _ : state) {
    auto r = search(cluster, o);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    plans += r.value().plans_evaluated;
    candidates += static_cast<long>(r.value().candidates.size());
  }
  state.counters["plans/s"] = benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
  state.counters["candidates/s"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlannerSearch)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace llmplan::planner
