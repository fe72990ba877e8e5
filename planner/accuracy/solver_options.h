// Ceres solver settings shared by the calibration fits (calibrate()'s full and MoE fits, the
// restricted Blackwell fit): dense QR on the few constants, a relative cost tolerance of 1e-6, no
// solver log.
#pragma once

#include <ceres/solver.h>

#include "planner/accuracy/accuracy.h"

namespace llmplan::planner {

// Options for one polish from a screened start: at most `max_iterations` iterations on
// `options.num_threads` threads.
inline ceres::Solver::Options polish_solver_options(const CalibrationOptions& options,
                                                    int max_iterations) {
  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.max_num_iterations = max_iterations;
  solver.num_threads = options.num_threads;
  solver.function_tolerance = 1e-6;
  solver.logging_type = ceres::SILENT;
  return solver;
}

}  // namespace llmplan::planner
