#include "planner/shapes_json.h"

#include "simulator/model_json.h"
#include "simulator/strict_json.h"

namespace llmplan::planner {

Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path, int seq_length,
                                                       int vocab_size) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse_file(path));
  if (!v.is_array() || v.as_array().empty()) {
    return Status::invalid_argument("--shapes " + path + ": expected a non-empty JSON array of models");
  }
  std::vector<simulator::Model> out;
  int i = 0;
  for (const boost::json::value& e : v.as_array()) {
    simulator::Model m;
    m.name = "shape" + std::to_string(i);
    m.seq_length = seq_length;
    m.vocab_size = vocab_size;
    const std::string where = path + "[" + std::to_string(i) + "]";
    LLMPLAN_RETURN_IF_ERROR(simulator::apply_model_json(e, where, &m));
    LLMPLAN_RETURN_IF_ERROR(simulator::validate(m).with_prefix(where));
    out.push_back(m);
    ++i;
  }
  return out;
}

}  // namespace llmplan::planner
