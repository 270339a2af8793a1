// Facts for following code: the calls a function makes (and which write KV), parameter
// annotations, module-level functions, and what a construction is told.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzers/facts/facts_json.hpp"
#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

const facts::MethodFact* method_named(const facts::FileFacts& f, std::string_view cls, std::string_view name) {
  for (const auto& c : f.classes)
    if (c.name == cls)
      for (const auto& m : c.methods)
        if (m.name == name) return &m;
  return nullptr;
}

const facts::CallFact* call_to(const facts::MethodFact& m, std::string_view callee) {
  for (const auto& c : m.calls)
    if (c.callee == callee) return &c;
  return nullptr;
}

TEST(FrontendCalls, ParameterAnnotationsNameTheirClass) {
  const auto f = analyze(R"PY(from typing import Optional
from .decoder import Decoder as Dec
class Graph:
    @classmethod
    def capture(cls, model: "AudioLLM", buf: Dec | None, other: Optional[pkg.Other], n: int,
                items: list[Dec], plain, default_typed: "Dec" = None, *args: Dec):
        pass
)PY");
  const auto* m = method_named(f, "Graph", "capture");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->parameters.size(), 8u);
  ASSERT_EQ(m->parameter_types.size(), m->parameters.size());
  EXPECT_EQ(m->parameters[0], "model");
  EXPECT_EQ(m->parameter_types[0], "AudioLLM");
  EXPECT_EQ(m->parameter_types[1], ".decoder.Decoder");
  EXPECT_EQ(m->parameter_types[2], "pkg.Other");
  EXPECT_EQ(m->parameter_types[3], "");  // int names no class
  EXPECT_EQ(m->parameter_types[4], "");  // a container of decoders is not a decoder
  EXPECT_EQ(m->parameter_types[5], "");
  EXPECT_EQ(m->parameter_types[6], ".decoder.Decoder");
}

TEST(FrontendCalls, RecordsFollowableCallsAndWhichWriteKV) {
  const auto f = analyze(R"PY(import torch
class Runner:
    def step(self, model, past_key_values):
        n = len(model.layers)
        x = torch.zeros(n)
        self.decoder.decode(x)
        model.step(x)
        helper(x)
        Graph.capture(self, x)
        self.lm(x, use_cache=True)
        self.lm(x)
        self.talker(x, past_key_values=self.cache)
        self.layer(x, past_key_values=past_key_values)
        def inner():
            self.nested(x)
        other.thing(x, use_cache=True)
def helper(x):
    return x.sum()
)PY");
  const auto* m = method_named(f, "Runner", "step");
  ASSERT_NE(m, nullptr);
  for (const char* followed : {"self.decoder.decode", "model.step", "helper", "Graph.capture", "self.lm",
                               "self.talker", "self.layer", "self.nested", "other.thing"})
    EXPECT_NE(call_to(*m, followed), nullptr) << followed;
  for (const char* skipped : {"len", "torch.zeros"}) EXPECT_EQ(call_to(*m, skipped), nullptr) << skipped;
  EXPECT_TRUE(call_to(*m, "self.lm")->writes_kv);  // one of its calls passes use_cache=True
  EXPECT_EQ(call_to(*m, "self.lm")->loc.line, 10u);
  EXPECT_TRUE(call_to(*m, "self.talker")->writes_kv);  // hands over a cache the object keeps
  EXPECT_FALSE(call_to(*m, "self.layer")->writes_kv);  // forwards the caller's cache
  EXPECT_FALSE(call_to(*m, "self.decoder.decode")->writes_kv);
  EXPECT_TRUE(call_to(*m, "other.thing")->writes_kv);  // kept only because it writes KV
  ASSERT_EQ(f.functions.size(), 1u);
  EXPECT_EQ(f.functions[0].name, "helper");
  EXPECT_EQ(f.functions[0].parameters, std::vector<std::string>{"x"});
}

// A call writes KV by its own keywords only: a nested call's keyword is the nested call's,
// a keyword may sit on a line of its own, and a longer name that contains `use_cache` is
// not it (the walk skips an argument list with no `use_cache` in its text; these are the
// cases that still need the arguments read).
TEST(FrontendCalls, WritesKvByItsOwnKeywordsOnly) {
  const auto f = analyze(R"PY(class Runner:
    def step(self, x):
        self.outer(self.inner(x, use_cache=True))
        self.wrapped(
            x,
            use_cache = True,
        )
        self.named(x, use_cache_flag=True)
)PY");
  const auto* m = method_named(f, "Runner", "step");
  ASSERT_NE(m, nullptr);
  for (const char* callee : {"self.outer", "self.inner", "self.wrapped", "self.named"})
    ASSERT_NE(call_to(*m, callee), nullptr) << callee;
  EXPECT_FALSE(call_to(*m, "self.outer")->writes_kv);
  EXPECT_TRUE(call_to(*m, "self.inner")->writes_kv);
  EXPECT_TRUE(call_to(*m, "self.wrapped")->writes_kv);
  EXPECT_FALSE(call_to(*m, "self.named")->writes_kv);
}

TEST(FrontendCalls, CallsIntoHeldObjectsKeepTheirConditions) {
  const auto f = analyze(R"PY(class Code2Wav:
    def enable(self, device):
        cfg = self.vllm_config.model_config
        if cfg.enforce_eager:
            return
        self.decoder.enable_cudagraph(device)
        self.decoder.warmup(device)
    def other(self, device):
        if device.type == "cuda":
            self.decoder.warmup(device)
        self.decoder.warmup(device)
        self._local(device)
)PY");
  const auto* enable = method_named(f, "Code2Wav", "enable");
  ASSERT_NE(enable, nullptr);
  const auto* call = call_to(*enable, "self.decoder.enable_cudagraph");
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(has_guard(call->guards, facts::Guard::Origin::EarlyReturn, "cfg.enforce_eager", true));
  const auto* other = method_named(f, "Code2Wav", "other");
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(call_to(*other, "self.decoder.warmup")->guards.empty());  // also called unconditionally
  EXPECT_TRUE(call_to(*other, "self._local")->guards.empty());         // the class itself: caller guards
}

TEST(FrontendCalls, CaptureBodiesThatWriteKV) {
  const auto f = analyze(R"PY(import torch
class Runner:
    def capture(self):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.model(self.inp, use_cache=True)
        with torch.cuda.graph(g):
            self.vocoder(self.mel)
)PY");
  ASSERT_EQ(f.captures.size(), 2u);
  EXPECT_TRUE(f.captures[0].captured_writes_kv);
  EXPECT_FALSE(f.captures[1].captured_writes_kv);
}

TEST(FrontendCalls, ConstructionsRecordTheFactoryAndArguments) {
  const auto f = analyze(R"PY(class AudioLLM:
    def __init__(self, vllm_config):
        enforce_eager = vllm_config.model_config.enforce_eager
        self.cg = LocalDecodeCudaGraph.capture(self, buf, batch_size=4)
        self.ex = Executor(self.model, "label", enabled=not enforce_eager)
)PY");
  ASSERT_EQ(f.constructions.size(), 2u);
  const auto& capture = f.constructions[0];
  EXPECT_EQ(capture.target_class, "LocalDecodeCudaGraph");
  EXPECT_EQ(capture.factory, "capture");
  ASSERT_EQ(capture.args.size(), 3u);
  EXPECT_EQ(capture.args[0].value.text, "self");
  EXPECT_EQ(capture.args[0].position, 0u);
  EXPECT_EQ(capture.args[2].keyword, "batch_size");
  const auto& executor = f.constructions[1];
  EXPECT_EQ(executor.factory, "");
  ASSERT_EQ(executor.args.size(), 2u);  // the string literal is left out
  EXPECT_EQ(executor.args[0].value.text, "self.model");
  EXPECT_EQ(executor.args[1].keyword, "enabled");
  EXPECT_EQ(executor.args[1].value.text, "not enforce_eager");
}

TEST(FrontendCalls, SurviveTheJsonRoundTrip) {
  const auto f = analyze(R"PY(import torch
class Graph:
    @classmethod
    def capture(cls, model: "AudioLLM"):
        if model.ready:
            model.step(use_cache=True)
        with torch.cuda.graph(g):
            model.forward_step(past_key_values=self.cache)
def build(model):
    return Graph.capture(model)
)PY");
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.classes.size(), 1u);
  const auto& m = back.classes[0].methods[0];
  EXPECT_EQ(m.parameter_types, f.classes[0].methods[0].parameter_types);
  ASSERT_EQ(m.calls.size(), f.classes[0].methods[0].calls.size());
  EXPECT_EQ(m.calls[0].callee, "model.step");
  EXPECT_TRUE(m.calls[0].writes_kv);
  EXPECT_EQ(m.calls[0].guards.size(), 1u);
  ASSERT_EQ(back.functions.size(), 1u);
  EXPECT_EQ(back.functions[0].calls.size(), 1u);
  ASSERT_EQ(back.constructions.size(), 1u);
  EXPECT_EQ(back.constructions[0].factory, "capture");
  EXPECT_EQ(back.constructions[0].args.size(), 1u);
  ASSERT_EQ(back.captures.size(), 1u);
  EXPECT_TRUE(back.captures[0].captured_writes_kv);
}

}  // namespace
}  // namespace kvlint::frontend_test
