#include "base/input_file.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace llmplan {
namespace {

std::string limit_text(size_t max_bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (max_bytes >= kMiB && max_bytes % kMiB == 0) {
    return std::to_string(max_bytes / kMiB) + " MiB";
  }
  return std::to_string(max_bytes) + " bytes";
}

}  // namespace

Result<std::string> read_input_file(const std::string& path, size_t max_bytes) {
  LLMPLAN_CHECK(max_bytes < SIZE_MAX);
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::not_found(path + ": cannot open file");
  if (fs::is_directory(st)) return Status::invalid_argument(path + ": is a directory, not a file");
  const bool regular = fs::is_regular_file(st);
  size_t expected = 0;
  if (regular) {
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > max_bytes) {
      return Status::invalid_argument(path + ": file too large: " + std::to_string(size) +
                                      " bytes, more than the " + limit_text(max_bytes) +
                                      " limit for input files");
    }
    if (!ec) expected = static_cast<size_t>(size);
  }

  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found(path + ": cannot open file");
  std::string text;
  text.reserve(expected);
  // Read at most max_bytes + 1 bytes: one byte past the cap tells "exactly
  // at the limit" from "more than the limit".
  constexpr size_t kChunk = size_t{1} << 16;
  while (text.size() <= max_bytes) {
    const size_t old_size = text.size();
    const size_t want = std::min(kChunk, max_bytes + 1 - old_size);
    text.resize(old_size + want);
    in.read(text.data() + old_size, static_cast<std::streamsize>(want));
    text.resize(old_size + static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    if (in.bad()) return Status::io_error(path + ": read error");
    if (!in) break;  // end of file
  }
  if (text.size() > max_bytes) {
    return Status::invalid_argument(
        path + (regular ? ": file too large: more than the " : ": more than the ") +
        limit_text(max_bytes) + " limit for input files" +
        (regular ? " (it grew while being read)" : " (not a regular file; reading stopped there)"));
  }
  return text;
}

}  // namespace llmplan
