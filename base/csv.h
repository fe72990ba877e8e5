// Reading CSV tables: one tokenizer and one number parser for every CSV file
// llmplan reads (measured iteration times for `validate`/`calibrate`, loss
// tables for `fit`, job lists for `schedule --jobs`), so that all of them
// accept and refuse the same things.
//
// The dialect is RFC 4180 with one record per line:
//  - a UTF-8 byte-order mark at the start is skipped; lines end in LF or
//    CRLF; lines holding only spaces and tabs are skipped (line numbers in
//    messages still count them);
//  - the first non-blank line is the header; every later line is one record
//    with exactly as many cells as the header;
//  - cells are separated by ','; spaces and tabs around a cell are trimmed;
//  - a cell may be quoted ("a, b"); "" inside quotes stands for one quote.
//    The quote must close on the same line, and only spaces or tabs may
//    follow it before the next ','. A quote inside an unquoted cell is an
//    error, as is any control character other than tab;
//  - the text is UTF-8: a line with a byte that is not part of well-formed
//    UTF-8 (e.g. Latin-1's 0x82) is an error naming the line and the byte, so
//    that no cell copied into JSON or Markdown output makes it invalid;
//  - at most kMaxCsvColumns columns; each reader also caps its records (its
//    header says how many).
// Numbers (CsvReader::number, integer and parse_decimal) are decimal only:
// an optional sign, digits with an optional '.', an optional exponent.
// Hexadecimal, "inf", "nan", spaces inside and trailing text are refused,
// and so are values that overflow a double.
//
// Every error is one line starting "FILE:LINE" and, for a cell, the column
// by its header name: `runs.csv:3: column "loss": "0x10" is not a decimal
// number`.
//
// No Boost here: plain C++ for any module.
#ifndef LLMPLAN_BASE_CSV_H_
#define LLMPLAN_BASE_CSV_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace llmplan::csv {

// The most columns a header may have.
inline constexpr size_t kMaxCsvColumns = 256;

// Parses a decimal number as described above; nullopt for anything else
// (including an empty string and values beyond a double's range).
// Thread-safe.
std::optional<double> parse_decimal(std::string_view text);

// Reads a CSV table one record at a time, so that memory follows what the
// caller keeps, not the size of the file. Typical use:
//
//   csv::CsvReader reader(text, path, kMaxRows);
//   LLMPLAN_RETURN_IF_ERROR(reader.read_header());
//   ... find columns in reader.header() ...
//   while (true) {
//     LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
//     if (!more) break;
//     LLMPLAN_ASSIGN_OR_RETURN(double x, reader.number(column));
//   }
//
// `text` must outlive the reader. A reader is used by one thread.
class CsvReader {
 public:
  // `source_name` (usually the path) starts every message. At most
  // `max_records` records are read (the header not counted).
  CsvReader(std::string_view text, std::string source_name, size_t max_records);

  // Reads the header row. ParseError "FILE: empty file (no header row)"
  // when the text has no non-blank line; ParseError "FILE:LINE: ..." for a
  // malformed header (bad quoting, more than kMaxCsvColumns cells).
  // REQUIRES: called once, before next().
  Status read_header();
  const std::vector<std::string>& header() const { return header_; }
  int header_line() const { return header_line_; }

  // Reads the next record: true when one was read, false at the end of the
  // text. ParseError "FILE:LINE: ..." for bad quoting or a cell count
  // unlike the header's; InvalidArgument "FILE:LINE: more than N records
  // (the limit for this file)" past max_records.
  Result<bool> next();
  // The cells of the record just read (trimmed, quotes removed).
  const std::vector<std::string>& cells() const { return cells_; }
  const std::string& cell(size_t column) const { return cells_[column]; }
  int line() const { return line_; }
  // Records read so far.
  size_t records() const { return records_; }

  // "FILE:LINE" of the current record (of the header before next()).
  std::string where() const;
  // `FILE:LINE: column "NAME"` for a cell of the current record.
  std::string where(size_t column) const;

  // The cell as a finite decimal number (parse_decimal); ParseError
  // `FILE:LINE: column "NAME": "TEXT" is not a decimal number` otherwise.
  Result<double> number(size_t column) const;
  // The cell as a whole number within int's range (decimal, so "1e3" is
  // 1000); ParseError naming the cell when it is not a number or not
  // whole, or is out of range.
  Result<int> integer(size_t column) const;

 private:
  // Splits `line` into cells_; `limit` caps the cell count (the error
  // names it). ParseError naming line_ on bad quoting.
  Status split(std::string_view line, size_t limit, const char* what);
  // The next non-blank line, or false at the end; updates line_.
  bool next_line(std::string_view* line);

  std::string_view rest_;
  std::string source_;
  size_t max_records_;
  std::vector<std::string> header_;
  std::vector<std::string> cells_;
  int header_line_ = 0;
  int line_ = 0;
  size_t records_ = 0;
};

}  // namespace llmplan::csv

#endif  // LLMPLAN_BASE_CSV_H_
