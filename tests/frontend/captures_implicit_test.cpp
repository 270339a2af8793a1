// Items 4 (implicit caches) and 5 (graph captures).
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

using facts::CaptureSite;
using facts::ImplicitCacheSite;

TEST(FrontendImplicitCaches, UseCacheTrueWithoutPastKeyValues) {
  const auto f = analyze(R"PY(class M:
    def f(self, x, **kwargs):
        self.lm(x, use_cache=True)
        self.lm(x, use_cache=True, past_key_values=self.cache)
        self.lm(x, use_cache=True, **kwargs)
        self.lm(x, use_cache=False)
        self.lm(x, use_cache=flag)
        if self.streaming:
            out = self.model.generate(x, use_cache=True)
)PY");
  ASSERT_EQ(f.implicit_caches.size(), 2u);
  EXPECT_EQ(f.implicit_caches[0].callee, "self.lm");
  EXPECT_EQ(f.implicit_caches[0].reason, ImplicitCacheSite::Reason::NoPastKeyValues);
  EXPECT_EQ(f.implicit_caches[0].loc.line, 3u);
  EXPECT_EQ(f.implicit_caches[0].owner_class, "M");
  EXPECT_EQ(f.implicit_caches[0].method, "f");
  EXPECT_FALSE(f.implicit_caches[0].none_origin.has_value());
  EXPECT_EQ(f.implicit_caches[1].callee, "self.model.generate");
  ASSERT_EQ(f.implicit_caches[1].guards.size(), 1u);
  EXPECT_EQ(f.implicit_caches[1].guards[0].condition.text, "self.streaming");
}

TEST(FrontendImplicitCaches, SettingsAndConstructorsAreNotCalls) {
  const auto f = analyze(R"PY(from transformers import GenerationConfig
class M:
    def __init__(self, model):
        self.generation_config = GenerationConfig(use_cache=True, max_length=8)
        self.kwargs = dict(use_cache=True)
        self.kwargs.update(use_cache=True)
        self.model = model
    def f(self, x):
        return self.model.generate(x, use_cache=True)
)PY");
  ASSERT_EQ(f.implicit_caches.size(), 1u);
  EXPECT_EQ(f.implicit_caches[0].loc.line, 9u);
}

TEST(FrontendImplicitCaches, PastKeyValuesThatStartsNone) {
  const auto f = analyze(R"PY(class M:
    def __init__(self):
        self.pkv = None
        self.kept = None
        self.built = None
        self.built = DynamicCache()
    def f(self, x):
        past = None
        for step in range(3):
            out = self.lm(x, use_cache=True, past_key_values=past)
            past = out.past_key_values
        self.lm(x, use_cache=True, past_key_values=self.pkv)
        self.lm(x, use_cache=True, past_key_values=self.built)
        self.lm(x, use_cache=True, past_key_values=other)
)PY");
  ASSERT_EQ(f.implicit_caches.size(), 2u);
  const auto local = std::find_if(f.implicit_caches.begin(), f.implicit_caches.end(),
                                  [](const auto& s) { return s.loc.line == 10; });
  ASSERT_NE(local, f.implicit_caches.end());
  EXPECT_EQ(local->reason, ImplicitCacheSite::Reason::PastKeyValuesStartsNone);
  ASSERT_TRUE(local->none_origin.has_value());
  EXPECT_EQ(local->none_origin->line, 8u);
  const auto attr = std::find_if(f.implicit_caches.begin(), f.implicit_caches.end(),
                                 [](const auto& s) { return s.loc.line == 12; });
  ASSERT_NE(attr, f.implicit_caches.end());
  EXPECT_EQ(attr->reason, ImplicitCacheSite::Reason::PastKeyValuesStartsNone);
  ASSERT_TRUE(attr->none_origin.has_value());
  EXPECT_EQ(attr->none_origin->line, 3u);
}

const ImplicitCacheSite* implicit_at(const facts::FileFacts& f, uint32_t line) {
  for (const auto& s : f.implicit_caches)
    if (s.loc.line == line) return &s;
  return nullptr;
}

TEST(FrontendImplicitCaches, UseCacheThroughKeywordDicts) {
  const auto f = analyze(R"PY(class M:
    def f(self, x, **kwargs):
        init = self.tts.get_init_inputs()
        init.update({"use_cache": True, "past_key_values": None})
        self.model(**init)
        self.model(x, **dict(use_cache=True))
        self.model(x, **{"use_cache": True})
        opts = {"use_cache": True}
        self.model(x, **opts)
        kwargs.update({"use_cache": True})
        self.model(x, **kwargs)
        off = dict(use_cache=True)
        off["use_cache"] = False
        self.model(x, **off)
)PY");
  std::vector<uint32_t> lines;
  for (const auto& s : f.implicit_caches) lines.push_back(s.loc.line);
  // Line 11: `kwargs` comes from the caller and may carry past_key_values.
  EXPECT_EQ(lines, (std::vector<uint32_t>{5, 6, 7, 9}));
  const ImplicitCacheSite* updated = implicit_at(f, 5);
  ASSERT_NE(updated, nullptr);
  EXPECT_TRUE(updated->through_kwargs_dict);
  EXPECT_EQ(updated->reason, ImplicitCacheSite::Reason::PastKeyValuesStartsNone);
}

// A `**name` splat reads the writes of its own function made before it: a nested def's
// writes are its own, a class nested in the function keeps its attributes, and a write
// after the call does not reach back.
TEST(FrontendImplicitCaches, KeywordDictWritesStayInTheirFunction) {
  const auto f = analyze(R"PY(class M:
    def f(self, x):
        opts = {"use_cache": False}
        def inner():
            opts = {"use_cache": True}
            self.model(x, **opts)
        class Local:
            opts = {"use_cache": True}
        self.model(x, **opts)
        opts["use_cache"] = True
        self.model(x, **opts)
)PY");
  std::vector<uint32_t> lines;
  for (const auto& s : f.implicit_caches) lines.push_back(s.loc.line);
  EXPECT_EQ(lines, (std::vector<uint32_t>{6, 11}));
}

TEST(FrontendImplicitCaches, CalleeRootAndPath) {
  const auto f = analyze(R"PY(from transformers import AutoModel
class M:
    def f(self, x, model):
        self.memcache_get(x, use_cache=True)
        self.tts.tts_model.generate(x, use_cache=True)
        lm = self.language_model
        lm(x, use_cache=True)
        loaded = AutoModel.from_pretrained("p")
        loaded.generate(x, use_cache=True)
        model(x, use_cache=True)
        helper(x, use_cache=True)
)PY");
  using Root = ImplicitCacheSite::CalleeRoot;
  ASSERT_EQ(f.implicit_caches.size(), 6u);
  EXPECT_EQ(implicit_at(f, 4)->callee_root, Root::Self);
  EXPECT_EQ(implicit_at(f, 4)->callee_path, (std::vector<std::string>{"memcache_get"}));
  EXPECT_EQ(implicit_at(f, 5)->callee_path, (std::vector<std::string>{"tts", "tts_model", "generate"}));
  EXPECT_EQ(implicit_at(f, 7)->callee_root, Root::Self);
  EXPECT_EQ(implicit_at(f, 7)->callee_path, (std::vector<std::string>{"language_model"}));
  EXPECT_EQ(implicit_at(f, 9)->callee_root, Root::Local);
  EXPECT_EQ(implicit_at(f, 9)->callee_origin_class, "transformers.AutoModel");
  EXPECT_EQ(implicit_at(f, 10)->callee_root, Root::Parameter);
  EXPECT_EQ(implicit_at(f, 11)->callee_root, Root::Other);
}

TEST(FrontendImplicitCaches, HowTheCacheIsKept) {
  const auto f = analyze(R"PY(class M:
    def f(self, x, rid):
        self.lm(x, use_cache=True)
        logits = self.lm(x, use_cache=True).logits
        out = self.lm(x, use_cache=True)
        self.past = out.past_key_values
        hidden, past = self.lm(x, use_cache=True)
        return hidden
    def g(self, x, steps):
        past = None
        for _ in range(steps):
            out = self.lm(x, past_key_values=past, use_cache=True)
            past = out.past_key_values
        pre = self.lm(x, use_cache=True)
        self.lm(x, past_key_values=pre.past_key_values, use_cache=True)
        state = {"step": 0}
        res = self.lm(x, use_cache=True)
        state.update({"past_key_values": res.past_key_values})
        self.sessions[rid] = state
        return self.lm(x, use_cache=True).past_key_values
)PY");
  using Kept = ImplicitCacheSite::Kept;
  const std::vector<std::pair<uint32_t, Kept>> want{
      {3, Kept::Dropped}, {4, Kept::Dropped},   {5, Kept::Stored},  {7, Kept::Dropped},
      {12, Kept::Reused}, {14, Kept::UsedOnce}, {17, Kept::Stored}, {20, Kept::Returned}};
  for (const auto& [line, kept] : want) {
    const ImplicitCacheSite* s = implicit_at(f, line);
    ASSERT_NE(s, nullptr) << line;
    EXPECT_EQ(s->kept, kept) << "line " << line;
  }
}

TEST(FrontendImplicitCaches, AttributeAssignedBeforeEveryCallIsNotImplicit) {
  const auto f = analyze(R"PY(class G:
    def __init__(self):
        self._cache = None
        self._past = None
    def _prefill(self, inputs):
        self.model(**inputs, past_key_values=self._cache, use_cache=True)
    def start(self, bucket, inputs):
        with torch.inference_mode():
            self._cache = bucket["cache"]
            self._prefill(inputs)
    def restart(self, bucket, inputs):
        self._cache = bucket["cache"]
        if inputs:
            self._prefill(inputs)
    def step(self, x):
        out = self.model(x, past_key_values=self._past, use_cache=True)
        self._past = out.past_key_values
)PY");
  ASSERT_EQ(f.implicit_caches.size(), 1u);
  EXPECT_EQ(f.implicit_caches[0].loc.line, 16u);
}

TEST(FrontendCaptures, ThreeKindsAndCapturedCalls) {
  const auto f = analyze(R"PY(import torch
from torch.cuda import graph as cuda_graph
class Runner:
    def __init__(self):
        self.g = torch.cuda.CUDAGraph()
    def warm(self, x):
        if torch.cuda.is_available():
            with torch.cuda.graph(self.g, pool=self.pool):
                y = self.model(x)
                self.step(y)
    def manual(self, x):
        self.g.capture_begin()
        out = self.forward_step(x)
        self.post(out)
        self.g.capture_end()
        self.after(out)
    def wrap(self):
        self.fn = torch.cuda.make_graphed_callables(self.decoder, (x,))
    def alias(self):
        with cuda_graph(self.g):
            self.model()
)PY");
  ASSERT_EQ(f.captures.size(), 4u);
  const auto& ctx = f.captures[0];
  EXPECT_EQ(ctx.kind, CaptureSite::Kind::GraphContext);
  EXPECT_EQ(ctx.written, "torch.cuda.graph");
  EXPECT_EQ(ctx.owner_class, "Runner");
  EXPECT_EQ(ctx.method, "warm");
  EXPECT_EQ(ctx.loc.line, 8u);
  EXPECT_EQ(ctx.captured_calls, (std::vector<std::string>{"self.model", "self.step"}));
  ASSERT_EQ(ctx.guards.size(), 1u);
  EXPECT_EQ(ctx.guards[0].calls, (std::vector<std::string>{"torch.cuda.is_available"}));

  const auto& begin = f.captures[1];
  EXPECT_EQ(begin.kind, CaptureSite::Kind::CaptureBegin);
  EXPECT_EQ(begin.written, "self.g.capture_begin");
  EXPECT_EQ(begin.captured_calls, (std::vector<std::string>{"self.forward_step", "self.post"}));

  const auto& graphed = f.captures[2];
  EXPECT_EQ(graphed.kind, CaptureSite::Kind::MakeGraphedCallables);
  EXPECT_EQ(graphed.captured_calls, (std::vector<std::string>{"self.decoder"}));

  EXPECT_EQ(f.captures[3].kind, CaptureSite::Kind::GraphContext);
  EXPECT_EQ(f.captures[3].written, "cuda_graph");
}

TEST(FrontendCaptures, CaptureBeginWithCaptureEndInAFinallyCapturesTheTryBody) {
  const auto f = analyze(R"PY(import torch
class Chunk:
    def velocity(self, x):
        self.graph.capture_begin(pool=self.pool)
        try:
            self.out = self._velocity(x)
        finally:
            self.graph.capture_end()
        self.after(x)
)PY");
  ASSERT_EQ(f.captures.size(), 1u);
  EXPECT_EQ(f.captures[0].kind, CaptureSite::Kind::CaptureBegin);
  EXPECT_EQ(f.captures[0].captured_calls, (std::vector<std::string>{"self._velocity"}));
}

TEST(FrontendCaptures, StreamBeginCaptureAndCallerGuard) {
  const auto f = analyze(R"PY(class Runner:
    def load(self):
        if not self.enforce_eager:
            self._capture()
    def _capture(self):
        cudaStreamBeginCapture(stream, mode)
)PY");
  ASSERT_EQ(f.captures.size(), 1u);
  EXPECT_EQ(f.captures[0].kind, CaptureSite::Kind::StreamBeginCapture);
  ASSERT_EQ(f.captures[0].guards.size(), 1u);
  EXPECT_EQ(f.captures[0].guards[0].origin, facts::Guard::Origin::CallerGuard);
  EXPECT_EQ(f.captures[0].guards[0].self_attributes, (std::vector<std::string>{"enforce_eager"}));
}

}  // namespace
}  // namespace kvlint::frontend_test
