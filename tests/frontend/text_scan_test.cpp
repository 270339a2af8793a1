// analyzers/python/text_scan.hpp: the text tests the engine trusts to leave a file unparsed.
// Each "no" below is a file the front end gives no such fact; each "yes" one it may.
#include "analyzers/python/text_scan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/facts/vocabulary.hpp"
#include "analyzers/python/python_frontend.hpp"

namespace kvlint::python {
namespace {

const std::vector<std::string>& cache_classes() {
  static const facts::Vocabulary vocabulary;
  return vocabulary.cache_classes;
}

TEST(TextScanUseCache, KeywordDictKeyAndSubscriptSetToTrue) {
  EXPECT_TRUE(passes_use_cache_true("out = self.model(ids, use_cache=True)\n"));
  EXPECT_TRUE(passes_use_cache_true("out = self.model(ids, use_cache = (True))\n"));
  EXPECT_TRUE(passes_use_cache_true("kw = dict(\n    use_cache=\n    True,\n)\n"));
  EXPECT_TRUE(passes_use_cache_true("kw = {\"use_cache\": True}\nself.lm(**kw)\n"));
  EXPECT_TRUE(passes_use_cache_true("kw = {'use_cache' :True}\n"));
  EXPECT_TRUE(passes_use_cache_true("kwargs[\"use_cache\"] = True\n"));
  EXPECT_TRUE(passes_use_cache_true("kwargs.update(use_cache=True)  # a comment\n"));
  // A call inside a default is still a call.
  EXPECT_TRUE(passes_use_cache_true("def f(x=g(use_cache=True)):\n    pass\n"));
}

TEST(TextScanUseCache, DefaultsPassThroughsStringsAndCommentsAreNone) {
  // A configuration class: a parameter default and an attribute set from it.
  EXPECT_FALSE(passes_use_cache_true(
      "class LlamaConfig(PretrainedConfig):\n"
      "    def __init__(\n        self,\n        use_cache=True,\n        tie=False,\n    ):\n"
      "        self.use_cache = use_cache\n"));
  EXPECT_FALSE(passes_use_cache_true("async def generate(self, *, use_cache: bool = True):\n    pass\n"));
  EXPECT_FALSE(passes_use_cache_true("f = lambda use_cache=True: use_cache\n"));
  // Passing a variable on, comparing, an annotation without a value.
  EXPECT_FALSE(passes_use_cache_true("out = self.model(ids, use_cache=use_cache)\n"));
  EXPECT_FALSE(passes_use_cache_true("if use_cache == True:\n    pass\n"));
  EXPECT_FALSE(passes_use_cache_true("class Args:\n    use_cache: bool = True\n"));
  // Code in a docstring or a comment, and a longer name.
  EXPECT_FALSE(passes_use_cache_true("\"\"\"\n>>> model(ids, use_cache=True)\n\"\"\"\n"));
  EXPECT_FALSE(passes_use_cache_true("r'''use_cache=True'''\nx = f'{a}' 'use_cache=True'\n"));
  EXPECT_FALSE(passes_use_cache_true("# model(ids, use_cache=True)\n"));
  EXPECT_FALSE(passes_use_cache_true("model(ids, my_use_cache=True)\n"));
  EXPECT_FALSE(passes_use_cache_true("model(ids, use_cache=Truest)\n"));
}

TEST(TextScanUseCache, AStringThatEndsWhereTheTokenizerEndsItLeavesCodeAfterIt) {
  // An escaped quote does not end the string; the call after it is code.
  EXPECT_TRUE(passes_use_cache_true("s = 'it\\'s'\nmodel(ids, use_cache=True)\n"));
  EXPECT_TRUE(passes_use_cache_true("s = \"\"\"a \"quoted\" word\"\"\"\nmodel(ids, use_cache=True)\n"));
  // The parameter list ends at its own closing parenthesis, nested ones included.
  EXPECT_TRUE(passes_use_cache_true("def f(a=(1, 2), b=[3]):\n    return g(use_cache=True)\n"));
}

TEST(TextScanCaches, BuiltAliasedOrABase) {
  EXPECT_TRUE(may_build_cache("cache = DynamicCache()\n", cache_classes()));
  EXPECT_TRUE(may_build_cache("cache = transformers.StaticCache (config=c)\n", cache_classes()));
  EXPECT_TRUE(may_build_cache("c = DynamicCache.from_legacy_cache(p)\n", cache_classes()));
  EXPECT_TRUE(may_build_cache("from transformers import DynamicCache as DC\n", cache_classes()));
  EXPECT_TRUE(may_build_cache("class PairedCache(Cache):\n    pass\n", cache_classes()));
  EXPECT_TRUE(
      may_build_cache("class Paired(\n    Base,\n    cache_utils.DynamicCache,\n):\n", cache_classes()));
}

// Every occurrence of every name is looked at, whatever the name holds (names with "Cache" are
// found through it, at any offset; names without it one by one) and wherever a look-alike
// stands before it.
TEST(TextScanCaches, EveryOccurrenceOfEveryNameIsLookedAt) {
  const std::vector<std::string> names = {"DynamicCache", "MyCacheX", "CacheCache", "KvPool"};
  EXPECT_TRUE(may_build_cache("x: DynamicCache\nMyDynamicCache()\nc = DynamicCache()\n", names));
  EXPECT_TRUE(may_build_cache("isinstance(a, DynamicCache)\nMyCacheX.build()\n", names));
  EXPECT_TRUE(may_build_cache("p = CacheCacheCache()\nq = CacheCache ()\n", names));
  EXPECT_TRUE(may_build_cache("x: KvPool\ny = KvPool(3)\n", names));
  EXPECT_FALSE(may_build_cache("x: KvPool\nMyCacheXY()\nCacheCacheCache()\n", names));
}

// names_handed_self lists exactly the names hands_self_to is true for, or says it cannot tell.
TEST(TextScanWitnesses, NamesHandedSelfAreThoseHandsSelfToFinds) {
  const std::string text =
      "obj.owner = self\nx.parent=(self)\ny.a == self\nz.b = selfish\nw.c = \\\n  self\n"
      "k = v = self\nd['k'] = self\n# m.note = self\n";
  const auto names = names_handed_self(text);
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"c", "note", "owner", "parent", "v"}));
  for (const char* attribute : {"owner", "parent", "a", "b", "c", "k", "v", "d", "note", "self"})
    EXPECT_EQ(hands_self_to(text, attribute), std::binary_search(names->begin(), names->end(), attribute))
        << attribute;
  // A name and its `=` on two lines may have a comment between them: only the bytes can tell.
  EXPECT_FALSE(names_handed_self("x.owner  # why\n    = self\n"));
  EXPECT_TRUE(hands_self_to("x.owner  # why\n    = self\n", "owner"));
}

TEST(TextScanCaches, NamedOnlyIsNone) {
  EXPECT_FALSE(may_build_cache("from ...cache_utils import Cache, DynamicCache\n", cache_classes()));
  EXPECT_FALSE(
      may_build_cache("def f(pkv: Optional[DynamicCache] = None) -> Cache:\n    pass\n", cache_classes()));
  EXPECT_FALSE(may_build_cache("if isinstance(pkv, DynamicCache):\n    pass\n", cache_classes()));
  EXPECT_FALSE(may_build_cache("x = MyDynamicCache()\n", cache_classes()));
  EXPECT_FALSE(may_build_cache("class Holder(nn.Module):\n    cache: Cache\n", cache_classes()));
  EXPECT_FALSE(may_build_cache("subclass(DynamicCacheLike)\n", cache_classes()));
}

// The seed tests against the front end itself: a text they call seedless gives no seed fact.
TEST(TextScanSeeds, WhatTheyLeaveOutTheFrontEndFindsNoSeedIn) {
  const facts::Vocabulary vocabulary;
  for (const char* source : {
           "from transformers import DynamicCache\n"
           "class Config:\n    def __init__(self, use_cache=True):\n        self.use_cache = use_cache\n",
           "from transformers.cache_utils import Cache, DynamicCache\n"
           "class Layer(nn.Module):\n"
           "    def forward(self, x, past_key_values: Optional[Cache] = None, use_cache=False):\n"
           "        if isinstance(past_key_values, DynamicCache):\n"
           "            x = self.attn(x, past_key_values=past_key_values, use_cache=use_cache)\n"
           "        return x\n",
       }) {
    ASSERT_FALSE(passes_use_cache_true(source)) << source;
    ASSERT_FALSE(may_build_cache(source, vocabulary.cache_classes)) << source;
    const facts::FileFacts f = analyze("m.py", source, vocabulary);
    EXPECT_TRUE(f.cache_sites.empty()) << source;
    EXPECT_TRUE(f.implicit_caches.empty()) << source;
  }
}

TEST(TextScanWitnesses, WholeNamesAndTheirShapes) {
  EXPECT_TRUE(mentions("x = Decoder(cfg)\n", "Decoder"));
  EXPECT_FALSE(mentions("x = DecoderLayer(cfg)\n", "Decoder"));
  EXPECT_TRUE(defines_function("async def  capture_step(model):\n", "capture_step"));
  EXPECT_FALSE(defines_function("capture_step(model)\ndef capture_steps():\n", "capture_step"));
  EXPECT_TRUE(assigns("MAX_LEN = 4096\n", "MAX_LEN"));
  EXPECT_TRUE(assigns("A = MAX_LEN = 4096\n", "MAX_LEN"));
  EXPECT_TRUE(assigns("MAX_LEN: int = 4096\n", "MAX_LEN"));
  EXPECT_FALSE(assigns("f(MAX_LEN)\nif MAX_LEN == 3: pass\n", "MAX_LEN"));
  EXPECT_TRUE(hands_self_to("        decoder._graph_wrapper = self\n", "_graph_wrapper"));
  EXPECT_TRUE(hands_self_to("decoder._graph_wrapper = (self)\n", "_graph_wrapper"));
  EXPECT_FALSE(hands_self_to("self._graph_wrapper = wrapper\n", "_graph_wrapper"));
  EXPECT_FALSE(hands_self_to("if decoder._graph_wrapper == self: pass\n", "_graph_wrapper"));
}

TEST(TextScanRawKv, GrowthOfWhatSelfKeepsWithoutAnAllocation) {
  // K/V kept only by concatenation onto an attribute: no torch.zeros/empty in the file.
  EXPECT_TRUE(may_hold_raw_kv("class C:\n    def store(self, key):\n"
                              "        self.k_cache = torch.cat([self.k_cache, key], dim=1)\n"));
  EXPECT_TRUE(may_hold_raw_kv("self.key_values[i] = torch.cat((self.key_values[i], k), 2)\n"));
  // A concatenation of locals in an attention file is no K/V kept.
  EXPECT_FALSE(may_hold_raw_kv("h = torch.cat([a, b], dim=1)\nF.scaled_dot_product_attention(q, k, v)\n"));
}

}  // namespace
}  // namespace kvlint::python
