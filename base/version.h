// What build of llmplan this is: the project version (CMake's
// PROJECT_VERSION) and the git commit the binary was built from.
//
// The commit is read at build time, not configure time (see
// planner/cli/packaging/git_commit.cmake), so a rebuild after a commit or an edit
// reports it; only version.cc recompiles when it changes.
#ifndef LLMPLAN_BASE_VERSION_H_
#define LLMPLAN_BASE_VERSION_H_

#include <string>
#include <string_view>

namespace llmplan {

// The project version, e.g. "0.1.0".
const char* project_version();

// The short hash of the commit the binary was built from, with "-dirty"
// appended when tracked files had uncommitted changes (e.g. "1880ebf",
// "1880ebf-dirty"), or "unknown" when it was not built from a git checkout.
const char* git_commit();

// The line `--version` prints: "<program> <version> (git <commit>)", e.g.
// "llmplan 0.1.0 (git 1880ebf)". Thread-safe (reads constants only).
std::string version_line(std::string_view program);

// The same line with a note on how this build was configured before the
// closing parenthesis: "<program> <version> (git <commit>; <note>)", e.g.
// "llmplan 0.1.0 (git 1880ebf; mpi: Open MPI v4.1.4)". Thread-safe.
std::string version_line(std::string_view program, std::string_view note);

}  // namespace llmplan

#endif  // LLMPLAN_BASE_VERSION_H_
