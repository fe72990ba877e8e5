#include "simulator/engine.h"

#include <algorithm>

namespace llmplan::simulator {

TaskId TaskGraph::add_task(int stream, double duration_s) {
  LLMPLAN_CHECK(stream >= 0 && stream < num_streams());
  LLMPLAN_CHECK(duration_s >= 0);
  const TaskId id = static_cast<TaskId>(duration_.size());
  duration_.push_back(duration_s);
  stream_.push_back(stream);
  prev_on_stream_.push_back(last_on_stream_[stream]);
  dep_offset_.push_back(static_cast<int32_t>(deps_.size()));
  last_on_stream_[stream] = id;
  return id;
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
  LLMPLAN_CHECK(after == num_tasks() - 1 && before >= 0 && before < after);
  if (prev_on_stream_[after] == before) return;  // stream order already implies it
  deps_.push_back(before);
}

void TaskGraph::reserve(size_t tasks, size_t edges) {
  duration_.reserve(tasks);
  stream_.reserve(tasks);
  prev_on_stream_.reserve(tasks);
  dep_offset_.reserve(tasks);
  deps_.reserve(edges);
}

void TaskGraph::run(std::vector<double>* start_s) const {
  const int n = num_tasks();
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
