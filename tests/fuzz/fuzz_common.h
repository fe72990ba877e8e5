// Shared helpers of the fuzz targets (tests/fuzz/README.md).
//
// Each target feeds one reader of user files with the fuzzer's bytes and
// checks the properties every reader promises: it returns (no crash, hang,
// leak or sanitizer report -- libFuzzer and ASan/UBSan catch those), and a
// refusal is a Status whose message is one non-empty line. Targets add
// checks of their own (round trips, valid results).
#ifndef LLMPLAN_TESTS_FUZZ_FUZZ_COMMON_H_
#define LLMPLAN_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/status.h"

namespace llmplan::fuzz {

// The fuzzer's bytes as text.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Stops the run (a crash libFuzzer records, with the input) when `ok` is
// false.
inline void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "fuzz property violated: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// An error must be a one-line message: not empty, no line breaks.
inline void require_one_line(const Status& status) {
  if (status.ok()) return;
  const std::string& m = status.message();
  require(!m.empty() && m.find_first_of("\r\n") == std::string::npos,
          "an error message is one non-empty line", m);
}

template <typename T>
void require_one_line(const Result<T>& result) {
  require_one_line(result.status());
}

// A JSON reader reads exactly one document (issue 31: every reader answered
// for the first of two documents and dropped the rest). Call it when `parse`
// (text -> Status or Result) accepted `text`: the same text followed by
// anything but whitespace -- a stray word, a second document, a comma -- must
// be refused, with a one-line error.
template <typename Parse>
void require_one_document(std::string_view text, Parse&& parse) {
  for (std::string_view tail : {" x", "\n{}", ",", "]"}) {
    std::string longer(text);
    longer += tail;
    const auto result = parse(longer);
    require(!result.ok(), "a JSON reader refuses anything after the document", longer);
    require_one_line(result);
  }
}

}  // namespace llmplan::fuzz

#endif  // LLMPLAN_TESTS_FUZZ_FUZZ_COMMON_H_
