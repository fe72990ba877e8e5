#include "reports/format.h"

#include <fmt/format.h>

#include <cmath>

namespace llmplan::reports {

std::string bytes_human(double bytes) {
  const double a = std::fabs(bytes);
  if (a >= 1024.0 * 1024 * 1024 * 1024) return fmt::format("{:.1f} TiB", bytes / std::pow(1024.0, 4));
  if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", bytes / std::pow(1024.0, 3));
  if (a >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  if (a >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string seconds_human(double s) {
  const double a = std::fabs(s);
  if (a >= 2 * 86400.0) return fmt::format("{:.1f} days", s / 86400.0);
  if (a >= 2 * 3600.0) return fmt::format("{:.1f} h", s / 3600.0);
  if (a >= 120.0) return fmt::format("{:.1f} min", s / 60.0);
  if (a >= 1.0) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::string count_human(double n) {
  const double a = std::fabs(n);
  if (a >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
  if (a >= 1e9) return fmt::format("{:.1f}B", n / 1e9);
  if (a >= 1e6) return fmt::format("{:.0f}M", n / 1e6);
  if (a >= 1e3) return fmt::format("{:.0f}K", n / 1e3);
  return fmt::format("{:.0f}", n);
}

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

std::string usd_human(double usd) {
  const double a = std::fabs(usd);
  if (a >= 1e9) return fmt::format("${:.2f}B", usd / 1e9);
  if (a >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  if (a >= 1e3) return fmt::format("${:.1f}K", usd / 1e3);
  return fmt::format("${:.2f}", usd);
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+%@") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace llmplan::reports
