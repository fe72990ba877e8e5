#include "planner/command.h"

#include <filesystem>
#include <fstream>

namespace llmplan::planner {

Result<presets::Catalog> load_catalog(const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, presets::Catalog::builtin());
  for (const std::string& path : global.preset_files) {
    LLMPLAN_RETURN_IF_ERROR(catalog.add_file(path));
  }
  return catalog;
}

Status make_output_dir(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io_error(flag + ": cannot create " + dir + ": " + ec.message());
  return Status();
}

Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& flag) {
  std::ofstream f(path, std::ios::binary);
  if (f) f << text;
  if (!f) return Status::io_error(flag + ": cannot write " + path);
  return Status();
}

}  // namespace llmplan::planner
