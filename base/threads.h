// How many OpenMP threads a parallel loop opens.
//
// A thread without work waits in libgomp, which by default spins (about
// 300,000 rounds) before it sleeps: on a machine with a busy core, that
// spinning takes the CPU from the thread that works. So no loop opens more
// threads than it has items. OMP_WAIT_POLICY=PASSIVE (sleep at once) would
// help the tail of longer loops too, but libgomp reads it once, in its
// library constructor, and glibc resets the environment after an
// executable's .preinit_array runs, so llmplan cannot set it for itself:
// users who share cores may export it.
#ifndef LLMPLAN_BASE_THREADS_H_
#define LLMPLAN_BASE_THREADS_H_

#include <algorithm>

namespace llmplan {

// The threads for a parallel loop over `items` items when the user asked
// for `requested` (0: OpenMP's default, `default_threads`): never more
// threads than items, so no thread is started only to wait at the closing
// barrier (a one-plan sweep runs on one thread), and at least 1.
// Thread-safe (pure).
inline int loop_threads(int requested, int default_threads, long items) {
  const long want = requested > 0 ? requested : default_threads;
  return static_cast<int>(std::max(1L, std::min(want, items)));
}

}  // namespace llmplan

#endif  // LLMPLAN_BASE_THREADS_H_
