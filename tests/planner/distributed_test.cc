// planner/study/distributed.h without a launcher (the collectives under mpirun are
// tests/planner/distributed_mpi_test.cc, run by CTest when MPI is built in).
#include "planner/study/distributed.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/version.h"

namespace llmplan::planner {
namespace {

const std::vector<const char*> kLauncherVars = {
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
    "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"};

// Clears the launcher's variables for one test and restores them after.
class NoLauncher {
 public:
  NoLauncher() {
    for (const char* var : kLauncherVars) {
      const char* v = std::getenv(var);
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(var);
    }
  }
  ~NoLauncher() {
    for (size_t i = 0; i < kLauncherVars.size(); ++i) {
      if (saved_[i]) {
        setenv(kLauncherVars[i], saved_[i]->c_str(), 1);
      } else {
        unsetenv(kLauncherVars[i]);
      }
    }
  }

 private:
  std::vector<std::optional<std::string>> saved_;
};

TEST(ProcessGroup, WithoutLauncherIsAGroupOfOne) {
  NoLauncher clean;
  EXPECT_FALSE(launched_by_mpi());
  auto g = join_process_group();
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g.value().rank, 0);
  EXPECT_EQ(g.value().size, 1);
  EXPECT_FALSE(g.value().mpi);
  auto all = all_gather(g.value(), std::string("a\0b", 3));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value(), std::vector<std::string>{std::string("a\0b", 3)});
  auto empty = all_gather(g.value(), "");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty.value(), std::vector<std::string>{""});
  auto b = broadcast_from_root(g.value(), "root");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value(), "root");
  leave_process_group(g.value());
  leave_process_group(g.value());
}

TEST(ProcessGroup, LauncherIsRecognisedByItsEnvironment) {
  NoLauncher clean;
  setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  EXPECT_FALSE(launched_by_mpi()) << "SLURM_STEP_NUM_TASKS alone is not a launched task";
  setenv("SLURM_PROCID", "0", 1);
  EXPECT_TRUE(launched_by_mpi());
  unsetenv("SLURM_STEP_NUM_TASKS");
  unsetenv("SLURM_PROCID");
  setenv("PMIX_RANK", "0", 1);
  EXPECT_TRUE(launched_by_mpi());
}

// A build without MPI under a launcher: one process is fine, more are a
// one-line InvalidArgument (each would otherwise do all the work).
TEST(ProcessGroup, BuildWithoutMpiRefusesSeveralLaunchedProcesses) {
  if (built_with_mpi()) GTEST_SKIP() << "this build has MPI (see the mpi.* CTests)";
  NoLauncher clean;
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  auto one = join_process_group();
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one.value().size, 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  auto two = join_process_group();
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(two.status().message().rfind("mpirun: this llmplan was built without MPI", 0), 0u)
      << two.status().message();
  EXPECT_EQ(two.status().message().find('\n'), std::string::npos);
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("PMIX_RANK", "3", 1);  // a rank above 0: more than one process
  EXPECT_FALSE(join_process_group().ok());
}

TEST(ProcessGroup, VersionLineSaysWhetherMpiIsBuiltIn) {
  EXPECT_EQ(built_with_mpi(), !mpi_library_version().empty());
  const std::string line = version_line("llmplan", "no mpi");
  EXPECT_EQ(line.rfind("llmplan ", 0), 0u);
  EXPECT_EQ(line.substr(line.size() - 9), "; no mpi)") << line;
  EXPECT_NE(line.find("(git "), std::string::npos);
}

}  // namespace
}  // namespace llmplan::planner
