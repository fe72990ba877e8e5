// Output files that are whole or absent (issue 31, item 3).
//
// Every file a command writes (`--out DIR` sets, `--trace`, `calibrate -o`,
// `schedule --write-jobs`) goes through write_output_file: the text is
// written to a temporary name beside the target (".NAME.tmp-PID") and renamed
// into place only when every byte was written and the file closed, so a
// full disk, SIGINT or SIGTERM never leaves a truncated file under its final
// name. A target that exists and is not a regular file (/dev/stdout, a FIFO,
// a link) is written in place, as before: renaming over it would replace
// the device or the link.
//
// OutputDir holds an `--out` directory while a command writes its set of
// files: it takes an exclusive lock on the directory (flock), so a second
// llmplan process writing the same directory waits until the first's set is
// complete instead of mixing its files with the first's (the last set wins,
// whole); and unless keep() is called, its destructor removes the files it
// wrote (a set that failed halfway leaves none of its files).
//
// Interrupts: the first write installs SIGINT/SIGTERM/SIGHUP handlers that
// remove the temporary file being written and the files of every OutputDir
// not yet kept, then end the process by the same signal. This registry is
// the one piece of process-wide state of the command-line layer (a signal
// handler can reach nothing else); it is not used by the simulator or the
// search. Not thread-safe: commands write their files from one thread.
#ifndef LLMPLAN_PLANNER_CLI_OUTPUT_FILES_H_
#define LLMPLAN_PLANNER_CLI_OUTPUT_FILES_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace llmplan::planner {

// Writes `text` to `path` as described above, checking every write and the
// close. IoError "<flag>: cannot write <path>: <reason>" (the temporary file
// removed).
Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& flag);

class OutputDir {
 public:
  // Creates `dir` and its parents and locks it, waiting while another
  // process holds the lock. IoError "<flag>: cannot create <dir>: <why>"
  // (or open, lock).
  static Result<OutputDir> open(const std::string& dir, const std::string& flag);

  OutputDir(OutputDir&& other) noexcept;
  OutputDir& operator=(OutputDir&&) = delete;
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  // Removes the files written unless keep() was called; releases the lock.
  ~OutputDir();

  // Writes dir/name (write_output_file) and remembers it.
  Status write(const std::string& name, const std::string& text);
  // The set is complete: the files stay.
  void keep();

  const std::string& dir() const { return dir_; }

 private:
  OutputDir(std::string dir, std::string flag, int fd);

  std::string dir_;
  std::string flag_;
  int fd_ = -1;  // the locked directory
  int registry_slot_ = -1;
  std::vector<std::string> written_;
  bool kept_ = false;
};

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_OUTPUT_FILES_H_
