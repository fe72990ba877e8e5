// What the presets tests share: the built-in catalog, loaded with a failed
// expectation (and an empty catalog) when it does not load, and a substring
// check for messages.
#ifndef LLMPLAN_TESTS_PRESETS_TEST_CATALOG_H_
#define LLMPLAN_TESTS_PRESETS_TEST_CATALOG_H_

#include <gtest/gtest.h>

#include <string>

#include "presets/catalog.h"

namespace llmplan::presets::fixtures {

// The built-in presets; an expectation fails when they do not load.
inline Catalog builtin() {
  Result<Catalog> c = Catalog::builtin();
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Catalog();
}

// Whether `needle` stands anywhere in `haystack`.
inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace llmplan::presets::fixtures

#endif  // LLMPLAN_TESTS_PRESETS_TEST_CATALOG_H_
