// Splitting one command's work over several processes with MPI, the
// distributed engine a cluster already has (Open MPI, MPICH, Slurm's srun).
//
// MPI is optional at build time, like CUDA: LLMPLAN_MPI=AUTO (the default)
// builds it in when CMake finds an MPI library, ON requires it, OFF leaves
// it out. Without it, or when a process was not started by an MPI launcher
// (mpirun, mpiexec, srun), the process group is this process alone and
// every function below is a cheap local operation, so a command runs the
// same on a laptop and on a cluster.
//
// Only a command that splits work (`frontier`) joins the group; every other
// command never touches MPI. Collectives here are blocking and must be
// called by every rank, in the same order, the same number of times: the
// callers run the same deterministic driver on every rank, so they do.
#ifndef LLMPLAN_PLANNER_STUDY_DISTRIBUTED_H_
#define LLMPLAN_PLANNER_STUDY_DISTRIBUTED_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace llmplan::planner {

// This process's place among the processes of one run.
struct ProcessGroup {
  int rank = 0;      // 0 .. size - 1; rank 0 writes the results
  int size = 1;      // processes in the run
  bool mpi = false;  // joined through MPI (false: a group of one)
};

// True when this build has MPI (LLMPLAN_MPI found it); "mpi" or "no mpi" in
// `llmplan --version`.
bool built_with_mpi();
// The MPI library's name and version ("Open MPI v4.1.4"), or "" without MPI.
std::string mpi_library_version();

// Whether an MPI launcher started this process (its environment names a
// rank: OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, SLURM_STEP_NUM_TASKS with
// SLURM_PROCID, MPI_LOCALNRANKS ...). Pure function of the environment.
bool launched_by_mpi();

// Joins the run's process group: MPI_Init (thread level FUNNELED: OpenMP
// threads inside a rank never call MPI) when built with MPI and
// launched_by_mpi(); otherwise a group of one, without touching MPI. Call
// once per process. Internal error naming the MPI call if MPI fails;
// InvalidArgument "mpirun: this llmplan was built without MPI (...)" when a
// launcher started more than one process of a build without MPI (each would
// otherwise do all the work and write the same files).
Result<ProcessGroup> join_process_group();

// Leaves the group (MPI_Finalize when joined through MPI). Safe to call on a
// group of one and more than once.
void leave_process_group(const ProcessGroup& group);

// Collective: every rank passes `mine` (any bytes, any length, possibly
// empty); every rank gets all ranks' blobs, indexed by rank. A group of one
// returns {mine}. Internal error naming the MPI call on failure.
Result<std::vector<std::string>> all_gather(const ProcessGroup& group, const std::string& mine);

// Collective: rank 0's `blob` on every rank (others' `blob` is ignored).
Result<std::string> broadcast_from_root(const ProcessGroup& group, const std::string& blob);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_STUDY_DISTRIBUTED_H_
