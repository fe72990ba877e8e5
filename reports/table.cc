#include "reports/table.h"

#include <algorithm>
#include <cctype>

#include "base/status.h"

namespace llmplan::reports {
namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  bool digit = false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (std::string_view("+-.,eE%$x ").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return digit;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace

void Table::add_row(std::vector<std::string> row) {
  LLMPLAN_CHECK(row.size() == header_.size());
  rows_.push_back(std::move(row));
}

std::vector<bool> Table::numeric_columns() const {
  std::vector<bool> numeric(header_.size(), !rows_.empty());
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (!row[c].empty() && row[c] != "-" && !looks_numeric(row[c])) numeric[c] = false;
    }
  }
  return numeric;
}

std::string Table::markdown() const {
  const std::vector<bool> numeric = numeric_columns();
  std::string out = "|";
  for (const auto& h : header_) out += " " + h + " |";
  out += "\n|";
  for (size_t c = 0; c < header_.size(); ++c) out += numeric[c] ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (const auto& cell : row) out += " " + cell + " |";
    out += "\n";
  }
  return out;
}

std::string Table::csv() const {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += ",";
      out += csv_cell(cells[c]);
    }
    out += "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string Table::text() const {
  const std::vector<bool> numeric = numeric_columns();
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      out += pad(cells[c], width[c], numeric[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

}  // namespace llmplan::reports
