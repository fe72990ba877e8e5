#include "planner/command.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace llmplan::planner {

Result<presets::Catalog> load_catalog(const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, presets::Catalog::builtin());
  for (const std::string& path : global.preset_files) {
    LLMPLAN_RETURN_IF_ERROR(catalog.add_file(path));
  }
  return catalog;
}

void add_preset_file_option(CLI::App& app, GlobalOptions* global) {
  app.add_option_function<std::vector<std::string>>(
         "--preset-file",
         [global](const std::vector<std::string>& files) {
           global->preset_files.insert(global->preset_files.end(), files.begin(), files.end());
         },
         "JSON file of extra presets (same format as presets/*.json); repeatable")
      ->check(CLI::ExistingFile);
  for (CLI::App* sub : app.get_subcommands({})) add_preset_file_option(*sub, global);
}

namespace {

// "1e+308", "0.5", "inf": a number as the user would write it.
std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

CLI::Validator finite_in(double min, double max, bool min_exclusive) {
  const bool unbounded = max >= std::numeric_limits<double>::max();
  std::string want =
      "a finite number " + std::string(min_exclusive ? "> " : ">= ") + number_text(min);
  if (!unbounded) want += " and <= " + number_text(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        const bool parsed = !text.empty() && end == text.c_str() + text.size();
        const bool ok =
            parsed && std::isfinite(x) && (min_exclusive ? x > min : x >= min) && x <= max;
        return ok ? std::string() : "must be " + want + ", got " + text;
      },
      "FINITE " + std::string(min_exclusive ? "> " : ">= ") + number_text(min) +
          (unbounded ? "" : " <= " + number_text(max)),
      "FINITE");
}

CLI::Validator finite_positive() { return finite_in(0, std::numeric_limits<double>::max(), true); }

CLI::Validator int_in(int64_t min, int64_t max) {
  const std::string want = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        int64_t v = 0;
        const char* first = text.c_str() + (text.starts_with('+') ? 1 : 0);
        const char* last = text.c_str() + text.size();
        const auto [ptr, ec] = std::from_chars(first, last, v);
        const bool ok = !text.empty() && ec == std::errc() && ptr == last && v >= min && v <= max;
        return ok ? std::string() : "must be " + want + ", got " + text;
      },
      "in [" + std::to_string(min) + " - " + std::to_string(max) + "]", "INT_RANGE");
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
