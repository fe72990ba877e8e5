// Fuzz target: measured iteration times (`validate`/`calibrate` FILE,
// planner/accuracy/measured_csv.h).
#include "planner/accuracy/measured_csv.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<std::vector<planner::MeasuredRun>> runs =
      planner::read_measured_csv_text(fuzz::as_text(data, size), "fuzz.csv");
  fuzz::require_one_line(runs);
  if (!runs.ok()) return 0;
  fuzz::require(!runs->empty() && runs->size() <= planner::kMaxMeasuredRuns, "1..cap rows");
  for (const planner::MeasuredRun& r : *runs) {
    fuzz::require(r.num_gpus > 0 && r.iteration_time_s > 0 &&
                      static_cast<double>(r.tensor) * r.data * r.pipeline == r.num_gpus,
                  "rows are positive and consistent");
  }
  return 0;
}
