// Item 3 (guards): if / elif / else, early returns, ternaries, loops, with,
// and caller guards.
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

using facts::Guard;

// A method called on self names the method: the state the guard reads is the object before it
// (`self.cfg.get(...)` reads "cfg"), also when the callee is written with spaces, while a plain
// attribute chain is read whole.
TEST(FrontendGuards, ASelfMethodCallInTheConditionReadsTheObjectBeforeTheMethod) {
  const auto f = analyze(R"PY(class M:
    def f(self):
        if self.cfg.get("stream") and self. mode.lower() == "x" and self.cfg.flag and self.ready():
            self.a = DynamicCache()
)PY");
  const auto* a = site_on_line(f, 4);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->guards.size(), 1u);
  EXPECT_EQ(a->guards[0].self_attributes, (std::vector<std::string>{"cfg", "mode", "cfg.flag", "ready"}));
}

TEST(FrontendGuards, IfElifElseArms) {
  const auto f = analyze(R"PY(class M:
    def f(self, mode):
        if self.async_chunk:
            self.a = DynamicCache()
        elif mode == "x":
            self.b = DynamicCache()
        else:
            self.c = DynamicCache()
)PY");
  const auto* a = site_on_line(f, 4);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->guards.size(), 1u);
  EXPECT_EQ(a->guards[0].origin, Guard::Origin::If);
  EXPECT_FALSE(a->guards[0].negated);
  EXPECT_EQ(a->guards[0].condition.text, "self.async_chunk");
  EXPECT_EQ(a->guards[0].self_attributes, (std::vector<std::string>{"async_chunk"}));
  EXPECT_TRUE(a->guards[0].parameters.empty());

  const auto* b = site_on_line(f, 6);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->guards.size(), 2u);
  // Innermost first: the elif's own condition, then the negated earlier arm.
  EXPECT_EQ(b->guards[0].condition.text, "mode == \"x\"");
  EXPECT_FALSE(b->guards[0].negated);
  EXPECT_EQ(b->guards[0].parameters, (std::vector<std::string>{"mode"}));
  EXPECT_TRUE(has_guard(b->guards, Guard::Origin::If, "self.async_chunk", true));

  const auto* c = site_on_line(f, 8);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->guards.size(), 2u);
  EXPECT_TRUE(has_guard(c->guards, Guard::Origin::Else, "self.async_chunk", true));
  EXPECT_TRUE(has_guard(c->guards, Guard::Origin::Else, "mode == \"x\"", true));
}

TEST(FrontendGuards, EarlyReturnTernaryLoopWith) {
  const auto f = analyze(R"PY(import torch
class M:
    def f(self, requests):
        if not torch.cuda.is_available():
            return None
        for r in requests:
            with torch.no_grad():
                self.x = DynamicCache() if self.cfg.streaming else StaticCache()
        self.y = DynamicCache()
    def g(self):
        if self.other:
            print("no return here")
        self.z = DynamicCache()
)PY");
  const auto* x = site_on_line(f, 8);
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(f.cache_sites.size(), 4u);
  const auto& dyn = f.cache_sites[0];
  const auto& stat = f.cache_sites[1];
  EXPECT_EQ(dyn.cache_class, "DynamicCache");
  EXPECT_EQ(stat.cache_class, "StaticCache");
  ASSERT_EQ(dyn.guards.size(), 4u);
  EXPECT_EQ(dyn.guards[0].origin, Guard::Origin::Ternary);
  EXPECT_FALSE(dyn.guards[0].negated);
  EXPECT_EQ(dyn.guards[0].self_attributes, (std::vector<std::string>{"cfg.streaming"}));
  EXPECT_EQ(dyn.guards[1].origin, Guard::Origin::With);
  EXPECT_EQ(dyn.guards[1].condition.text, "torch.no_grad()");
  EXPECT_EQ(dyn.guards[2].origin, Guard::Origin::Loop);
  EXPECT_EQ(dyn.guards[2].condition.text, "requests");
  EXPECT_EQ(dyn.guards[2].parameters, (std::vector<std::string>{"requests"}));
  EXPECT_EQ(dyn.guards[3].origin, Guard::Origin::EarlyReturn);
  EXPECT_TRUE(dyn.guards[3].negated);
  EXPECT_EQ(dyn.guards[3].calls, (std::vector<std::string>{"torch.cuda.is_available"}));
  EXPECT_EQ(stat.guards[0].origin, Guard::Origin::Ternary);
  EXPECT_TRUE(stat.guards[0].negated);

  const auto* y = site_on_line(f, 9);
  ASSERT_NE(y, nullptr);
  ASSERT_EQ(y->guards.size(), 1u);
  EXPECT_EQ(y->guards[0].origin, Guard::Origin::EarlyReturn);

  const auto* z = site_on_line(f, 13);
  ASSERT_NE(z, nullptr);
  EXPECT_TRUE(z->guards.empty());  // an if without a return is not an early return
}

TEST(FrontendGuards, CallerGuardWhenEveryInClassCallIsGuarded) {
  const auto f = analyze(R"PY(class M:
    def forward(self, x):
        if self.async_chunk:
            self._build()
        elif x:
            self._build()
        self._open()
        if x:
            self._open()
    def _build(self):
        self.cache = DynamicCache()
    def _open(self):
        self.other = DynamicCache()
)PY");
  const auto* built = site_on_line(f, 11);
  ASSERT_NE(built, nullptr);
  EXPECT_TRUE(has_guard(built->guards, Guard::Origin::CallerGuard, "self.async_chunk", false));
  EXPECT_TRUE(has_guard(built->guards, Guard::Origin::CallerGuard, "x", false));
  EXPECT_TRUE(has_guard(built->guards, Guard::Origin::CallerGuard, "self.async_chunk", true));
  const auto caller = std::find_if(built->guards.begin(), built->guards.end(),
                                   [](const Guard& g) { return g.condition.text == "self.async_chunk"; });
  EXPECT_EQ(caller->self_attributes, (std::vector<std::string>{"async_chunk"}));
  const auto* opened = site_on_line(f, 13);
  ASSERT_NE(opened, nullptr);
  EXPECT_TRUE(opened->guards.empty());  // one unguarded in-class call: no caller guard
}

TEST(FrontendGuards, ModuleLevelConditionsDoNotLeakIntoMethods) {
  const auto f = analyze(R"PY(if is_torch_available():
    class M:
        def f(self):
            self.c = DynamicCache()
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_TRUE(f.cache_sites[0].guards.empty());
}

}  // namespace
}  // namespace kvlint::frontend_test
