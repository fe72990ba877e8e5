// The boundary between llmplan and its MPI module (internal to
// planner/study/distributed*.cc; users call planner/study/distributed.h).
//
// MPI is not linked into `llmplan`: Open MPI's libraries alone would add
// about 2 ms to every start of the program, and only a command that splits
// work under an MPI launcher needs them. A build with MPI (LLMPLAN_MPI)
// makes a small module, llmplan_mpi.so (distributed_mpi.cc, linked to MPI),
// installed in <libdir>/llmplan/ and, in the build tree, next to the
// executables; distributed.cc loads it with dlopen() the first time a
// process launched by mpirun/srun joins its process group.
//
// Both sides are built together by the same compiler from the same tree, so
// the table may use standard-library types; kMpiModuleAbi guards against
// loading a module from another build.
#ifndef LLMPLAN_PLANNER_STUDY_DISTRIBUTED_MODULE_H_
#define LLMPLAN_PLANNER_STUDY_DISTRIBUTED_MODULE_H_

#include <string>
#include <vector>

namespace llmplan::planner {

inline constexpr int kMpiModuleAbi = 1;

// What the module exports. Every function returns false and sets *error
// (one line naming the MPI call) on failure. Collectives have the meaning
// of the functions of the same names in distributed.h.
struct MpiModule {
  int abi = kMpiModuleAbi;
  // MPI_Init_thread(FUNNELED) once per process, then rank and size of
  // MPI_COMM_WORLD (whose errors are then returned, not fatal).
  bool (*join)(int* rank, int* size, std::string* error);
  // MPI_Finalize, once; later calls do nothing.
  void (*leave)();
  bool (*all_gather)(const std::string& mine, std::vector<std::string>* all, std::string* error);
  // Rank 0's *blob replaces every other rank's.
  bool (*broadcast)(std::string* blob, std::string* error);
};

}  // namespace llmplan::planner

// The module's one exported symbol: its table (static storage).
extern "C" const llmplan::planner::MpiModule* llmplan_mpi_module();

#endif  // LLMPLAN_PLANNER_STUDY_DISTRIBUTED_MODULE_H_
