// Training jobs of a shared cluster (`llmplan schedule`): what each job
// trains, when it arrives and by when it must finish, read from a job file
// (JSON or CSV) or drawn by the synthetic trace generator.
//
// Job file formats (times are hours from the start of the trace):
//
//   JSON: {"jobs": [{"name": "a", "model": "gpt3-175b", "tokens": 3e9,
//           "arrival_h": 0, "deadline_h": 12, "min_gpus": 64,
//           "max_gpus": 512, "gpus": 256}, ...]}
//     "model" is a preset name or a model object (simulator/model_json.h
//     fields; missing fields take the defaults below). name, min_gpus,
//     max_gpus and gpus are optional. Unknown keys are errors.
//
//   CSV: a header row naming the columns, then one job per row:
//     name, model, tokens, arrival_h, deadline_h   (required)
//     min_gpus, max_gpus, gpus                     (optional; empty cell = unset)
//     "model" is a preset name or a shape LxHxA (layers x hidden x heads,
//     e.g. 24x2048x16). The file is CSV as base/csv.h reads it (the
//     rules every llmplan CSV follows: RFC 4180 quoting on one line, decimal
//     numbers only, a UTF-8 BOM, CRLF line endings and blank lines accepted).
//
// A job file holds at most kMaxJobsPerFile jobs.
//
// A model given by shape is a GPT (GeLU 4h, learned positions, tied
// embeddings) with sequence 2048 and vocabulary 51200.
#ifndef LLMPLAN_PLANNER_STUDY_SCHEDULE_JOB_H_
#define LLMPLAN_PLANNER_STUDY_SCHEDULE_JOB_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "presets/catalog.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::planner::schedule {

constexpr int kShapeSeqLength = 2048;
constexpr int kShapeVocabSize = 51200;
// The most jobs a job file may hold.
constexpr size_t kMaxJobsPerFile = 100000;
// Job files give times in hours; a Job holds seconds = hours * kSecondsPerHour.
constexpr double kSecondsPerHour = 3600.0;

// One training job. A plain value.
struct Job {
  std::string name;            // unique within a trace; default "job<N>" (1-based row)
  std::string model_name;      // the preset name or the shape as written
  simulator::Model model;
  double tokens = 0;           // training tokens, > 0
  double arrival_s = 0;        // >= 0
  double deadline_s = 0;       // absolute; > arrival_s
  int min_gpus = 0;            // 0: no lower bound
  int max_gpus = 0;            // 0: no upper bound
  int gpus = 0;                // requested size for the fixed-size policies; 0: unset
  int line = 0;                // where it was read (CSV line or JSON index + 1)
};

// Checks one job's own values: tokens > 0 and finite, arrival >= 0,
// deadline > arrival, gpu counts in [0, Plan::kMaxGpus] and min <= max when both set, gpus
// within them, the model valid. InvalidArgument "<where>: <field> ..."
// naming the first fault. Also used by the readers.
Status validate_job(const Job& job, const std::string& where);
// As validate_job, naming the field as a member of a JSON path:
// "<path>.<field>: <what>" (e.g. "jobs.json: jobs[3].tokens: ...").
Status validate_job_at_path(const Job& job, const std::string& path);

// The model of a shape: a GPT (GeLU 4h, learned positions, tied embeddings,
// biased linears) with kShapeSeqLength and kShapeVocabSize, named
// "LxHxA". Not validated (see simulator::validate). Thread-safe.
simulator::Model shape_model(int layers, int hidden, int heads);
// "LxHxA" of any model, e.g. "96x12288x96".
std::string shape_string(const simulator::Model& model);

// Resolves the model of a job file: a shape "LxHxA" (three positive
// integers joined by 'x'), else a model preset of `catalog`. Returns
// InvalidArgument for a shape whose numbers are out of range or whose heads
// do not divide the hidden size; NotFound for an unknown preset, listing
// the model presets and mentioning the shape form. Messages do not name a
// file (callers prefix "<file>:<line>: model: "). Thread-safe.
Result<simulator::Model> resolve_model(std::string_view spec, const presets::Catalog& catalog);

// Reads a job file; the format is chosen by the extension (.json, else CSV)
// or, failing that, by the first non-blank character ('{' = JSON).
// (Precisely: ".json" is JSON and ".csv" is CSV, case-insensitively; any
// other name is JSON when its first non-blank character after an optional
// BOM is '{', else CSV.) NotFound "<path>: cannot open file"; ParseError
// "<path>: empty file" for a blank file.
// Models are resolved against `catalog`. Errors are one line naming the file
// and the line (CSV) or JSON path: malformed syntax, an unknown key or
// column, a missing field, an unknown model (listing the known ones),
// negative tokens, a deadline not after the arrival, duplicate names, or no
// jobs at all, more than kMaxJobsPerFile jobs. The jobs come back sorted by arrival
// (stable: file order breaks ties). The file is read with
// base/input_file.h (at most 16 MiB).
Result<std::vector<Job>> read_jobs_file(const std::string& path, const presets::Catalog& catalog);
// The two formats, from text in memory; `source` names it in messages.
Result<std::vector<Job>> read_jobs_json(const std::string& text, const std::string& source,
                                        const presets::Catalog& catalog);
Result<std::vector<Job>> read_jobs_csv(const std::string& text, const std::string& source,
                                       const presets::Catalog& catalog);

// The trace as CSV in the layout read_jobs_csv reads back to equal jobs
// (every field but `line`; times are written as the shortest hours that
// read back to the same seconds, unset GPU bounds as empty cells). The
// model column is model_name, so jobs whose model came from a JSON model
// object (model_name is then its shape "LxHxA") read back as the default
// GPT of that shape. Names holding a comma, quote or edge space are quoted.
std::string jobs_to_csv(const std::vector<Job>& jobs);

// Most jobs one schedule study takes (generated or read from a file): the
// cluster simulation's time grows faster than linearly with the jobs (about
// 25 s of CPU for 10,000 jobs and the four policies on 64 GPUs).
inline constexpr int kMaxJobs = 10000;

// Settings of the synthetic trace generator.
struct GenerateOptions {
  int num_jobs = 0;  // 1 .. kMaxJobs
  uint64_t seed = 1;
  double mean_interarrival_s = 1800;   // Poisson arrivals: exponential gaps
  double min_duration_s = 2 * 3600.0;  // ideal run time drawn log-uniformly
  double max_duration_s = 24 * 3600.0; //   in [min, max]
  double min_slack = 1.5;              // deadline = arrival + slack * ideal,
  double max_slack = 3.0;              //   slack uniform in [min, max]
  int cluster_gpus = 1024;             // requests never exceed this
  int gpus_per_node = 8;
  double peak_flops = 312e12;          // of one GPU, for the ideal time
  double ideal_mfu = 0.45;             // assumed utilisation for the ideal time
};

// A synthetic trace: Poisson arrivals; sizes drawn from a mix of GPT-style
// models from 1.3B to 175B (more small jobs than large, as on real
// clusters); each job requests a node-multiple GPU count that grows with its
// size; its tokens are set so that the ideal run time at that request
// (6 N D / (gpus * peak * ideal_mfu)) is log-uniform in [min, max] duration;
// its deadline is arrival + slack * ideal time. Deterministic for a seed on
// every platform (own PRNG and distributions, no <random> distributions).
// InvalidArgument naming the option when an option is out of range.
//
// Details: the first job arrives at 0; names are "job1".."jobN", the number
// zero-padded to the width of N ("job001" for N = 128); model_name is the
// shape "LxHxA" (so the trace round-trips through jobs_to_csv); gpus is the
// request and min_gpus/max_gpus are unset (0); tokens are whole numbers;
// `line` is the 1-based index. Shapes (GPT-3 style, heads divisible by 8):
// 1.3B 24x2048x16, 2.7B 32x2560x32, 6.7B 32x4096x32, 13B 40x5120x40,
// 30B 48x7168x56, 70B 80x8192x64, 175B 96x12288x96, drawn with weights
// 25/20/18/15/10/7/5 %; requests are powers of two (rounded up to whole
// nodes, capped at the largest node multiple <= cluster_gpus) from
// 8-32, 16-64, 32-128, 64-256, 64-256, 128-512 and 128-512 GPUs.
Result<std::vector<Job>> generate_jobs(const GenerateOptions& options);

}  // namespace llmplan::planner::schedule

#endif  // LLMPLAN_PLANNER_STUDY_SCHEDULE_JOB_H_
