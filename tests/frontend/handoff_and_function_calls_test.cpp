// Facts a graph wrapper's declaration and a module-level capture helper need: attributes read
// through getattr/hasattr, objects a class hands itself to (`decoder._graph_wrapper = self`),
// and the guards and arguments of calls to module-level functions.
#include <gtest/gtest.h>

#include "analyzers/facts/facts_json.hpp"
#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

TEST(FrontendGetattrReads, GetattrAndHasattrOnADottedObjectReadTheAttribute) {
  const auto f = analyze(R"PY(class Decoder:
    def model_local_kv_specs(self):
        wrapper = getattr(self, "_cudagraph_wrapper", None)
        if wrapper is not None and getattr(wrapper, 'async_chunk', False):
            return [1]
        if hasattr(self.cfg, "window") or getattr(self, name, None):
            return [2]
        return []
)PY");
  ASSERT_EQ(f.declarations.size(), 1u);
  const auto& d = f.declarations.front();
  const facts::LocalAssignment* local = nullptr;
  for (const auto& a : d.local_assignments)
    if (a.name == "wrapper") local = &a;
  ASSERT_NE(local, nullptr);
  EXPECT_TRUE(contains(local->value.names, "self._cudagraph_wrapper"));
  // Guards read the attribute as owner state; a computed name reads nothing more.
  bool saw_async = false, saw_window = false;
  const auto guarded = analyze(R"PY(class Decoder:
    def step(self, x):
        if getattr(self, "_runner", None) is not None and hasattr(self.cfg, "window"):
            return self._runner.replay(x)
        if getattr(self, name, None):
            return self.cfg.fallback(x)
)PY");
  ASSERT_EQ(guarded.classes.size(), 1u);
  for (const auto& m : guarded.classes.front().methods)
    for (const auto& call : m.calls)
      for (const auto& g : call.guards) {
        saw_async = saw_async || contains(g.self_attributes, "_runner");
        saw_window = saw_window || contains(g.self_attributes, "cfg.window");
        EXPECT_FALSE(contains(g.condition.names, "self.name"));
      }
  EXPECT_TRUE(saw_async);
  EXPECT_TRUE(saw_window);
}

TEST(FrontendReverseAssignments, RecordsAnObjectTheClassHandsItselfTo) {
  const auto f = analyze(R"PY(class DecoderGraphWrapper:
    def __init__(self, decoder, talker):
        self.decoder = decoder
        decoder._graph_wrapper = self
        self.talker._runner = self
        decoder.config.flag = True
        talker.owner = decoder
        self._me = self
def attach(decoder, wrapper):
    decoder._graph_wrapper = wrapper
)PY");
  ASSERT_EQ(f.reverse_assignments.size(), 2u);
  const auto& r = f.reverse_assignments[0];
  EXPECT_EQ(r.owner_class, "DecoderGraphWrapper");
  EXPECT_EQ(r.method, "__init__");
  EXPECT_EQ(r.object, "decoder");
  EXPECT_EQ(r.attribute, "_graph_wrapper");
  EXPECT_EQ(r.loc.line, 4u);
  EXPECT_EQ(f.reverse_assignments[1].object, "self.talker");
  EXPECT_EQ(f.reverse_assignments[1].attribute, "_runner");
  // The cache's round trip keeps them.
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.reverse_assignments.size(), 2u);
  EXPECT_EQ(back.reverse_assignments[1].object, "self.talker");
  EXPECT_EQ(back.reverse_assignments[0].loc, r.loc);
}

TEST(FrontendFunctionCalls, ACallOfAModuleFunctionKeepsItsGuardsAndArguments) {
  const auto f = analyze(R"PY(import torch
def capture_decode_step(model, bs):
    return model, bs
class Depth:
    def __init__(self, config):
        self.graphs = {}
        if torch.cuda.is_available():
            for bs in (1, 2):
                self.graphs[bs] = capture_decode_step(self, bs=bs)
        helper("name", self.graphs)
        helper("again")
)PY");
  ASSERT_EQ(f.classes.size(), 1u);
  const auto& init = f.classes.front().methods.front();
  const facts::CallFact* capture = nullptr;
  const facts::CallFact* helper = nullptr;
  for (const auto& c : init.calls) {
    if (c.callee == "capture_decode_step") capture = &c;
    if (c.callee == "helper") helper = &c;
  }
  ASSERT_NE(capture, nullptr);
  EXPECT_TRUE(has_guard(capture->guards, facts::Guard::Origin::If, "torch.cuda.is_available()", false));
  ASSERT_EQ(capture->args.size(), 2u);
  EXPECT_EQ(capture->args[0].value.text, "self");
  EXPECT_EQ(capture->args[0].position, 0u);
  EXPECT_EQ(capture->args[1].keyword, "bs");
  ASSERT_NE(helper, nullptr);
  EXPECT_TRUE(helper->guards.empty());
  // String literals are left out; the first call's arguments are kept.
  ASSERT_EQ(helper->args.size(), 1u);
  EXPECT_EQ(helper->args[0].value.text, "self.graphs");
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  const auto& calls_back = back.classes.front().methods.front().calls;
  ASSERT_EQ(calls_back.size(), init.calls.size());
  for (std::size_t i = 0; i < calls_back.size(); ++i) {
    EXPECT_EQ(calls_back[i].args.size(), init.calls[i].args.size());
    EXPECT_EQ(calls_back[i].guards.size(), init.calls[i].guards.size());
  }
}

}  // namespace
}  // namespace kvlint::frontend_test
