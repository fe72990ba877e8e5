// Ceres solver settings shared by the calibration fits (calibrate()'s full and MoE fits, the
// restricted Blackwell fit): dense QR on the few constants, a relative cost tolerance of 1e-6, no
// solver log; and the pieces those fits share (the Huber scale, parameter bounds, the in-sample
// MAPE).
#pragma once

#include <ceres/solver.h>

#include <vector>

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

// The Huber loss's scale, on log(predicted / measured), of every fit.
inline constexpr double kHuberDelta = 0.03;

// A parameter's bounds, in solver units.
struct Bounds {
  double lo, hi;
};

// MAPE of `cases` predicted with `constants`.
inline Result<double> in_sample_mape(const std::vector<AccuracyCase>& cases,
                                     const AccuracyConstants& constants) {
  std::vector<AccuracyCase> fitted = cases;
  apply_constants(constants, &fitted);
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<double> pred, predict_iteration_times(fitted, nullptr));
  std::vector<double> meas;
  for (const AccuracyCase& c : cases) meas.push_back(c.run.iteration_time_s);
  return summarise(pred, meas).mape;
}

}  // namespace llmplan::planner
