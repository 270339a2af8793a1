// Item 3: cache sites, retention, caller_requested, graph-capture context.
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

using facts::Retention;

TEST(FrontendCacheSites, ReferencesAnnotationsAndIsinstanceAreNotSites) {
  const auto f = analyze(R"PY(from typing import Optional
from transformers import DynamicCache, StaticCache
class M:
    def forward(self, cache: Optional[DynamicCache] = None) -> DynamicCache:
        if isinstance(cache, (DynamicCache, StaticCache)):
            kind = DynamicCache
        if issubclass(type(cache), StaticCache):
            pass
        x: "DynamicCache" = cache
        return cache
)PY");
  EXPECT_TRUE(f.cache_sites.empty());
}

TEST(FrontendCacheSites, ClassmethodConstructorIsASite) {
  const auto f = analyze(R"PY(class M:
    def f(self, legacy):
        self.c = DynamicCache.from_legacy_cache(legacy)
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].cache_class, "DynamicCache");
  EXPECT_EQ(f.cache_sites[0].written, "DynamicCache.from_legacy_cache");
  EXPECT_EQ(f.cache_sites[0].owner_class, "M");
  EXPECT_EQ(f.cache_sites[0].method, "f");
  ASSERT_EQ(f.cache_sites[0].args.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].args[0].value.text, "legacy");
}

TEST(FrontendCacheSites, NestedConstructorBelongsToOuterSite) {
  const auto f = analyze(R"PY(class M:
    def f(self):
        self.c = EncoderDecoderCache(DynamicCache(), DynamicCache())
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].cache_class, "EncoderDecoderCache");
  ASSERT_EQ(f.cache_sites[0].args.size(), 2u);
  EXPECT_EQ(f.cache_sites[0].args[1].position, 1u);
  EXPECT_EQ(f.cache_sites[0].args[1].value.text, "DynamicCache()");
}

TEST(FrontendCacheSites, ArgumentsCarryKeywordsPositionsLiteralsAndNames) {
  const auto f = analyze(R"PY(class M:
    def f(self):
        self.c = StaticCache(self.config, max_cache_len=2048, dtype="bf16", window=self.config.sliding_window - 1, offload=True, x=None, y=-2, z=0.5)
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  const auto& a = f.cache_sites[0].args;
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(a[0].keyword, "");
  EXPECT_EQ(a[0].position, 0u);
  EXPECT_EQ(a[0].value.names, (std::vector<std::string>{"self.config"}));
  EXPECT_EQ(a[1].keyword, "max_cache_len");
  EXPECT_EQ(a[1].value.literal, facts::LiteralKind::Int);
  EXPECT_EQ(a[1].value.literal_value, "2048");
  EXPECT_EQ(a[2].value.literal, facts::LiteralKind::String);
  EXPECT_EQ(a[2].value.literal_value, "bf16");
  EXPECT_EQ(a[3].value.literal, facts::LiteralKind::None);
  EXPECT_EQ(a[3].value.text, "self.config.sliding_window - 1");
  EXPECT_EQ(a[3].value.names, (std::vector<std::string>{"self.config.sliding_window"}));
  EXPECT_EQ(a[4].value.literal, facts::LiteralKind::Bool);
  EXPECT_EQ(a[4].value.literal_value, "True");
  EXPECT_EQ(a[5].value.literal, facts::LiteralKind::NoneValue);
  EXPECT_EQ(a[6].value.literal, facts::LiteralKind::Int);
  EXPECT_EQ(a[6].value.literal_value, "-2");
  EXPECT_EQ(a[7].value.literal, facts::LiteralKind::Float);
  EXPECT_EQ(f.cache_sites[0].loc.line, 3u);
  EXPECT_EQ(f.cache_sites[0].loc.column, 18u);
}

TEST(FrontendCacheSites, RetentionKinds) {
  const auto f = analyze(R"PY(GLOBAL = DynamicCache()
class M:
    def f(self, rid, key):
        self.cache = DynamicCache()
        self._d[rid] = DynamicCache()
        self._l.append(DynamicCache())
        self._s.setdefault(key, DynamicCache())
        self.model(past_key_values=DynamicCache())
        local = DynamicCache()
        DynamicCache()
        c = DynamicCache()
        self._caches[rid] = c
        self.pool = [DynamicCache() for _ in range(4)]
        return DynamicCache()
    def g(self):
        pkv = DynamicCache()
        out = self.model(past_key_values=pkv)
        return Out(past_key_values=pkv)
    def h(self):
        return Out(cache=DynamicCache())
    def i(self):
        x = DynamicCache()
        self.run(x)
    def j(self, session):
        session.cache = DynamicCache()
        return session
    def k(self, out):
        out.cache = DynamicCache()
)PY");
  struct Want {
    uint32_t line;
    Retention retention;
    const char* retained_as;
  };
  const Want wants[] = {
      {1, Retention::ModuleGlobal, "GLOBAL"},
      {4, Retention::SelfAttribute, "self.cache"},
      {5, Retention::SelfContainer, "self._d"},
      {6, Retention::SelfContainer, "self._l"},
      {7, Retention::SelfContainer, "self._s"},
      {8, Retention::PassedToCall, "past_key_values"},
      {9, Retention::Local, "local"},
      {10, Retention::Local, ""},
      {11, Retention::SelfContainer, "self._caches"},
      {13, Retention::SelfContainer, "self.pool"},
      {14, Retention::Returned, "return"},
      {16, Retention::Returned, "pkv"},
      {20, Retention::Returned, "return"},
      {22, Retention::PassedToCall, "self.run"},
      {25, Retention::Returned, "session.cache"},
      {28, Retention::Local, "out.cache"},
  };
  ASSERT_EQ(f.cache_sites.size(), std::size(wants));
  for (const auto& w : wants) {
    const auto* s = site_on_line(f, w.line);
    ASSERT_NE(s, nullptr) << "line " << w.line;
    EXPECT_EQ(s->retention, w.retention) << "line " << w.line;
    EXPECT_EQ(s->retained_as, w.retained_as) << "line " << w.line;
  }
  ASSERT_TRUE(site_on_line(f, 5)->container_key.has_value());
  EXPECT_EQ(site_on_line(f, 5)->container_key->text, "rid");
  ASSERT_TRUE(site_on_line(f, 7)->container_key.has_value());
  EXPECT_EQ(site_on_line(f, 7)->container_key->text, "key");
  // Followed one step through the local `c`.
  ASSERT_TRUE(site_on_line(f, 11)->container_key.has_value());
  EXPECT_EQ(site_on_line(f, 11)->container_key->text, "rid");
  EXPECT_FALSE(site_on_line(f, 6)->container_key.has_value());
  EXPECT_EQ(site_on_line(f, 1)->owner_class, "");
  EXPECT_EQ(site_on_line(f, 1)->method, "");
}

TEST(FrontendCacheSites, CallerRequestedOnTheTransformersPattern) {
  const auto f = analyze(R"PY(class Model(PreTrainedModel):
    def forward(self, input_ids, past_key_values=None, use_cache=None):
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        out = self.layers(input_ids, past_key_values=past_key_values)
        return Output(past_key_values=past_key_values)
    def build(self, use_cache):
        if use_cache:
            return DynamicCache()
    def own(self):
        if self.streaming:
            self.cache = DynamicCache()
    def local_only(self, want):
        if want:
            c = DynamicCache()
)PY");
  ASSERT_EQ(f.cache_sites.size(), 4u);
  EXPECT_TRUE(site_on_line(f, 4)->caller_requested);
  EXPECT_EQ(site_on_line(f, 4)->retained_as, "past_key_values");
  EXPECT_EQ(site_on_line(f, 4)->retention, Retention::Returned);
  EXPECT_TRUE(site_on_line(f, 9)->caller_requested);  // a branch on a cache argument asks
  EXPECT_FALSE(site_on_line(f, 12)->caller_requested);  // owner state, kept on self
  EXPECT_FALSE(site_on_line(f, 15)->caller_requested);  // not handed back
  const auto& g = site_on_line(f, 4)->guards;
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].parameters, (std::vector<std::string>{"use_cache", "past_key_values"}));
  EXPECT_TRUE(g[0].self_attributes.empty());
}

TEST(FrontendCacheSites, InsideGraphCaptureAndNestedFunctionOwner) {
  const auto f = analyze(R"PY(import torch
class Runner:
    def capture(self):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.cache = DynamicCache()
        def later():
            return StaticCache()
        self.outside = DynamicCache()
)PY");
  ASSERT_EQ(f.cache_sites.size(), 3u);
  EXPECT_TRUE(site_on_line(f, 6)->inside_graph_capture);
  EXPECT_FALSE(site_on_line(f, 9)->inside_graph_capture);
  EXPECT_EQ(site_on_line(f, 8)->owner_class, "Runner");
  EXPECT_EQ(site_on_line(f, 8)->method, "capture");
  // The capture itself is not a With guard.
  EXPECT_TRUE(site_on_line(f, 6)->guards.empty());
}

TEST(FrontendCacheSites, CachesBuiltInsideACacheClassAreItsStructure) {
  const auto f = analyze(R"PY(from transformers.cache_utils import Cache, DynamicCache
class PairedCache(Cache):
    def __init__(self):
        self.self_attention_cache = DynamicCache()
    @classmethod
    def from_legacy_cache(cls, past):
        cache = cls()
        cache.cross = DynamicCache()
        return cache
class Model:
    def f(self):
        self.cache = PairedCache()
        self.other = DynamicCache()
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].owner_class, "Model");
  EXPECT_EQ(f.cache_sites[0].loc.line, 13u);
}

TEST(FrontendCacheSites, ConfiguredSubclassNamesAreCacheClasses) {
  facts::Vocabulary vocabulary;
  vocabulary.cache_classes.push_back("MyCache");
  const auto f = analyze(R"PY(class M:
    def f(self):
        self.c = MyCache()
)PY",
                         vocabulary);
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].cache_class, "MyCache");
}

}  // namespace
}  // namespace kvlint::frontend_test
