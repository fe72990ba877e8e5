// How many OpenMP threads a parallel loop opens.
#ifndef LLMPLAN_PLANNER_THREADS_H_
#define LLMPLAN_PLANNER_THREADS_H_

#include <algorithm>

namespace llmplan::planner {

// The threads for a parallel loop over `items` items when the user asked
// for `requested` (0: OpenMP's default, `default_threads`): never more
// threads than items, so no thread is started only to wait at the closing
// barrier (a one-plan sweep runs on one thread), and at least 1.
// Thread-safe (pure).
inline int loop_threads(int requested, int default_threads, long items) {
  const long want = requested > 0 ? requested : default_threads;
  return static_cast<int>(std::max(1L, std::min(want, items)));
}

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_THREADS_H_
