// Progress of a long command (the planner, sweep, schedule, calibrate, fit
// with a bootstrap), printed on stderr so that stdout stays the result.
//
// Two forms. On a terminal, one status line redrawn in place ("\r"), at most
// ten times a second. Elsewhere (a log file, a pipe, CI) nothing, unless the
// user asked with --progress: then whole lines, at most one a second plus the
// first and the last, so that a log stays short and readable.
#ifndef LLMPLAN_PLANNER_CLI_PROGRESS_H_
#define LLMPLAN_PLANNER_CLI_PROGRESS_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace llmplan::planner {

// One command's progress display. Not thread-safe: callers that report from
// OpenMP loops serialise the calls (a critical section), as search() does.
// Writes only to stderr and never fails the command.
class Progress {
 public:
  // `what` prefixes every line ("sweep"); `unit` names what is counted
  // ("plans", "resamples"). `requested` is --progress: lines also when
  // stderr is not a terminal.
  Progress(std::string what, std::string unit, bool requested);
  ~Progress();  // ends a redrawn terminal line with a newline
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // False when nothing would be printed (not a terminal, not requested):
  // callers may then skip the work of building messages.
  bool enabled() const { return mode_ != Mode::kOff; }

  // `done` of `total` units: count, percentage, rate, elapsed time and ETA.
  // A new `total` starts a new pass (the planner's coarse and fine grids):
  // its rate and ETA are measured from the pass's own start, which is now
  // when done == 0, else when the previous pass ended.
  // REQUIRES: 0 <= done <= total.
  void update(long done, long total);
  // A free-form status ("fold 2 of 5, start 1 of 1, iteration 12, cost 1.96").
  // `final` forces the line out even inside the rate limit.
  void message(const std::string& text, bool final = false);

 private:
  enum class Mode { kOff, kTerminal, kLines };
  bool due(bool final);
  void emit(const std::string& text);

  std::string what_, unit_;
  Mode mode_;
  bool open_line_ = false;  // a terminal line is waiting for its newline
  std::chrono::steady_clock::time_point start_, last_, pass_start_, last_update_;
  long pass_total_ = -1;
  bool printed_ = false;
};

// The counter form as a callback for APIs that take one (SearchOptions,
// CurveOptions, FitOptions): null when `progress` is disabled, so callers
// skip their critical sections. The callback shares ownership of `progress`.
std::function<void(long done, long total)> counter(std::shared_ptr<Progress> progress);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_PROGRESS_H_
