// The C++ declaration header (runtime/include/kvlint/model_local_kv.h) without LibTorch: byte
// arithmetic against the reference table of the protocol, the FIXED-rows reason check, and
// spec_from_config's config fallbacks and overrides.
#include <gtest/gtest.h>
#include <kvlint/model_local_kv.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "tests/model_local_kv/cxx17/cxx17_use.hpp"

namespace mlkv = kvlint::model_local_kv;

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::size_t kBf16 = 2;
constexpr std::size_t kFp32 = 4;

// The configs of the protocol's reference table, as a C++ model would hold them.
struct Qwen2Config {  // ming talker: Qwen2-0.5B geometry, head_dim = 896 / 14
  int num_hidden_layers = 24;
  int num_attention_heads = 14;
  int num_key_value_heads = 2;
  int hidden_size = 896;
};
struct MistralConfig {  // Qwen3-TTS codec decoder
  int num_hidden_layers = 8;
  int num_attention_heads = 16;
  int num_key_value_heads = 16;
  int head_dim = 64;
  int hidden_size = 1024;
};
struct LocalConfig {  // MiMo-Audio local transformer
  long num_hidden_layers = 16;
  long num_attention_heads = 8;
  long num_key_value_heads = 8;
  long head_dim = 128;
  long hidden_size = 1024;
};
struct WhisperConfig {  // MiniCPM-o Whisper encoder: no kv-head count, no head_dim
  int num_hidden_layers = 24;
  int num_attention_heads = 16;
  int hidden_size = 1024;
};

mlkv::SpecArgs fixed_one(const char* name, std::int64_t positions, mlkv::Dtype dtype) {
  return {.name = name,
          .physical_capacity_positions = positions,
          .capacity_source = "test",
          .scope = mlkv::Scope::Invocation,
          .dtype = dtype,
          .rows = mlkv::RowDriver::Fixed,
          .rows_fixed = 1,
          .rows_reason = "serialized"};
}

TEST(ModelLocalKvHeader, TalkerIs24MiBPerRowFromConfigFallbacks) {
  // The example: 24 layers x 2 kv-heads x (896 / 14 = 64) x 2048 positions x bf16.
  const mlkv::Spec spec =
      mlkv::spec_from_config(Qwen2Config{}, {.name = "talker_static_kv",
                                             .physical_capacity_positions = 2048,
                                             .capacity_source = "static buffer of kMaxCacheLen positions",
                                             .scope = mlkv::Scope::Invocation,
                                             .dtype = kBf16,
                                             .rows = mlkv::RowDriver::Fixed,
                                             .rows_fixed = 1,
                                             .rows_reason = "the talker serves one request at a time"});
  EXPECT_EQ(spec.layers, 24);
  EXPECT_EQ(spec.kv_heads, 2);
  EXPECT_EQ(spec.head_dim, 64);
  EXPECT_EQ(spec.bytes_per_row(), 24 * kMiB);
  EXPECT_EQ(spec.row_count(256), 1);
  EXPECT_EQ(spec.total_bytes(256), 24 * kMiB);
}

TEST(ModelLocalKvHeader, ReferenceTableFigures) {
  // Qwen3-TTS codec decoder: sliding window 72 keeps 71 positions, fp32: 4.44 MiB.
  auto codec = mlkv::spec_from_config(MistralConfig{}, {.name = "codec_decoder_sliding_kv",
                                                        .physical_capacity_positions = 71,
                                                        .capacity_source = "sliding_window - 1",
                                                        .scope = mlkv::Scope::Request,
                                                        .dtype = kFp32,
                                                        .rows = mlkv::RowDriver::MaxNumSeqs});
  EXPECT_EQ(codec.bytes_per_row(), 4'653'056);
  EXPECT_NEAR(static_cast<double>(codec.bytes_per_row()) / kMiB, 4.44, 0.005);
  EXPECT_EQ(codec.row_count(256), 256);
  // MiMo-Audio local transformer: group_size + max(delay_pattern) = 11 positions, bf16: 704 KiB.
  auto local = mlkv::spec_from_config(LocalConfig{}, {.name = "local_transformer_kv",
                                                      .physical_capacity_positions = 11,
                                                      .dtype = kBf16,
                                                      .rows = mlkv::RowDriver::MaxNumSeqs});
  EXPECT_EQ(local.bytes_per_row(), 704 * 1024);
  // MiniCPM-o Whisper encoder: 1500 positions; kv_heads from num_attention_heads and head_dim
  // from hidden_size / num_attention_heads: 140.62 MiB.
  auto whisper = mlkv::spec_from_config(WhisperConfig{}, fixed_one("whisper_encoder_kv", 1500, kBf16));
  EXPECT_EQ(whisper.kv_heads, 16);
  EXPECT_EQ(whisper.head_dim, 64);
  EXPECT_EQ(whisper.bytes_per_row(), 147'456'000);
  EXPECT_NEAR(static_cast<double>(whisper.bytes_per_row()) / kMiB, 140.62, 0.005);
}

TEST(ModelLocalKvHeader, FixedRowsWithoutReasonThrowsAtConstruction) {
  auto build = [](std::string reason, std::int64_t rows_fixed) {
    return mlkv::Spec{.name = "talker_static_kv",
                      .layers = 24,
                      .kv_heads = 2,
                      .head_dim = 64,
                      .physical_capacity_positions = 2048,
                      .dtype = kBf16,
                      .rows = mlkv::RowDriver::Fixed,
                      .rows_fixed = rows_fixed,
                      .rows_reason = std::move(reason)};
  };
  EXPECT_THROW(build("", 1), std::invalid_argument);
  EXPECT_THROW(build("serialized", 0), std::invalid_argument);
  EXPECT_EQ(build("serialized", 1).bytes_per_row(), 24 * kMiB);
  try {
    build("", 1);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "talker_static_kv: FIXED rows need rows_fixed >= 1 and a rows_reason");
  }
  // The same check through spec_from_config, and a spec whose rows were never given (FIXED).
  auto args = fixed_one("talker_static_kv", 2048, kBf16);
  args.rows_reason.clear();
  EXPECT_THROW(mlkv::spec_from_config(Qwen2Config{}, args), std::invalid_argument);
  EXPECT_THROW((mlkv::Spec{.name = "forgot_rows", .layers = 1}), std::invalid_argument);
  // MAX_NUM_SEQS needs no reason.
  EXPECT_NO_THROW((mlkv::Spec{.name = "per_seq", .rows = mlkv::RowDriver::MaxNumSeqs}));
}

// Where a spec is declared (RT003's anchor): spec_from_config's call site, or the aggregate's
// initialisation (its closing brace when it spans lines), never the header.
TEST(ModelLocalKvHeader, SpecRecordsWhereItIsDeclared) {
  const std::uint32_t call_line = __LINE__ + 1;
  const auto from_config = mlkv::spec_from_config(Qwen2Config{}, fixed_one("talker_static_kv", 2048, kBf16));
  EXPECT_EQ(from_config.declared_line, call_line);
  EXPECT_STREQ(from_config.declared_file, __FILE__);
  const auto direct = mlkv::Spec{.name = "per_seq", .rows = mlkv::RowDriver::MaxNumSeqs};
  EXPECT_EQ(direct.declared_line, static_cast<std::uint32_t>(__LINE__ - 1));
  EXPECT_STREQ(direct.declared_file, __FILE__);
  EXPECT_EQ(cxx17_spec_from_config_line(), cxx17_spec_from_config_expected_line());
}

TEST(ModelLocalKvHeader, ExplicitGeometryOverridesTheConfig) {
  auto args = fixed_one("talker_static_kv", 2048, kBf16);
  args.layers = 12;
  args.kv_heads = 4;
  args.head_dim = 32;
  auto spec = mlkv::spec_from_config(Qwen2Config{}, args);
  EXPECT_EQ(spec.layers, 12);
  EXPECT_EQ(spec.kv_heads, 4);
  EXPECT_EQ(spec.head_dim, 32);
  EXPECT_EQ(spec.bytes_per_row(), 2 * 12 * 4 * 32 * 2048 * 2);
}

TEST(ModelLocalKvHeader, ConfigFieldFallbacks) {
  struct NumLayersOnly {  // num_layers instead of num_hidden_layers; zero kv-heads means unset
    int num_layers = 6;
    int num_attention_heads = 4;
    int num_key_value_heads = 0;
    int hidden_size = 256;
  };
  auto spec = mlkv::spec_from_config(NumLayersOnly{}, fixed_one("a", 16, kBf16));
  EXPECT_EQ(spec.layers, 6);
  EXPECT_EQ(spec.kv_heads, 4);
  EXPECT_EQ(spec.head_dim, 64);

  struct OptionalFields {  // std::optional members count when they hold a value
    std::optional<int> num_hidden_layers = 3;
    std::optional<int> num_attention_heads = 8;
    std::optional<int> num_key_value_heads;
    std::optional<int> head_dim = 16;
  };
  spec = mlkv::spec_from_config(OptionalFields{}, fixed_one("b", 16, kBf16));
  EXPECT_EQ(spec.layers, 3);
  EXPECT_EQ(spec.kv_heads, 8);
  EXPECT_EQ(spec.head_dim, 16);
}

TEST(ModelLocalKvHeader, MissingConfigFieldsThrowRatherThanGuess) {
  struct NoLayers {
    int num_attention_heads = 4;
    int hidden_size = 256;
  };
  EXPECT_THROW(mlkv::spec_from_config(NoLayers{}, fixed_one("a", 16, kBf16)), std::invalid_argument);
  auto with_layers = fixed_one("a", 16, kBf16);
  with_layers.layers = 2;
  EXPECT_EQ(mlkv::spec_from_config(NoLayers{}, with_layers).layers, 2);

  struct NoHeads {
    int num_hidden_layers = 2;
    int head_dim = 64;
  };
  EXPECT_THROW(mlkv::spec_from_config(NoHeads{}, fixed_one("b", 16, kBf16)), std::invalid_argument);

  struct IndivisibleHidden {
    int num_hidden_layers = 2;
    int num_attention_heads = 3;
    int hidden_size = 256;
  };
  EXPECT_THROW(mlkv::spec_from_config(IndivisibleHidden{}, fixed_one("c", 16, kBf16)), std::invalid_argument);
}

TEST(ModelLocalKvHeader, EnumNamesAreThePythonMemberNames) {
  EXPECT_EQ(mlkv::name_of(mlkv::RowDriver::Fixed), "FIXED");
  EXPECT_EQ(mlkv::name_of(mlkv::RowDriver::MaxNumSeqs), "MAX_NUM_SEQS");
  EXPECT_EQ(mlkv::name_of(mlkv::Scope::Invocation), "INVOCATION");
  EXPECT_EQ(mlkv::name_of(mlkv::Scope::Request), "REQUEST");
  EXPECT_EQ(mlkv::name_of(mlkv::Scope::Session), "SESSION");
  EXPECT_EQ(mlkv::name_of(mlkv::Scope::Model), "MODEL");
}

TEST(ModelLocalKvHeader, ModelDeclaresThroughAMemberFunction) {
  // The shape the issue documents: a const member returning a vector of specs.
  class Talker {
   public:
    std::vector<mlkv::Spec> model_local_kv_specs() const {
      return {mlkv::spec_from_config(config_, fixed_one("talker_static_kv", 2048, kBf16))};
    }

   private:
    Qwen2Config config_;
  };
  const auto specs = Talker{}.model_local_kv_specs();
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].name, "talker_static_kv");
  EXPECT_EQ(specs[0].bytes_per_row(), 24 * kMiB);
  EXPECT_TRUE(specs[0].dtype.name.empty());  // a bare element size has no name
}

}  // namespace

TEST(ModelLocalKvHeader, CompilesAndComputesAsCxx17) {
  EXPECT_EQ(cxx17_talker_bytes_per_row(), 24 * 1024 * 1024);
  EXPECT_TRUE(cxx17_fixed_without_reason_throws());
}
