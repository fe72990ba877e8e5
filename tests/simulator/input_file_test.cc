// read_input_file: the one way llmplan reads a user's file, with its size
// limit (issue 17, defect 5: a 100 MB input made `validate` reach 19 GB and
// /dev/zero was read forever).
#include "base/input_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace llmplan {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / ("llmplan_input_file_" + name)).string();
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(InputFile, ReadsAFileAsItIs) {
  const std::string text = std::string("a,b\r\n1,2\n") + '\0' + "tail";
  Result<std::string> r = read_input_file(write_file("plain.csv", text));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, text);
  Result<std::string> empty = read_input_file(write_file("empty.csv", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST(InputFile, MissingFileAndDirectory) {
  Result<std::string> missing = read_input_file("/nonexistent/run.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/run.json: cannot open file");
  const std::string dir = testing::TempDir();
  Result<std::string> directory = read_input_file(dir);
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(directory.status().message(), dir + ": is a directory, not a file");
}

TEST(InputFile, LimitIsInclusive) {
  const std::string path = write_file("ten.txt", "0123456789");
  EXPECT_TRUE(read_input_file(path, 10).ok());
  Result<std::string> r = read_input_file(path, 9);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            path + ": file too large: 10 bytes, more than the 9 bytes limit for input files");
}

TEST(InputFile, RefusesARegularFileOverTheCapWithoutReadingIt) {
  // A sparse file one byte over 16 MiB: refused by its size at once.
  const std::string path = temp_path("huge.csv");
  { std::ofstream touch(path); }
  std::filesystem::resize_file(path, kMaxInputFileBytes + 1);
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> r = read_input_file(path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::filesystem::remove(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            path + ": file too large: 16777217 bytes, more than the 16 MiB limit for input files");
  EXPECT_LT(seconds, 1.0);
}

TEST(InputFile, StopsReadingAnEndlessDeviceAtTheCap) {
  // /dev/zero is not a regular file and never ends: reading stops after
  // 16 MiB (before the fix it went on until memory ran out).
  Result<std::string> r = read_input_file("/dev/zero");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "/dev/zero: more than the 16 MiB limit for input files (not a regular file; reading "
            "stopped there)");
  EXPECT_EQ(read_input_file("/dev/zero", 1000).status().message(),
            "/dev/zero: more than the 1000 bytes limit for input files (not a regular file; "
            "reading stopped there)");
}

// A pipe whose writer never stops, read through /proc/self/fd (as a shell's
// process substitution <(yes) would be).
TEST(InputFile, StopsReadingAnEndlessPipeAtTheCap) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    // Without a reader write() fails with EPIPE instead of killing the test.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    const std::string chunk(1 << 16, 'y');
    while (write(fd, chunk.data(), chunk.size()) > 0) {
    }
    close(fd);
  });
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  Result<std::string> r = read_input_file(path, 1 << 20);
  close(fds[0]);  // the writer's next write fails and it stops
  writer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            path +
                ": more than the 1 MiB limit for input files (not a regular file; reading "
                "stopped there)");
}

TEST(InputFile, ReadsAShortPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "x,y\n1,2\n", 8), 8);
  close(fds[1]);
  Result<std::string> r = read_input_file("/proc/self/fd/" + std::to_string(fds[0]));
  close(fds[0]);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "x,y\n1,2\n");
}

}  // namespace
}  // namespace llmplan
