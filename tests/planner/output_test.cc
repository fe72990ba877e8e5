// What every command shares for output: file writes that report a full disk,
// and the progress display on stderr.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "planner/cli/command.h"
#include "planner/cli/progress.h"

namespace llmplan::planner {
namespace {

TEST(WriteOutputFile, WritesTheBytesAsGiven) {
  const std::string path = (std::filesystem::path(testing::TempDir()) / "llmplan_output.txt").string();
  ASSERT_TRUE(write_output_file(path, std::string("a\0b\n", 4), "--out").ok());
  std::ifstream in(path, std::ios::binary);
  const std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(back, std::string("a\0b\n", 4));
}

TEST(WriteOutputFile, AFullDeviceIsAnErrorNamingFlagPathAndReason) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const Status s = write_output_file("/dev/full", std::string(100, 'x'), "--out");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "--out: cannot write /dev/full: No space left on device");
  // Also through a link, as `--out DIR` with DIR/result.json -> /dev/full.
  const auto dir = std::filesystem::path(testing::TempDir()) / "llmplan_full_link";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/dev/full", dir / "result.json");
  const Status l = write_output_file((dir / "result.json").string(), "{}\n", "--out");
  EXPECT_FALSE(l.ok());
  EXPECT_NE(l.message().find("No space left on device"), std::string::npos) << l.message();
}

TEST(WriteOutputFile, AMissingDirectoryIsAnError) {
  const Status s = write_output_file("/nonexistent-llmplan-dir/x.csv", "x", "--write-jobs");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "--write-jobs: cannot write /nonexistent-llmplan-dir/x.csv: No such file or directory");
}

// These need stderr not to be a terminal (ctest's case); run by hand on a
// terminal they are skipped.
TEST(Progress, WritesWholeLinesWhenAskedAndNotATerminal) {
  if (isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal";
  testing::internal::CaptureStderr();
  {
    auto p = std::make_shared<Progress>("sweep", "plans", /*requested=*/true);
    EXPECT_TRUE(p->enabled());
    auto tick = counter(p);
    ASSERT_TRUE(static_cast<bool>(tick));
    tick(1, 4);
    tick(2, 4);  // within a second of the first line: held back
    tick(4, 4);  // the last is always printed
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("sweep: 1/4 plans (25 %)"), 0u) << err;
  EXPECT_EQ(err.find("2/4"), std::string::npos) << err;
  EXPECT_NE(err.find("\nsweep: 4/4 plans (100 %)"), std::string::npos) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  EXPECT_EQ(err.back(), '\n');
}

TEST(Progress, IsSilentWhenNotAskedAndNotATerminal) {
  if (isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal";
  testing::internal::CaptureStderr();
  {
    auto p = std::make_shared<Progress>("llmplan", "plans", /*requested=*/false);
    EXPECT_FALSE(p->enabled());
    EXPECT_FALSE(static_cast<bool>(counter(p)));
    p->update(1, 1);
    p->message("calibrating", /*final=*/true);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Progress, MessagesCarryTheElapsedTime) {
  if (isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal";
  testing::internal::CaptureStderr();
  {
    Progress p("calibrate", "", /*requested=*/true);
    p.message("start 1 of 1, iteration 0, cost 2.5");
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("calibrate: start 1 of 1, iteration 0, cost 2.5 (elapsed ", 0), 0u) << err;
}

}  // namespace
}  // namespace llmplan::planner
