// `llmplan presets` (list) and `llmplan presets show NAME`.
#include <cstdio>
#include <memory>
#include <string>

#include "planner/cli/command.h"
#include "presets/preset_json.h"
#include "reports/table.h"

namespace llmplan::planner {
namespace {

struct PresetsOptions {
  std::string format = "text";
  std::string kind;  // empty: all kinds
  std::string name;  // for `show`
};

Status list_presets(const GlobalOptions& global, const PresetsOptions& options) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  std::vector<presets::PresetInfo> infos;
  for (presets::PresetInfo& info : catalog.list()) {
    if (options.kind.empty() || options.kind == presets::to_string(info.kind)) {
      infos.push_back(std::move(info));
    }
  }
  if (options.format == "json") {
    return write_stdout(presets::preset_list_json(infos));
  }
  reports::Table table({"kind", "name", "description", "origin"});
  for (const presets::PresetInfo& info : infos) {
    table.add_row({presets::to_string(info.kind), info.name, info.description, info.origin});
  }
  return write_stdout(table.text());
}

Status show_preset(const GlobalOptions& global, const PresetsOptions& options) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, catalog.show(options.name));
  return write_stdout(text);
}

}  // namespace

void add_presets_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto options = std::make_shared<PresetsOptions>();
  CLI::App* cmd =
      app.add_subcommand("presets",
                         "List the presets: GPUs, clusters, models, scaling laws, prices and "
                         "measured collectives (built-in, plus --preset-file entries)");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--format", options->format, "Output format of the list: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--kind", options->kind, "List only this kind")
      ->check(CLI::IsMember({"gpu", "cluster", "model", "law", "price", "collectives"}));
  CLI::App* show = cmd->add_subcommand("show", "Print one preset as JSON, as stored");
  show->add_option("name", options->name, "Preset name (see `llmplan presets`)")->required();
  cmd->callback([&global, action, options, show] {
    if (show->parsed()) {
      *action = [&global, options] { return show_preset(global, *options); };
    } else {
      *action = [&global, options] { return list_presets(global, *options); };
    }
  });
}

}  // namespace llmplan::planner
