// Strict reading of JSON objects for llmplan's input files.
//
// Every input file (configs, presets, profiles, job lists) is read through a
// JsonObjectReader: it knows the path of the object it reads
// ("config.json: model"), reads typed fields, and at finish() reports the
// first problem -- a missing required field, a wrong type, a value out of
// range, or a key nobody asked for. Unknown keys are errors: a typo in a
// config must never be silently ignored.
//
// Numbers may be written bare (`"layers": 96`) or, as every built-in preset
// does, with their provenance (`"layers": {"value": 96, "source": "..."}`).
//
// Boost.JSON appears only in files named *_json.h / *_json.cc (this one and
// the per-type adapters); the rest of llmplan sees plain values.
// Thread safety: a reader is used by one thread; distinct readers are
// independent.
#ifndef LLMPLAN_BASE_STRICT_JSON_H_
#define LLMPLAN_BASE_STRICT_JSON_H_

#include <boost/json.hpp>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace llmplan::json {

// Parses `text`, which must hold exactly one JSON value (surrounding
// whitespace and a leading UTF-8 byte order mark allowed); errors name
// `source_name` and the line:column of the fault (ParseError): malformed
// JSON, anything but whitespace after the value (a second document, stray
// text), nesting deeper than 32 levels, or a key repeated within one object. Numbers with a fraction or exponent are
// correctly rounded (so what pretty() writes reads back equal). Keys and
// strings may not hold control characters (U+0000 to U+001F, U+007F, e.g.
// an escaped "\n"), so that every message quoting one stays on one line:
// InvalidArgument naming the JSON path.
Result<boost::json::value> parse(std::string_view text, std::string_view source_name);

// Reads (base/input_file.h: at most 16 MiB) and parses a file.
// NotFound/IoError/InvalidArgument name the path.
Result<boost::json::value> parse_file(const std::string& path);

// Writes `v` with two-space indentation (stable key order: insertion order).
// JSON has no NaN or infinity: a non-finite number is written as null, so the
// text is always valid JSON. Writers of results use pretty_finite() instead,
// which refuses such a value with an error.
std::string pretty(const boost::json::value& v);

// OK when every number in `v` is finite. Otherwise InvalidArgument
// "<what>: <JSON path> is <nan|inf|-inf>, which JSON cannot represent"
// (e.g. "JSON output: best.mfu is inf, ...") for the first one met.
Status check_finite(const boost::json::value& v, std::string_view what);

// check_finite(v, what), then pretty(v): the writer for every JSON document
// llmplan prints or saves from computed values.
Result<std::string> pretty_finite(const boost::json::value& v,
                                  std::string_view what = "JSON output");

// Reads the fields of one JSON object. Construct with the value and its path;
// read fields; call finish() once, which returns the first error met or an
// error naming the first unknown key.
class JsonObjectReader {
 public:
  // `path` names the object in messages, e.g. "config.json: model".
  JsonObjectReader(const boost::json::value& value, std::string path);
  // The reader of a file's top-level object: its fields read "FILE: key"
  // ("i.json: storage.write_bytes_per_s"), not "FILE.key".
  static JsonObjectReader document(const boost::json::value& value, std::string file);

  const std::string& path() const { return path_; }
  bool has(std::string_view key) const;

  // Each read_* leaves *out unchanged when the key is absent and not
  // required. Integers must be integral; `min` bounds are inclusive. Numbers
  // and booleans may carry provenance: {"value": X, "source": "..."}.
  void read_int(std::string_view key, int* out, bool required = false, int64_t min = INT64_MIN);
  void read_int64(std::string_view key, int64_t* out, bool required = false,
                  int64_t min = INT64_MIN);
  void read_double(std::string_view key, double* out, bool required = false,
                   double min = -1e308);
  void read_bool(std::string_view key, bool* out, bool required = false);
  void read_string(std::string_view key, std::string* out, bool required = false);

  // Reads a string and maps it through `choices`; any other string is an
  // error listing the allowed spellings.
  template <typename E>
  void read_enum(std::string_view key, E* out,
                 std::initializer_list<std::pair<std::string_view, E>> choices,
                 bool required = false) {
    std::string s;
    bool had = has(key);
    read_string(key, &s, required);
    if (!had || !status_.ok()) return;
    std::string allowed;
    for (const auto& [name, value] : choices) {
      if (name == s) {
        *out = value;
        return;
      }
      allowed += allowed.empty() ? "" : ", ";
      allowed += name;
    }
    fail(key, "unknown value \"" + s + "\" (expected one of: " + allowed + ")");
  }

  // Marks `key` as known and returns its value, or nullptr when absent
  // (an error when required).
  const boost::json::value* child(std::string_view key, bool required = false);

  // Marks keys as known without reading them (e.g. "source", "note").
  void ignore(std::string_view key);

  // Records an error for `key` (the first error wins).
  void fail(std::string_view key, const std::string& message);

  // Full path of a field, for nested readers: path() + "." + key.
  std::string field_path(std::string_view key) const;

  // The first error, else an error for the first key never read or ignored,
  // else OK.
  Status finish();

  // Status so far (without the unknown-key check).
  const Status& status() const { return status_; }

 private:
  const boost::json::value* number_field(std::string_view key, bool required);

  const boost::json::object* object_ = nullptr;
  std::string path_;
  bool document_ = false;  // path_ is a file: fields are "path_: key"
  std::set<std::string, std::less<>> seen_;
  Status status_;
};

}  // namespace llmplan::json

#endif  // LLMPLAN_BASE_STRICT_JSON_H_
