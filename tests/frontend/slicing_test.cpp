// Parse only what can matter (analyzers/python/slicing.hpp): the top-level split on tricky
// inputs, the plan, and facts from a sliced parse against the whole parse.
#include "analyzers/python/slicing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/python/python_frontend.hpp"
#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"

namespace kvlint {
namespace {

using python::plan_slices;
using python::split_top_level;
using python::TopLevelBlock;

std::vector<std::string> block_names(std::string_view source) {
  std::vector<std::string> out;
  for (const auto& b : split_top_level(source))
    out.push_back(b.kind == TopLevelBlock::Kind::Other ? "-" : std::string(b.name));
  return out;
}

// Padding that no anchor names, so the plan has something worth dropping.
std::string filler(std::string_view name) {
  std::string out = "class " + std::string(name) + ":\n";
  for (int i = 0; i < 200; ++i)
    out += "    def m" + std::to_string(i) + "(self):\n        return self.x + 1\n";
  return out;
}

TEST(TopLevelSplit, StringsCommentsBracketsAndContinuationsDoNotStartBlocks) {
  const std::string source =
      "import os\n"
      "DOC = \"\"\"\n"
      "class InDocstring:\n"
      "    pass\n"
      "\"\"\"\n"
      "TABLE = {\n"
      "'key': 1,\n"
      "}\n"
      "x = 1 + \\\n"
      "2\n"
      "s = 'a \\' class NotAClass:'\n"
      "# class InComment:\n"
      "@decorator(\n"
      "  arg)\n"
      "@other\n"
      "class Decorated(Base):\n"
      "    pass\n"
      "async def coroutine():\n"
      "    pass\n"
      "try:\n"
      "    import torch\n"
      "except ImportError:\n"
      "    torch = None\n"
      "else:\n"
      "    pass\n"
      "finally:\n"
      "    pass\n"
      "r = rb'''\n"
      "def not_a_function(): ...\n"
      "'''\n";
  EXPECT_EQ(block_names(source),
            (std::vector<std::string>{"-", "-", "-", "-", "-", "Decorated", "coroutine", "-", "-"}));
  const auto blocks = split_top_level(source);
  ASSERT_EQ(blocks.size(), 9u);
  EXPECT_EQ(blocks[5].slice.row, 12u);  // the decorator's line, 0-based
  EXPECT_EQ(blocks[5].header_names, (std::vector<std::string_view>{"Base"}));
  EXPECT_EQ(blocks.back().slice.end, source.size());
  for (std::size_t i = 1; i < blocks.size(); ++i) EXPECT_EQ(blocks[i - 1].slice.end, blocks[i].slice.begin);
}

TEST(TopLevelSplit, GivesUpWhereItCannotSplitSafely) {
  EXPECT_TRUE(split_top_level("x = (1,\nclass A:\n    pass\n").empty());       // bracket never closed
  EXPECT_TRUE(split_top_level("s = '''\nclass A:\n    pass\n").empty());       // string never closed
  EXPECT_TRUE(split_top_level("x = 1\rclass A:\r    pass\r").empty());         // lone carriage returns
  EXPECT_EQ(split_top_level("x = 1\r\nclass A:\r\n    pass\r\n").size(), 2u);  // CRLF is fine
}

// The sampled search finds exactly what one memmem per needle finds, wherever the
// occurrence sits relative to the sampling grid, and falls back for needles under 4 bytes.
TEST(NeedleSearch, AgreesWithMemmemAtEveryOffset) {
  const std::vector<std::vector<std::string>> sets = {
      {"use_cache", "DynamicCache", "kvlint", "cuda.graph"}, {"abc", "use_cache"}, {"zzzzzzzz"}};
  for (const auto& needles : sets) {
    const python::NeedleSearch search(needles);
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

TEST(SlicePlan, KeepsHeaderAnchoredBlocksAndTheirSameFileBases) {
  const std::string source = "import torch\n" + filler("Unrelated") + "class Base(Root):\n    pass\n" +
                             "class Root:\n    pass\n" + "class Model(Base):\n    def f(self):\n" +
                             "        return DynamicCache()\n";
  const auto plan = plan_slices(source, python::NeedleSearch({"DynamicCache"}));
  ASSERT_TRUE(plan.sliced());
  ASSERT_EQ(plan.dropped.size(), 1u);
  EXPECT_EQ(source.substr(plan.dropped[0].begin, 16), "class Unrelated:");
  ASSERT_EQ(plan.kept.size(), 2u);  // the header, then Base, Root and Model merged
  EXPECT_EQ(source.substr(plan.kept[1].begin, 10), "class Base");
  EXPECT_EQ(plan.kept[1].end, source.size());
  // Too little to drop: parse whole.
  EXPECT_FALSE(plan_slices("import torch\nclass A:\n    pass\nclass B:\n    x = DynamicCache()\n",
                           python::NeedleSearch({"DynamicCache"}))
                   .sliced());
}

// The same facts at the same lines as the whole parse, for the classes that were kept.
TEST(SlicedAnalysis, FindingsKeepTheirLinesAfterSkippedBlocks) {
  const std::string source = "from transformers import DynamicCache\n" + filler("Skipped") +
                             "TEXT = '''\nclass Fake:\n    x = DynamicCache()\n'''\n" +
                             "class Holder:\n    def __init__(self):\n        self.cache = DynamicCache()\n";
  const facts::Vocabulary vocabulary;
  const python::NeedleSearch anchors({"DynamicCache"});
  const auto plan = plan_slices(source, anchors);
  ASSERT_TRUE(plan.sliced());
  python::PythonAnalyzer analyzer(vocabulary);
  const facts::FileFacts whole = analyzer.analyze("m.py", source, "m");
  const uint64_t whole_bytes = analyzer.last_parsed_bytes();
  const facts::FileFacts sliced = analyzer.analyze("m.py", source, "m", &plan);
  EXPECT_LT(analyzer.last_parsed_bytes(), whole_bytes / 2);
  EXPECT_TRUE(sliced.parse_problems.empty());
  ASSERT_EQ(sliced.cache_sites.size(), 1u);
  ASSERT_EQ(whole.cache_sites.size(), 1u);
  EXPECT_EQ(sliced.cache_sites[0].loc.line, whole.cache_sites[0].loc.line);
  EXPECT_EQ(sliced.cache_sites[0].loc.column, whole.cache_sites[0].loc.column);
  EXPECT_EQ(sliced.cache_sites[0].owner_class, "Holder");
  std::vector<std::string> classes;
  for (const auto& c : sliced.classes) classes.push_back(c.name);
  EXPECT_EQ(classes, std::vector<std::string>{"Holder"});
  // A slice that cuts a statement would be a syntax error: the file is parsed whole instead.
  python::SlicePlan broken = plan;
  const auto cut = static_cast<uint32_t>(source.rfind("()"));  // inside the last call's brackets
  broken.kept.back().end = cut + 1;
  broken.kept.back().end_row = static_cast<uint32_t>(std::count(source.begin(), source.begin() + cut, '\n'));
  broken.kept.back().end_column = cut + 1 - static_cast<uint32_t>(source.rfind('\n', cut) + 1);
  const facts::FileFacts fallback = analyzer.analyze("m.py", source, "m", &broken);
  EXPECT_TRUE(fallback.parse_problems.empty());
  EXPECT_EQ(fallback.classes.size(), whole.classes.size());
}

// End to end: a cache subclass's base lives in a block of another file that slicing left out;
// the engine analyses that file whole, so the inherited declaration still counts.
TEST(SlicedAnalysis, BaseInSkippedBlockOfAnotherFileStillResolves) {
  testing::TempDir dir;
  dir.write("pkg/__init__.py", "");
  dir.write("pkg/decl.py",
            "class Declarer:\n"
            "    def model_local_kv_specs(self):\n"
            "        return []\n");
  dir.write("pkg/bases.py", "from transformers import DynamicCache\nfrom pkg.decl import Declarer\n" +
                                filler("Padding") +
                                "class Middle(Declarer):\n"
                                "    pass\n"
                                "def helper():\n"
                                "    return DynamicCache()\n");
  dir.write("pkg/model.py",
            "from transformers import DynamicCache\n"
            "from pkg.bases import Middle\n"
            "class Model(Middle):\n"
            "    def __init__(self):\n"
            "        self.cache = DynamicCache()\n");
  CheckOptions options;
  options.paths = {dir.path()};
  options.config.root = dir.path();
  options.use_cache = false;
  options.jobs = 1;
  const CheckResult result = run_check(options);
  // Without the inherited declaration, Model is KV101's textbook case.
  for (const auto& f : result.findings) EXPECT_NE(f.code, "KV101") << f.message;
  EXPECT_EQ(result.stats.files_parsed, 3u);
  // bases.py went to the parser twice: sliced (Middle left out), then whole on demand.
  EXPECT_GT(result.stats.bytes_parsed, result.stats.bytes_read);
}

}  // namespace
}  // namespace kvlint
