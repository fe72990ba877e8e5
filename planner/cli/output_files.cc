#include "planner/cli/output_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include "planner/cli/output_journal.h"

namespace llmplan::planner {
namespace {

namespace oj = output_journal;
using output_files_testing::Step;

output_files_testing::StepHook g_step_hook = nullptr;
output_files_testing::WriteHook g_write_hook = nullptr;

// Writes `text` to `path` with C stdio: fclose() reports the error of the
// last buffered write (a full disk, /dev/full), and errno says why. 0 or
// the errno value.
int write_all(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return errno;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int why = written ? 0 : errno;
  if (std::fclose(f) != 0 && why == 0) why = errno;
  if (!written && why == 0) why = EIO;
  return why;
}

Status cannot_write(const std::string& flag, const std::string& path, int why) {
  return Status::io_error(flag + ": cannot write " + path + ": " + std::strerror(why));
}

// 0 and whether `name` in `fd` is a regular file, or the errno value.
int file_kind(int fd, const std::string& name, bool* regular) {
  struct stat st {};
  if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
  *regular = S_ISREG(st.st_mode);
  return 0;
}

// A test's "the process dies here" (Step::kAbandon).
Status abandoned() { return Status::internal("abandoned by a test"); }

}  // namespace

Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& flag) {
  oj::install_handlers();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device, FIFO or link: written in place (see the header).
    const int why = write_all(path, text);
    return why == 0 ? Status() : cannot_write(flag, path, why);
  }
  const std::filesystem::path target(path);
  const std::filesystem::path temp =
      target.parent_path() / oj::temp_name(target.filename().string(), ::getpid());
  oj::set_single_temp(temp.string());
  int why = write_all(temp.string(), text);
  if (why == 0 && std::rename(temp.c_str(), path.c_str()) != 0) why = errno;
  if (why != 0) ::unlink(temp.c_str());
  oj::clear_single_temp();
  return why == 0 ? Status() : cannot_write(flag, path, why);
}

Result<OutputDir> OutputDir::open(const std::string& dir, const std::string& flag,
                                  const std::string& set_name) {
  oj::install_handlers();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io_error(flag + ": cannot create " + dir + ": " + ec.message());
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::io_error(flag + ": cannot open " + dir + ": " + std::strerror(errno));
  // Waits while another llmplan process writes here (its set takes well
  // under a second), so that two sets never mix: the last one wins whole.
  int locked = 0;
  do {
    locked = ::flock(fd, LOCK_EX);
  } while (locked != 0 && errno == EINTR);
  if (locked != 0) {
    const int why = errno;
    ::close(fd);
    return Status::io_error(flag + ": cannot lock " + dir + ": " + std::strerror(why));
  }
  if (Status st = oj::repair(fd, dir, flag); !st.ok()) {
    ::close(fd);
    return st;
  }
  OutputDir out(dir, flag, set_name, fd);
  if (out.slot_ == nullptr) {
    return Status::internal(flag + ": too many output directories open at once");
  }
  return out;
}

OutputDir::OutputDir(std::string dir, std::string flag, std::string set_name, int fd)
    : dir_(std::move(dir)),
      flag_(std::move(flag)),
      set_name_(std::move(set_name)),
      fd_(fd),
      slot_(oj::acquire_slot(fd)) {}

OutputDir::OutputDir(OutputDir&& other) noexcept
    : dir_(std::move(other.dir_)),
      flag_(std::move(other.flag_)),
      set_name_(std::move(other.set_name_)),
      fd_(std::exchange(other.fd_, -1)),
      slot_(std::exchange(other.slot_, nullptr)),
      staged_(std::move(other.staged_)),
      in_place_(std::move(other.in_place_)),
      committed_(std::exchange(other.committed_, true)),
      abandoned_(std::exchange(other.abandoned_, false)) {}

OutputDir::~OutputDir() {
  if (slot_ != nullptr) {
    if (!committed_ && !abandoned_ && slot_->phase == oj::kStaging) remove_temporaries();
    slot_->phase = oj::kFree;
  }
  if (fd_ >= 0) ::close(fd_);
}

void OutputDir::remove_temporaries() {
  for (const std::string& temp : staged_) ::unlinkat(fd_, temp.c_str(), 0);
  staged_.clear();
  if (slot_ != nullptr) slot_->count = 0;
}

Status OutputDir::interrupted(const char* state) const {
  return Status::io_error(flag_ + ": interrupted by signal " +
                          std::to_string(oj::interrupted()) + state);
}

Status OutputDir::write(const std::string& name, const std::string& text) {
  if (!oj::plain_name(name)) {
    return Status::internal(flag_ + ": " + dir_ + ": not a plain file name: \"" + name + "\"");
  }
  return stage(name, text);
}

Status OutputDir::stage(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(dir_) / name).string();
  if (oj::interrupted() != 0) return interrupted("");
  if (committed_ || slot_ == nullptr) {
    return Status::internal(flag_ + ": " + path + " written after the set was committed");
  }
  const int file = static_cast<int>(staged_.size());
  bool regular = true;
  if (file_kind(fd_, name, &regular) == 0 && !regular) {
    // A device, FIFO or link in the set's place: written in place, as by
    // write_output_file (the header), and outside the rollback.
    int why = g_write_hook != nullptr ? g_write_hook(file) : 0;
    if (why == 0) why = write_all(path, text);
    if (why != 0) {
      remove_temporaries();
      return cannot_write(flag_, path, why);
    }
    if (std::find(in_place_.begin(), in_place_.end(), name) == in_place_.end()) {
      in_place_.push_back(name);
    }
    return Status();
  }
  int index = 0;
  while (index < slot_->count && name != slot_->entries[index].target) ++index;
  if (index == slot_->count) {
    // Registered before the file exists, so that an interrupt while it is
    // written still removes it.
    if (index >= oj::kEntries) {
      return Status::io_error(flag_ + ": cannot write " + path + ": more than " +
                              std::to_string(oj::kEntries) + " files in one set");
    }
    if (!oj::fill_entry(&slot_->entries[index], name, ::getpid(), oj::kStaged)) {
      return cannot_write(flag_, path, ENAMETOOLONG);
    }
    slot_->count = index + 1;
    staged_.push_back(slot_->entries[index].temp);
  }
  int why = g_write_hook != nullptr ? g_write_hook(index) : 0;
  if (why == 0) why = write_all((std::filesystem::path(dir_) / slot_->entries[index].temp).string(), text);
  if (why != 0) {
    remove_temporaries();
    return cannot_write(flag_, path, why);
  }
  return Status();
}

Status OutputDir::plan_commit() {
  // The previous set of this command, from its manifest (a line that is not
  // a plain file name is ignored: the manifest is ours, but may be edited).
  const std::string manifest = oj::kManifestPrefix + set_name_;
  std::vector<std::string> old_names;
  {
    std::ifstream in(std::filesystem::path(dir_) / manifest, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      if (oj::plain_name(line)) old_names.push_back(line);
    }
  }
  std::string manifest_text;
  for (int i = 0; i < slot_->count; ++i) manifest_text += std::string(slot_->entries[i].target) + "\n";
  for (const std::string& name : in_place_) manifest_text += name + "\n";
  LLMPLAN_RETURN_IF_ERROR(stage(manifest, manifest_text));

  std::set<std::string> new_names(in_place_.begin(), in_place_.end());
  for (int i = 0; i < slot_->count; ++i) {
    oj::Entry& e = slot_->entries[i];
    new_names.insert(e.target);
    bool regular = false;
    const int why = file_kind(fd_, e.target, &regular);
    if (why == 0 && regular) {
      e.kind = oj::kReplace;
    } else if (why == ENOENT) {
      e.kind = oj::kCreate;
    } else {
      // Nothing changed yet: the temporaries go, the old set stays.
      const std::string path = (std::filesystem::path(dir_) / e.target).string();
      remove_temporaries();
      return Status::io_error(flag_ + ": cannot replace " + path + ": " +
                              (why != 0 ? std::strerror(why) : "not a regular file") +
                              " (the previous files are kept)");
    }
  }
  for (const std::string& name : old_names) {
    bool regular = false;
    if (new_names.count(name) != 0 || file_kind(fd_, name, &regular) != 0 || !regular) continue;
    if (slot_->count >= oj::kEntries) break;  // left in place: more than a set can hold
    if (oj::fill_entry(&slot_->entries[slot_->count], name, ::getpid(), oj::kRemove)) {
      slot_->count = slot_->count + 1;
    }
  }
  return Status();
}

Status OutputDir::roll_back(const std::string& name, int why) {
  oj::roll_back(fd_, slot_->entries, slot_->count, slot_->journal_temp);
  slot_->phase = oj::kStaging;
  slot_->count = 0;
  staged_.clear();
  return Status::io_error(flag_ + ": cannot replace " + (std::filesystem::path(dir_) / name).string() +
                          ": " + std::strerror(why) + " (the previous files are kept)");
}

Status OutputDir::step(int* number, int (*op)(int, const char*, const char*), const char* from,
                       const char* to, const std::string& name) {
  const Step act = g_step_hook != nullptr ? g_step_hook(*number) : Step::kGoOn;
  ++*number;
  if (oj::interrupted() != 0) return interrupted(" (the previous files are kept)");
  if (act == Step::kAbandon) {
    abandoned_ = true;
    return abandoned();
  }
  if (act == Step::kFail) return roll_back(name, EIO);
  if (slot_->phase == oj::kStaging) slot_->phase = oj::kCommitting;  // the journal's rename: rolls back from here
  if (op(fd_, from, to) != 0) return roll_back(name, errno);
  return Status();
}

Status OutputDir::commit() {
  if (committed_ || slot_ == nullptr) return Status::internal(flag_ + ": " + dir_ + ": committed twice");
  if (oj::interrupted() != 0) return interrupted(" (the previous files are kept)");
  LLMPLAN_RETURN_IF_ERROR(plan_commit());

  // The journal, whole by rename; from its rename on, a failure or a signal
  // rolls back, and a process killed without a handler leaves it for the
  // next run to roll back.
  const long pid = ::getpid();
  std::snprintf(slot_->journal_temp, oj::kMaxName, "%s", oj::temp_name(oj::kJournal + 1, pid).c_str());
  if (const int why = write_all((std::filesystem::path(dir_) / slot_->journal_temp).string(),
                                oj::journal_text(*slot_, pid));
      why != 0) {
    return roll_back(oj::kJournal, why);
  }
  auto do_rename = [](int fd, const char* from, const char* to) { return ::renameat(fd, from, fd, to); };
  auto keep_old = [](int fd, const char* from, const char* to) {
    // A hard link keeps the old file under its name until the new one is
    // renamed over it; where links are not supported, a rename.
    if (::linkat(fd, from, fd, to, 0) == 0) return 0;
    return ::renameat(fd, from, fd, to);
  };
  auto do_unlink = [](int fd, const char* from, const char*) { return ::unlinkat(fd, from, 0); };
  int n = 0;
  LLMPLAN_RETURN_IF_ERROR(step(&n, +do_rename, slot_->journal_temp, oj::kJournal, oj::kJournal));
  slot_->journal_temp[0] = '\0';
  for (int i = 0; i < slot_->count; ++i) {
    oj::Entry& e = slot_->entries[i];
    if (e.kind == oj::kReplace || e.kind == oj::kRemove) {
      LLMPLAN_RETURN_IF_ERROR(
          step(&n, e.kind == oj::kReplace ? +keep_old : +do_rename, e.target, e.backup, e.target));
    }
    if (e.kind == oj::kReplace || e.kind == oj::kCreate) {
      LLMPLAN_RETURN_IF_ERROR(step(&n, +do_rename, e.temp, e.target, e.target));
      e.temp[0] = '\0';  // renamed: nothing left to remove under that name
    }
  }
  // The commit point: without the journal, the new set stands.
  LLMPLAN_RETURN_IF_ERROR(step(&n, +do_unlink, oj::kJournal, nullptr, oj::kJournal));
  slot_->phase = oj::kCommitted;
  committed_ = true;
  // After it, only the old copies remain to go (a test may stop here too).
  const Step act = g_step_hook != nullptr ? g_step_hook(n) : Step::kGoOn;
  if (oj::interrupted() != 0) return interrupted(" (the new files are in place)");
  if (act == Step::kAbandon) {
    abandoned_ = true;
    return abandoned();
  }
  oj::remove_backups(*slot_);
  slot_->phase = oj::kFree;
  return Status();
}

namespace output_files_testing {

void set_step_hook(StepHook hook) { g_step_hook = hook; }
void set_write_hook(WriteHook hook) { g_write_hook = hook; }
void set_signals_return(bool returns) { oj::set_signals_return(returns); }
void reset() {
  g_step_hook = nullptr;
  g_write_hook = nullptr;
  oj::set_signals_return(false);
  oj::clear_interrupted();
}

}  // namespace output_files_testing

}  // namespace llmplan::planner
