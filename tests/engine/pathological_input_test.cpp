// Pathological inputs (issue 39, item 5): one file must not stall a run. Each input here made a
// whole-project step super-linear; the bound is far above what the linear code takes and far
// below what the old code took, and the findings are checked as well as the time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/engine/check_tree.hpp"
#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/sanitized_build.hpp"

namespace kvlint {
namespace {

using kvlint::testing::TempDir;
using kvlint::testing::check_tree;
using Clock = std::chrono::steady_clock;

// The sanitizer builds (scripts/test-sanitizers) run these several times slower (the chain below
// took 36 s under ASan at 3,000 classes): their bounds scale, still far below the old costs.
constexpr int kSlowdown = kvlint::kSanitizedBuild ? 4 : 1;

std::size_t count(const CheckResult& r, std::string_view code) {
  return static_cast<std::size_t>(
      std::count_if(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.code == code; }));
}

// `n` classes, each deriving from the one before and building a cache of its own.
std::string subclass_chain(int n) {
  std::string out = "import torch\nfrom transformers import DynamicCache\n\n";
  for (int i = 0; i < n; ++i) {
    out += "class C" + std::to_string(i) + "(" +
           (i == 0 ? std::string("torch.nn.Module") : "C" + std::to_string(i - 1)) +
           "):\n    def __init__(self):\n        super().__init__()\n        self.cache = DynamicCache()\n\n";
  }
  return out;
}

// Finding each class's bases looked through every class of its file, once per ancestor, for
// every class: cubic (1,500 classes took 13-18 s, 3,000 about two minutes, so 2,500 over a
// minute; now about 4 s, the ancestor walks being quadratic).
TEST(PathologicalInput, AChainOfTwentyFiveHundredSubclassesEachBuildingACacheIsCheckedWithinSeconds) {
  TempDir dir;
  dir.write("chain.py", subclass_chain(2500));
  const auto started = Clock::now();
  const CheckResult r = check_tree(dir);
  const auto took = Clock::now() - started;
  EXPECT_EQ(count(r, "KV101"), 2500u);
  EXPECT_LT(took, std::chrono::seconds(30 * kSlowdown))
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
}

// Each stacked suppression comment scanned the rest of the stack for the line it applies to,
// and each finding looked at every suppression of its file: quadratic (22 s for 10,000).
TEST(PathologicalInput, TenThousandStackedFileLevelSuppressionsAreAppliedWithinSeconds) {
  TempDir dir;
  std::string source;
  for (int i = 0; i < 10000; ++i)
    source += "# kvlint: ignore-file[KV101] generated model, declared upstream\n";
  source += "import torch\nfrom transformers import DynamicCache\n\n";
  for (int i = 0; i < 50; ++i)
    source += "class M" + std::to_string(i) +
              "(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.cache = DynamicCache()  # kvlint: ignore[KV101] declared by the holder\n\n";
  dir.write("m.py", source);
  const auto started = Clock::now();
  const CheckResult r = check_tree(dir);
  const auto took = Clock::now() - started;
  // Every KV101 is suppressed (inline and file-wide), and every suppression was used.
  EXPECT_THAT(r.findings, ::testing::IsEmpty());
  EXPECT_EQ(r.suppressed, 50u);
  EXPECT_LT(took, std::chrono::seconds(5 * kSlowdown))
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
}

}  // namespace
}  // namespace kvlint
