#include "planner/cli/command.h"
#include "base/number_text.h"

#include <algorithm>
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

CLI::Validator non_empty_list() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "empty list" : ""; }, "",
      "non_empty_list");
}

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

bool is_decimal_number(std::string_view text) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - start;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t mantissa = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

std::string given_value_error(const CLI::App& app) {
  for (const CLI::App* a = &app; a != nullptr;) {
    for (const CLI::Option* opt : a->get_options()) {
      if (opt->count() == 0 || opt->get_type_size_max() < 1) continue;  // not given; a flag
      const std::string type = opt->get_type_name();
      const bool numeric = type.starts_with("INT") || type.starts_with("UINT") ||
                           type.starts_with("FLOAT") || type.starts_with("NUMBER");
      for (const std::string& v : opt->results()) {
        if (v.empty()) return opt->get_name() + ": empty value";
        if (numeric && !is_decimal_number(v)) {
          return opt->get_name() + ": expected a decimal number, got '" + v + "'";
        }
      }
    }
    const std::vector<const CLI::App*> parsed =
        a->get_subcommands([](const CLI::App* s) { return s->parsed(); });
    a = parsed.empty() ? nullptr : parsed.front();
  }
  return "";
}

std::string closest_name(const std::string& word, const std::vector<std::string>& names) {
  // Optimal string alignment distance, row by row.
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.size()][b.size()];
  };
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& name : names) {
    const size_t dist = distance(word, name);
    if (dist < best_distance) {
      best = name;
      best_distance = dist;
    }
  }
  return best;
}

Result<scaling::LossLaw> load_law(const presets::Catalog& catalog, const std::string& name_or_file) {
  const bool file_like = name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".json");
  if (!file_like) {
    Result<scaling::LossLaw> law = catalog.law(name_or_file);
    if (law.ok()) return law;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(name_or_file, ec)) {
      return Status::invalid_argument("--law: '" + name_or_file +
                                      "' is neither a law preset nor a file: " +
                                      law.status().message());
    }
  }
  return scaling::read_law_file(name_or_file);
}

Status write_stdout(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return Status::io_error(std::string("cannot write to standard output: ") + std::strerror(errno));
  }
  return Status();
}

}  // namespace llmplan::planner
