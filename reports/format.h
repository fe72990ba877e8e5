// Number formatting shared by every report: units people read at a glance.
#ifndef LLMPLAN_REPORTS_FORMAT_H_
#define LLMPLAN_REPORTS_FORMAT_H_

#include <string>

namespace llmplan::reports {

// "512 MiB", "61.2 GiB".
std::string bytes_human(double bytes);
// "350 ms", "12.3 s", "4.2 h", "31.5 days".
std::string seconds_human(double seconds);
// "175.0B", "6.7B", "350M" parameters or tokens.
std::string count_human(double count);
// "45.1 %" of a fraction.
std::string percent(double fraction);
// "$1.23M", "$45,600".
std::string usd_human(double usd);
// `s` as one word of a POSIX shell command line: unchanged when it has only
// safe characters (letters, digits, -_./=:,+%@), else in single quotes.
std::string shell_quote(const std::string& s);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_FORMAT_H_
