#include "scaling/loss_csv.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>

namespace llmplan::scaling {
namespace {

constexpr int kMinRows = 5;

// One column role: the spellings that detect it (shown in messages) and the
// flag that names it.
struct Role {
  const char* what;
  const char* flag;
  std::vector<std::string_view> spellings;
};

const Role& params_role() {
  static const Role kRole{"parameters",
                          "--params-column",
                          {"N", "params", "parameters", "N_params", "num_params", "model size",
                           "model_params", "param_count", "parameter_count"}};
  return kRole;
}
const Role& tokens_role() {
  static const Role kRole{
      "tokens",
      "--tokens-column",
      {"D", "tokens", "D_tokens", "n_tokens", "num_tokens", "training tokens", "data size"}};
  return kRole;
}
const Role& flops_role() {
  static const Role kRole{
      "FLOPs",
      "--flops-column",
      {"C", "flops", "flop", "C_flops", "training flop", "training flops", "compute"}};
  return kRole;
}
const Role& loss_role() {
  static const Role kRole{
      "loss",
      "--loss-column",
      {"loss", "L", "final loss", "eval loss", "val loss", "validation loss", "test loss"}};
  return kRole;
}
const Role& excluded_role() {
  static const Role kRole{
      "excluded", "--excluded-column", {"excluded_by_epoch", "excluded", "exclude"}};
  return kRole;
}

// Lower case, letters and digits only: "Model Size" and "model_size" meet.
std::string normalise(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

// Splits one CSV line into trimmed cells (RFC 4180 quotes). Returns false on
// an unterminated quote.
bool split_cells(std::string_view line, std::vector<std::string>* cells) {
  cells->clear();
  std::string cell;
  bool in_quotes = false, was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        cell += c;
      }
    } else if (c == '"' && trim(cell).empty()) {
      in_quotes = was_quoted = true;
      cell.clear();
    } else if (c == ',') {
      cells->push_back(was_quoted ? cell : std::string(trim(cell)));
      cell.clear();
      was_quoted = false;
    } else if (!(was_quoted && (c == ' ' || c == '\t'))) {
      cell += c;
    }
  }
  if (in_quotes) return false;
  cells->push_back(was_quoted ? cell : std::string(trim(cell)));
  return true;
}

struct Line {
  int number = 0;  // 1-based
  std::string_view text;
};

// Non-blank lines, BOM and '\r' removed.
std::vector<Line> split_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Line> lines;
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!trim(line).empty()) lines.push_back({number, line});
  }
  return lines;
}

// The header index for `role`: the column the caller named, else the one
// detected by spelling. nullopt (with OK status) when detection finds none.
Result<std::optional<size_t>> find_column(const std::vector<std::string>& header, const Role& role,
                                          const std::string& named, const std::string& where) {
  if (!named.empty()) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == named) return std::optional<size_t>(i);
    }
    for (size_t i = 0; i < header.size(); ++i) {
      if (normalise(header[i]) == normalise(named)) return std::optional<size_t>(i);
    }
    std::vector<std::string_view> names(header.begin(), header.end());
    return Status::not_found(where + ": no column " + quoted(named) + " (named by " + role.flag +
                             "); the columns are: " + join(names));
  }
  std::optional<size_t> found;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string key = normalise(header[i]);
    const bool match = std::any_of(role.spellings.begin(), role.spellings.end(),
                                   [&](std::string_view s) { return normalise(s) == key; });
    if (!match) continue;
    if (found) {
      return Status::invalid_argument(where + ": columns " + quoted(header[*found]) + " and " +
                                      quoted(header[i]) + " both look like the " + role.what +
                                      " column; choose one with " + role.flag);
    }
    found = i;
  }
  return found;
}

Status missing(const Role& role, const std::string& where) {
  return Status::not_found(where + ": no " + role.what + " column (looked for " +
                           join(role.spellings) + "); name it with " + role.flag);
}

// Parses a positive finite number from `cell`.
Result<double> parse_positive(const std::string& cell, const std::string& where) {
  std::string_view s = cell;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return Status::parse_error(where + ": cannot parse " + quoted(cell) + " as a number");
  }
  if (std::isnan(value)) return Status::invalid_argument(where + ": value is NaN");
  if (!std::isfinite(value) || value <= 0) {
    return Status::invalid_argument(where + ": must be positive and finite, got " + cell);
  }
  return value;
}

Result<bool> parse_bool(const std::string& cell, const std::string& where) {
  const std::string v = normalise(cell);
  if (v == "true" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "no") return false;
  return Status::parse_error(where + ": cannot parse " + quoted(cell) +
                             " as true/false (or 1/0, yes/no)");
}

}  // namespace

Result<LossData> parse_loss_csv(std::string_view text, const std::string& source_name,
                                const LossCsvOptions& options) {
  if (options.drop_highest_loss < 0) {
    return Status::invalid_argument(source_name + ": rows to drop must be >= 0, got " +
                                    std::to_string(options.drop_highest_loss));
  }
  const std::vector<Line> lines = split_lines(text);
  if (lines.empty()) {
    return Status::parse_error(source_name + ": empty file (expected a header row and data rows)");
  }
  std::vector<std::string> header;
  const std::string header_where = source_name + ":" + std::to_string(lines[0].number);
  if (!split_cells(lines[0].text, &header)) {
    return Status::parse_error(header_where + ": unterminated quoted cell");
  }

  LLMPLAN_ASSIGN_OR_RETURN(auto params_col,
                           find_column(header, params_role(), options.params_column, header_where));
  if (!params_col) return missing(params_role(), header_where);
  LLMPLAN_ASSIGN_OR_RETURN(auto loss_col,
                           find_column(header, loss_role(), options.loss_column, header_where));
  if (!loss_col) return missing(loss_role(), header_where);
  std::optional<size_t> tokens_col, flops_col;
  if (options.flops_column.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(
        tokens_col, find_column(header, tokens_role(), options.tokens_column, header_where));
  }
  if (!tokens_col) {
    LLMPLAN_ASSIGN_OR_RETURN(flops_col,
                             find_column(header, flops_role(), options.flops_column, header_where));
  }
  if (!tokens_col && !flops_col) {
    return Status::not_found(header_where + ": no tokens column (looked for " +
                             join(tokens_role().spellings) + ") and no FLOPs column (looked for " +
                             join(flops_role().spellings) +
                             "); name one with --tokens-column or --flops-column");
  }
  std::optional<size_t> excluded_col;
  if (options.honour_excluded || !options.excluded_column.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(
        excluded_col, find_column(header, excluded_role(), options.excluded_column, header_where));
    if (!excluded_col) return missing(excluded_role(), header_where);
  }

  LossData data;
  data.params_column = header[*params_col];
  data.loss_column = header[*loss_col];
  if (tokens_col) data.tokens_column = header[*tokens_col];
  if (flops_col) data.flops_column = header[*flops_col];
  if (excluded_col) data.excluded_column = header[*excluded_col];

  std::vector<std::string> cells;
  for (size_t li = 1; li < lines.size(); ++li) {
    const std::string where = source_name + ":" + std::to_string(lines[li].number);
    if (!split_cells(lines[li].text, &cells)) {
      return Status::parse_error(where + ": unterminated quoted cell");
    }
    if (cells.size() != header.size()) {
      return Status::parse_error(where + ": expected " + std::to_string(header.size()) +
                                 " cells like the header, got " + std::to_string(cells.size()));
    }
    ++data.rows_read;
    auto cell_where = [&](size_t col) { return where + ": column " + quoted(header[col]); };
    if (excluded_col) {
      LLMPLAN_ASSIGN_OR_RETURN(bool excluded,
                               parse_bool(cells[*excluded_col], cell_where(*excluded_col)));
      if (excluded) {
        ++data.rows_excluded;
        continue;
      }
    }
    LossPoint p;
    LLMPLAN_ASSIGN_OR_RETURN(p.n_params,
                             parse_positive(cells[*params_col], cell_where(*params_col)));
    LLMPLAN_ASSIGN_OR_RETURN(p.loss, parse_positive(cells[*loss_col], cell_where(*loss_col)));
    if (tokens_col) {
      LLMPLAN_ASSIGN_OR_RETURN(p.n_tokens,
                               parse_positive(cells[*tokens_col], cell_where(*tokens_col)));
    } else {
      LLMPLAN_ASSIGN_OR_RETURN(double flops,
                               parse_positive(cells[*flops_col], cell_where(*flops_col)));
      p.n_tokens = flops / (6 * p.n_params);
    }
    data.points.push_back(p);
  }

  if (options.drop_highest_loss > 0) {
    std::vector<size_t> order(data.points.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t i, size_t j) { return data.points[i].loss > data.points[j].loss; });
    const size_t drop = std::min(order.size(), static_cast<size_t>(options.drop_highest_loss));
    std::vector<bool> dropped(data.points.size(), false);
    for (size_t k = 0; k < drop; ++k) dropped[order[k]] = true;
    std::vector<LossPoint> kept;
    for (size_t i = 0; i < data.points.size(); ++i) {
      if (!dropped[i]) kept.push_back(data.points[i]);
    }
    data.points = std::move(kept);
    data.rows_dropped = static_cast<int>(drop);
  }
  if (data.points.size() < kMinRows) {
    return Status::invalid_argument(source_name + ": " + std::to_string(data.points.size()) +
                                    " usable data rows (" + std::to_string(data.rows_read) +
                                    " read, " + std::to_string(data.rows_excluded) + " excluded, " +
                                    std::to_string(data.rows_dropped) +
                                    " dropped); a fit needs at least 5 (it has 5 unknowns)");
  }
  return data;
}

Result<LossData> read_loss_csv(const std::string& path, const LossCsvOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found(path + ": cannot open file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::io_error(path + ": read error");
  return parse_loss_csv(buf.str(), path, options);
}

std::string describe(const LossData& data) {
  std::string out = "N from " + quoted(data.params_column) + ", ";
  out += data.tokens_column.empty() ? "D = C/(6N) from " + quoted(data.flops_column)
                                    : "D from " + quoted(data.tokens_column);
  out +=
      ", loss from " + quoted(data.loss_column) + "; " + std::to_string(data.rows_read) + " rows";
  if (!data.excluded_column.empty()) {
    out +=
        ", " + std::to_string(data.rows_excluded) + " excluded by " + quoted(data.excluded_column);
  }
  if (data.rows_dropped > 0) {
    out += ", " + std::to_string(data.rows_dropped) + " highest-loss dropped";
  }
  return out + "; " + std::to_string(data.points.size()) + " used";
}

}  // namespace llmplan::scaling
