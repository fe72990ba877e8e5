#include "planner/cli/output_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace llmplan::planner {
namespace {

// --- The registry a signal handler reads (see the header) -----------------
// Fixed-size arrays of C strings: a handler may only call async-signal-safe
// functions (unlink, signal, raise) on memory it does not allocate.
constexpr size_t kMaxPath = 1024;
constexpr int kSlots = 4;             // OutputDirs alive at once
constexpr int kFilesPerSlot = 512;    // a frontier study over 64 GPUs writes 260

char g_temp[kMaxPath];                // the temporary file being written
volatile std::sig_atomic_t g_temp_set = 0;
struct Slot {
  char paths[kFilesPerSlot][kMaxPath];
  volatile std::sig_atomic_t count;
  volatile std::sig_atomic_t active;
};
Slot g_slots[kSlots];
bool g_handlers_installed = false;

extern "C" void remove_partial_output(int sig) {
  if (g_temp_set) ::unlink(g_temp);
  for (Slot& s : g_slots) {
    if (!s.active) continue;
    for (int i = 0; i < s.count; ++i) ::unlink(s.paths[i]);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  if (g_handlers_installed) return;
  g_handlers_installed = true;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup
    struct sigaction sa {};
    sa.sa_handler = remove_partial_output;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

bool copy_path(char* to, const std::string& from) {
  if (from.size() >= kMaxPath) return false;
  std::memcpy(to, from.c_str(), from.size() + 1);
  return true;
}

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

}  // namespace

Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& flag) {
  install_handlers();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device, FIFO or link: written in place (see the header).
    const int why = write_all(path, text);
    return why == 0 ? Status() : cannot_write(flag, path, why);
  }
  const std::filesystem::path target(path);
  const std::filesystem::path temp =
      target.parent_path() /
      ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  const bool registered = copy_path(g_temp, temp.string());
  g_temp_set = registered ? 1 : 0;
  int why = write_all(temp.string(), text);
  if (why == 0 && std::rename(temp.c_str(), path.c_str()) != 0) why = errno;
  if (why != 0) ::unlink(temp.c_str());
  g_temp_set = 0;
  return why == 0 ? Status() : cannot_write(flag, path, why);
}

Result<OutputDir> OutputDir::open(const std::string& dir, const std::string& flag) {
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
  return OutputDir(dir, flag, fd);
}

OutputDir::OutputDir(std::string dir, std::string flag, int fd)
    : dir_(std::move(dir)), flag_(std::move(flag)), fd_(fd) {
  for (int i = 0; i < kSlots; ++i) {
    if (!g_slots[i].active) {
      g_slots[i].count = 0;
      g_slots[i].active = 1;
      registry_slot_ = i;
      break;
    }
  }
}

OutputDir::OutputDir(OutputDir&& other) noexcept
    : dir_(std::move(other.dir_)),
      flag_(std::move(other.flag_)),
      fd_(std::exchange(other.fd_, -1)),
      registry_slot_(std::exchange(other.registry_slot_, -1)),
      written_(std::move(other.written_)),
      kept_(std::exchange(other.kept_, true)) {}

OutputDir::~OutputDir() {
  if (registry_slot_ >= 0) g_slots[registry_slot_].active = 0;
  if (!kept_) {
    for (const std::string& path : written_) ::unlink(path.c_str());
  }
  if (fd_ >= 0) ::close(fd_);
}

Status OutputDir::write(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(dir_) / name).string();
  // Registered before the rename, so that an interrupt right after it still
  // removes the file.
  if (registry_slot_ >= 0) {
    Slot& s = g_slots[registry_slot_];
    if (s.count < kFilesPerSlot && copy_path(s.paths[s.count], path)) s.count = s.count + 1;
  }
  written_.push_back(path);
  return write_output_file(path, text, flag_);
}

void OutputDir::keep() {
  kept_ = true;
  if (registry_slot_ >= 0) g_slots[registry_slot_].active = 0;
}

}  // namespace llmplan::planner
