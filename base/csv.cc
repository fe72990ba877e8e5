#include "base/csv.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <utility>

namespace llmplan::csv {
namespace {

enum class Parsed { kOk, kNotDecimal, kOutOfRange };

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

// Strict decimal grammar: [+-]? (D+ (. D*)? | . D+) ([eE] [+-]? D+)?
Parsed parse(std::string_view s, double* out) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < n && is_digit(s[i])) ++i, ++digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return Parsed::kNotDecimal;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exponent_digits = 0;
    while (i < n && is_digit(s[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return Parsed::kNotDecimal;
  }
  if (i != n) return Parsed::kNotDecimal;
  // std::from_chars reads exactly this grammar, less the leading '+'.
  std::string_view digits_text = s;
  if (digits_text.front() == '+') digits_text.remove_prefix(1);
  double x = 0;
  const auto [end, ec] =
      std::from_chars(digits_text.data(), digits_text.data() + digits_text.size(), x);
  if (ec == std::errc::result_out_of_range) return Parsed::kOutOfRange;
  if (ec != std::errc() || end != digits_text.data() + digits_text.size()) {
    return Parsed::kNotDecimal;
  }
  if (!std::isfinite(x)) return Parsed::kOutOfRange;
  *out = x;
  return Parsed::kOk;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_blank(std::string_view s) { return trim(s).empty(); }

// A cell's text for a message, cut short when long.
std::string quoted(std::string_view s) {
  constexpr size_t kMaxShown = 40;
  if (s.size() > kMaxShown) return "\"" + std::string(s.substr(0, kMaxShown)) + "...\"";
  return "\"" + std::string(s) + "\"";
}

// The offset of the first byte that is not part of well-formed UTF-8
// (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing above
// U+10FFFF), or npos when all of `s` is.
size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;            // continuation bytes
    unsigned char lo = 0x80;  // the range of the first continuation byte
    unsigned char hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      n = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      n = 2;
      if (b0 == 0xE0) lo = 0xA0;  // overlong
      if (b0 == 0xED) hi = 0x9F;  // surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      n = 3;
      if (b0 == 0xF0) lo = 0x90;  // overlong
      if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + n >= s.size()) return i;  // cut short
    for (size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<double> parse_decimal(std::string_view text) {
  double x = 0;
  if (parse(text, &x) != Parsed::kOk) return std::nullopt;
  return x;
}

CsvReader::CsvReader(std::string_view text, std::string source_name, size_t max_records)
    : rest_(text), source_(std::move(source_name)), max_records_(max_records) {
  if (rest_.substr(0, 3) == "\xEF\xBB\xBF") rest_.remove_prefix(3);
}

bool CsvReader::next_line(std::string_view* line) {
  while (!rest_.empty()) {
    const size_t nl = rest_.find('\n');
    std::string_view l = rest_.substr(0, nl);
    rest_.remove_prefix(nl == std::string_view::npos ? rest_.size() : nl + 1);
    ++line_;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (!is_blank(l)) {
      *line = l;
      return true;
    }
  }
  return false;
}

std::string CsvReader::where() const { return source_ + ":" + std::to_string(line_); }

std::string CsvReader::where(size_t column) const {
  if (column < header_.size() && line_ != header_line_) {
    return where() + ": column " + quoted(header_[column]);
  }
  return where() + ": column " + std::to_string(column + 1);
}

Status CsvReader::split(std::string_view line, size_t limit, const char* what) {
  cells_.clear();
  // Cells travel into JSON and Markdown output, which must stay valid UTF-8.
  if (const size_t bad = first_invalid_utf8(line); bad != std::string_view::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(line[bad]));
    return Status::parse_error(where() + ": invalid UTF-8 (byte " + byte + " at byte " +
                               std::to_string(bad + 1) + " of the line)");
  }
  size_t count = 0;  // cells seen, stored or not
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    return Status::parse_error(where(count) + ": " + why);
  };
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    std::string cell;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) {
          return fail("unterminated quote (a quoted cell must close on its line)");
        }
        const char c = line[i];
        if (c == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
          return fail("control character in a cell");
        }
        cell.push_back(c);
        ++i;
      }
      while (i < line.size() && is_space(line[i])) ++i;
      if (i < line.size() && line[i] != ',') return fail("text after the closing quote");
    } else {
      size_t end = i;
      while (end < line.size() && line[end] != ',') {
        const char c = line[end];
        if (c == '"') {
          return fail(
              "quote inside an unquoted cell (quote the whole cell and write \"\" for "
              "a quote)");
        }
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
          return fail("control character in a cell");
        }
        ++end;
      }
      cell = std::string(trim(line.substr(i, end - i)));
      i = end;
    }
    ++count;
    if (count <= limit) cells_.push_back(std::move(cell));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  if (count > limit) {
    return Status::parse_error(where() + ": " + std::to_string(count) + " cells, " + what);
  }
  return Status();
}

Status CsvReader::read_header() {
  LLMPLAN_CHECK(header_line_ == 0);
  std::string_view line;
  if (!next_line(&line)) return Status::parse_error(source_ + ": empty file (no header row)");
  header_line_ = line_;
  LLMPLAN_RETURN_IF_ERROR(
      split(line, kMaxCsvColumns,
            ("more than the " + std::to_string(kMaxCsvColumns) + " columns a CSV file may have")
                .c_str()));
  header_ = std::move(cells_);
  cells_.clear();
  return Status();
}

Result<bool> CsvReader::next() {
  LLMPLAN_CHECK(header_line_ > 0);
  std::string_view line;
  if (!next_line(&line)) return false;
  if (records_ == max_records_) {
    return Status::invalid_argument(where() + ": more than " + std::to_string(max_records_) +
                                    " records (the limit for this file)");
  }
  const std::string what = "the header has " + std::to_string(header_.size());
  LLMPLAN_RETURN_IF_ERROR(split(line, header_.size(), what.c_str()));
  if (cells_.size() != header_.size()) {
    return Status::parse_error(where() + ": " + std::to_string(cells_.size()) + " cells, " + what);
  }
  ++records_;
  return true;
}

Result<double> CsvReader::number(size_t column) const {
  const std::string& text = cells_[column];
  double x = 0;
  switch (parse(text, &x)) {
    case Parsed::kOk:
      return x;
    case Parsed::kOutOfRange:
      return Status::parse_error(where(column) + ": " + quoted(text) +
                                 " is out of range for a number");
    case Parsed::kNotDecimal:
      break;
  }
  return Status::parse_error(where(column) + ": " + quoted(text) + " is not a decimal number");
}

Result<int> CsvReader::integer(size_t column) const {
  LLMPLAN_ASSIGN_OR_RETURN(double x, number(column));
  if (x != std::floor(x)) {
    return Status::parse_error(where(column) + ": " + quoted(cells_[column]) +
                               " is not a whole number");
  }
  if (x < INT_MIN || x > INT_MAX) {
    return Status::parse_error(where(column) + ": " + quoted(cells_[column]) +
                               " is out of range (at most " + std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(x);
}

}  // namespace llmplan::csv
