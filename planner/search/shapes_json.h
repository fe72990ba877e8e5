// --shapes FILE and --model FILE: user-given model shapes for the planner.
//
// A shapes file is a JSON array of entries; an entry is an object of model
// fields (simulator/model_json.h: layers, hidden, heads, kv_heads,
// ffn_hidden, seq, vocab, activation, positions, tied_embeddings,
// linear_bias, name) applied on top of a base: the planner's family
// template (--family, --seq, --vocab), or, with "preset": NAME, that model
// preset (`llmplan presets --kind model`), e.g.
//   [{"preset": "llama3-70b"}, {"preset": "llama3-70b", "layers": 96}]
#ifndef LLMPLAN_PLANNER_SEARCH_SHAPES_JSON_H_
#define LLMPLAN_PLANNER_SEARCH_SHAPES_JSON_H_

#include <boost/json.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "presets/catalog.h"
#include "simulator/model.h"
#include "base/status.h"

namespace llmplan::planner {

// The most shapes a shapes file may hold (the planner simulates plans for
// every one).
inline constexpr size_t kMaxShapes = 1000;

// One entry (an object; `where` names it in errors, e.g. "shapes.json[2]"):
// "preset" looked up in `catalog` (null: presets not available, an error),
// the other keys applied on top, the result validate()d. InvalidArgument
// naming the JSON path ("shapes.json[2].layers: ...", "shapes.json[0].preset:
// unknown model preset 'x'"). `fields`, when not empty, is the path its keys
// are named under instead ("--model m.json: model", so that a key reads
// "--model m.json: model.layers", as validate()'s "model.ffn_hidden" does).
Result<simulator::Model> parse_shape_entry(const boost::json::value& entry, const std::string& where,
                                           const simulator::Model& base,
                                           const presets::Catalog* catalog,
                                           const std::string& fields = "");

// Reads a JSON array of 1 to kMaxShapes entries (parse_shape_entry). Errors,
// one line: ParseError for malformed JSON (`source_name`:line:col),
// InvalidArgument naming the entry otherwise. Thread-safe.
Result<std::vector<simulator::Model>> parse_shapes_text(std::string_view text,
                                                        const std::string& source_name,
                                                        const simulator::Model& base,
                                                        const presets::Catalog* catalog);
// The same with a GPT base of this seq and vocab and no presets.
Result<std::vector<simulator::Model>> parse_shapes_text(std::string_view text,
                                                        const std::string& source_name,
                                                        int seq_length, int vocab_size);

// Reads the file at `path` (base/input_file.h: at most 16 MiB) and
// parses it as above; NotFound/IoError/InvalidArgument name the path.
Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path,
                                                       const simulator::Model& base,
                                                       const presets::Catalog* catalog);
Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path, int seq_length,
                                                       int vocab_size);

// --model NAME|FILE: a model preset by name, else a file holding one entry
// (an object, parse_shape_entry with "--model FILE: model.KEY" in errors).
// InvalidArgument "--model: 'x' is neither a model preset (...) nor a file".
Result<simulator::Model> resolve_pinned_model(const std::string& name_or_file,
                                              const simulator::Model& base,
                                              const presets::Catalog& catalog);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_SHAPES_JSON_H_
