#include "base/version.h"

// Generated at build time by planner/cli/packaging/git_commit.cmake; defines
// LLMPLAN_GIT_COMMIT. LLMPLAN_PROJECT_VERSION comes from CMake.
#include "llmplan_git_commit.h"

namespace llmplan {

const char* project_version() { return LLMPLAN_PROJECT_VERSION; }

const char* git_commit() { return LLMPLAN_GIT_COMMIT; }

std::string version_line(std::string_view program) {
  std::string line(program);
  line += ' ';
  line += project_version();
  line += " (git ";
  line += git_commit();
  line += ')';
  return line;
}

std::string version_line(std::string_view program, std::string_view note) {
  std::string line = version_line(program);
  line.pop_back();  // ')'
  line += "; ";
  line += note;
  line += ')';
  return line;
}

}  // namespace llmplan
