// Hand-built-facts tests for KV401-KV405.
#include <gtest/gtest.h>

#include "kv_spec_test_support.hpp"

namespace {

using namespace kvtest;
using kvlint::facts::RowsDriver;

// ---------- KV401 ----------

TEST(KV401, CapacityReadFromMaxModelLen) {
  FileBuilder f("m.py");
  f.cls("LocalTransformer");
  auto& d = f.declaration("LocalTransformer", 10);
  f.spec(d, 11, RowsDriver::MaxNumSeqs,
         {kw("name", ex("\"local\"")),
          kw("physical_capacity_positions", ex("self.vllm_config.model_config.max_model_len"))});
  f.spec(d, 21, RowsDriver::MaxNumSeqs,
         {kw("physical_capacity_positions", ex("min(MAX_MODEL_LEN, 4096)", {"min", "MAX_MODEL_LEN"}))});
  f.spec(d, 31, RowsDriver::MaxNumSeqs,
         {kw("physical_capacity_positions", ex("self.group_size + max(self.delay_pattern)",
                                               {"self.group_size", "max", "self.delay_pattern"}))});
  auto findings = run_rule("KV401", {f.build()});
  EXPECT_EQ(lines_of(findings), (std::vector<uint32_t>{13, 22}));
  EXPECT_EQ(findings[0].severity, kvlint::Severity::Warning);
  EXPECT_NE(findings[0].message.find("max_model_len"), std::string::npos);
}

TEST(KV401, ThroughAConstant) {
  FileBuilder f("m.py");
  f.cls("CodecDecoder");
  f.constant("", "CODEC_POSITIONS", "DEFAULT_ENGINE_ARGS.max_model_len")
      .constant("", "WINDOW_POSITIONS", "71");
  auto& d = f.declaration("CodecDecoder", 10);
  f.spec(d, 11, RowsDriver::MaxNumSeqs, {kw("physical_capacity_positions", ex("CODEC_POSITIONS"))});
  f.spec(d, 21, RowsDriver::MaxNumSeqs, {kw("physical_capacity_positions", ex("WINDOW_POSITIONS"))});
  auto findings = run_rule("KV401", {f.build()});
  ASSERT_EQ(lines_of(findings), (std::vector<uint32_t>{12}));
  EXPECT_NE(findings[0].message.find("CODEC_POSITIONS = DEFAULT_ENGINE_ARGS.max_model_len"),
            std::string::npos)
      << findings[0].message;
}

// ---------- KV402 ----------

// A talker building StaticCache(max_cache_len=<site>) declared with capacity <spec>.
std::vector<kvlint::Finding> drift(std::string site_bound, std::string spec_capacity,
                                   std::string keyword = "max_cache_len", std::string cache = "StaticCache") {
  FileBuilder f("talker.py");
  f.cls("MingTalker").constant("", "TALKER_MAX_CACHE_LEN", "2048").constant("", "SHORT_LEN", "1024");
  f.site("MingTalker", "forward", cache, 20,
         {kw("config", ex("self._llm_config")), kw(keyword, ex(site_bound))});
  auto& d = f.declaration("MingTalker", 30);
  f.spec(d, 31, RowsDriver::Fixed,
         {kw("name", ex("\"talker\"")), kw("physical_capacity_positions", ex(spec_capacity))});
  return run_rule("KV402", {f.build()});
}

TEST(KV402, DifferentLiteralsOrConstantsFire) {
  auto findings = drift("2048", "1024");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.line, 33u);
  EXPECT_NE(findings[0].message.find("`max_cache_len=2048`"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("`physical_capacity_positions=1024`"), std::string::npos);
  EXPECT_EQ(findings[0].related[0].loc.line, 20u);
  EXPECT_EQ(drift("TALKER_MAX_CACHE_LEN", "SHORT_LEN").size(), 1u);
  EXPECT_EQ(drift("TALKER_MAX_CACHE_LEN", "1024").size(), 1u);
}

TEST(KV402, SameValueOrSameNameIsSilent) {
  EXPECT_TRUE(drift("TALKER_MAX_CACHE_LEN", "TALKER_MAX_CACHE_LEN").empty());
  EXPECT_TRUE(drift("TALKER_MAX_CACHE_LEN", "2048").empty());  // the constant's value
  EXPECT_TRUE(drift("self.max_cache_len", "self.gen.max_cache_len").empty());
  EXPECT_TRUE(drift("self.max_cache_len", "2048").empty());  // unresolvable name vs literal: no guess
}

TEST(KV402, DifferentNamesFire) {
  auto findings = drift("self.max_cache_len", "self.max_decode_len");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("max_decode_len"), std::string::npos);
}

TEST(KV402, WindowBoundAllowsWindowMinusOne) {
  EXPECT_TRUE(drift("72", "71", "sliding_window", "SlidingWindowCache").empty());
  EXPECT_TRUE(drift("72", "72", "sliding_window", "SlidingWindowCache").empty());  // KV405's business
  EXPECT_EQ(drift("72", "64", "sliding_window", "SlidingWindowCache").size(), 1u);
  EXPECT_TRUE(
      drift("self.config.sliding_window", "self.config.sliding_window - 1", "sliding_window").empty());
}

// ---------- KV403 ----------

TEST(KV403, LiteralGeometryWithAConfigAtHand) {
  FileBuilder f("talker.py");
  f.cls("MingTalker");
  auto& d = f.declaration("MingTalker", 10);
  f.spec(d, 11, RowsDriver::Fixed,
         {kw("name", ex("\"talker\"")), kw("layers", ex("28")), kw("kv_heads", ex("4")),
          kw("dtype", ex("torch.bfloat16"))});
  f.spec(d, 21, RowsDriver::Fixed,
         {kw("layers", ex("self._llm_config.num_hidden_layers")),
          kw("dtype", ex("self._llm_config.torch_dtype"))});
  auto findings = run_rule("KV403", {f.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.line, 13u);  // the first literal field
  EXPECT_EQ(findings[0].severity, kvlint::Severity::Info);
  // dtype is an argument of spec_from_hf_config, not derived: not reported without a config-built cache.
  EXPECT_NE(findings[0].message.find("(`layers=28`, `kv_heads=4`, line 13)"), std::string::npos)
      << findings[0].message;
}

TEST(KV403, LiteralDtypeOnlyWhenTheCacheIsBuiltFromAConfig) {
  auto build = [](bool site_from_config) {
    FileBuilder f("enc.py");
    f.cls("Encoder");
    std::vector<kvlint::facts::Argument> args;
    if (site_from_config) args.push_back(kw("config", ex("self.config")));
    f.site("Encoder", "forward", "DynamicCache", 20, args);
    auto& d = f.declaration("Encoder", 30);
    f.spec(d, 31, RowsDriver::Fixed, {kw("name", ex("\"enc\"")), kw("dtype", ex("torch.float16"))});
    return run_rule("KV403", {f.build()});
  };
  EXPECT_EQ(lines_of(build(true)), (std::vector<uint32_t>{33}));
  EXPECT_TRUE(build(false).empty());  // MiniCPM-o's EncoderDecoderCache(DynamicCache(), DynamicCache())
}

TEST(KV403, ModelLocalKVSpecFiresOnlyWhenTheCacheIsBuiltFromAConfig) {
  auto build = [](bool site_from_config) {
    FileBuilder f("enc.py");
    f.cls("Encoder");
    std::vector<kvlint::facts::Argument> args;
    if (site_from_config) args.push_back(kw("config", ex("self.config")));
    f.site("Encoder", "forward", "DynamicCache", 20, args);
    auto& d = f.declaration("Encoder", 30);
    f.spec(d, 31, RowsDriver::Fixed, {kw("layers", ex("32")), kw("head_dim", ex("64"))}, "ModelLocalKVSpec",
           "");
    return run_rule("KV403", {f.build()});
  };
  EXPECT_EQ(lines_of(build(true)), (std::vector<uint32_t>{32}));
  EXPECT_TRUE(build(false).empty());
}

// ---------- KV404 ----------

std::vector<kvlint::Finding> configs(std::string site_config, std::string spec_config,
                                     bool as_positional = false) {
  FileBuilder f("talker.py");
  f.cls("Talker");
  f.site("Talker", "forward", "StaticCache", 20,
         {as_positional ? positional(0, ex(site_config)) : kw("config", ex(site_config)),
          kw("max_cache_len", ex("2048"))});
  auto& d = f.declaration("Talker", 30);
  f.spec(d, 31, RowsDriver::Fixed, {kw("name", ex("\"talker\""))}, "spec_from_hf_config", spec_config);
  return run_rule("KV404", {f.build()});
}

TEST(KV404, DifferentConfigFires) {
  auto findings = configs("self.talker_config", "self.config");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.line, 31u);  // the spec's config argument
  EXPECT_NE(findings[0].message.find("`self.talker_config`"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("spec_from_hf_config(self.config)"), std::string::npos);
  EXPECT_EQ(configs("self.text_config", "self.config", true).size(), 1u);
}

TEST(KV404, SameLastComponentIsSilent) {
  EXPECT_TRUE(configs("self.config", "config").empty());
  EXPECT_TRUE(configs("self._llm_config", "self.gen._llm_config").empty());
  EXPECT_TRUE(configs("cache_dims", "self.config", true).empty());  // not config-looking
}

// ---------- KV405 ----------

std::vector<kvlint::Finding> sliding(std::string capacity, std::vector<kvlint::facts::Argument> site_args,
                                     std::string cache = "DynamicCache", std::string name = "\"codec\"") {
  FileBuilder f("codec.py");
  f.cls("CodecDecoder").constant("", "CODEC_SLIDING_WINDOW", "72");
  f.site("CodecDecoder", "decode", cache, 20, site_args);
  auto& d = f.declaration("CodecDecoder", 30);
  f.spec(d, 31, RowsDriver::MaxNumSeqs,
         {kw("name", ex(name)), kw("physical_capacity_positions", ex(capacity))});
  return run_rule("KV405", {f.build()});
}

TEST(KV405, WindowItselfOrModelLengthFires) {
  auto findings =
      sliding("self.config.sliding_window", {kw("sliding_window", ex("self.config.sliding_window"))});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.line, 33u);
  EXPECT_EQ(findings[0].severity, kvlint::Severity::Warning);
  EXPECT_NE(findings[0].message.find("sliding_window - 1"), std::string::npos);
  EXPECT_EQ(sliding("72", {}, "SlidingWindowCache").size(), 1u);
  // No sliding site, but the spec says so.
  EXPECT_EQ(sliding("self.max_model_len", {}, "DynamicCache", "\"codec_sliding_cache\"").size(), 1u);
}

TEST(KV405, WindowMinusOneIsSilent) {
  EXPECT_TRUE(
      sliding("self.config.sliding_window - 1", {kw("sliding_window", ex("self.config.sliding_window"))})
          .empty());
  EXPECT_TRUE(sliding("71", {kw("sliding_window", ex("72"))}).empty());
  EXPECT_TRUE(sliding("71", {}, "SlidingWindowCache").empty());  // CODEC_SLIDING_WINDOW = 72
  EXPECT_TRUE(sliding("self.window - 1", {kw("window_length", ex("self.window"))}).empty());
  EXPECT_TRUE(sliding("2048", {kw("max_cache_len", ex("2048"))}, "StaticCache").empty());  // not sliding
}

}  // namespace

namespace {

TEST(KV404, UnderscoreAndHolderPathsAreNotMismatches) {
  EXPECT_TRUE(configs("llm_config", "self._llm_config").empty());
  // A holder declaring from its own attribute it handed to the held class: unknowable, silent.
  auto holder = [](std::string spec_config) {
    FileBuilder g("gen.py");
    g.cls("CodecDecoder");
    g.site("CodecDecoder", "decode", "DynamicCache", 14, {kw("config", ex("self.config"))});
    FileBuilder m("model.py");
    m.cls("Qwen3TTS").hop("Qwen3TTS", "codec", "CodecDecoder");
    auto& d = m.declaration("Qwen3TTS", 20);
    m.spec(d, 21, RowsDriver::Fixed, {kw("name", ex("\"codec\""))}, "spec_from_hf_config", spec_config);
    return run_rule("KV404", {g.build(), m.build()});
  };
  EXPECT_TRUE(holder("self.config.codec_config").empty());
  EXPECT_TRUE(holder("self.codec.config").empty());
  EXPECT_EQ(holder("self.codec.text_config").size(), 1u);  // reaches into the held object
}

}  // namespace
