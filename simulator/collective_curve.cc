#include "simulator/collective_curve.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "base/csv.h"
#include "base/input_file.h"

namespace llmplan::simulator {
namespace {

std::string_view trim(std::string_view s) {
  const char* kSpace = " \t\r\n";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s, bool comma) {
  std::vector<std::string_view> out;
  if (comma) {
    size_t start = 0;
    while (true) {
      size_t pos = s.find(',', start);
      out.push_back(trim(s.substr(start, pos == std::string_view::npos ? pos : pos - start)));
      if (pos == std::string_view::npos) break;
      start = pos + 1;
    }
    return out;
  }
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_number(std::string_view s, double* out) {
  const std::optional<double> x = csv::parse_decimal(s);
  if (x) *out = *x;
  return x.has_value();
}

// A cell for a message, cut short when long.
std::string shown(std::string_view s) {
  constexpr size_t kMaxShown = 40;
  if (s.size() > kMaxShown) return "\"" + std::string(s.substr(0, kMaxShown)) + "...\"";
  return "\"" + std::string(s) + "\"";
}

bool has_control_character(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One table row: size and the mean of the time columns, in `time_scale_s`
// units.
Status add_row(const std::vector<std::string_view>& cols, size_t expected_cols,
               const std::vector<size_t>& time_cols, double time_scale_s, const std::string& where,
               CollectiveCurve* curve) {
  if (cols.size() != expected_cols) {
    return Status::parse_error(where + ": expected " + std::to_string(expected_cols) +
                               " columns, got " + std::to_string(cols.size()));
  }
  double size = 0;
  if (!parse_number(cols[0], &size) || size <= 0) {
    return Status::parse_error(where + ": bad size " + shown(cols[0]));
  }
  if (!(size <= kMaxCurveBytes)) {
    return Status::parse_error(where + ": size " + shown(cols[0]) + " above 2^64 bytes");
  }
  double sum = 0;
  for (size_t c : time_cols) {
    double t = 0;
    if (!parse_number(cols[c], &t) || t <= 0) {
      return Status::parse_error(where + ": bad time " + shown(cols[c]));
    }
    sum += t;
  }
  if (!curve->bytes.empty() && size <= curve->bytes.back()) {
    return Status::parse_error(where + ": sizes must be strictly increasing");
  }
  if (curve->bytes.size() == kMaxCurvePoints) {
    return Status::parse_error(where + ": more than " + std::to_string(kMaxCurvePoints) +
                               " rows (the limit for a measured curve)");
  }
  const double seconds = sum / static_cast<double>(time_cols.size()) * time_scale_s;
  if (!std::isfinite(seconds) || !(seconds > 0) || seconds > kMaxCurveSeconds) {
    return Status::parse_error(where + ": time out of range");
  }
  curve->bytes.push_back(size);
  curve->seconds.push_back(seconds);
  return Status();
}

}  // namespace

double CollectiveCurve::time_s(double x) const {
  const size_t n = bytes.size();
  if (x <= bytes.front()) return seconds.front();
  if (x <= bytes.back()) {
    size_t hi =
        static_cast<size_t>(std::lower_bound(bytes.begin(), bytes.end(), x) - bytes.begin());
    if (bytes[hi] == x) return seconds[hi];
    const size_t lo = hi - 1;
    const double f = (x - bytes[lo]) / (bytes[hi] - bytes[lo]);
    return seconds[lo] + f * (seconds[hi] - seconds[lo]);
  }
  double slope = 0;  // seconds per byte beyond the largest size
  if (n >= 2) {
    const double half = bytes.back() / 2;
    size_t j =
        static_cast<size_t>(std::upper_bound(bytes.begin(), bytes.end(), half) - bytes.begin());
    j = j == 0 ? 0 : j - 1;
    if (j == n - 1) j = n - 2;
    slope = (seconds.back() - seconds[j]) / (bytes.back() - bytes[j]);
  }
  if (!(slope > 0)) slope = seconds.back() / bytes.back();
  return seconds.back() + slope * (x - bytes.back());
}

Status validate(const CollectiveCurve& curve) {
  if (curve.bytes.empty()) return Status::invalid_argument("points: no points");
  if (curve.bytes.size() > kMaxCurvePoints) {
    return Status::invalid_argument("points: " + std::to_string(curve.bytes.size()) +
                                    " points, more than " + std::to_string(kMaxCurvePoints));
  }
  if (curve.bytes.size() != curve.seconds.size()) {
    return Status::invalid_argument("points: bytes and seconds differ in length");
  }
  for (size_t i = 0; i < curve.bytes.size(); ++i) {
    const std::string at = "points[" + std::to_string(i) + "]";
    if (!std::isfinite(curve.bytes[i]) || curve.bytes[i] <= 0 ||
        curve.bytes[i] > kMaxCurveBytes) {
      return Status::invalid_argument(at + ": bytes must be > 0 and at most 2^64");
    }
    if (!std::isfinite(curve.seconds[i]) || curve.seconds[i] <= 0 ||
        curve.seconds[i] > kMaxCurveSeconds) {
      return Status::invalid_argument(at + ": seconds must be > 0 and at most 1e6");
    }
    if (i > 0 && curve.bytes[i] <= curve.bytes[i - 1]) {
      return Status::invalid_argument(at + ": bytes must be strictly increasing");
    }
  }
  return Status();
}

Status validate(const MeasuredCollectives& collectives) {
  if (collectives.all_reduce.size() > kMaxInNodeCurves) {
    return Status::invalid_argument("all_reduce: " + std::to_string(collectives.all_reduce.size()) +
                                    " curves, more than " + std::to_string(kMaxInNodeCurves));
  }
  size_t points = 0;
  for (const InNodeCurve& c : collectives.all_reduce) points += c.curve.bytes.size();
  if (points > kMaxCurvePoints) {
    return Status::invalid_argument("all_reduce: " + std::to_string(points) +
                                    " points in all, more than " + std::to_string(kMaxCurvePoints));
  }
  for (size_t i = 0; i < collectives.all_reduce.size(); ++i) {
    const InNodeCurve& c = collectives.all_reduce[i];
    const std::string at = "all_reduce[" + std::to_string(i) + "]";
    if (c.group_size < 2) return Status::invalid_argument(at + ".group_size: must be >= 2");
    for (size_t j = 0; j < i; ++j) {
      if (collectives.all_reduce[j].group_size == c.group_size) {
        return Status::invalid_argument(at + ".group_size: " + std::to_string(c.group_size) +
                                        " appears twice");
      }
    }
    LLMPLAN_RETURN_IF_ERROR(validate(c.curve).with_prefix(at));
  }
  return Status();
}

Result<CollectiveCurve> parse_nccl_tests_text(std::string_view text, std::string_view source_name) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const std::string source(source_name);
  CollectiveCurve curve;
  enum class Layout { kUnknown, kCsv, kStdout } layout = Layout::kUnknown;
  size_t expected_cols = 0;
  std::vector<size_t> time_cols;
  double scale_s = 0;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = trim(text.substr(pos, nl == std::string_view::npos ? nl : nl - pos));
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::string where = source + ":" + std::to_string(line_no);
    if (line.empty()) continue;
    if (has_control_character(line)) {
      return Status::parse_error(where + ": control character in the line");
    }
    if (layout == Layout::kUnknown && line.substr(0, 8) == "size(B),") {
      std::vector<std::string_view> cols = split(line, true);
      for (size_t c = 0; c < cols.size(); ++c) {
        if (cols[c] == "time(ns)") time_cols.push_back(c);
      }
      if (time_cols.empty()) return Status::parse_error(where + ": header has no time(ns) column");
      expected_cols = cols.size();
      scale_s = 1e-9;
      layout = Layout::kCsv;
      continue;
    }
    if (line[0] == '#') {
      if (layout != Layout::kUnknown) continue;
      std::vector<std::string_view> cols = split(line.substr(1), false);
      if (cols.size() >= 2 && cols[0] == "size" && cols[1] == "count") {
        for (size_t c = 0; c < cols.size(); ++c) {
          if (cols[c] == "time") time_cols.push_back(c);
        }
        if (time_cols.empty()) return Status::parse_error(where + ": header has no time column");
        expected_cols = cols.size();
        scale_s = 1e-6;
        layout = Layout::kStdout;
      }
      continue;
    }
    if (layout == Layout::kUnknown) {
      if (line.find("NCCL") != std::string_view::npos) continue;
      return Status::parse_error(where +
                                 ": data before an nccl-tests header (expected "
                                 "\"size(B),count,...\" or \"#  size  count ...\")");
    }
    std::vector<std::string_view> cols = split(line, layout == Layout::kCsv);
    if (layout == Layout::kStdout && !is_digits(cols[0]) &&
        line.find("NCCL") != std::string_view::npos) {
      continue;  // NCCL debug log line
    }
    LLMPLAN_RETURN_IF_ERROR(add_row(cols, expected_cols, time_cols, scale_s, where, &curve));
  }
  if (layout == Layout::kUnknown) {
    return Status::parse_error(source + ": no nccl-tests header found");
  }
  if (curve.bytes.empty()) return Status::parse_error(source + ": no data rows");
  return curve;
}

Result<CollectiveCurve> read_nccl_tests_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_nccl_tests_text(text, path);
}

}  // namespace llmplan::simulator
