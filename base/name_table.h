// One table of names for an enum: to_string and the parser read the same
// rows, so a name cannot be spelt two ways.
//
//   constexpr Named<FlopCount> kFlopCountNames[] = {
//       {"6nd", FlopCount::kSixND}, {"detailed", FlopCount::kDetailed}};
//   const char* to_string(FlopCount c) { return name_in(kFlopCountNames, c); }
//   FlopCount c;
//   if (!parse_in(kFlopCountNames, text, &c)) ... names_text(kFlopCountNames) ...
#ifndef LLMPLAN_BASE_NAME_TABLE_H_
#define LLMPLAN_BASE_NAME_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

namespace llmplan {

// One row: a value of E and its name.
template <typename E>
struct Named {
  const char* name;
  E value;
};

// The name of `value` in `table`, "?" when it has none.
template <typename Table, typename E>
const char* name_in(const Table& table, E value) {
  for (const auto& row : table) {
    if (row.value == value) return row.name;
  }
  return "?";
}

// Looks `text` up in `table`: true and `*out` set when found.
template <typename Table, typename E>
bool parse_in(const Table& table, std::string_view text, E* out) {
  for (const auto& row : table) {
    if (text == row.name) {
      *out = row.value;
      return true;
    }
  }
  return false;
}

// Every name of `table`, in order.
template <typename Table>
std::vector<std::string> names_in(const Table& table) {
  std::vector<std::string> out;
  for (const auto& row : table) out.emplace_back(row.name);
  return out;
}

// The names joined for a message: "a, b or c".
template <typename Table>
std::string names_text(const Table& table) {
  const std::vector<std::string> names = names_in(table);
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return s;
}

}  // namespace llmplan

#endif  // LLMPLAN_BASE_NAME_TABLE_H_
