#include "simulator/engine.h"

#include <algorithm>

namespace llmplan::simulator {

TaskId TaskGraph::add_task(int stream, double duration_s) {
  LLMPLAN_CHECK(stream >= 0 && stream < num_streams());
  LLMPLAN_CHECK(duration_s >= 0);
  const TaskId id = static_cast<TaskId>(duration_.size());
  if (replay_ == Replay::kEager) {
    const TaskId prev = last_on_stream_[stream];
    start_.push_back(prev >= 0 ? start_[prev] + duration_[prev] : 0.0);
  }
  duration_.push_back(duration_s);
  stream_.push_back(stream);
  prev_on_stream_.push_back(last_on_stream_[stream]);
  if (replay_ == Replay::kDeferred) dep_offset_.push_back(static_cast<int32_t>(deps_.size()));
  last_on_stream_[stream] = id;
  return id;
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
  LLMPLAN_CHECK(after == num_tasks() - 1 && before >= 0 && before < after);
  if (prev_on_stream_[after] == before) return;  // stream order already implies it
  if (replay_ == Replay::kEager) {
    start_[after] = std::max(start_[after], start_[before] + duration_[before]);
    return;
  }
  deps_.push_back(before);
}

void TaskGraph::add_dependency_on_time(double end_s, TaskId after) {
  LLMPLAN_CHECK(replay_ == Replay::kEager && after == num_tasks() - 1);
  start_[after] = std::max(start_[after], end_s);
}

void TaskGraph::reset(int num_streams, Replay replay) {
  replay_ = replay;
  last_on_stream_.assign(num_streams, -1);
  duration_.clear();
  stream_.clear();
  prev_on_stream_.clear();
  dep_offset_.clear();
  deps_.clear();
  start_.clear();
}

void TaskGraph::trim(size_t max_tasks) {
  if (duration_.capacity() <= max_tasks && deps_.capacity() <= 2 * max_tasks) return;
  *this = TaskGraph(0, replay_);
}

void TaskGraph::reserve(size_t tasks, size_t edges) {
  duration_.reserve(tasks);
  stream_.reserve(tasks);
  prev_on_stream_.reserve(tasks);
  if (replay_ == Replay::kEager) {
    start_.reserve(tasks);
    return;
  }
  dep_offset_.reserve(tasks);
  deps_.reserve(edges);
}

void TaskGraph::run(std::vector<double>* start_s) const {
  const int n = num_tasks();
  if (replay_ == Replay::kEager) {
    *start_s = start_;
    return;
  }
  start_s->resize(n);
  double* start = start_s->data();
  for (TaskId t = 0; t < n; ++t) {
    double s = 0.0;
    const TaskId prev = prev_on_stream_[t];
    if (prev >= 0) s = start[prev] + duration_[prev];
    const int32_t end = t + 1 < n ? dep_offset_[t + 1] : static_cast<int32_t>(deps_.size());
    for (int32_t i = dep_offset_[t]; i < end; ++i) {
      const TaskId d = deps_[i];
      s = std::max(s, start[d] + duration_[d]);
    }
    start[t] = s;
  }
}

}  // namespace llmplan::simulator
