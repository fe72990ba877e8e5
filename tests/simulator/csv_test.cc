// The CSV tokenizer and number parser every llmplan CSV reader shares.
#include "base/csv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmplan::csv {
namespace {

TEST(ParseDecimal, AcceptsDecimalNumbersOnly) {
  EXPECT_EQ(parse_decimal("3566.5"), 3566.5);
  EXPECT_EQ(parse_decimal("+1.5e3"), 1500);
  EXPECT_EQ(parse_decimal("-2"), -2);
  EXPECT_EQ(parse_decimal(".5"), 0.5);
  EXPECT_EQ(parse_decimal("5."), 5);
  EXPECT_EQ(parse_decimal("1E-3"), 1e-3);
  EXPECT_EQ(parse_decimal("0"), 0);
  for (const char* bad : {"",    " 1",       "1 ",     "0x10",  "0X1p3", "inf",   "-inf", "nan",
                          "NaN", "infinity", "1e",     "1e+",   ".",     "-",     "+",    "1.2.3",
                          "1,5", "1e999",    "-1e999", "12abc", "++1",   "1_000", "\"1\""}) {
    EXPECT_FALSE(parse_decimal(bad).has_value()) << bad;
  }
  EXPECT_FALSE(parse_decimal(std::string("\xEF\xBB\xBF") + "1").has_value());
}

// Reads every record of `text`; the first error's message, or the cells
// joined by '|' with records separated by ';'.
std::string read_all(const std::string& text, size_t max_records = 100) {
  CsvReader reader(text, "t.csv", max_records);
  Status header = reader.read_header();
  if (!header.ok()) return header.message();
  std::string out;
  for (const std::string& c : reader.header()) out += c + "|";
  while (true) {
    Result<bool> more = reader.next();
    if (!more.ok()) return more.status().message();
    if (!*more) return out;
    out += ";";
    for (const std::string& c : reader.cells()) out += c + "|";
  }
}

TEST(CsvReader, SplitsTrimsAndUnquotes) {
  EXPECT_EQ(read_all("\xEF\xBB\xBF"
                     "a, b ,c\r\n\r\n 1 ,\"x, \"\"y\"\"\" , \r\n  \n"),
            "a|b|c|;1|x, \"y\"||");
  EXPECT_EQ(read_all("a,b\n\"\",\"  padded  \"\n"), "a|b|;|  padded  |");
  EXPECT_EQ(read_all("a\tb,c\n"), "a\tb|c|");
}

TEST(CsvReader, CountsLinesAndNamesColumns) {
  CsvReader reader("\n\nN,loss\n\n1e8,abc\n", "runs.csv", 10);
  ASSERT_TRUE(reader.read_header().ok());
  EXPECT_EQ(reader.header_line(), 3);
  ASSERT_TRUE(reader.next().value());
  EXPECT_EQ(reader.line(), 5);
  EXPECT_EQ(reader.where(), "runs.csv:5");
  EXPECT_EQ(reader.where(1), "runs.csv:5: column \"loss\"");
  EXPECT_EQ(reader.number(0).value(), 1e8);
  EXPECT_EQ(reader.number(1).status().message(),
            "runs.csv:5: column \"loss\": \"abc\" is not a decimal number");
  EXPECT_EQ(reader.number(1).status().code(), StatusCode::kParseError);
  EXPECT_FALSE(reader.next().value());
}

TEST(CsvReader, RefusesBadQuotingAndControlCharacters) {
  EXPECT_EQ(read_all("a,b\n1,\"3566.5\n"),
            "t.csv:2: column \"b\": unterminated quote (a quoted cell must close on its line)");
  EXPECT_EQ(read_all("a,b\n1,\"x\"y\n"), "t.csv:2: column \"b\": text after the closing quote");
  EXPECT_EQ(read_all("a,b\n1,x\"y\"\n"),
            "t.csv:2: column \"b\": quote inside an unquoted cell (quote the whole cell and write "
            "\"\" for a quote)");
  EXPECT_EQ(read_all("a,b\n1,x\ry\n"), "t.csv:2: column \"b\": control character in a cell");
  EXPECT_EQ(read_all(std::string("a,b\n1,\"x\0y\"\n", 12)),
            "t.csv:2: column \"b\": control character in a cell");
  EXPECT_EQ(read_all("\"a,b\n"),
            "t.csv:1: column 1: unterminated quote (a quoted cell must close on its line)");
}

// Issue 31, item 4: a name cell with Latin-1's 0x82 was copied into
// `validate --format json` and `schedule --format json`, which then were not
// valid JSON. Every CSV reader refuses text that is not UTF-8.
TEST(CsvReader, RefusesTextThatIsNotUtf8) {
  EXPECT_EQ(read_all("name,b\nrun\x82,1\n"),
            "t.csv:2: invalid UTF-8 (byte 0x82 at byte 4 of the line)");
  EXPECT_EQ(read_all("n\xE9me,b\nx,1\n"), "t.csv:1: invalid UTF-8 (byte 0xE9 at byte 2 of the line)");
  for (const char* bad : {"\xC0\xAF",           // overlong '/'
                          "\xE0\x80\xAF",       // overlong
                          "\xED\xA0\x80",       // a surrogate, U+D800
                          "\xF4\x90\x80\x80",   // above U+10FFFF
                          "\xF5\x80\x80\x80", "\xFF", "\xC3", "\xE2\x82"}) {  // cut short
    EXPECT_NE(read_all(std::string("a,b\n1,x") + bad + "\n").find("invalid UTF-8"),
              std::string::npos)
        << bad;
  }
  // Well-formed UTF-8 of every length passes through unchanged.
  EXPECT_EQ(read_all("a,b\n\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80\",\xED\x9F\xBF\n"),
            "a|b|;caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80|\xED\x9F\xBF|");
}

TEST(CsvReader, RecordsHaveTheHeadersCellCount) {
  EXPECT_EQ(read_all("a,b,c\n1,2\n"), "t.csv:2: 2 cells, the header has 3");
  EXPECT_EQ(read_all("a,b\n1,2,3,4\n"), "t.csv:2: 4 cells, the header has 2");
  EXPECT_EQ(read_all(""), "t.csv: empty file (no header row)");
  EXPECT_EQ(read_all(" \r\n\t\n"), "t.csv: empty file (no header row)");
}

TEST(CsvReader, CapsColumnsAndRecords) {
  std::string wide;
  for (size_t i = 0; i <= kMaxCsvColumns; ++i) wide += i ? ",c" : "c";
  EXPECT_EQ(read_all(wide + "\n"),
            "t.csv:1: 257 cells, more than the 256 columns a CSV file may have");
  EXPECT_EQ(read_all("a\n1\n2\n3\n", 3), "a|;1|;2|;3|");
  Result<bool> fourth = [] {
    CsvReader reader("a\n1\n2\n3\n4\n", "t.csv", 3);
    EXPECT_TRUE(reader.read_header().ok());
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(reader.next().value());
    return reader.next();
  }();
  EXPECT_EQ(fourth.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fourth.status().message(), "t.csv:5: more than 3 records (the limit for this file)");
}

TEST(CsvReader, Integers) {
  CsvReader reader("n\n1e3\n1.5\n3000000000\n-7\n", "t.csv", 10);
  ASSERT_TRUE(reader.read_header().ok());
  ASSERT_TRUE(reader.next().value());
  EXPECT_EQ(reader.integer(0).value(), 1000);
  ASSERT_TRUE(reader.next().value());
  EXPECT_EQ(reader.integer(0).status().message(),
            "t.csv:3: column \"n\": \"1.5\" is not a whole number");
  ASSERT_TRUE(reader.next().value());
  EXPECT_EQ(reader.integer(0).status().message(),
            "t.csv:4: column \"n\": \"3000000000\" is out of range (at most 2147483647)");
  ASSERT_TRUE(reader.next().value());
  EXPECT_EQ(reader.integer(0).value(), -7);
}

TEST(CsvReader, LongCellsAreCutShortInMessages) {
  const std::string text = "n\n" + std::string(1000, '7') + "x\n";
  CsvReader reader(text, "t.csv", 10);
  ASSERT_TRUE(reader.read_header().ok());
  ASSERT_TRUE(reader.next().value());
  EXPECT_EQ(reader.number(0).status().message(),
            "t.csv:2: column \"n\": \"" + std::string(40, '7') + "...\" is not a decimal number");
}

}  // namespace
}  // namespace llmplan::csv
