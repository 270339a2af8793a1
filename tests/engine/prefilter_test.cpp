// The prefilter's text tests (engine/prefilter.cpp, PrefilterScan): where it searches for what a
// front-end text test looks for in its own way, it answers as that test does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/python/text_scan.hpp"
#include "tools/kvlint/engine/project_run.hpp"

namespace kvlint {
namespace {

// Every allocation and every marker alone, each marker with each allocation (at the start, in
// the middle, at the end of the text), and the short markers inside longer names.
TEST(PrefilterScan, RawKvTextAnswersAsTheFrontEndsTest) {
  const pipeline::PrefilterScan scan{facts::Vocabulary{}};
  std::vector<std::string> texts = {"", "x = 1\n", "KVx = torch.zeros(3)", "self.Kv\n", "zeros"};
  for (std::string_view allocation : python::raw_kv_allocations()) {
    texts.emplace_back(allocation);
    for (std::string_view marker : python::raw_kv_markers()) {
      texts.emplace_back(marker);
      texts.push_back(std::string(marker) + " = torch." + std::string(allocation) + "n)\n");
      texts.push_back("# pad\nbuf = " + std::string(allocation) + "2)  # " + std::string(marker));
      texts.push_back(std::string(allocation).substr(1) + std::string(marker).substr(1));
    }
  }
  for (const std::string& text : texts)
    EXPECT_EQ(scan.may_hold_raw_kv(text), python::may_hold_raw_kv(text)) << text;
}

}  // namespace
}  // namespace kvlint
