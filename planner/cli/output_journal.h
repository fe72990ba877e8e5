// The machinery behind OutputDir's whole-set rewrites (output_files.h): the
// registry the signal handler reads, the rollback it runs, the journal a
// commit leaves while it replaces files, and the repair the next run makes
// from it. Internal to output_files.cc (and its test hooks).
//
// Everything the handler touches lives in fixed-size arrays of C strings: a
// handler may only call async-signal-safe functions (renameat, unlinkat,
// signal, raise) on memory it does not allocate.
#ifndef LLMPLAN_PLANNER_CLI_OUTPUT_JOURNAL_H_
#define LLMPLAN_PLANNER_CLI_OUTPUT_JOURNAL_H_

#include <csignal>
#include <cstddef>
#include <string>

#include "base/status.h"

namespace llmplan::planner::output_journal {

inline constexpr const char* kJournal = ".llmplan-journal";
inline constexpr const char* kManifestPrefix = ".llmplan-set-";
inline constexpr size_t kMaxPath = 1024;
inline constexpr size_t kMaxName = 320;  // NAME_MAX (255) + ".old-" + a PID
inline constexpr int kEntries = 600;     // a frontier study over 64 GPUs writes 260 files

// What one file of a set goes through in a commit.
enum Kind : char {
  kStaged = 'S',   // staged, the commit not begun
  kReplace = 'R',  // the old file kept as the backup, the temporary renamed over it
  kCreate = 'N',   // no old file: the temporary renamed into place
  kRemove = 'D',   // an old set's file the new set lacks: renamed to the backup
};

struct Entry {
  char target[kMaxName];
  char temp[kMaxName];    // ".NAME.tmp-PID"; "" for kRemove, or once renamed
  char backup[kMaxName];  // ".NAME.old-PID"
  char kind;
};

enum Phase : int { kFree = 0, kStaging = 1, kCommitting = 2, kCommitted = 3 };

// One OutputDir's set, as the handler sees it. What the handler does:
// staging, remove the temporaries; committing, roll back; committed, remove
// the old copies.
struct Slot {
  int dir_fd;
  Entry entries[kEntries];
  volatile std::sig_atomic_t count;
  volatile std::sig_atomic_t phase;
  char journal_temp[kMaxName];  // ".llmplan-journal.tmp-PID" while it is written
};

// A free slot for the directory `fd`, in phase kStaging, or nullptr.
Slot* acquire_slot(int fd);
// Installs the SIGINT/SIGTERM/SIGHUP handlers once (not over SIG_IGN: nohup).
void install_handlers();
// The single file write_output_file is writing, for the handler.
void set_single_temp(const std::string& path);
void clear_single_temp();

// Sets `e` to a staged file `name` of process `pid`; false if a name is too long.
bool fill_entry(Entry* e, const std::string& name, long pid, Kind kind);
// Puts the directory back as it was before the commit of `entries` began:
// every old file under its name, no new file, no temporary, no journal (the
// last, so that an interrupted rollback is repaired by the next run).
// Idempotent, async-signal-safe.
void roll_back(int fd, const Entry* entries, int count, const char* journal_temp);
void remove_temps(const Slot& s);
void remove_backups(const Slot& s);
// The journal of `s` for process `pid`: "llmplan-journal 1 PID", then one
// "KIND NAME" line per entry.
std::string journal_text(const Slot& s, long pid);

std::string temp_name(const std::string& name, long pid);
std::string backup_name(const std::string& name, long pid);
// One path component, not hidden, printable: a name a set's file may have.
bool plain_name(const std::string& name);

// Under the directory's lock: rolls back a commit whose process died before
// its commit point (a note on stderr), and removes the old copies and the
// temporaries of dead processes. IoError "<flag>: ..." when the journal
// cannot be read or the rollback does not complete.
Status repair(int fd, const std::string& dir, const std::string& flag);

// The test hooks' state (output_files_testing in output_files.h): whether
// the handler returns after its work instead of ending the process, and the
// signal such a handler caught (0: none).
void set_signals_return(bool returns);
int interrupted();
void clear_interrupted();

}  // namespace llmplan::planner::output_journal

#endif  // LLMPLAN_PLANNER_CLI_OUTPUT_JOURNAL_H_
