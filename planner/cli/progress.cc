#include "planner/cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace llmplan::planner {
namespace {

using Clock = std::chrono::steady_clock;

std::string duration_text(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

}  // namespace

Progress::Progress(std::string what, std::string unit, bool requested)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      mode_(isatty(STDERR_FILENO) ? Mode::kTerminal : requested ? Mode::kLines : Mode::kOff),
      start_(Clock::now()),
      last_(start_),
      pass_start_(start_),
      last_update_(start_) {}

Progress::~Progress() {
  if (open_line_) std::fputs("\n", stderr);
}

bool Progress::due(bool final) {
  if (mode_ == Mode::kOff) return false;
  const Clock::time_point now = Clock::now();
  const auto limit = mode_ == Mode::kTerminal ? std::chrono::milliseconds(100)
                                              : std::chrono::milliseconds(1000);
  if (!final && printed_ && now - last_ < limit) return false;
  last_ = now;
  printed_ = true;
  return true;
}

void Progress::emit(const std::string& text) {
  if (mode_ == Mode::kTerminal) {
    // Redraw in place; "\033[K" clears what a longer previous line left.
    std::fprintf(stderr, "\r%s: %s\033[K", what_.c_str(), text.c_str());
    open_line_ = true;
  } else {
    std::fprintf(stderr, "%s: %s\n", what_.c_str(), text.c_str());
  }
  std::fflush(stderr);
}

void Progress::update(long done, long total) {
  bool final = done >= total;
  if (total != pass_total_) {  // a new pass: begun now (done == 0) or when the last one ended
    if (done == 0) {
      pass_start_ = Clock::now();
    } else if (pass_total_ >= 0) {
      pass_start_ = last_update_;
    }
    pass_total_ = total;
    final = true;
  }
  last_update_ = Clock::now();
  if (!due(final)) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double pass_s = std::chrono::duration<double>(Clock::now() - pass_start_).count();
  const double rate = pass_s > 0 ? static_cast<double>(done) / pass_s : 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%ld/%ld %s (%.0f %%)", done, total, unit_.c_str(),
                total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0);
  std::string text = buf;
  if (done > 0) {
    std::snprintf(buf, sizeof buf, ", %.1f/s", rate);
    text += buf;
  }
  text += ", elapsed " + duration_text(elapsed);
  if (!final && rate > 0) text += ", ETA " + duration_text(static_cast<double>(total - done) / rate);
  emit(text);
  if (done >= total && mode_ == Mode::kTerminal) {
    std::fputs("\n", stderr);
    open_line_ = false;
  }
}

void Progress::message(const std::string& text, bool final) {
  if (!due(final)) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  emit(text + " (elapsed " + duration_text(elapsed) + ")");
}

std::function<void(long, long)> counter(std::shared_ptr<Progress> progress) {
  if (!progress || !progress->enabled()) return nullptr;
  return [progress](long done, long total) { progress->update(done, total); };
}

}  // namespace llmplan::planner
