// The cell readers of the runs-file readers (runs_cells.h).
#include "planner/accuracy/runs_cells.h"

#include <algorithm>
#include <cctype>

namespace llmplan::planner::runs_cells {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// The index of each named column in the header; InvalidArgument naming the
// first one missing.
Result<std::vector<size_t>> find_columns(const csv::CsvReader& reader,
                                         const std::vector<const char*>& names,
                                         const std::string& source_name) {
  std::vector<size_t> out;
  for (const char* n : names) {
    const auto& h = reader.header();
    const auto it = std::find(h.begin(), h.end(), n);
    if (it == h.end()) {
      return Status::invalid_argument(source_name + ":" + std::to_string(reader.header_line()) +
                                      ": missing column \"" + n + "\"");
    }
    out.push_back(static_cast<size_t>(it - h.begin()));
  }
  return out;
}

size_t optional_column(const csv::CsvReader& reader, const char* name) {
  const auto& h = reader.header();
  const auto it = std::find(h.begin(), h.end(), name);
  return it == h.end() ? kNoColumn : static_cast<size_t>(it - h.begin());
}

Result<int> positive(const csv::CsvReader& r, size_t column, bool zero_ok) {
  LLMPLAN_ASSIGN_OR_RETURN(int v, r.integer(column));
  if (v < 0 || (v == 0 && !zero_ok)) {
    return Status::parse_error(r.where(column) + ": must be " +
                               (zero_ok ? "non-negative" : "positive") + ", got " + r.cell(column));
  }
  return v;
}

Result<bool> boolean(const csv::CsvReader& r, size_t column) {
  const std::string v = lower(r.cell(column));
  if (v == "true") return true;
  if (v == "false") return false;
  return Status::parse_error(r.where(column) + ": expected true or false, got \"" + r.cell(column) +
                             "\"");
}

// The first integer after `marker` in `text`, or 0.
int number_after(std::string_view text, std::string_view marker) {
  size_t at = text.find(marker);
  if (at == std::string_view::npos) return 0;
  at += marker.size();
  while (at < text.size() && !std::isdigit(static_cast<unsigned char>(text[at]))) {
    if (text[at] != ' ' && text[at] != '=') return 0;
    ++at;
  }
  int v = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && v < 100000000) {
    v = v * 10 + (text[at++] - '0');
  }
  return v;
}

// The sliding window of a models-table row from its shape notes: the
// window from "sliding-window attention (window N)", the period of the
// full-attention layers from "window_attn_skip_freq K" (Megatron-Core's
// option) or 2 for "alternating layers"; 0, 0 when the notes state no
// window.
void window_from_notes(std::string_view notes_cell, int* window, int* full_every) {
  const std::string notes = lower(notes_cell);
  *window = number_after(notes, "sliding-window attention (window");
  *full_every = 0;
  if (*window <= 0) {
    *window = 0;
    return;
  }
  *full_every = number_after(notes, "window_attn_skip_freq");
  if (*full_every <= 0 && contains(notes, "alternating layers")) *full_every = 2;
}

// The features of "missing features: A (...); B (...). More text." in a
// models table's shape notes (ModelRow::missing_features).
std::vector<std::string> missing_from_notes(std::string_view notes_cell) {
  constexpr std::string_view kMarker = "missing features:";
  std::vector<std::string> out;
  if (lower(notes_cell.substr(0, kMarker.size())) != kMarker) return out;
  const std::string_view body = notes_cell.substr(kMarker.size());
  std::string item;
  int depth = 0;
  const auto flush = [&] {
    std::string name = item.substr(0, item.find('('));
    const size_t b = name.find_first_not_of(' ');
    const size_t e = name.find_last_not_of(' ');
    name = b == std::string::npos ? "" : name.substr(b, e - b + 1);
    if (!name.empty() && !contains(lower(item), "in the runs named")) out.push_back(name);
    item.clear();
  };
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (depth == 0 && c == ';') {
      flush();
      continue;
    }
    // A sentence ends the list: ". " outside parentheses.
    if (depth == 0 && c == '.' && (i + 1 == body.size() || body[i + 1] == ' ')) break;
    item += c;
  }
  flush();
  return out;
}

// Reads an MoE layer pattern ("every layer MoE (...)", "every 2 layers",
// "first 3 dense, then every layer"; text in parentheses is ignored) into
// Model::moe_layer_every and moe_first_dense. False when it is not one of
// these forms.
bool parse_moe_layer_pattern(std::string_view cell, int* every, int* first_dense) {
  std::string text = lower(cell);
  text = text.substr(0, text.find('('));
  *every = 1;
  *first_dense = 0;
  if (contains(text, "first")) {
    *first_dense = number_after(text, "first");
    if (*first_dense <= 0 || !contains(text, "dense")) return false;
  }
  if (contains(text, "every layer")) return true;
  if (contains(text, "every")) {
    *every = number_after(text, "every");
    return *every > 0;
  }
  return *first_dense > 0;
}

}  // namespace llmplan::planner::runs_cells
