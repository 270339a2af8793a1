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

// A needle that starts with an identifier byte counts only at a word start; others anywhere.
// Both search paths: sampled (needles of 4+ bytes) and memmem (a 3-byte needle in the set).
TEST(NeedleSearch, WordStartSkipsOccurrencesInsideALongerName) {
  for (const auto& short_needle : {std::string(), std::string("Gr(")}) {
    std::vector<std::string> needles = {"Graph(", "Graph.", "<Graph>"};
    if (!short_needle.empty()) needles.push_back(short_needle);
    const NeedleSearch word(needles, NeedleSearch::Start::WordStart);
    const NeedleSearch anywhere(needles);
    for (const std::string prefix : {"CUDA", "x_", "9", "sub.CUDA", "\xC3\xA9"}) {  // "é": a non-ASCII name
      const std::string text = "g = " + prefix + "Graph(1)\nh = " + prefix + "Graph.make()\n";
      EXPECT_FALSE(word.found_in(text)) << text;
      EXPECT_TRUE(anywhere.found_in(text)) << text;
    }
    const std::vector<std::pair<std::string, std::size_t>> whole = {{"Graph()", 0},
                                                                    {"g = nx.Graph()", 7},
                                                                    {"(Graph.make())", 1},
                                                                    {"x=[Graph(1)]", 3},
                                                                    {"std::unique_ptr<Graph> g_;", 15},
                                                                    {"CUDAGraph()\nnx.Graph()", 15}};
    for (const auto& [text, at] : whole) EXPECT_EQ(word.find(text), at) << text;
    // An occurrence inside a longer name before a whole one on the same line.
    EXPECT_EQ(word.find("a = CUDAGraph(); b = Graph()"), 21u);
  }
}

}  // namespace
}  // namespace kvlint
