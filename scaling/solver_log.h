// Keeps the solver's own log lines (Ceres logs through glog) off the
// terminal. llmplan reports every solver outcome itself, in one line, so
// glog's lines ("E... solver.cc:508] Terminating: ...", "WARNING: Logging
// before InitGoogleLogging() ...") would only be noise.
#ifndef LLMPLAN_SCALING_SOLVER_LOG_H_
#define LLMPLAN_SCALING_SOLVER_LOG_H_

namespace llmplan::scaling {

// Raises glog's minimum log level to FATAL for the whole process, so only a
// solver crash (a failed CHECK inside Ceres) still prints. Process-wide
// state: call it once, from main, before any fit runs. Not thread-safe.
void silence_solver_logging();

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_SOLVER_LOG_H_
