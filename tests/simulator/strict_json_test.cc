#include "base/strict_json.h"

#include <gtest/gtest.h>

#include <string>

namespace llmplan::json {
namespace {

std::string error_of(std::string_view text) {
  Result<boost::json::value> v = parse(text, "in.json");
  return v.ok() ? std::string() : v.status().message();
}

TEST(StrictJson, AcceptsOneValueWithSurroundingWhitespace) {
  for (std::string_view text : {"{\"a\": 1}", "  {\"a\": 1}  \n\n", "\t[1, 2]\r\n", "3", "\"x\" "}) {
    EXPECT_TRUE(parse(text, "in.json").ok()) << text;
  }
}

// Issue 31, item 1: every reader answered for the first of two documents,
// and silently dropped what followed.
TEST(StrictJson, RejectsTrailingDataAfterTheValue) {
  EXPECT_EQ(error_of("{\"preset\":\"llama3-8b\"} xyz"),
            "in.json:1:24: trailing data after the JSON document (a file holds exactly one JSON "
            "value)");
  EXPECT_EQ(error_of("{\"a\": 1}\n{\"a\": 2}\n"),
            "in.json:2:1: trailing data after the JSON document (a file holds exactly one JSON "
            "value)");
  for (std::string_view text :
       {std::string_view("[1]]"), std::string_view("{} {}"), std::string_view("1 2"),
        std::string_view("null,"), std::string_view("{\"a\":1}\n// comment"),
        std::string_view("{}\0", 3)}) {
    EXPECT_NE(error_of(text).find("trailing data after the JSON document"), std::string::npos)
        << text;
  }
}

TEST(StrictJson, SkipsALeadingByteOrderMarkOnly) {
  Result<boost::json::value> v = parse("\xEF\xBB\xBF{\"a\": 1}", "in.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->as_object().at("a").as_int64(), 1);
  // Positions count from after the mark.
  EXPECT_EQ(error_of("\xEF\xBB\xBF{\"a\": }"), "in.json:1:7: malformed JSON (syntax error)");
  // A mark anywhere else is not whitespace.
  EXPECT_NE(error_of("{\"a\": 1}\xEF\xBB\xBF").find("trailing data"), std::string::npos);
}

TEST(StrictJson, StillRejectsMalformedAndEmptyText) {
  EXPECT_FALSE(parse("", "in.json").ok());
  EXPECT_FALSE(parse("   ", "in.json").ok());
  EXPECT_FALSE(parse("{\"a\": 1", "in.json").ok());
  EXPECT_FALSE(parse("{\"a\": 1, \"a\": 2}", "in.json").ok());
}

}  // namespace
}  // namespace llmplan::json
