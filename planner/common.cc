#include "planner/command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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
  // C stdio rather than a stream: fclose() reports the error of the last
  // buffered write (a full disk, /dev/full), and errno says why.
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::io_error(flag + ": cannot write " + path + ": " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int why = written ? 0 : errno;
  if (std::fclose(f) != 0 && why == 0) why = errno;
  if (!written || why != 0) {
    return Status::io_error(flag + ": cannot write " + path + ": " + std::strerror(why != 0 ? why : EIO));
  }
  return Status();
}

Status write_stdout(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return Status::io_error(std::string("cannot write to standard output: ") + std::strerror(errno));
  }
  return Status();
}

}  // namespace llmplan::planner
