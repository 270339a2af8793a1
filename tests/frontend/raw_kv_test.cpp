// Raw K/V (analyzers/python/raw_kv.cpp): kept tensors the code treats as keys and values become
// cache sites of class "Tensor" with facts::RawKv evidence; look-alikes do not.
#include <gtest/gtest.h>

#include <tuple>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

using facts::Retention;

TEST(FrontendRawKv, KAndVWrittenPerStepAreOneStoreWithItsGeometry) {
  const auto f = analyze(R"PY(import torch
class Decoder:
    def __init__(self, layers, max_num_seqs, heads, max_len, head_dim):
        self.k_cache = torch.zeros(layers, max_num_seqs, heads, max_len, head_dim)
        self.v_cache = torch.zeros(layers, max_num_seqs, heads, max_len, head_dim)
    def step(self, layer, slot, pos, k, v):
        self.k_cache[layer, slot, :, pos] = k
        self.v_cache[layer, slot, :, pos] = v
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  const auto& site = f.cache_sites[0];
  EXPECT_EQ(site.cache_class, "Tensor");
  EXPECT_EQ(site.written, "torch.zeros");
  EXPECT_EQ(site.retention, Retention::SelfAttribute);
  EXPECT_EQ(site.retained_as, "self.k_cache");
  ASSERT_TRUE(site.raw_kv);
  EXPECT_EQ(site.raw_kv->members, (std::vector<std::string>{"k_cache", "v_cache"}));
  ASSERT_TRUE(site.raw_kv->written_at);
  EXPECT_EQ(site.raw_kv->written_at->line, 7u);
  EXPECT_EQ(site.raw_kv->written_by, "slice assignment");
  EXPECT_TRUE(site.raw_kv->named_as_kv);
  ASSERT_EQ(site.raw_kv->shape.size(), 5u);
  EXPECT_EQ(site.raw_kv->rows_axis, 1u);
  EXPECT_EQ(site.raw_kv->positions_axis, 3u);
}

// The engine hands the front end its prefilter's answer to the raw K/V text scan
// (python::KnownText), and the front end does not scan again: told the text holds none, it
// records no raw K/V even where there is some.
TEST(FrontendRawKv, TheCallersAnswerToTheRawKvTextScanIsTheOneUsed) {
  constexpr std::string_view source = R"PY(import torch
class Decoder:
    def __init__(self, layers, heads, max_len, head_dim):
        self.k_cache = torch.zeros(layers, heads, max_len, head_dim)
        self.v_cache = torch.zeros(layers, heads, max_len, head_dim)
    def step(self, layer, pos, k, v):
        self.k_cache[layer, :, pos] = k
        self.v_cache[layer, :, pos] = v
)PY";
  python::PythonAnalyzer analyzer{facts::Vocabulary{}};
  EXPECT_EQ(analyzer.analyze("snippet.py", source, "pkg.snippet").cache_sites.size(), 1u);
  EXPECT_EQ(
      analyzer.analyze("snippet.py", source, "pkg.snippet", {.may_hold_raw_kv = true}).cache_sites.size(),
      1u);
  EXPECT_TRUE(
      analyzer.analyze("snippet.py", source, "pkg.snippet", {.may_hold_raw_kv = false}).cache_sites.empty());
}

TEST(FrontendRawKv, EachMethodsFirstWriteReadAndHandOnAreAccesses) {
  const auto f = analyze(R"PY(import torch
import torch.nn.functional as F
class Chunk:
    def prefill(self, shape, k, v):
        self.keys = torch.empty(shape)
        self.values = torch.empty(shape)
        self.keys[0, :4] = k
        self.keys[1, :4] = k
        self.values[0, :4] = v
    def velocity(self, q, k, v):
        self.keys[0, 4:] = k
        h = F.scaled_dot_product_attention(q, self.keys[0], self.values[0])
        return kernel(h, self.values)
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  ASSERT_TRUE(f.cache_sites[0].raw_kv);
  using K = facts::RawKvAccess::Kind;
  std::vector<std::tuple<K, std::string, uint32_t>> got;
  for (const auto& a : f.cache_sites[0].raw_kv->accesses) got.emplace_back(a.kind, a.method, a.loc.line);
  // `keys` then `values` (one store): the first of each kind in each method.
  EXPECT_EQ(got, (std::vector<std::tuple<K, std::string, uint32_t>>{{K::Write, "prefill", 7},
                                                                    {K::Write, "velocity", 11},
                                                                    {K::Read, "velocity", 12},
                                                                    {K::Write, "prefill", 9},
                                                                    {K::Read, "velocity", 12},
                                                                    {K::Pass, "velocity", 13}}));
  EXPECT_EQ(f.cache_sites[0].raw_kv->written_at->line, 7u);  // still the first write
}

TEST(FrontendRawKv, ALocalAllocationStoredLaterAndReadByAttentionThroughALocal) {
  const auto f = analyze(R"PY(import torch
import torch.nn.functional as F
class Pool:
    def reserve(self, n, heads, dim):
        buffer = torch.empty((2, heads, n, dim))
        self._store = buffer
    def attend(self, q, pos):
        keys = self._store[0, :, :pos]
        return F.scaled_dot_product_attention(q, keys, self._store[1, :, :pos])
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  const auto& site = f.cache_sites[0];
  ASSERT_TRUE(site.raw_kv);
  EXPECT_EQ(site.loc.line, 5u);
  EXPECT_EQ(site.retained_as, "self._store");
  EXPECT_FALSE(site.raw_kv->named_as_kv);
  ASSERT_TRUE(site.raw_kv->read_at);
  EXPECT_EQ(site.raw_kv->read_at->line, 9u);
  EXPECT_EQ(site.raw_kv->read_by, "F.scaled_dot_product_attention");
}

TEST(FrontendRawKv, NamesAloneMasksOffsetsParametersAndLocalsAreNotRawKv) {
  const auto f = analyze(R"PY(import torch
import torch.nn.functional as F
from torch import nn
class Attn(nn.Module):
    def __init__(self, b, h, t, d):
        super().__init__()
        self.k_cache = torch.zeros(b, h, t, d)
        self.attn_mask = torch.zeros(1, 1, t, t)
        self.end_offset = torch.zeros(b, h, dtype=torch.long)
        self.weight = nn.Parameter(torch.empty(h, t, d))
    def forward(self, q, k, v, pos):
        self.attn_mask[..., pos] = 1.0
        self.end_offset[:, 0] = pos
        local_k = torch.zeros(1, 2, 3, 4)
        local_k[:, :, pos] = k
        return F.scaled_dot_product_attention(q, local_k, v, attn_mask=self.attn_mask)
)PY");
  EXPECT_TRUE(f.cache_sites.empty()) << f.cache_sites.size() << " sites, first at line "
                                     << (f.cache_sites.empty() ? 0u : f.cache_sites[0].loc.line);
}

TEST(FrontendRawKv, ViewsFromAComprehensionOrAHelperMethodAreUsesOfTheKeptTensor) {
  const auto f = analyze(R"PY(import torch
class FrameKVCache:
    def __init__(self, layers, batch, heads, max_seq, head_dim):
        self.buffer = torch.zeros(layers, 2, batch, heads, max_seq, head_dim)
    def ensure(self, layers, batch, heads, max_seq, head_dim):
        self.kv_buf = torch.zeros(layers, batch, 2, heads, max_seq, head_dim)
    def _views(self, n):
        buf = self.kv_buf
        return [(buf[i, :n, 0], buf[i, :n, 1]) for i in range(buf.shape[0])]
    def step(self, x, n):
        caches = [(layer[0, :n], layer[1, :n]) for layer in self.buffer]
        views = self._views(n)
        return self.fused_step(x, caches, views)
)PY");
  ASSERT_EQ(f.cache_sites.size(), 2u);
  for (const auto& site : f.cache_sites) {
    ASSERT_TRUE(site.raw_kv) << site.loc.line;
    ASSERT_TRUE(site.raw_kv->written_at) << site.loc.line;
    EXPECT_EQ(site.raw_kv->written_at->line, 13u);
    EXPECT_EQ(site.raw_kv->written_by, "handed to `self.fused_step`");
  }
  EXPECT_EQ(f.cache_sites[0].raw_kv->members, (std::vector<std::string>{"buffer"}));
  EXPECT_EQ(f.cache_sites[1].raw_kv->members, (std::vector<std::string>{"kv_buf"}));
}

TEST(FrontendRawKv, GrowthByConcatenationWithoutAnAllocationIsTheSite) {
  const auto f = analyze(R"PY(import torch
class DecoderCache:
    def __init__(self):
        self.key_values = {}
    def update(self, layer, key, value):
        if layer in self.key_values:
            prev_key, prev_value = self.key_values[layer]
            key = torch.cat([prev_key, key], dim=2)
            value = torch.cat([prev_value, value], dim=2)
        self.key_values[layer] = (key, value)
        return key, value
class Look:
    def step(self, h, k):
        self.hidden = torch.cat([self.hidden, h], dim=1)
        joined = torch.cat([self.prefix_k, k], dim=1)
        return joined
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  const auto& site = f.cache_sites[0];
  EXPECT_EQ(site.written, "torch.cat");
  EXPECT_EQ(site.loc.line, 8u);
  EXPECT_EQ(site.retention, Retention::SelfContainer);
  ASSERT_TRUE(site.raw_kv);
  EXPECT_EQ(site.raw_kv->members, (std::vector<std::string>{"key_values"}));
  EXPECT_EQ(site.raw_kv->written_by, "`torch.cat` growth");
  EXPECT_TRUE(site.raw_kv->shape.empty());
}

TEST(FrontendRawKv, AttentionNamedKernelReadsAndANamedAttentionShapedStoreWithoutUses) {
  const auto f = analyze(R"PY(import torch
class Fused:
    def __init__(self, layers, batch, heads, capacity, head_dim, slots):
        self.cache = torch.zeros(layers, 2, batch, heads, capacity, head_dim)
        self.kv_tensors = {}
        self.kv_scale = torch.ones(heads, head_dim)
        ring = torch.zeros(2, slots, heads, capacity, head_dim)
        self.kv_tensors[0] = ring
    def layer(self, qkv, li):
        _cp_attention_kernel[(4, 2)](qkv, self.cache[li, 0], self.cache[li, 1], self.kv_scale)
)PY");
  ASSERT_EQ(f.cache_sites.size(), 2u);
  ASSERT_TRUE(f.cache_sites[0].raw_kv);
  EXPECT_EQ(f.cache_sites[0].raw_kv->members, (std::vector<std::string>{"cache"}));
  EXPECT_EQ(f.cache_sites[0].raw_kv->read_by, "_cp_attention_kernel");
  ASSERT_TRUE(f.cache_sites[1].raw_kv);
  EXPECT_EQ(f.cache_sites[1].raw_kv->members, (std::vector<std::string>{"kv_tensors"}));
  EXPECT_FALSE(f.cache_sites[1].raw_kv->written_at);
  EXPECT_FALSE(f.cache_sites[1].raw_kv->read_at);
}

TEST(FrontendRawKv, KvPairsAFactoryReturnsAreKeptByTheClassThatStoresAndUsesThem) {
  const auto f = analyze(R"PY(import torch
class Decoder:
    def _allocate_cache(self, hidden):
        shape = (hidden.shape[0], self.config.num_key_value_heads, self.n, self.config.head_dim)
        return [(hidden.new_zeros(shape), hidden.new_zeros(shape)) for _ in self.layers]
    def _conv_states(self, b):
        return torch.zeros(b, self.channels, self.kernel), torch.zeros(b, self.channels, self.kernel)
class Graph:
    def __init__(self, model, hidden):  # keep every KV allocation alive with the graph
        self.caches = model._allocate_cache(hidden)
        self.conv = model._conv_states(4)
        self.unused = model._allocate_cache(hidden)
        model._generate_frame(hidden, self.caches, self.conv)
        with torch.cuda.graph(self.graph):
            self.out = model._generate_frame(hidden, self.caches, self.conv)
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  const auto& site = f.cache_sites[0];
  EXPECT_EQ(site.owner_class, "Graph");
  EXPECT_EQ(site.written, "model._allocate_cache");
  EXPECT_EQ(site.loc.line, 10u);
  EXPECT_EQ(site.retained_as, "self.caches");
  ASSERT_TRUE(site.raw_kv);
  EXPECT_EQ(site.raw_kv->members, (std::vector<std::string>{"caches"}));
  ASSERT_EQ(site.raw_kv->shape.size(), 4u);
  EXPECT_EQ(site.raw_kv->shape[3].text, "self.config.head_dim");
  // The hand-on inside the capture is kept apart from the warm-up's, as what the graph holds.
  ASSERT_EQ(site.raw_kv->accesses.size(), 2u);
  EXPECT_EQ(site.raw_kv->accesses[0].loc.line, 13u);
  EXPECT_EQ(site.raw_kv->accesses[1].loc.line, 15u);
}

}  // namespace
}  // namespace kvlint::frontend_test
