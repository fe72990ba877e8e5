// The cell readers the runs-file readers share (runs_file.h: the runs rows,
// the models table, the mapping of a row): lower-casing and substring tests,
// the columns of a header, positive integers and booleans with errors that
// name the cell, and the small parsers of the files' free-text notes. Not a
// public interface: only planner/accuracy/'s runs-file sources include it.
#ifndef LLMPLAN_PLANNER_ACCURACY_RUNS_CELLS_H_
#define LLMPLAN_PLANNER_ACCURACY_RUNS_CELLS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/csv.h"
#include "base/status.h"

namespace llmplan::planner::runs_cells {

// `s` in lower case (ASCII).
std::string lower(std::string_view s);

bool starts_with(std::string_view s, std::string_view prefix);

bool contains(std::string_view s, std::string_view part);

// The index of each named column in the header; InvalidArgument naming the
// first one missing.
Result<std::vector<size_t>> find_columns(const csv::CsvReader& reader,
                                         const std::vector<const char*>& names,
                                         const std::string& source_name);

// The index of an optional column, or kNoColumn.
inline constexpr size_t kNoColumn = static_cast<size_t>(-1);
size_t optional_column(const csv::CsvReader& reader, const char* name);

// The cell as an integer > 0 (>= 0 when `zero_ok`); ParseError naming the
// cell otherwise.
Result<int> positive(const csv::CsvReader& r, size_t column, bool zero_ok = false);

// The cell as "true" or "false" (any case); ParseError naming the cell
// otherwise.
Result<bool> boolean(const csv::CsvReader& r, size_t column);

// The first integer after `marker` in `text`, or 0.
int number_after(std::string_view text, std::string_view marker);

// The sliding window of a models-table row from its shape notes: the
// window from "sliding-window attention (window N)", the period of the
// full-attention layers from "window_attn_skip_freq K" (Megatron-Core's
// option) or 2 for "alternating layers"; 0, 0 when the notes state no
// window.
void window_from_notes(std::string_view notes_cell, int* window, int* full_every);

// The features of "missing features: A (...); B (...). More text." in a
// models table's shape notes (ModelRow::missing_features).
std::vector<std::string> missing_from_notes(std::string_view notes_cell);

// Reads an MoE layer pattern ("every layer MoE (...)", "every 2 layers",
// "first 3 dense, then every layer"; text in parentheses is ignored) into
// Model::moe_layer_every and moe_first_dense. False when it is not one of
// these forms.
bool parse_moe_layer_pattern(std::string_view cell, int* every, int* first_dense);

// Every data row of `reader`, in order: each a Row with its line set, then
// filled by read_row(rows so far, &row), which returns OK or the row's
// error (the reading stops there). ParseError "SOURCE: no data rows after
// the header" when there is none; the reader's errors.
template <typename Row, typename ReadRow>
Result<std::vector<Row>> read_rows(csv::CsvReader& reader, const std::string& source_name,
                                   const ReadRow& read_row) {
  std::vector<Row> out;
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    Row r;
    r.line = reader.line();
    LLMPLAN_RETURN_IF_ERROR(read_row(out, &r));
    out.push_back(std::move(r));
  }
  if (out.empty()) return Status::parse_error(source_name + ": no data rows after the header");
  return out;
}

// The columns of the Blackwell form (data/blackwell/published_runs.csv).
inline constexpr const char* kBlackwellColumns[] = {
    "source", "container", "system", "num_gpus", "model",        "seq",
    "precision", "tp",     "pp",     "cp",       "vp",           "ep",
    "etp",    "dp",        "micro_batch", "global_batch", "tokens_per_s_per_gpu"};

}  // namespace llmplan::planner::runs_cells

#endif  // LLMPLAN_PLANNER_ACCURACY_RUNS_CELLS_H_
