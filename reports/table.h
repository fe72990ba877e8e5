// Plain tables rendered as Markdown, CSV or aligned text. Every report in
// llmplan builds one or more Tables and renders them; the table is the
// single place where column alignment and CSV quoting live.
#ifndef LLMPLAN_REPORTS_TABLE_H_
#define LLMPLAN_REPORTS_TABLE_H_

#include <string>
#include <vector>

namespace llmplan::reports {

// A rectangular table of already-formatted cells. Columns whose header ends
// in a unit or whose cells all look numeric are right-aligned in text and
// Markdown.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}

  // REQUIRES: row.size() == header size.
  void add_row(std::vector<std::string> row);
  size_t rows() const { return rows_.size(); }
  const std::vector<std::string>& header() const { return header_; }

  std::string markdown() const;
  // RFC 4180: cells with a comma, quote or newline are quoted.
  std::string csv() const;
  // Space-aligned columns for terminals.
  std::string text() const;

 private:
  std::vector<bool> numeric_columns() const;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_TABLE_H_
