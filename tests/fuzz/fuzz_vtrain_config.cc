// Fuzz target: vTrain configs (`simulate --vtrain-config FILE`,
// presets/sim_config.h), both strict and ignoring stale num_gpus.
#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Catalog catalog = presets::Catalog::builtin().value();
  for (bool ignore_stale : {false, true}) {
    presets::VtrainLoadOptions options;
    options.ignore_stale_num_gpus = ignore_stale;
    Result<presets::SimConfig> config =
        presets::load_vtrain_config_text(fuzz::as_text(data, size), "fuzz.json", catalog, options);
    fuzz::require_one_line(config);
    if (config.ok()) {
      fuzz::require(presets::validate(*config).ok(), "a loaded vTrain config is valid");
      fuzz::require_one_document(fuzz::as_text(data, size), [&](std::string_view text) {
        return presets::load_vtrain_config_text(text, "fuzz.json", catalog, options);
      });
    }
  }
  return 0;
}
