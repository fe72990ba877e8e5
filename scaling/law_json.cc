#include "scaling/law_json.h"

#include "simulator/input_file.h"
#include "simulator/strict_json.h"

namespace llmplan::scaling {

Result<LossLaw> law_from_json(const boost::json::value& v, const std::string& path) {
  json::JsonObjectReader reader(v, path);
  LossLaw law;
  reader.read_string("name", &law.name, /*required=*/true);
  if (reader.status().ok() && law.name.empty()) reader.fail("name", "must not be empty");
  reader.read_string("description", &law.description);
  reader.read_string("source", &law.source);
  reader.ignore("note");
  reader.read_double("E", &law.E, /*required=*/true);
  reader.read_double("A", &law.A, /*required=*/true);
  reader.read_double("B", &law.B, /*required=*/true);
  reader.read_double("alpha", &law.alpha, /*required=*/true);
  reader.read_double("beta", &law.beta, /*required=*/true);
  LLMPLAN_RETURN_IF_ERROR(reader.finish());
  LLMPLAN_RETURN_IF_ERROR(validate(law).with_prefix(path));
  return law;
}

Result<LossLaw> parse_law_text(std::string_view text, const std::string& source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse(text, source_name));
  return law_from_json(v, source_name);
}

Result<LossLaw> read_law_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_law_text(text, path);
}

boost::json::value law_to_json(const LossLaw& law) {
  boost::json::object o;
  o["name"] = law.name;
  if (!law.description.empty()) o["description"] = law.description;
  if (!law.source.empty()) o["source"] = law.source;
  o["E"] = law.E;
  o["A"] = law.A;
  o["B"] = law.B;
  o["alpha"] = law.alpha;
  o["beta"] = law.beta;
  return o;
}

}  // namespace llmplan::scaling
