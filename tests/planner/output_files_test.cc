// Output files that are whole or absent (issue 31, item 3):
// planner/cli/output_files.h.
#include "planner/cli/output_files.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace llmplan::planner {
namespace {

namespace fs = std::filesystem;

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("llmplan_output_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    if (!fs::exists(dir_)) return out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(OutputFiles, ReplacesAFileWholeAndLeavesNoTemporary) {
  fs::create_directories(dir_);
  const fs::path target = dir_ / "result.json";
  ASSERT_TRUE(write_output_file(target.string(), "old, longer content\n", "--out").ok());
  ASSERT_TRUE(write_output_file(target.string(), "new\n", "--out").ok());
  EXPECT_EQ(read(target), "new\n");
  EXPECT_EQ(names(), std::vector<std::string>{"result.json"});
}

TEST_F(OutputFiles, AFailedWriteNamesTheTargetAndLeavesNothing) {
  const fs::path target = dir_ / "missing" / "report.md";
  Status st = write_output_file(target.string(), "x", "--out");
  EXPECT_EQ(st.message(), "--out: cannot write " + target.string() + ": No such file or directory");
  // A device is written in place (a full disk): the error names it.
  st = write_output_file("/dev/full", "x", "-o");
  EXPECT_EQ(st.message(), "-o: cannot write /dev/full: No space left on device");
}

TEST_F(OutputFiles, ASetNotKeptIsRemovedAKeptSetStays) {
  {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out");
    ASSERT_TRUE(out.ok()) << out.status().message();
    ASSERT_TRUE(out->write("a.csv", "1\n").ok());
    ASSERT_TRUE(out->write("b.svg", "<svg/>").ok());
    EXPECT_EQ(names(), (std::vector<std::string>{"a.csv", "b.svg"}));
    // A later file fails: the command returns its error, the set is not kept.
  }
  EXPECT_TRUE(names().empty());
  {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out");
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE(out->write("a.csv", "2\n").ok());
    out->keep();
  }
  EXPECT_EQ(names(), std::vector<std::string>{"a.csv"});
  EXPECT_EQ(read(dir_ / "a.csv"), "2\n");
}

TEST_F(OutputFiles, TheDirectoryIsLockedWhileASetIsWritten) {
  auto try_lock = [&] {
    const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    const bool got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return got;
  };
  {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out");
    ASSERT_TRUE(out.ok());
    EXPECT_FALSE(try_lock()) << "another process could write the same directory";
    out->keep();
  }
  EXPECT_TRUE(try_lock());
}

// SIGTERM in the middle of a set: the process still dies of the signal, and
// the files it had written are gone (no half-written set under final names).
TEST_F(OutputFiles, AnInterruptRemovesTheSetWrittenSoFar) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out");
    if (!out.ok() || !out->write("report.md", "# part\n").ok()) ::_exit(3);
    std::raise(SIGTERM);
    ::_exit(4);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_TRUE(names().empty());
}

}  // namespace
}  // namespace llmplan::planner
