#include "scaling/loss_csv.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <numeric>
#include <optional>
#include <utility>

#include "base/csv.h"
#include "base/input_file.h"

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

Result<bool> parse_bool(const std::string& cell, const std::string& where) {
  const std::string v = normalise(cell);
  if (v == "true" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "no") return false;
  return Status::parse_error(where + ": cannot parse " + quoted(cell) +
                             " as true/false (or 1/0, yes/no)");
}

// The columns of a loss CSV, by role (tokens or FLOPs, excluded optional).
struct LossColumns {
  size_t params = 0, loss = 0;
  std::optional<size_t> tokens, flops, excluded;
};

// Finds each role's column in `header`; refuses one column in two roles.
Result<LossColumns> find_loss_columns(const std::vector<std::string>& header,
                                      const LossCsvOptions& options,
                                      const std::string& header_where) {
  LossColumns c;
  LLMPLAN_ASSIGN_OR_RETURN(auto params_col,
                           find_column(header, params_role(), options.params_column, header_where));
  if (!params_col) return missing(params_role(), header_where);
  LLMPLAN_ASSIGN_OR_RETURN(auto loss_col,
                           find_column(header, loss_role(), options.loss_column, header_where));
  if (!loss_col) return missing(loss_role(), header_where);
  c.params = *params_col;
  c.loss = *loss_col;
  if (options.flops_column.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(
        c.tokens, find_column(header, tokens_role(), options.tokens_column, header_where));
  }
  if (!c.tokens) {
    LLMPLAN_ASSIGN_OR_RETURN(c.flops,
                             find_column(header, flops_role(), options.flops_column, header_where));
  }
  if (!c.tokens && !c.flops) {
    return Status::not_found(header_where + ": no tokens column (looked for " +
                             join(tokens_role().spellings) + ") and no FLOPs column (looked for " +
                             join(flops_role().spellings) +
                             "); name one with --tokens-column or --flops-column");
  }
  if (options.honour_excluded || !options.excluded_column.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(
        c.excluded, find_column(header, excluded_role(), options.excluded_column, header_where));
    if (!c.excluded) return missing(excluded_role(), header_where);
  }
  // One column in two roles (`--params-column loss --loss-column loss`) fits
  // nothing real (issue 31, item 7): refuse it, naming both flags.
  const std::pair<const Role*, std::optional<size_t>> roles[] = {
      {&params_role(), c.params}, {&tokens_role(), c.tokens}, {&flops_role(), c.flops},
      {&loss_role(), c.loss},     {&excluded_role(), c.excluded}};
  for (size_t i = 0; i < std::size(roles); ++i) {
    for (size_t j = i + 1; j < std::size(roles); ++j) {
      if (roles[i].second && roles[j].second && *roles[i].second == *roles[j].second) {
        return Status::invalid_argument(
            header_where + ": column " + quoted(header[*roles[i].second]) + " is both the " +
            roles[i].first->what + " column and the " + roles[j].first->what +
            " column; name different columns with " + roles[i].first->flag + " and " +
            roles[j].first->flag);
      }
    }
  }
  return c;
}

// Reads the data rows into data.points (counting rows read and excluded).
Status read_loss_rows(csv::CsvReader& reader, const LossColumns& c, LossData& data) {
  // A positive number from a cell.
  auto positive = [&](size_t col) -> Result<double> {
    LLMPLAN_ASSIGN_OR_RETURN(double value, reader.number(col));
    if (!(value > 0)) {
      return Status::invalid_argument(reader.where(col) + ": must be positive, got " +
                                      reader.cell(col));
    }
    return value;
  };
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    ++data.rows_read;
    if (c.excluded) {
      LLMPLAN_ASSIGN_OR_RETURN(bool excluded,
                               parse_bool(reader.cell(*c.excluded), reader.where(*c.excluded)));
      if (excluded) {
        ++data.rows_excluded;
        continue;
      }
    }
    LossPoint p;
    LLMPLAN_ASSIGN_OR_RETURN(p.n_params, positive(c.params));
    LLMPLAN_ASSIGN_OR_RETURN(p.loss, positive(c.loss));
    if (c.tokens) {
      LLMPLAN_ASSIGN_OR_RETURN(p.n_tokens, positive(*c.tokens));
    } else {
      LLMPLAN_ASSIGN_OR_RETURN(double flops, positive(*c.flops));
      p.n_tokens = flops / (6 * p.n_params);
      if (!(p.n_tokens > 0) || !std::isfinite(p.n_tokens)) {
        return Status::invalid_argument(reader.where(*c.flops) +
                                        ": the tokens C/(6N) are not a positive finite number");
      }
    }
    data.points.push_back(p);
  }
  return Status();
}

// Drops the `drop_highest_loss` points of highest loss (ties: the first
// read goes first), keeping the others in file order.
void drop_highest_losses(LossData& data, int drop_highest_loss) {
  std::vector<size_t> order(data.points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t i, size_t j) { return data.points[i].loss > data.points[j].loss; });
  const size_t drop = std::min(order.size(), static_cast<size_t>(drop_highest_loss));
  std::vector<bool> dropped(data.points.size(), false);
  for (size_t k = 0; k < drop; ++k) dropped[order[k]] = true;
  std::vector<LossPoint> kept;
  for (size_t i = 0; i < data.points.size(); ++i) {
    if (!dropped[i]) kept.push_back(data.points[i]);
  }
  data.points = std::move(kept);
  data.rows_dropped = static_cast<int>(drop);
}

}  // namespace

Result<LossData> parse_loss_csv(std::string_view text, const std::string& source_name,
                                const LossCsvOptions& options) {
  if (options.drop_highest_loss < 0) {
    return Status::invalid_argument(source_name + ": rows to drop must be >= 0, got " +
                                    std::to_string(options.drop_highest_loss));
  }
  csv::CsvReader reader(text, source_name, kMaxLossRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  const std::vector<std::string>& header = reader.header();
  const std::string header_where = source_name + ":" + std::to_string(reader.header_line());
  LLMPLAN_ASSIGN_OR_RETURN(LossColumns cols, find_loss_columns(header, options, header_where));

  LossData data;
  data.params_column = header[cols.params];
  data.loss_column = header[cols.loss];
  if (cols.tokens) data.tokens_column = header[*cols.tokens];
  if (cols.flops) data.flops_column = header[*cols.flops];
  if (cols.excluded) data.excluded_column = header[*cols.excluded];
  LLMPLAN_RETURN_IF_ERROR(read_loss_rows(reader, cols, data));
  if (options.drop_highest_loss > 0) drop_highest_losses(data, options.drop_highest_loss);
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
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_loss_csv(text, path, options);
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
