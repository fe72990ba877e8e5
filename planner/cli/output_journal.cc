#include "planner/cli/output_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace llmplan::planner::output_journal {
namespace {

constexpr const char* kJournalHeader = "llmplan-journal 1";
constexpr int kSlots = 4;  // OutputDirs alive at once

char g_single_temp[kMaxPath];  // the single file being written
volatile std::sig_atomic_t g_single_temp_set = 0;
Slot g_slots[kSlots];
bool g_handlers_installed = false;
volatile std::sig_atomic_t g_signals_return = 0;
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int sig) {
  if (g_single_temp_set) ::unlink(g_single_temp);
  for (Slot& s : g_slots) {
    if (s.phase == kStaging) remove_temps(s);
    if (s.phase == kCommitting) roll_back(s.dir_fd, s.entries, s.count, s.journal_temp);
    if (s.phase == kCommitted) remove_backups(s);
    if (g_signals_return) s.phase = kFree;
  }
  if (g_signals_return) {
    g_interrupted = sig;
    return;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool copy_to(char* to, size_t size, const std::string& from) {
  if (from.size() >= size) return false;
  std::memcpy(to, from.c_str(), from.size() + 1);
  return true;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool manifest_name(const std::string& name) {
  const size_t n = std::strlen(kManifestPrefix);
  return name.compare(0, n, kManifestPrefix) == 0 && plain_name(name.substr(n));
}

// The PID of a leftover ".NAME<tag>PID" (tag ".old-" or ".tmp-"), or -1.
long leftover_pid(const std::string& name, const char* tag) {
  if (name.size() < 2 || name[0] != '.') return -1;
  const size_t at = name.rfind(tag);
  if (at == std::string::npos || at == 0) return -1;
  const std::string digits = name.substr(at + std::strlen(tag));
  return all_digits(digits) ? std::strtol(digits.c_str(), nullptr, 10) : -1;
}

// This process (which writes one set at a time, from one thread) or none.
bool process_is_gone(long pid) {
  return pid == ::getpid() || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
}

// The journal of an interrupted commit, read back.
Result<std::vector<Entry>> read_journal(const std::string& path, long* pid) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  const Status bad =
      Status::io_error(path + ": not a journal llmplan can read; remove it to write here");
  const std::string header = std::string(kJournalHeader) + " ";
  if (!std::getline(in, line) || line.compare(0, header.size(), header) != 0 ||
      !all_digits(line.substr(header.size()))) {
    return bad;
  }
  *pid = std::strtol(line.c_str() + header.size(), nullptr, 10);
  std::vector<Entry> entries;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[1] != ' ') return bad;
    const char kind = line[0];
    const std::string name = line.substr(2);
    if ((kind != kReplace && kind != kCreate && kind != kRemove) ||
        !(plain_name(name) || manifest_name(name))) {
      return bad;
    }
    Entry e{};
    if (!fill_entry(&e, name, *pid, static_cast<Kind>(kind))) return bad;
    entries.push_back(e);
  }
  return entries;
}

// Removes the old copies (only a commit makes them, under the lock the
// caller holds) and the temporaries of processes that are gone.
void remove_leftovers(int fd) {
  DIR* d = ::fdopendir(::dup(fd));
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const long temp_pid = leftover_pid(name, ".tmp-");
    if (leftover_pid(name, ".old-") >= 0 || (temp_pid >= 0 && process_is_gone(temp_pid))) {
      stale.push_back(name);
    }
  }
  ::closedir(d);
  for (const std::string& name : stale) ::unlinkat(fd, name.c_str(), 0);
}

}  // namespace

Slot* acquire_slot(int fd) {
  for (Slot& s : g_slots) {
    if (s.phase == kFree) {
      s.dir_fd = fd;
      s.count = 0;
      s.journal_temp[0] = '\0';
      s.phase = kStaging;
      return &s;
    }
  }
  return nullptr;
}

void install_handlers() {
  if (g_handlers_installed) return;
  g_handlers_installed = true;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

void set_single_temp(const std::string& path) {
  g_single_temp_set = copy_to(g_single_temp, kMaxPath, path) ? 1 : 0;
}
void clear_single_temp() { g_single_temp_set = 0; }

bool fill_entry(Entry* e, const std::string& name, long pid, Kind kind) {
  *e = Entry{};
  e->kind = kind;
  return copy_to(e->target, kMaxName, name) &&
         copy_to(e->backup, kMaxName, backup_name(name, pid)) &&
         (kind == kRemove || copy_to(e->temp, kMaxName, temp_name(name, pid)));
}

void roll_back(int fd, const Entry* entries, int count, const char* journal_temp) {
  for (int i = count - 1; i >= 0; --i) {
    const Entry& e = entries[i];
    if (e.kind == kReplace || e.kind == kRemove) {
      // The backup, where it was made, holds the old file. When both names
      // are links to one file rename does nothing: the backup is unlinked after.
      ::renameat(fd, e.backup, fd, e.target);
      ::unlinkat(fd, e.backup, 0);
    } else if (e.kind == kCreate) {
      ::unlinkat(fd, e.target, 0);
    }
  }
  for (int i = 0; i < count; ++i) {
    if (entries[i].temp[0] != '\0') ::unlinkat(fd, entries[i].temp, 0);
  }
  if (journal_temp != nullptr && journal_temp[0] != '\0') ::unlinkat(fd, journal_temp, 0);
  ::unlinkat(fd, kJournal, 0);
}

void remove_temps(const Slot& s) {
  for (int i = 0; i < s.count; ++i) {
    if (s.entries[i].temp[0] != '\0') ::unlinkat(s.dir_fd, s.entries[i].temp, 0);
  }
  if (s.journal_temp[0] != '\0') ::unlinkat(s.dir_fd, s.journal_temp, 0);
}

void remove_backups(const Slot& s) {
  for (int i = 0; i < s.count; ++i) ::unlinkat(s.dir_fd, s.entries[i].backup, 0);
}

std::string journal_text(const Slot& s, long pid) {
  std::string text = std::string(kJournalHeader) + " " + std::to_string(pid) + "\n";
  for (int i = 0; i < s.count; ++i) {
    text += std::string(1, s.entries[i].kind) + " " + s.entries[i].target + "\n";
  }
  return text;
}

std::string temp_name(const std::string& name, long pid) {
  return "." + name + ".tmp-" + std::to_string(pid);
}
std::string backup_name(const std::string& name, long pid) {
  return "." + name + ".old-" + std::to_string(pid);
}

bool plain_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '.') return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

Status repair(int fd, const std::string& dir, const std::string& flag) {
  struct stat st {};
  if (::fstatat(fd, kJournal, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    long pid = -1;
    Result<std::vector<Entry>> entries =
        read_journal((std::filesystem::path(dir) / kJournal).string(), &pid);
    if (!entries.ok()) return Status::io_error(flag + ": " + entries.status().message());
    char journal_temp[kMaxName] = {};
    copy_to(journal_temp, kMaxName, temp_name(kJournal + 1, pid));  // ".llmplan-journal.tmp-PID"
    roll_back(fd, entries->data(), static_cast<int>(entries->size()), journal_temp);
    if (::fstatat(fd, kJournal, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      return Status::io_error(flag + ": cannot repair " + dir + ": " + kJournal +
                              " (the journal of an interrupted rewrite) cannot be removed");
    }
    std::fprintf(stderr,
                 "llmplan: note: %s: an earlier llmplan (process %ld) was stopped while replacing "
                 "its files there; its previous set is restored\n",
                 dir.c_str(), pid);
  }
  remove_leftovers(fd);
  return Status();
}

void set_signals_return(bool returns) { g_signals_return = returns ? 1 : 0; }
int interrupted() { return g_interrupted; }
void clear_interrupted() { g_interrupted = 0; }

}  // namespace llmplan::planner::output_journal
