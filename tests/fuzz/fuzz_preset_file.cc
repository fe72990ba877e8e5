// Fuzz target: preset files (`--preset-file FILE`, presets/catalog.h). On
// success every preset of the catalog must still list, show and decode.
#include "presets/catalog.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Catalog builtin = presets::Catalog::builtin().value();
  presets::Catalog catalog = builtin;  // copy-on-write: builtin stays as it is
  const Status added = catalog.add_text(fuzz::as_text(data, size), "fuzz.json");
  fuzz::require_one_line(added);
  if (!added.ok()) return 0;
  fuzz::require_one_document(fuzz::as_text(data, size), [](std::string_view text) {
    presets::Catalog again = builtin;
    return again.add_text(text, "fuzz.json");
  });
  for (const presets::PresetInfo& info : catalog.list()) {
    Result<std::string> shown = catalog.show(info.name);
    fuzz::require(shown.ok(), "a listed preset shows", info.name);
    Status decoded;
    switch (info.kind) {
      case presets::PresetKind::kGpu:
        decoded = catalog.gpu(info.name).status();
        break;
      case presets::PresetKind::kCluster:
        decoded = catalog.cluster(info.name).status();
        break;
      case presets::PresetKind::kModel:
        decoded = catalog.model(info.name).status();
        break;
      case presets::PresetKind::kLaw:
        decoded = catalog.law(info.name).status();
        break;
      case presets::PresetKind::kPrice:
        decoded = catalog.price(info.name).status();
        break;
      case presets::PresetKind::kCollectives:
        decoded = catalog.collectives(info.name).status();
        break;
    }
    fuzz::require(decoded.ok(), "a listed preset decodes", decoded.message());
  }
  return 0;
}
