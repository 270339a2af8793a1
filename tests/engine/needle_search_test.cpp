// The prefilter's one-pass anchor search (tools/kvlint/engine/needle_search.hpp) against memmem.
#include "tools/kvlint/engine/needle_search.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvlint {
namespace {

TEST(NeedleSearch, AgreesWithMemmemAtEveryOffset) {
  const std::vector<std::vector<std::string>> sets = {
      {"use_cache", "DynamicCache", "kvlint", "cuda.graph"}, {"abc", "use_cache"}, {"zzzzzzzz"}};
  for (const auto& needles : sets) {
    const NeedleSearch search(needles);
    for (const auto& needle : needles)
      for (std::size_t pad = 0; pad < 12; ++pad)
        for (std::size_t tail = 0; tail < 3; ++tail) {
          const std::string text = std::string(pad, 'x') + "\n" + needle + std::string(tail, 'y');
          EXPECT_EQ(search.find(text), pad + 1) << needle << " pad " << pad;
          EXPECT_EQ(search.find(text, pad + 2), std::string::npos) << needle << " pad " << pad;
          EXPECT_FALSE(search.found_in(text.substr(0, pad + needle.size())));  // cut short by one byte
        }
    EXPECT_FALSE(search.found_in("use_cach DynamicCach kvlin cuda.grap zzzzzzz ab"));
    EXPECT_EQ(search.find(""), std::string::npos);
  }
}

}  // namespace
}  // namespace kvlint
