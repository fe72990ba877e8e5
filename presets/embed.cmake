# Writes OUTPUT: a C++ file defining the built-in preset files as string
# literals. Invoked at build time with -DOUTPUT=... -DINPUTS=a.json;b.json.
set(content "// Generated from presets/*.json by presets/embed.cmake. Do not edit.\n")
string(APPEND content "#include \"presets/embedded.h\"\n\nnamespace llmplan::presets {\n\n")
string(APPEND content "const std::vector<EmbeddedFile>& embedded_files() {\n")
string(APPEND content "  static const std::vector<EmbeddedFile> kFiles = {\n")
foreach(input IN LISTS INPUTS)
  file(READ "${input}" text)
  get_filename_component(name "${input}" NAME)
  string(APPEND content "    {\"${name}\", R\"llmplan_json(${text})llmplan_json\"},\n")
endforeach()
string(APPEND content "  };\n  return kFiles;\n}\n\n}  // namespace llmplan::presets\n")
file(WRITE "${OUTPUT}.tmp" "${content}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
