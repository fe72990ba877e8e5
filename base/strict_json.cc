#include "base/strict_json.h"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "base/input_file.h"

namespace llmplan::json {
namespace {

std::string kind_name(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return "null";
    case boost::json::kind::bool_:
      return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_:
      return "a number";
    case boost::json::kind::string:
      return "a string";
    case boost::json::kind::array:
      return "an array";
    case boost::json::kind::object:
      return "an object";
  }
  return "?";
}

void line_col(std::string_view text, size_t offset, int* line, int* col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

void pretty_into(const boost::json::value& v, std::string* out, int indent) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  const std::string pad_in(static_cast<size_t>(indent + 1) * 2, ' ');
  if (v.is_object()) {
    const auto& o = v.get_object();
    if (o.empty()) {
      *out += "{}";
      return;
    }
    *out += "{\n";
    bool first = true;
    for (const auto& kv : o) {
      if (!first) *out += ",\n";
      first = false;
      *out += pad_in + boost::json::serialize(boost::json::value(kv.key())) + ": ";
      pretty_into(kv.value(), out, indent + 1);
    }
    *out += "\n" + pad + "}";
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    bool scalars = true;
    for (const auto& e : a) scalars = scalars && !e.is_object() && !e.is_array();
    if (a.empty() || (scalars && a.size() <= 16)) {
      *out += "[";
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) *out += ", ";
        pretty_into(a[i], out, indent + 1);
      }
      *out += "]";
      return;
    }
    *out += "[\n";
    for (size_t i = 0; i < a.size(); ++i) {
      *out += pad_in;
      pretty_into(a[i], out, indent + 1);
      *out += i + 1 < a.size() ? ",\n" : "\n";
    }
    *out += pad + "]";
  } else if (v.is_double() && !std::isfinite(v.get_double())) {
    *out += "null";  // JSON has no NaN or infinity (pretty_finite refuses them)
  } else if (v.is_double()) {
    // Shortest round-trip form ("0.8", "2.5e+10"), not Boost's "8E-1".
    char buf[32];
    const double x = v.get_double();
    auto res = std::to_chars(buf, buf + sizeof buf, x);
    std::string s(buf, res.ptr);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep it a double
    *out += s;
  } else {
    *out += boost::json::serialize(v);
  }
}

// The first control character of `s`, or -1.
int control_character(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return u;
  }
  return -1;
}

std::string hex4(int c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "U+%04X", c);
  return buf;
}

// A key for a message: JSON-escaped and cut short.
std::string shown_key(std::string_view key) {
  constexpr size_t kMaxShown = 40;
  std::string out = boost::json::serialize(
      boost::json::value(boost::json::string_view(key.data(), std::min(key.size(), kMaxShown))));
  if (key.size() > kMaxShown) out.insert(out.size() - 1, "...");
  return out;
}

// Refuses control characters in keys and strings anywhere in `v`, so that
// messages quoting them stay on one line. `path` is where v is ("" at the
// root, else "jobs[3].name").
Status check_no_control_characters(const boost::json::value& v, const std::string& source,
                                   const std::string& path) {
  const std::string at = path.empty() ? source : source + ": " + path;
  if (v.is_string()) {
    const int c = control_character(v.get_string());
    if (c >= 0) {
      return Status::invalid_argument(at + ": a string holds a control character (" + hex4(c) +
                                      ")");
    }
  } else if (v.is_array()) {
    const boost::json::array& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      LLMPLAN_RETURN_IF_ERROR(
          check_no_control_characters(a[i], source, path + "[" + std::to_string(i) + "]"));
    }
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      const int c = control_character(kv.key());
      if (c >= 0) {
        return Status::invalid_argument(at + ": key " + shown_key(kv.key()) +
                                        " holds a control character (" + hex4(c) + ")");
      }
      const std::string child =
          path.empty() ? std::string(kv.key()) : path + "." + std::string(kv.key());
      LLMPLAN_RETURN_IF_ERROR(check_no_control_characters(kv.value(), source, child));
    }
  }
  return Status();
}

// The path of the first non-finite number in `v` ("best.mfu", "runs[3].ape"),
// written to *path with its value; false when every number is finite.
bool find_non_finite(const boost::json::value& v, const std::string& at, std::string* path,
                     double* value) {
  if (v.is_double()) {
    if (std::isfinite(v.get_double())) return false;
    *path = at.empty() ? "the document" : at;
    *value = v.get_double();
    return true;
  }
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      const std::string key(kv.key());
      if (find_non_finite(kv.value(), at.empty() ? key : at + "." + key, path, value)) {
        return true;
      }
    }
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      if (find_non_finite(a[i], at + "[" + std::to_string(i) + "]", path, value)) return true;
    }
  }
  return false;
}

// Builds the document for boost::json::basic_parser, as boost::json::parser
// does, with two differences: a number with a fraction or exponent is
// converted from its text by std::from_chars, correctly rounded (Boost 1.81
// can be an ulp off, so values written back shortest would not read back
// equal); and a key repeated in one object is an error (`error` says which)
// instead of one value silently winning.
class DocumentBuilder {
 public:
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();

  boost::json::value document;
  std::string error;  // set when a handler refuses the input

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    stack_.push_back({boost::json::object(), {}});
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) { return close(); }
  bool on_array_begin(boost::system::error_code&) {
    stack_.push_back({boost::json::array(), {}});
    return true;
  }
  bool on_array_end(std::size_t, boost::system::error_code&) { return close(); }
  bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code& ec) {
    text_.append(s.data(), s.size());
    Frame& frame = stack_.back();
    if (frame.value.get_object().contains(text_)) {
      error = "duplicate key " + shown_key(text_) + " (each key may appear once in an object)";
      ec = boost::json::error::syntax;
      return false;
    }
    frame.key = std::move(text_);
    text_.clear();
    return true;
  }
  bool on_string_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(boost::json::string_view s, std::size_t, boost::system::error_code&) {
    text_.append(s.data(), s.size());
    boost::json::value v(boost::json::string_view(text_.data(), text_.size()));
    text_.clear();
    return add(std::move(v));
  }
  bool on_number_part(boost::json::string_view s, boost::system::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t i, boost::json::string_view, boost::system::error_code&) {
    number_.clear();
    return add(i);
  }
  bool on_uint64(uint64_t u, boost::json::string_view, boost::system::error_code&) {
    number_.clear();
    return add(u);
  }
  bool on_double(double d, boost::json::string_view s, boost::system::error_code&) {
    number_.append(s.data(), s.size());
    double exact = 0;
    const auto [end, ec] = std::from_chars(number_.data(), number_.data() + number_.size(), exact);
    // Out of a double's range: keep Boost's infinity or zero (readers
    // refuse non-finite numbers).
    if (ec == std::errc() && end == number_.data() + number_.size()) d = exact;
    number_.clear();
    return add(d);
  }
  bool on_bool(bool b, boost::system::error_code&) { return add(b); }
  bool on_null(boost::system::error_code&) { return add(nullptr); }
  bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }

 private:
  struct Frame {
    boost::json::value value;  // the open array or object
    std::string key;           // an object's key awaiting its value
  };

  bool add(boost::json::value v) {
    if (stack_.empty()) {
      document = std::move(v);
    } else if (Frame& frame = stack_.back(); frame.value.is_array()) {
      frame.value.get_array().push_back(std::move(v));
    } else {
      frame.value.get_object().emplace(frame.key, std::move(v));
    }
    return true;
  }
  bool close() {
    boost::json::value v = std::move(stack_.back().value);
    stack_.pop_back();
    return add(std::move(v));
  }

  std::vector<Frame> stack_;
  std::string text_;    // a key or string read in parts
  std::string number_;  // a number read in parts
};

}  // namespace

Status check_finite(const boost::json::value& v, std::string_view what) {
  std::string path;
  double value = 0;
  if (!find_non_finite(v, "", &path, &value)) return Status();
  const char* text = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  return Status::invalid_argument(std::string(what) + ": " + path + " is " + text +
                                  ", which JSON cannot represent");
}

Result<std::string> pretty_finite(const boost::json::value& v, std::string_view what) {
  LLMPLAN_RETURN_IF_ERROR(check_finite(v, what));
  return pretty(v);
}

Result<boost::json::value> parse(std::string_view text, std::string_view source_name) {
  // RFC 8259 section 8.1: a parser may ignore a byte order mark. Every reader
  // does (editors on Windows write one), so line:column count from after it.
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
  boost::json::basic_parser<DocumentBuilder> parser{boost::json::parse_options{}};
  boost::system::error_code ec;
  const size_t consumed = parser.write_some(/*more=*/false, text.data(), text.size(), ec);
  auto fault = [&](size_t offset, const std::string& what) {
    int line = 0, col = 0;
    line_col(text, offset, &line, &col);
    return Status::parse_error(std::string(source_name) + ":" + std::to_string(line) + ":" +
                               std::to_string(col) + ": " + what);
  };
  if (ec) {
    return fault(consumed, parser.handler().error.empty()
                               ? "malformed JSON (" + ec.message() + ")"
                               : parser.handler().error);
  }
  // write_some stops after the first complete value (and the whitespace that
  // follows it): anything left is a second document or stray text, which
  // would otherwise be dropped without a word.
  if (consumed < text.size()) {
    return fault(consumed,
                 "trailing data after the JSON document (a file holds exactly one JSON value)");
  }
  boost::json::value v = std::move(parser.handler().document);
  LLMPLAN_RETURN_IF_ERROR(check_no_control_characters(v, std::string(source_name), ""));
  return v;
}

Result<boost::json::value> parse_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse(text, path);
}

std::string pretty(const boost::json::value& v) {
  std::string out;
  pretty_into(v, &out, 0);
  out += "\n";
  return out;
}

JsonObjectReader::JsonObjectReader(const boost::json::value& value, std::string path)
    : path_(std::move(path)) {
  if (value.is_object()) {
    object_ = &value.get_object();
  } else {
    status_ = Status::invalid_argument(path_ + ": expected an object, got " + kind_name(value));
  }
}

bool JsonObjectReader::has(std::string_view key) const {
  return object_ != nullptr && object_->find(key) != object_->end();
}

JsonObjectReader JsonObjectReader::document(const boost::json::value& value, std::string file) {
  JsonObjectReader r(value, std::move(file));
  r.document_ = true;
  return r;
}

std::string JsonObjectReader::field_path(std::string_view key) const {
  return path_ + (document_ ? ": " : ".") + std::string(key);
}

void JsonObjectReader::fail(std::string_view key, const std::string& message) {
  if (status_.ok()) status_ = Status::invalid_argument(field_path(key) + ": " + message);
}

void JsonObjectReader::ignore(std::string_view key) { seen_.emplace(key); }

const boost::json::value* JsonObjectReader::child(std::string_view key, bool required) {
  seen_.emplace(key);
  if (object_ == nullptr) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end()) {
    if (required) fail(key, "missing required field");
    return nullptr;
  }
  return &it->value();
}

const boost::json::value* JsonObjectReader::number_field(std::string_view key, bool required) {
  const boost::json::value* v = child(key, required);
  if (v == nullptr || !v->is_object()) return v;
  // {"value": X, "source": "..."} form.
  const auto& o = v->get_object();
  for (const auto& kv : o) {
    if (kv.key() != "value" && kv.key() != "source" && kv.key() != "note" && kv.key() != "date") {
      fail(key, "unknown key " + shown_key(kv.key()) +
                    " (a number with provenance has only value, source, note, date)");
      return nullptr;
    }
  }
  auto it = o.find("value");
  if (it == o.end()) {
    fail(key, "missing \"value\"");
    return nullptr;
  }
  return &it->value();
}

void JsonObjectReader::read_int64(std::string_view key, int64_t* out, bool required, int64_t min) {
  const boost::json::value* v = number_field(key, required);
  if (v == nullptr) return;
  int64_t x = 0;
  if (v->is_int64()) {
    x = v->get_int64();
  } else if (v->is_uint64() && v->get_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
    x = static_cast<int64_t>(v->get_uint64());
  } else if (v->is_double() && std::isfinite(v->get_double()) &&
             std::floor(v->get_double()) == v->get_double() &&
             std::fabs(v->get_double()) < 9.0e18) {
    x = static_cast<int64_t>(v->get_double());
  } else {
    fail(key, "expected an integer, got " +
                  (v->is_double() ? "the number " + boost::json::serialize(*v) : kind_name(*v)));
    return;
  }
  if (x < min) {
    fail(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(x));
    return;
  }
  *out = x;
}

void JsonObjectReader::read_int(std::string_view key, int* out, bool required, int64_t min) {
  int64_t x = *out;
  read_int64(key, &x, required, min);
  if (!status_.ok()) return;
  if (x > INT32_MAX || x < INT32_MIN) {
    fail(key, "out of range: " + std::to_string(x));
    return;
  }
  *out = static_cast<int>(x);
}

void JsonObjectReader::read_double(std::string_view key, double* out, bool required, double min) {
  const boost::json::value* v = number_field(key, required);
  if (v == nullptr) return;
  if (!v->is_number()) {
    fail(key, "expected a number, got " + kind_name(*v));
    return;
  }
  double x = v->to_number<double>();
  if (!std::isfinite(x)) {
    fail(key, "must be finite");
    return;
  }
  if (x < min) {
    std::ostringstream m;
    m << "must be >= " << min << ", got " << x;
    fail(key, m.str());
    return;
  }
  *out = x;
}

void JsonObjectReader::read_bool(std::string_view key, bool* out, bool required) {
  const boost::json::value* v = number_field(key, required);  // bare or {"value": ..., "source"}
  if (v == nullptr) return;
  if (!v->is_bool()) {
    fail(key, "expected true or false, got " + kind_name(*v));
    return;
  }
  *out = v->get_bool();
}

void JsonObjectReader::read_string(std::string_view key, std::string* out, bool required) {
  const boost::json::value* v = child(key, required);
  if (v == nullptr) return;
  if (!v->is_string()) {
    fail(key, "expected a string, got " + kind_name(*v));
    return;
  }
  *out = std::string(v->get_string());
}

Status JsonObjectReader::finish() {
  if (!status_.ok()) return status_;
  for (const auto& kv : *object_) {
    if (seen_.find(std::string_view(kv.key())) == seen_.end()) {
      return Status::invalid_argument(path_ + ": unknown key " + shown_key(kv.key()));
    }
  }
  return Status();
}

}  // namespace llmplan::json
