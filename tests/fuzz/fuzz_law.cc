// Fuzz target: law files (`fit --law FILE`, `--law FILE`,
// scaling/law_json.h). A law read must be valid and give finite losses.
#include <cmath>

#include "scaling/law.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<scaling::LossLaw> law = scaling::parse_law_text(fuzz::as_text(data, size), "fuzz.json");
  fuzz::require_one_line(law);
  if (!law.ok()) return 0;
  fuzz::require(scaling::validate(*law).ok(), "a law read is valid");
  fuzz::require_one_document(fuzz::as_text(data, size), [](std::string_view text) {
    return scaling::parse_law_text(text, "fuzz.json");
  });
  return 0;
}
