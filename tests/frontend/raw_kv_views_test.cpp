// Raw K/V whose evidence crosses classes (analyzers/python/raw_kv_views.cpp): a kept
// attention-shaped tensor a method hands out as a view (facts::HeldTensorView), and another
// object's method's return handed on under a keyword that names attention K/V (facts::KvHandoff).
#include <gtest/gtest.h>

#include "analyzers/facts/facts_json.hpp"
#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

TEST(FrontendRawKvViews, AnArenaViewOfAKeptAttentionShapedLocalIsAHeldTensorView) {
  const auto f = analyze(R"PY(import torch
class Arena:
    def __init__(self, n_timesteps, depth, heads, width):
        self.n_timesteps, self.depth, self.heads, self.att_width = n_timesteps, depth, heads, width
        self._att = None
    def att_cache_view(self, batch_size, frames, capacity=0):
        storage = self._att
        if storage is None:
            storage = torch.zeros(self.n_timesteps, self.depth, 2 * batch_size, self.heads, capacity, self.att_width)
            self._att = storage
        return storage[:, :, : 2 * batch_size, :, :frames, :]
)PY");
  EXPECT_TRUE(f.cache_sites.empty());  // the class alone says no K/V
  ASSERT_EQ(f.held_tensor_views.size(), 1u);
  const auto& v = f.held_tensor_views[0];
  EXPECT_EQ(v.method, "att_cache_view");
  EXPECT_EQ(v.site.owner_class, "Arena");
  EXPECT_EQ(v.site.loc.line, 9u);
  EXPECT_EQ(v.site.retained_as, "self._att");
  ASSERT_TRUE(v.site.raw_kv);
  EXPECT_EQ(v.site.raw_kv->members, (std::vector<std::string>{"_att"}));
  ASSERT_EQ(v.site.raw_kv->shape.size(), 6u);
  EXPECT_EQ(v.site.raw_kv->rows_axis, 2u);
  EXPECT_EQ(v.site.raw_kv->positions_axis, 4u);
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.held_tensor_views.size(), 1u);
  EXPECT_EQ(back.held_tensor_views[0].method, "att_cache_view");
  EXPECT_EQ(back.held_tensor_views[0].site.raw_kv->members, v.site.raw_kv->members);
}

TEST(FrontendRawKvViews, ViewsOfConvCachesMasksAndTensorsWithoutHeadsAreNotHeld) {
  const auto f = analyze(R"PY(import torch
class Arena:
    def __init__(self, heads):
        self.heads = heads
        self.cnn = torch.zeros(10, 4, 2, self.heads, 8, 3)
        self.mask = torch.ones(10, 2, self.heads, 8, 8, dtype=torch.bool)
        self.flat = torch.zeros(2, 8 * 64, 128, 3)
        self.table = torch.zeros(10, 4, self.heads, 8, 64)
    def cnn_view(self):
        return self.cnn[:, :2]
    def mask_view(self):
        return self.mask[:2]
    def flat_view(self):
        return self.flat[:2]
    def positions_view(self):
        return self.table[:2]
)PY");
  EXPECT_TRUE(f.held_tensor_views.empty());
}

TEST(FrontendRawKvViews, AnotherObjectsReturnHandedAsAttentionKvIsAHandoffWithItsReceiver) {
  const auto f = analyze(R"PY(from .arena import AttSlotPool
class Wrapper:
    def capture(self, b, n):
        arena = self.arena
        pool = AttSlotPool(self.arena, slots=4)
        return self._statics(
            att_cache=arena.att_cache_view(b, n),
            out_att_cache=self.arena.att_cache_view(b, n),
            kv_cache=pool.rows(),
            cnn_cache=arena.get_cnn_cache_in(b),
            attn_mask=arena.get_mask_staging(b),
            past_key_values=self._own_view(),
        )
)PY");
  ASSERT_EQ(f.kv_handoffs.size(), 3u);
  EXPECT_EQ(f.kv_handoffs[0].owner_class, "Wrapper");
  EXPECT_EQ(f.kv_handoffs[0].method, "capture");
  EXPECT_EQ(f.kv_handoffs[0].keyword, "att_cache");
  EXPECT_EQ(f.kv_handoffs[0].receiver, "self.arena");  // through `arena = self.arena`
  EXPECT_EQ(f.kv_handoffs[0].called, "att_cache_view");
  EXPECT_EQ(f.kv_handoffs[0].loc.line, 7u);
  EXPECT_EQ(f.kv_handoffs[1].keyword, "out_att_cache");
  EXPECT_EQ(f.kv_handoffs[1].receiver, "self.arena");
  EXPECT_EQ(f.kv_handoffs[2].keyword, "kv_cache");
  EXPECT_EQ(f.kv_handoffs[2].receiver, "pool");
  EXPECT_EQ(f.kv_handoffs[2].receiver_class, ".arena.AttSlotPool");
  EXPECT_EQ(f.kv_handoffs[2].called, "rows");
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.kv_handoffs.size(), 3u);
  EXPECT_EQ(back.kv_handoffs[2].receiver_class, ".arena.AttSlotPool");
}

// The class that keeps the pairs may come before the class whose method returns them.
TEST(FrontendRawKvViews, KvPairsFromAFactoryDefinedLaterInTheFileAreKeptAllTheSame) {
  const auto f = analyze(R"PY(import torch
class DepthGraph:
    def __init__(self, model, hidden):
        # Keep every KV allocation alive with the graph.
        self.caches = model._allocate_cache(hidden)
        self.output = model._generate_frame(hidden, self.caches)
class DepthDecoder:
    def _allocate_cache(self, hidden):
        shape = (hidden.shape[0], self.config.num_key_value_heads, 4, self.config.head_dim)
        return [(hidden.new_zeros(shape), hidden.new_zeros(shape)) for _ in self.layers]
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].owner_class, "DepthGraph");
  EXPECT_EQ(f.cache_sites[0].loc.line, 5u);
  EXPECT_EQ(f.cache_sites[0].retained_as, "self.caches");
  ASSERT_TRUE(f.cache_sites[0].raw_kv);
  EXPECT_EQ(f.cache_sites[0].raw_kv->shape.size(), 4u);
}

}  // namespace
}  // namespace kvlint::frontend_test
