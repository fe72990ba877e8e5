// The event engine: tasks on in-order streams with explicit dependencies.
//
// Each device owns a few streams (compute, tensor-parallel communication,
// pipeline sends in each direction, data-parallel communication). A stream
// runs its tasks one at a time in the order they were added, like a CUDA
// stream; a task also waits for every task it depends on. Tasks do not
// contend for bandwidth, so the discrete-event simulation of this system
// reduces exactly to earliest start times over the dependency DAG (stream
// order included): start = max(end of the stream's previous task, end of
// every dependency).
//
// Tasks are added in a topological order: a task's dependencies are added
// right after it and are all earlier tasks (checked). The builder keeps that
// order by emitting pipeline work as a wavefront across stages; run() is
// then one deterministic pass, O(tasks + edges).
#ifndef LLMPLAN_SIMULATOR_ENGINE_H_
#define LLMPLAN_SIMULATOR_ENGINE_H_

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace llmplan::simulator {

using TaskId = int32_t;

// How a TaskGraph computes start times.
enum class Replay {
  // Each task's start as it is added (its dependencies are all earlier
  // tasks, so their times are final): no edges are stored and run() only
  // hands the times over. The fast path.
  kEager,
  // Edges stored, start times computed by run() in one pass over the graph:
  // the reference event engine, kept to check kEager against.
  kDeferred,
};

// A growing graph of tasks. Not thread-safe; each simulation builds its own.
// Both replays give bit-identical start times: a start is the maximum of the
// same sums (a predecessor's start + duration), and max is exact.
class TaskGraph {
 public:
  explicit TaskGraph(int num_streams, Replay replay = Replay::kDeferred)
      : replay_(replay), last_on_stream_(num_streams, -1) {}

  // Appends a task to the end of `stream`. Returns its id (dense, from 0).
  TaskId add_task(int stream, double duration_s);
  // `after` may start only when `before` has ended.
  // REQUIRES: `after` is the most recently added task and before < after.
  void add_dependency(TaskId before, TaskId after);
  // kEager only: `after` may start only at `end_s`, the end of work kept
  // outside the graph (the fast path's pipeline passes and transfers).
  // REQUIRES: `after` is the most recently added task.
  void add_dependency_on_time(double end_s, TaskId after);

  // Empties the graph for reuse, keeping its memory: a graph of
  // `num_streams` streams replayed by `replay`.
  void reset(int num_streams, Replay replay);
  // Frees the memory kept for reuse when it exceeds `max_tasks` tasks.
  void trim(size_t max_tasks);

  int num_tasks() const { return static_cast<int>(duration_.size()); }
  int num_streams() const { return static_cast<int>(last_on_stream_.size()); }
  double duration_s(TaskId t) const { return duration_[t]; }
  int stream(TaskId t) const { return stream_[t]; }
  // The task before `t` on its stream, or -1.
  TaskId stream_predecessor(TaskId t) const { return prev_on_stream_[t]; }
  void reserve(size_t tasks, size_t edges);

  // Start times of every task.
  void run(std::vector<double>* start_s) const;
  // kEager: the start time of task t (final once every dependency of t has
  // been added). kDeferred: 0 until run().
  double eager_start_s(TaskId t) const { return start_[t]; }
  const std::vector<double>& eager_starts() const { return start_; }
  Replay replay() const { return replay_; }

 private:
  Replay replay_;
  std::vector<double> start_;  // kEager only
  std::vector<double> duration_;
  std::vector<int32_t> stream_;
  std::vector<TaskId> prev_on_stream_;
  std::vector<TaskId> last_on_stream_;
  std::vector<int32_t> dep_offset_;  // task t's dependencies: deps_[dep_offset_[t] ..]
  std::vector<TaskId> deps_;
};

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_ENGINE_H_
