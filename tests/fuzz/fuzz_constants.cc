// Fuzz target: calibrated constants files (`validate --constants FILE`,
// planner/accuracy/accuracy_json.h). A refused file leaves the constants
// unchanged.
#include "planner/accuracy/accuracy_json.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  planner::AccuracyConstants constants;
  const Status read =
      planner::read_constants_text(fuzz::as_text(data, size), "fuzz.json", &constants);
  fuzz::require_one_line(read);
  if (!read.ok()) {
    const planner::AccuracyConstants fresh;
    fuzz::require(constants.roofline == fresh.roofline && constants.network == fresh.network,
                  "a refused file leaves the constants unchanged");
    return 0;
  }
  fuzz::require_one_document(fuzz::as_text(data, size), [](std::string_view text) {
    planner::AccuracyConstants again;
    return planner::read_constants_text(text, "fuzz.json", &again);
  });
  return 0;
}
