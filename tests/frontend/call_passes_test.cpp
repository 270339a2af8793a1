// Facts KV302 needs to tell a holder that decodes statelessly unless graphs were enabled: what
// each call into another object passes, under which guards, and what a guard needs set.
#include <gtest/gtest.h>

#include "analyzers/facts/facts_json.hpp"
#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

const facts::CallFact* call_named(const facts::MethodFact& m, std::string_view callee) {
  for (const auto& c : m.calls)
    if (c.callee == callee) return &c;
  return nullptr;
}

TEST(FrontendCallPasses, EachCallIntoAnObjectKeepsItsKeywordsAndGuards) {
  const auto f = analyze(R"PY(class Code2Wav:
    def forward(self, codes, rids, **kw):
        if getattr(self.decoder, "_graph_wrapper", None) is None:
            return self.decoder.decode(codes, caches=None)
        for rid in rids:
            self.decoder.decode(codes, self._states[rid])
            self.decoder.decode(codes, caches=self._states[rid], chunk=2)
        self.decoder(codes, **kw)
)PY");
  ASSERT_EQ(f.classes.size(), 1u);
  const facts::MethodFact& m = f.classes.front().methods.front();
  const facts::CallFact* decode = call_named(m, "self.decoder.decode");
  ASSERT_NE(decode, nullptr);
  ASSERT_EQ(decode->passes.size(), 3u);
  // A literal None passes nothing.
  EXPECT_TRUE(decode->passes[0].keywords.empty());
  EXPECT_EQ(decode->passes[0].positionals, 1u);
  ASSERT_EQ(decode->passes[0].guards.size(), 1u);
  EXPECT_FALSE(decode->passes[0].guards[0].negated);
  EXPECT_TRUE(decode->passes[0].guards[0].given.empty());  // `is None` holds: nothing is set
  EXPECT_EQ(decode->passes[1].positionals, 2u);
  EXPECT_EQ(decode->passes[2].keywords, (std::vector<std::string>{"caches", "chunk"}));
  // After the early return the wrapper is set; the loop is no condition.
  ASSERT_EQ(decode->passes[2].guards.size(), 1u);
  EXPECT_TRUE(decode->passes[2].guards[0].negated);
  EXPECT_EQ(decode->passes[2].guards[0].given, (std::vector<std::string>{"self.decoder._graph_wrapper"}));
  const facts::CallFact* direct = call_named(m, "self.decoder");
  ASSERT_NE(direct, nullptr);
  ASSERT_EQ(direct->passes.size(), 1u);
  EXPECT_TRUE(direct->passes[0].unpacked);
  // The cache's round trip keeps them.
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  const facts::CallFact* again = call_named(back.classes.front().methods.front(), "self.decoder.decode");
  ASSERT_NE(again, nullptr);
  ASSERT_EQ(again->passes.size(), 3u);
  EXPECT_EQ(again->passes[2].keywords, decode->passes[2].keywords);
  EXPECT_EQ(again->passes[2].guards[0].given, decode->passes[2].guards[0].given);
  EXPECT_EQ(again->passes[0].loc, decode->passes[0].loc);
}

// What a guard needs set where it holds, through not / and / or, for the cache site's guards.
TEST(FrontendGuardGiven, NamesWhatTheConditionNeedsSetWhereItHolds) {
  const auto f = analyze(R"PY(from transformers import DynamicCache


class Decoder:
    def forward(self, codes, caches=None, flag=None):
        if caches is None or caches.get("_dummy", False):
            return codes
        if "past" not in caches:
            a = DynamicCache()
        if flag is None:
            b = DynamicCache()
        if not (self.runner is not None and flag):
            c = DynamicCache()
        else:
            d = DynamicCache()
        if caches or flag:
            e = DynamicCache()
)PY");
  ASSERT_EQ(f.cache_sites.size(), 5u);
  auto given_of = [&](std::size_t site) {
    std::vector<std::string> all;
    for (const auto& g : f.cache_sites[site].guards)
      for (const auto& n : g.given) all.push_back(n);
    return all;
  };
  // The early return (negated) needs caches; so does `"past" not in caches`.
  EXPECT_TRUE(contains(given_of(0), "caches"));
  EXPECT_EQ(f.cache_sites[0].guards.size(), 2u);
  EXPECT_TRUE(contains(given_of(1), "caches"));
  EXPECT_FALSE(contains(given_of(1), "flag"));         // `flag is None` holds
  EXPECT_FALSE(contains(given_of(2), "self.runner"));  // not (a and b): either may fail
  EXPECT_TRUE(contains(given_of(3), "self.runner"));   // else arm: both held
  EXPECT_TRUE(contains(given_of(3), "flag"));
  EXPECT_FALSE(contains(given_of(4), "flag"));  // `caches or flag`: either alone
}

}  // namespace
}  // namespace kvlint::frontend_test
