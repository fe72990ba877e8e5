// Fuzz target: the planner's shapes file (`--shapes FILE`,
// planner/search/shapes_json.h). Every shape read must be a valid model.
#include "planner/search/shapes_json.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<std::vector<simulator::Model>> shapes =
      planner::parse_shapes_text(fuzz::as_text(data, size), "fuzz.json", 2048, 51200);
  fuzz::require_one_line(shapes);
  if (!shapes.ok()) return 0;
  fuzz::require(!shapes->empty() && shapes->size() <= planner::kMaxShapes, "1..kMaxShapes shapes");
  fuzz::require_one_document(fuzz::as_text(data, size), [](std::string_view text) {
    return planner::parse_shapes_text(text, "fuzz.json", 2048, 51200);
  });
  for (const simulator::Model& m : *shapes) {
    fuzz::require(simulator::validate(m).ok(), "every shape is a valid model");
  }
  return 0;
}
