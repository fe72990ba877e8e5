// The measured rows `llmplan validate` and `llmplan calibrate` read, turned
// into accuracy cases: vTrain's measured CSV (measured_csv.h) or published
// runs files (runs_file.h), with the GPU, cluster and constants the user
// chose, and the notes that say how each row was mapped. The commands' flags
// fill AccuracyInputs; the presets come through PresetAccess, so that this
// folder needs nothing of the command line.
#ifndef LLMPLAN_PLANNER_ACCURACY_ACCURACY_INPUTS_H_
#define LLMPLAN_PLANNER_ACCURACY_ACCURACY_INPUTS_H_

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "simulator/cluster.h"

namespace llmplan::planner {

// How the loaders reach the presets. `load_catalog` gives the catalog (the
// built-in presets plus the user's preset files) and is called afresh by
// each loader, where the rows need it; `resolve_cluster` turns --cluster /
// --gpu into the cluster whose GPU vTrain's rows run on (the command line's
// rule for those flags). Both must be set.
struct PresetAccess {
  std::function<Result<presets::Catalog>()> load_catalog;
  std::function<Result<simulator::Cluster>(const presets::Catalog& catalog,
                                           const std::string& cluster_name,
                                           const std::string& gpu_name)>
      resolve_cluster;
};

// What to read: the files (all of one kind), and the choices that apply to
// every row ("" for none): a GPU preset (--gpu), a cluster preset
// (--cluster), a constants JSON (--constants) and, for runs files, the
// models table (--models; default: models.csv beside the file).
struct AccuracyInputs {
  std::vector<std::string> files;
  std::string gpu, cluster, constants, models;
  PresetAccess presets;
};

// Whether the inputs are runs files (true) or vTrain measured CSVs (false).
// InvalidArgument "FILE: mixes a runs file and a vTrain measured CSV; ..."
// when the files disagree, "--models: only for runs files ..." when a models
// table is given for vTrain's CSV; the files' read errors.
Result<bool> reads_runs_files(const AccuracyInputs& in);

// The cases of runs files: every row appended to *runs, the expressible
// ones returned as cases, with the GPU / cluster / constants `in` chooses.
// Where the rows name their own cluster (the Blackwell form), --gpu alone
// selects the rows of that GPU kind (and drops the other GPUs' rows from
// *runs too). Appends the mapping notes to *notes and sets *gpu_name to the
// first case's GPU. InvalidArgument when no row is expressible or no row ran
// on --gpu; the files' and presets' errors.
Result<std::vector<AccuracyCase>> load_runs_cases(const AccuracyInputs& in,
                                                  std::vector<PublishedRun>* runs,
                                                  std::vector<std::string>* notes,
                                                  std::string* gpu_name);

// The cases of vTrain measured CSVs (every file's rows, in order), on the
// GPU of --gpu / --cluster when given (with vTrain's link bandwidths), with
// --constants applied. Appends the notes on the conditions to *notes and
// sets *gpu_name. Errors: the files', the presets'.
Result<std::vector<AccuracyCase>> load_measured_cases(const AccuracyInputs& in,
                                                      std::vector<std::string>* notes,
                                                      std::string* gpu_name);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_ACCURACY_INPUTS_H_
