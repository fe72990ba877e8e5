// Fuzz target: llmplan's simulation config (`simulate --config FILE`,
// presets/sim_config.h). A config that loads must pass validate() and
// survive a round trip through sim_config_to_json.
#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Catalog catalog = presets::Catalog::builtin().value();
  Result<presets::SimConfig> config =
      presets::load_sim_config_text(fuzz::as_text(data, size), "fuzz.json", catalog);
  fuzz::require_one_line(config);
  if (!config.ok()) return 0;
  fuzz::require(presets::validate(*config).ok(), "a loaded config is valid");
  fuzz::require_one_document(fuzz::as_text(data, size), [](std::string_view text) {
    return presets::load_sim_config_text(text, "fuzz.json", catalog);
  });
  Result<presets::SimConfig> again =
      presets::load_sim_config_text(presets::sim_config_to_json(*config), "again.json", catalog);
  fuzz::require(again.ok(), "sim_config_to_json reads back", again.status().message());
  fuzz::require(again->model == config->model.with_resolved_widths() && again->plan == config->plan &&
                    again->cluster == config->cluster,
                "sim_config_to_json reads back to the same model (widths resolved), plan and cluster");
  return 0;
}
