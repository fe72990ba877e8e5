// Speed of one simulation: MT-NLG 530B, (t, d, p) = (8, 12, 35), global batch
// 1920, micro batch 1 (the vTrain paper's configuration), 22,152 tasks.
// Target: <= 150 us single-threaded on the fast path (issue 16; it took
// about 1.2-1.4 ms before). Arguments: collapsed passes (1) or every kernel
// as a task (0), and the engine: the fast path (0) or the reference event
// engine (1, SimOptions::reference_engine), which gives identical results.
#include <benchmark/benchmark.h>

#include "simulator/simulate.h"
#include "tests/simulator/test_models.h"

namespace llmplan::simulator {
namespace {

Cluster a100() {
  Cluster c;
  c.name = "bench-dgx-a100";
  testing::set_gpu(&c.gpu, "a100", 312e12, /*fp8_flops=*/0, 2.039e12, 108);
  c.gpu.hbm_bytes = 80e9;
  c.gpu.nvlink_bytes_per_s = 600e9;
  c.gpu.tdp_w = 400;
  c.nic_bytes_per_s = 25e9;
  return c;
}

Model mt_nlg() {
  Model m = testing::gpt(105, 20480, 128, 2048, 50257);
  m.name = "mt-nlg-530b";
  return m;
}

void BM_SimulateMtNlg530B(benchmark::State& state) {
  const Model model = mt_nlg();
  const Plan plan = testing::mt_nlg_plan();
  const Cluster cluster = a100();
  SimOptions options;
  options.collapse_chains = state.range(0) != 0;
  options.reference_engine = state.range(1) != 0;
  for (auto _ : state) {
    auto r = simulate(model, plan, cluster, options);
    benchmark::DoNotOptimize(r);
  }
  // Report what was simulated (one extra run, outside the timed loop).
  auto r = simulate(model, plan, cluster, options);
  state.counters["iteration_s"] = r->iteration_time_s;
  state.counters["tasks"] = r->num_tasks;
  state.counters["sims_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulateMtNlg530B)
    ->Args({1, 0})
    ->ArgNames({"collapsed", "reference"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateMtNlg530B)
    ->Args({1, 1})
    ->ArgNames({"collapsed", "reference"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateMtNlg530B)
    ->Args({0, 0})
    ->ArgNames({"collapsed", "reference"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace llmplan::simulator
