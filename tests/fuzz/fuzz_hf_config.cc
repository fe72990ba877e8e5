// Fuzz target: Hugging Face config.json files (`--model config.json`,
// simulator/hf_config.h), read as the CLI reads them: one JSON document,
// then the architecture's mapping. A config it accepts is a model
// validate() accepts, with a positive parameter count; a refusal is one line.
#include "base/strict_json.h"
#include "simulator/hf_config.h"
#include "simulator/model.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

namespace {

Status read_config(std::string_view text) {
  Result<boost::json::value> v = json::parse(text, "fuzz.json");
  if (!v.ok()) return v.status();
  if (!simulator::is_hf_config(*v)) return Status::invalid_argument("fuzz.json: not an HF config");
  return simulator::model_from_hf_config(*v, "fuzz.json").status();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  Result<boost::json::value> v = json::parse(text, "fuzz.json");
  fuzz::require_one_line(v);
  if (!v.ok() || !simulator::is_hf_config(*v)) return 0;
  Result<simulator::HfModel> hf = simulator::model_from_hf_config(*v, "fuzz.json");
  fuzz::require_one_line(hf);
  if (!hf.ok()) return 0;
  const simulator::Model& m = hf->model;
  fuzz::require(simulator::validate(m).ok(), "an accepted config is a valid model",
                simulator::validate(m).message());
  fuzz::require(m.parameter_count() > 0, "an accepted config has a positive parameter count");
  fuzz::require(!hf->architecture.empty(), "an accepted config names its architecture");
  fuzz::require_one_document(text, read_config);
  return 0;
}
