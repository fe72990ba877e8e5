// Output files that are whole or absent (issue 31, item 3), and `--out`
// sets that are replaced whole or not at all (issue 48, item 1).
//
// Every single file a command writes (`--trace`, `calibrate -o`,
// `schedule --write-jobs`) goes through write_output_file: the text is
// written to a temporary name beside the target (".NAME.tmp-PID") and renamed
// into place only when every byte was written and the file closed, so a
// full disk, SIGINT or SIGTERM never leaves a truncated file under its final
// name. A target that exists and is not a regular file (/dev/stdout, a FIFO,
// a link) is written in place: renaming over it would replace the device or
// the link.
//
// OutputDir writes the set of files of one command into an `--out` directory
// so that the directory holds either the whole previous set or the whole new
// one, whatever happens to the process:
//   1. open() creates the directory, takes an exclusive lock on it (flock: a
//      second llmplan process writing the same directory waits, and the last
//      set wins whole) and repairs what an earlier process killed there left
//      (below).
//   2. write() only stages a file, as ".NAME.tmp-PID"; nothing a reader sees
//      changes. A full disk, a read-only directory or any failure while
//      staging leaves the old set as it was and removes the temporaries. (A
//      device, FIFO or link in a file's place is written in place when
//      staged, as by write_output_file; it is outside the rollback.)
//   3. commit() replaces the set: it writes a journal ".llmplan-journal"
//      (whole, by rename) naming every file it is about to replace, create or
//      remove; keeps each old file under a second name ".NAME.old-PID" (a
//      hard link, or a rename where links are not supported); renames each
//      temporary over its target; removes the old set's files that the new
//      set does not have; then removes the journal (the commit point) and the
//      old copies. Any failure or SIGINT/SIGTERM/SIGHUP before the commit
//      point rolls back: the old files return under their names, the new
//      ones and the temporaries go, and the process ends by the signal.
//   4. A process killed where no handler runs (SIGKILL, the OOM killer)
//      leaves the journal: the next open() of the directory finds it, rolls
//      the set back to the old one and says so on stderr ("llmplan: note:
//      ..."). It also removes the temporaries of dead processes and old
//      copies left after a commit point.
// Which files belong to a set is recorded in a manifest ".llmplan-set-NAME"
// per command (plan, frontier, sweep, schedule, accuracy, fit), written as
// part of the set: a rerun of the same command removes the files of its
// previous set that it no longer writes (a pareto.svg the new plan has no
// front for, the plot of a GPU no longer in a frontier study), so the
// directory never shows a stale member as part of the new set. Files the
// command never wrote are left alone; one command's set per directory is
// the intended use (commands that share a file name, like report.md,
// replace each other's file).
//
// Not covered: a power failure (no file is fsync'ed: a 260-file frontier set
// would pay for 260 syncs), and a directory on a file system without
// rename(2) (every local and network file system llmplan runs on has it).
//
// The registry the signal handler reads (the temporary being written, the
// commit in progress) is the one piece of process-wide state of the
// command-line layer (a signal handler can reach nothing else); it is not
// used by the simulator or the search. Not thread-safe: commands write their
// files from one thread.
#ifndef LLMPLAN_PLANNER_CLI_OUTPUT_FILES_H_
#define LLMPLAN_PLANNER_CLI_OUTPUT_FILES_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace llmplan::planner {

namespace output_journal {
struct Slot;
}

// Writes `text` to `path` as described above, checking every write and the
// close. IoError "<flag>: cannot write <path>: <reason>" (the temporary file
// removed).
Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& flag);

class OutputDir {
 public:
  // Creates `dir` and its parents, locks it (waiting while another process
  // holds the lock) and repairs an interrupted rewrite there. `set_name`
  // names the command's manifest (".llmplan-set-<set_name>"). IoError
  // "<flag>: cannot create <dir>: <why>" (or open, lock, repair).
  static Result<OutputDir> open(const std::string& dir, const std::string& flag,
                                const std::string& set_name);

  OutputDir(OutputDir&& other) noexcept;
  OutputDir& operator=(OutputDir&&) = delete;
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  // Removes the staged temporaries unless commit() succeeded (the old set
  // stays as it was); releases the lock.
  ~OutputDir();

  // Stages dir/name: a plain file name (no '/', no leading '.', no control
  // characters). Written twice, the later text wins. IoError
  // "<flag>: cannot write <dir>/<name>: <reason>".
  Status write(const std::string& name, const std::string& text);
  // Replaces the directory's previous set by the staged one, whole (see the
  // header). IoError "<flag>: cannot replace <dir>/<name>: <reason>" with
  // the old set restored. A second call is an error.
  [[nodiscard]] Status commit();

  const std::string& dir() const { return dir_; }

 private:
  OutputDir(std::string dir, std::string flag, std::string set_name, int fd);
  Status stage(const std::string& name, const std::string& text);
  // Decides what each file goes through (replaced, created, removed) and
  // stages the manifest; before any change.
  Status plan_commit();
  // One step of the commit: the test hook, then `op`; a failure rolls back.
  Status step(int* number, int (*op)(int, const char*, const char*), const char* from,
              const char* to, const std::string& name);
  Status roll_back(const std::string& name, int why);
  Status interrupted(const char* state) const;
  void remove_temporaries();

  std::string dir_;
  std::string flag_;
  std::string set_name_;
  int fd_ = -1;  // the locked directory
  output_journal::Slot* slot_ = nullptr;  // what the signal handler sees of this set
  std::vector<std::string> staged_;     // the temporaries' names
  std::vector<std::string> in_place_;   // devices, FIFOs, links: written when staged
  bool committed_ = false;
  bool abandoned_ = false;  // a test's "killed here": the destructor touches nothing
};

// Test hooks: how the commit's failure paths are reached without fork or
// strace (tests/planner/output_files_test.cc). Process-wide; reset() after
// use.
namespace output_files_testing {

enum class Step {
  kGoOn,     // carry on
  kFail,     // this step fails with EIO (a read-only or failing disk)
  kAbandon,  // the process "dies" here without running any handler (SIGKILL):
             // commit() returns at once, and the OutputDir's destructor only
             // closes the directory
};
// Called before each step of a commit (0: the journal's rename, then one per
// link or rename, then the removal of the journal, the commit point; last,
// the removal of the old copies). A hook may raise(SIGTERM).
using StepHook = Step (*)(int step);
void set_step_hook(StepHook hook);
// Called before each staged file is written (0, 1, ...): a non-zero errno
// value makes that write fail with it (ENOSPC: a full disk).
using WriteHook = int (*)(int file);
void set_write_hook(WriteHook hook);
// When set, the signal handler rolls back and returns instead of ending the
// process; the interrupted commit() then returns "interrupted by signal N".
void set_signals_return(bool returns);
void reset();

}  // namespace output_files_testing

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_OUTPUT_FILES_H_
