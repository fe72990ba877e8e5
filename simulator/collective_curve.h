// Measured size -> time curves of one collective on one communicator.
//
// A CollectiveCurve is what nccl-tests or llmplan-profile measure: for each
// buffer size (bytes, in nccl-tests' sense -- see CollectiveDesc::bytes in
// cost_model.h), the seconds from launch until every rank has its result.
// Both the ProfileTable (profile_table.h) and the alpha-beta collective model
// (measured in-node all-reduce curves such as
// data/vtrain/allreduce_lut) read durations from it.
//
// No Boost here: this header is plain C++ for any module.
#ifndef LLMPLAN_SIMULATOR_COLLECTIVE_CURVE_H_
#define LLMPLAN_SIMULATOR_COLLECTIVE_CURVE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace llmplan::simulator {

// The most points one measured curve may have (vTrain's tables have 1,024;
// nccl-tests at doubling sizes a few dozen), and the most points all curves
// of one MeasuredCollectives may have together. Copies of the curves travel
// with every cluster, so the caps bound memory.
inline constexpr size_t kMaxCurvePoints = 100000;
// Largest size and time of a curve point: nccl-tests sizes are 64-bit byte
// counts, and a collective of more than a million seconds is not a
// measurement; the bounds keep every interpolated or extrapolated time finite.
inline constexpr double kMaxCurveBytes = 18446744073709551616.0;  // 2^64
inline constexpr double kMaxCurveSeconds = 1e6;
// The most in-node curves one MeasuredCollectives may have.
inline constexpr size_t kMaxInNodeCurves = 1024;

// Points (bytes[i], seconds[i]) of one measured curve, sorted by size.
// Valid when validate() says so: one to kMaxCurvePoints points, equal
// lengths, bytes strictly increasing, finite and > 0, seconds finite and > 0. Times need not be
// monotone (measurements are noisy); interpolation keeps what was measured.
//
// A plain value: cheap to move, safe to read from many threads.
struct CollectiveCurve {
  std::vector<double> bytes;
  std::vector<double> seconds;

  // Seconds for a buffer of `bytes`:
  //  - at or below the smallest measured size: the time of the smallest size
  //    (small collectives are latency-bound; a smaller buffer is not faster);
  //  - between measured sizes: piecewise-linear interpolation in bytes;
  //  - beyond the largest size: the largest size's time plus the extra bytes
  //    at the bandwidth of the last segment. The last segment is the secant
  //    from the largest measured size <= half the largest size to the largest
  //    size: for curves measured at doubling sizes (llmplan-profile,
  //    nccl-tests -f 2) exactly the last segment; on dense grids (vTrain's
  //    1 MiB steps) a wide secant, so that noise between neighbouring points
  //    does not set the slope. If that secant is not increasing, the average
  //    bandwidth of the largest point (bytes/seconds) is used instead.
  // REQUIRES: validate(*this).ok(). Thread-safe (const, no state).
  double time_s(double bytes) const;

  friend bool operator==(const CollectiveCurve&, const CollectiveCurve&) = default;
};

// OK for a usable curve; otherwise InvalidArgument naming the first bad
// point as "points[i]".
Status validate(const CollectiveCurve& curve);

// A measured all-reduce curve on `group_size` GPUs of one node.
struct InNodeCurve {
  int group_size = 0;
  CollectiveCurve curve;

  friend bool operator==(const InNodeCurve&, const InNodeCurve&) = default;
};

// The measured collectives of one node type (the "collectives" presets, e.g.
// "a100-nvswitch-vtrain": vTrain's nccl-tests all-reduce on 2..8 A100s of a
// DGX A100). A cluster carries them (Cluster::collectives), so every
// simulation on that cluster uses them: CollectiveModel takes the curve of an
// in-node all-reduce whose group size has one, and the alpha-beta formula
// for everything else (other kinds, other sizes, groups spanning nodes).
//
// Below a curve's smallest measured size (1 MiB for vTrain's) the time of the
// smallest size is used (CollectiveCurve::time_s): such all-reduces are
// latency-bound, and the measured floor (e.g. 92 us on 8 GPUs) already holds
// the launch and synchronisation cost a smaller buffer also pays.
//
// A plain value; empty (no name, no curves) means "formula only".
struct MeasuredCollectives {
  std::string name;                     // the preset it came from; empty if none
  std::vector<InNodeCurve> all_reduce;  // at most one per group size

  bool empty() const { return all_reduce.empty(); }
  friend bool operator==(const MeasuredCollectives&, const MeasuredCollectives&) = default;
};

// OK when every curve is valid, group sizes are >= 2 and distinct, there are
// at most kMaxInNodeCurves curves and kMaxCurvePoints points in all;
// otherwise InvalidArgument naming "all_reduce[i]" (or "all_reduce").
Status validate(const MeasuredCollectives& collectives);

// Reads a measured curve written by nccl-tests. Two layouts are accepted:
//  1. vTrain's LUT files (data/vtrain/allreduce_lut/*/AR_GPU{N}_*):
//     a header line `size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)`
//     then comma-separated rows; times in nanoseconds.
//  2. nccl-tests' own stdout (all_reduce_perf ... > file): `#` comment lines,
//     the column header line `#  size  count  type  redop  root  time  algbw
//     busbw #wrong  time ...`, whitespace-separated rows, times in
//     microseconds. Lines from NCCL's debug log (containing "NCCL") are
//     skipped.
// Each row's time is the mean of its out-of-place and in-place times. A UTF-8
// byte-order mark and CRLF line endings are accepted.
//
// Numbers are decimal (base/csv.h's parse_decimal: no hex, inf or nan).
//
// Errors: NotFound/IoError/InvalidArgument for the file (read with
// base/input_file.h: at most 16 MiB); ParseError naming "path:line"
// for a missing header, a malformed row, sizes not strictly increasing, or
// more than kMaxCurvePoints rows; an empty table is an error. Thread-safe
// (reads only its arguments).
Result<CollectiveCurve> read_nccl_tests_file(const std::string& path);

// The same, from text already in memory; `source_name` prefixes messages.
Result<CollectiveCurve> parse_nccl_tests_text(std::string_view text, std::string_view source_name);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_COLLECTIVE_CURVE_H_
