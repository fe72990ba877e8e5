#include "planner/command.h"

namespace llmplan::planner {

Result<presets::Catalog> load_catalog(const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, presets::Catalog::builtin());
  for (const std::string& path : global.preset_files) {
    LLMPLAN_RETURN_IF_ERROR(catalog.add_file(path));
  }
  return catalog;
}

}  // namespace llmplan::planner
