// The subcommands of the `llmplan` executable. Each add_*_command registers
// one CLI11 subcommand on `app`; when the user picks it, its callback stores
// the work to do in *action, which main runs after parsing.
//
// An action returns OK or a Status whose message main prints as one line
// ("llmplan: error: ...") before exiting non-zero.
#ifndef LLMPLAN_PLANNER_COMMAND_H_
#define LLMPLAN_PLANNER_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/status.h"

namespace llmplan::planner {

// Options every command shares, filled by the root parser.
struct GlobalOptions {
  std::vector<std::string> preset_files;  // --preset-file, repeatable
};

using Action = std::function<Status()>;

// Built-in presets plus the user's --preset-file entries.
Result<presets::Catalog> load_catalog(const GlobalOptions& global);

// [presets commands]
// [simulator commands]
// [scaling commands]
// [accuracy commands]
// [planner commands]
// [schedule commands]

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_COMMAND_H_
