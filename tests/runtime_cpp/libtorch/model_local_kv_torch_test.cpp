// The declaration header with LibTorch's headers present: `.dtype = torch::kBFloat16` works, as
// in the example, and gives the element size and the name.
#include <c10/core/ScalarType.h>
#include <gtest/gtest.h>
#include <kvlint/model_local_kv.h>

namespace mlkv = kvlint::model_local_kv;

namespace {

struct Qwen2Config {
  int num_hidden_layers = 24;
  int num_attention_heads = 14;
  int num_key_value_heads = 2;
  int hidden_size = 896;
};

TEST(ModelLocalKvWithLibTorch, ScalarTypeDtype) {
  const mlkv::Spec spec = mlkv::spec_from_config(Qwen2Config{}, {.name = "talker_static_kv",
                                                                 .physical_capacity_positions = 2048,
                                                                 .capacity_source = "static buffer",
                                                                 .scope = mlkv::Scope::Invocation,
                                                                 .dtype = c10::kBFloat16,
                                                                 .rows = mlkv::RowDriver::Fixed,
                                                                 .rows_fixed = 1,
                                                                 .rows_reason = "serialized"});
  EXPECT_EQ(spec.dtype.element_size, 2u);
  EXPECT_EQ(spec.dtype.name, "BFloat16");
  EXPECT_EQ(spec.bytes_per_row(), 24 * 1024 * 1024);
  EXPECT_EQ(mlkv::Dtype(c10::kFloat).element_size, 4u);
  EXPECT_EQ(mlkv::Dtype(c10::kHalf).element_size, 2u);
  EXPECT_EQ(mlkv::Dtype(std::size_t{1}).element_size, 1u);  // an element size still works
}

}  // namespace
