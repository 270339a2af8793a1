// Compiled as C++17 (no designated initializers) and linked into test_model_local_kv: the header
// must serve C++17 model code too.
#include "tests/model_local_kv/cxx17/cxx17_use.hpp"

#include <kvlint/model_local_kv.h>

#if __cplusplus != 201703L
#error "this translation unit checks the header under C++17"
#endif

namespace {

struct Qwen2Config {
  int num_hidden_layers = 24;
  int num_attention_heads = 14;
  int num_key_value_heads = 2;
  int hidden_size = 896;
};

}  // namespace

std::int64_t cxx17_talker_bytes_per_row() {
  namespace mlkv = kvlint::model_local_kv;
  mlkv::SpecArgs args;
  args.name = "talker_static_kv";
  args.physical_capacity_positions = 2048;
  args.dtype = 2;
  args.rows = mlkv::RowDriver::Fixed;
  args.rows_reason = "the talker serves one request at a time";
  return mlkv::spec_from_config(Qwen2Config{}, args).bytes_per_row();
}

bool cxx17_fixed_without_reason_throws() {
  namespace mlkv = kvlint::model_local_kv;
  try {
    mlkv::Spec spec{"talker_static_kv",    24, 2, 64, 2048, "static", mlkv::Scope::Invocation, 2,
                    mlkv::RowDriver::Fixed};
    return spec.bytes_per_row() < 0;
  } catch (const std::invalid_argument&) {
    return true;
  }
}

namespace {
constexpr std::uint32_t kCallLine = __LINE__ + 7;
}  // namespace

std::uint32_t cxx17_spec_from_config_line() {
  namespace mlkv = kvlint::model_local_kv;
  mlkv::SpecArgs args;
  args.rows = mlkv::RowDriver::MaxNumSeqs;
  return mlkv::spec_from_config(Qwen2Config{}, args).declared_line;
}

std::uint32_t cxx17_spec_from_config_expected_line() {
  return kCallLine;
}
