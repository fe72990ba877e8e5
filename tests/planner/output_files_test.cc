// Output files that are whole or absent (issue 31, item 3), and `--out`
// sets replaced whole or not at all (issue 48, item 1):
// planner/cli/output_files.h. The interruptions are reached through the
// header's test hooks: a signal raised at each step of a commit, a failing
// step, a process "killed" at each step (abandoned, then repaired by the next
// open), a full disk while staging.
#include "planner/cli/output_files.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace llmplan::planner {
namespace {

namespace fs = std::filesystem;
namespace hooks = output_files_testing;
using Files = std::map<std::string, std::string>;  // name -> content

// The planner's set: the old one has a Pareto plot the new one lacks, the
// new one a file the old one lacked.
const Files kOld = {{"report.md", "# old report, longer\n"}, {"candidates.csv", "old,1\n"},
                    {"plans.csv", "old,2\n"},                {"result.json", "{\"old\":1}\n"},
                    {"days_vs_params.svg", "<svg>old</svg>"}, {"pareto.svg", "<svg>old front</svg>"}};
const Files kNew = {{"report.md", "# new\n"},     {"candidates.csv", "new,1\n"},
                    {"plans.csv", "new,2\n"},     {"result.json", "{\"new\":1}\n"},
                    {"days_vs_params.svg", "<svg>new</svg>"}, {"extra.csv", "new only\n"}};
const std::vector<std::string> kOldNames = {".llmplan-set-plan", "candidates.csv",
                                            "days_vs_params.svg", "pareto.svg", "plans.csv",
                                            "report.md", "result.json"};
const std::vector<std::string> kNewNames = {".llmplan-set-plan", "candidates.csv",
                                            "days_vs_params.svg", "extra.csv", "plans.csv",
                                            "report.md", "result.json"};

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("llmplan_output_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    hooks::reset();
  }
  void TearDown() override {
    hooks::reset();
    fs::remove_all(dir_);
  }

  // Every entry of the directory, hidden ones included.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    if (!fs::exists(dir_)) return out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  // The visible files and their contents.
  Files contents() const {
    Files out;
    for (const std::string& n : names()) {
      if (n[0] != '.') out[n] = read(dir_ / n);
    }
    return out;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Writes `files` as one committed set of command `set`.
  void write_set(const Files& files, const std::string& set = "plan") {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", set);
    ASSERT_TRUE(out.ok()) << out.status().message();
    for (const auto& [name, text] : files) ASSERT_TRUE(out->write(name, text).ok()) << name;
    const Status st = out->commit();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // Stages `files` and commits them: the commit's status.
  Status rewrite(const Files& files) {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", "plan");
    if (!out.ok()) return out.status();
    for (const auto& [name, text] : files) {
      if (Status st = out->write(name, text); !st.ok()) return st;
    }
    return out->commit();
  }

  // Commits kNew over kOld once, counting the steps (the hooks' numbering).
  int count_commit_steps() {
    static int steps = 0;
    steps = 0;
    hooks::set_step_hook([](int step) {
      steps = std::max(steps, step + 1);
      return hooks::Step::kGoOn;
    });
    EXPECT_TRUE(rewrite(kNew).ok());
    hooks::reset();
    return steps;
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

TEST_F(OutputFiles, NothingChangesUntilTheSetIsCommitted) {
  write_set(kOld);
  {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", "plan");
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE(out->write("report.md", "# new\n").ok());
    ASSERT_TRUE(out->write("extra.csv", "x\n").ok());
    EXPECT_EQ(contents(), kOld);  // staged only: the temporaries are hidden
    // A later file fails: the command returns its error, no commit.
  }
  EXPECT_EQ(contents(), kOld);
  EXPECT_EQ(names(), kOldNames) << "the temporaries were not removed";
}

TEST_F(OutputFiles, ARerunReplacesTheSetWholeAndDropsFilesItNoLongerWrites) {
  write_set(kOld);
  fs::create_directories(dir_);
  std::ofstream(dir_ / "notes.txt") << "the user's own file\n";
  write_set({{"sweep.json", "{}"}}, "sweep");  // another command's set
  ASSERT_TRUE(rewrite(kNew).ok());
  Files expected = kNew;
  expected["notes.txt"] = "the user's own file\n";
  expected["sweep.json"] = "{}";
  EXPECT_EQ(contents(), expected) << "pareto.svg of the old set must go, the others stay";
  EXPECT_EQ(read(dir_ / ".llmplan-set-plan"),
            "candidates.csv\ndays_vs_params.svg\nextra.csv\nplans.csv\nreport.md\nresult.json\n");
  // A name written twice: the later text.
  Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", "plan");
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(out->write("report.md", "first").ok());
  ASSERT_TRUE(out->write("report.md", "second").ok());
  ASSERT_TRUE(out->commit().ok());
  EXPECT_EQ(read(dir_ / "report.md"), "second");
  EXPECT_FALSE(fs::exists(dir_ / "extra.csv"));
  EXPECT_FALSE(out->commit().ok()) << "a second commit";
}

TEST_F(OutputFiles, TheDirectoryIsLockedWhileASetIsWritten) {
  auto try_lock = [&] {
    const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    const bool got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return got;
  };
  {
    Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", "plan");
    ASSERT_TRUE(out.ok());
    EXPECT_FALSE(try_lock()) << "another process could write the same directory";
    ASSERT_TRUE(out->commit().ok());
  }
  EXPECT_TRUE(try_lock());
}

// SIGTERM at each step of the commit (the strace reproduction,
// without strace): the handler puts the old set back whole, temporaries,
// copies and journal gone.
TEST_F(OutputFiles, ASignalAtAnyStepLeavesTheOldSetWhole) {
  write_set(kOld);
  const int steps = count_commit_steps();
  ASSERT_EQ(steps, 17) << "the journal; 6 files replaced (copy, rename: 5 and the manifest); 1 "
                          "created; 1 removed; the commit point; the copies removed";
  for (int at = 0; at < steps - 1; ++at) {
    SCOPED_TRACE("SIGTERM before step " + std::to_string(at));
    hooks::reset();
    fs::remove_all(dir_);
    write_set(kOld);
    hooks::set_signals_return(true);
    static int signal_at = 0;
    signal_at = at;
    hooks::set_step_hook([](int step) {
      if (step == signal_at) std::raise(SIGTERM);
      return hooks::Step::kGoOn;
    });
    const Status st = rewrite(kNew);
    EXPECT_EQ(st.message(), "--out: interrupted by signal 15 (the previous files are kept)");
    EXPECT_EQ(contents(), kOld);
    EXPECT_EQ(names(), kOldNames);
  }
}

// A signal after the commit point (the last step): the new set stands.
TEST_F(OutputFiles, ASignalAfterTheCommitPointLeavesTheNewSetWhole) {
  write_set(kOld);
  const int steps = count_commit_steps();
  hooks::reset();
  fs::remove_all(dir_);
  write_set(kOld);
  hooks::set_signals_return(true);
  static int last = 0;
  last = steps - 1;
  hooks::set_step_hook([](int step) {
    if (step == last) std::raise(SIGTERM);
    return hooks::Step::kGoOn;
  });
  EXPECT_EQ(rewrite(kNew).message(), "--out: interrupted by signal 15 (the new files are in place)");
  EXPECT_EQ(contents(), kNew);
  EXPECT_EQ(names(), kNewNames) << "the handler removes the old copies";
}

// A step that fails (a read-only or failing disk): the old set, and an
// error naming the file.
TEST_F(OutputFiles, AFailedStepRestoresTheOldSet) {
  write_set(kOld);
  const int steps = count_commit_steps();
  for (int at = 0; at < steps - 1; ++at) {
    SCOPED_TRACE("failure at step " + std::to_string(at));
    hooks::reset();
    fs::remove_all(dir_);
    write_set(kOld);
    static int fail_at = 0;
    fail_at = at;
    hooks::set_step_hook([](int step) {
      return step == fail_at ? hooks::Step::kFail : hooks::Step::kGoOn;
    });
    const Status st = rewrite(kNew);
    EXPECT_NE(st.message().find("--out: cannot replace " + dir_.string() + "/"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find(": Input/output error (the previous files are kept)"),
              std::string::npos)
        << st.message();
    EXPECT_EQ(contents(), kOld);
    EXPECT_EQ(names(), kOldNames);
  }
}

// The process killed at each step where no handler runs (SIGKILL): the
// directory is mixed until the next open(), which restores the old set,
// says so, and removes every leftover.
TEST_F(OutputFiles, AKilledRewriteIsRepairedByTheNextRun) {
  write_set(kOld);
  const int steps = count_commit_steps();
  for (int at = 0; at < steps - 1; ++at) {
    SCOPED_TRACE("killed before step " + std::to_string(at));
    hooks::reset();
    fs::remove_all(dir_);
    write_set(kOld);
    static int kill_at = 0;
    kill_at = at;
    hooks::set_step_hook([](int step) {
      return step == kill_at ? hooks::Step::kAbandon : hooks::Step::kGoOn;
    });
    EXPECT_FALSE(rewrite(kNew).ok());
    hooks::reset();
    const bool journal = fs::exists(dir_ / ".llmplan-journal");
    EXPECT_EQ(journal, at > 0) << "the journal is in place from the first rename on";
    ::testing::internal::CaptureStderr();
    {
      Result<OutputDir> next = OutputDir::open(dir_.string(), "--out", "plan");
      ASSERT_TRUE(next.ok()) << next.status().message();
    }
    const std::string note = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(contents(), kOld);
    EXPECT_EQ(names(), kOldNames);
    if (journal) {
      EXPECT_NE(note.find("llmplan: note: " + dir_.string() +
                          ": an earlier llmplan (process " + std::to_string(::getpid()) +
                          ") was stopped while replacing its files there; its previous set is "
                          "restored"),
                std::string::npos)
          << note;
    } else {
      EXPECT_EQ(note, "");
    }
  }
}

// Killed after the commit point, before the old copies were removed: the new
// set stands, and the next run removes the copies.
TEST_F(OutputFiles, AKillAfterTheCommitPointKeepsTheNewSet) {
  write_set(kOld);
  const int steps = count_commit_steps();
  hooks::reset();
  fs::remove_all(dir_);
  write_set(kOld);
  static int after = 0;
  after = steps - 1;
  hooks::set_step_hook([](int step) {
    return step == after ? hooks::Step::kAbandon : hooks::Step::kGoOn;
  });
  EXPECT_FALSE(rewrite(kNew).ok());
  hooks::reset();
  EXPECT_EQ(contents(), kNew);
  EXPECT_FALSE(fs::exists(dir_ / ".llmplan-journal"));
  EXPECT_NE(names(), kNewNames) << "the old copies are still there";
  ASSERT_TRUE(OutputDir::open(dir_.string(), "--out", "plan").ok());
  EXPECT_EQ(names(), kNewNames);
}

// A full disk at the new set's third file: nothing of the old set changes.
TEST_F(OutputFiles, AFullDiskWhileStagingKeepsTheOldSet) {
  write_set(kOld);
  hooks::set_write_hook([](int file) { return file == 2 ? ENOSPC : 0; });
  const Status st = rewrite(kNew);
  EXPECT_EQ(st.message(), "--out: cannot write " + (dir_ / "extra.csv").string() +
                              ": No space left on device");
  EXPECT_EQ(contents(), kOld);
  EXPECT_EQ(names(), kOldNames);
}

TEST_F(OutputFiles, TheNextRunRemovesStaleTemporariesOfDeadProcesses) {
  write_set(kOld);
  // PID 999999999 is above Linux's pid_max (4194304): no such process. The
  // parent of this test is alive: its temporary may be in use.
  const std::string dead = ".report.md.tmp-999999999";
  const std::string alive = ".report.md.tmp-" + std::to_string(::getppid());
  for (const std::string& n : {dead, alive, std::string(".pareto.svg.old-999999999"),
                               std::string(".llmplan-journal.tmp-999999999")}) {
    std::ofstream(dir_ / n) << "leftover";
  }
  ASSERT_TRUE(rewrite(kNew).ok());
  std::vector<std::string> expected = kNewNames;
  expected.push_back(alive);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names(), expected);
}

TEST_F(OutputFiles, AnUnreadableJournalIsAnErrorNamingIt) {
  write_set(kOld);
  std::ofstream(dir_ / ".llmplan-journal") << "not a journal\n";
  Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", "plan");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "--out: " + (dir_ / ".llmplan-journal").string() +
                                        ": not a journal llmplan can read; remove it to write here");
  EXPECT_EQ(contents(), kOld);
}

TEST_F(OutputFiles, ADirectoryInAFilesPlaceIsRefusedBeforeAnythingChanges) {
  write_set(kOld);
  fs::create_directories(dir_ / "extra.csv");
  const Status st = rewrite(kNew);
  EXPECT_EQ(st.message(), "--out: cannot write " + (dir_ / "extra.csv").string() + ": Is a directory");
  fs::remove(dir_ / "extra.csv");
  EXPECT_EQ(contents(), kOld);
  EXPECT_EQ(names(), kOldNames);
}

TEST_F(OutputFiles, ASetNameMustBeAPlainFileName) {
  Result<OutputDir> out = OutputDir::open(dir_.string(), "--out", "plan");
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->write("../escape.csv", "x").ok());
  EXPECT_FALSE(out->write(".hidden", "x").ok());
  EXPECT_FALSE(out->write("a\nb", "x").ok());
}

// The real path, in a child process: SIGTERM in the middle of a commit ends
// the process by the signal, and the old set is whole.
TEST_F(OutputFiles, AnInterruptEndsTheProcessWithTheOldSetWhole) {
  write_set(kOld);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    hooks::set_step_hook([](int step) {
      if (step == 3) std::raise(SIGTERM);
      return hooks::Step::kGoOn;
    });
    (void)rewrite(kNew);
    ::_exit(4);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(contents(), kOld);
  EXPECT_EQ(names(), kOldNames);
}

}  // namespace
}  // namespace llmplan::planner
