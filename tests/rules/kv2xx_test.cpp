// Hand-built-facts tests for KV201-KV204 and the site/spec linking they share.
#include <gtest/gtest.h>

#include "kv_spec_test_support.hpp"
#include "rules/common/spec_support.hpp"

namespace {

using namespace kvtest;
using kvlint::facts::BatchEvidence;
using kvlint::facts::RowsDriver;
namespace ss = kvlint::spec_support;

// ---------- spec_support ----------

TEST(SpecSupport, IdentifierWordsSplitSnakeDotsAndCamelCase) {
  EXPECT_EQ(ss::identifier_words("self._caches[requestId]"),
            (std::vector<std::string>{"self", "caches", "request", "id"}));
  EXPECT_EQ(ss::identifier_words("req.session_id"), (std::vector<std::string>{"req", "session", "id"}));
}

TEST(SpecSupport, RequestAndSessionKeys) {
  EXPECT_TRUE(ss::mentions_request(ex("request_id")));
  EXPECT_TRUE(ss::mentions_request(ex("req.rid")));
  EXPECT_TRUE(ss::mentions_request(ex("stream_uid")));
  EXPECT_FALSE(ss::mentions_request(ex("session_id")));  // a session, not a request
  EXPECT_FALSE(ss::mentions_request(ex("layer_idx")));
  EXPECT_FALSE(ss::mentions_request(ex("bucket")));
  EXPECT_FALSE(ss::mentions_request(ex("layer_id")));
  EXPECT_FALSE(ss::mentions_request(ex("speaker_id")));
  EXPECT_TRUE(ss::mentions_request(ex("uid")));
  EXPECT_TRUE(ss::mentions_request(ex("(request_id, layer_idx)", {"request_id", "layer_idx"})));
  EXPECT_TRUE(ss::iterates_requests(ex("enumerate(requests)", {"requests"})));
  EXPECT_FALSE(ss::iterates_requests(ex("range(max_new_tokens)", {"max_new_tokens"})));
}

TEST(SpecSupport, ParseIntAndConstants) {
  EXPECT_EQ(ss::parse_int("2_048"), 2048);
  EXPECT_EQ(ss::parse_int("-1"), -1);
  EXPECT_EQ(ss::parse_int("0x10"), 16);
  EXPECT_FALSE(ss::parse_int("1.5"));
  FileBuilder a("a.py");
  a.cls("Talker").constant("", "TALKER_MAX_CACHE_LEN", "2048").constant("Talker", "WINDOW", "72");
  FileBuilder b("b.py");
  b.cls("Other").constant("", "IMPORTED_LEN", "512");
  facts::Project project({a.build(), b.build()}, facts::Vocabulary{});
  const auto& file = project.files()[0];
  EXPECT_EQ(ss::int_value(project, file, "Talker", ex("TALKER_MAX_CACHE_LEN")), 2048);
  EXPECT_EQ(ss::int_value(project, file, "Talker", ex("self.WINDOW")), 72);
  EXPECT_EQ(ss::int_value(project, file, "Talker", ex("Talker.WINDOW")), 72);
  EXPECT_EQ(ss::int_value(project, file, "Talker", ex("IMPORTED_LEN")), 512);  // unique in the project
  EXPECT_FALSE(ss::int_value(project, file, "Talker", ex("self.max_cache_len")));
}

// Two specs in one declaration: the site matches the one whose capacity names its bound.
TEST(SpecSupport, MatchesByCapacityThenMentionThenOnlySpec) {
  FileBuilder f("m.py");
  f.cls("Model");
  f.site("Model", "forward", "StaticCache", 10, {kw("max_cache_len", ex("self.talker_len"))}).retained_as =
      "self.talker_cache";
  f.site("Model", "encode", "DynamicCache", 11).retained_as = "self.encoder_cache";
  f.site("Model", "other", "DynamicCache", 12).retained_as = "self.cache";
  auto& d = f.declaration("Model", 20);
  f.spec(d, 21, RowsDriver::Fixed,
         {kw("name", ex("\"a\"")), kw("physical_capacity_positions", ex("self.talker_len"))});
  f.spec(d, 31, RowsDriver::Fixed,
         {kw("name", ex("\"whisper_encoder_cache\"")), kw("physical_capacity_positions", ex("1500"))});
  facts::Project project({f.build()}, facts::Vocabulary{});
  auto model = project.classes()[0];
  const auto& sites = project.files()[0].cache_sites;
  const auto& specs = project.files()[0].declarations[0].specs;

  auto talker = ss::match_site(project, model, sites[0]);
  ASSERT_TRUE(talker);
  EXPECT_EQ(talker->spec.spec, &specs[0]);
  EXPECT_EQ(talker->basis, ss::MatchBasis::Capacity);

  auto encoder = ss::match_site(project, model, sites[1]);
  ASSERT_TRUE(encoder);
  EXPECT_EQ(encoder->spec.spec, &specs[1]);
  EXPECT_EQ(encoder->basis, ss::MatchBasis::Mention);

  // `self.cache` is too generic to mention and there are two specs: no guess.
  EXPECT_FALSE(ss::match_site(project, model, sites[2]));
}

TEST(SpecSupport, OwnDeclarationBeforeHolders) {
  FileBuilder g("gen.py");
  g.cls("Generator");
  g.site("Generator", "generate", "StaticCache", 10);
  auto& own = g.declaration("Generator", 20);
  g.spec(own, 21, RowsDriver::Fixed, {kw("name", ex("\"own\""))});
  FileBuilder m("model.py");
  m.cls("Model").hop("Model", "gen", "Generator");
  auto& held = m.declaration("Model", 40);
  m.spec(held, 41, RowsDriver::MaxNumSeqs, {kw("name", ex("\"holder\""))});
  facts::Project project({g.build(), m.build()}, facts::Vocabulary{});
  auto match = ss::match_site(project, project.classes()[0], project.files()[0].cache_sites[0]);
  ASSERT_TRUE(match);
  EXPECT_EQ(ss::field_string(*match->spec.spec, "name"), "own");
}

TEST(SpecSupport, HolderDeclarationCoversAcrossFiles) {
  FileBuilder g("gen.py");
  g.cls("MingAudioGenerator");
  g.site("MingAudioGenerator", "generate", "StaticCache", 10);
  FileBuilder m("model.py");
  m.cls("MingModel").hop("MingModel", "gen", "MingAudioGenerator");
  auto& held = m.declaration("MingModel", 40);
  m.spec(held, 41, RowsDriver::Fixed, {kw("name", ex("\"talker\""))});
  facts::Project project({g.build(), m.build()}, facts::Vocabulary{});
  auto matches = ss::all_matches(project);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].how, facts::Cover::How::DeclaredByHolder);
  EXPECT_EQ(matches[0].spec.file->path, "model.py");
}

// ---------- KV201 ----------

TEST(KV201, FixedWithoutOrWithBlankReason) {
  FileBuilder f("d.py");
  f.cls("Decoder");
  auto& d = f.declaration("Decoder", 10);
  f.spec(d, 11, RowsDriver::Fixed,
         {kw("name", ex("\"a\"")), kw("rows", ex("RowDriver.FIXED")), kw("rows_fixed", ex("1"))});
  f.spec(d, 21, RowsDriver::Fixed,
         {kw("name", ex("\"b\"")), kw("rows", ex("RowDriver.FIXED")), kw("rows_reason", ex("\"   \""))});
  f.spec(d, 31, RowsDriver::Fixed,
         {kw("name", ex("\"c\"")), kw("rows", ex("RowDriver.FIXED")), kw("rows_reason", ex("None"))});
  auto findings = run_rule("KV201", {f.build()});
  EXPECT_EQ(lines_of(findings), (std::vector<uint32_t>{13, 23, 33}));  // the rows= lines
  EXPECT_NE(findings[0].message.find("no `rows_reason`"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[1].message.find("empty `rows_reason`"), std::string::npos);
  EXPECT_EQ(findings[0].owner_class, "Decoder");
}

TEST(KV201, RowsFixedBelowOneIncludingThroughAConstant) {
  FileBuilder f("d.py");
  f.cls("Decoder").constant("", "NO_ROWS", "0");
  auto& d = f.declaration("Decoder", 10);
  f.spec(d, 11, RowsDriver::Fixed,
         {kw("rows", ex("RowDriver.FIXED")), kw("rows_fixed", ex("-1")),
          kw("rows_reason", ex("\"one session\""))});
  f.spec(d, 21, RowsDriver::Fixed,
         {kw("rows", ex("RowDriver.FIXED")), kw("rows_fixed", ex("NO_ROWS")),
          kw("rows_reason", ex("\"one session\""))});
  EXPECT_EQ(lines_of(run_rule("KV201", {f.build()})), (std::vector<uint32_t>{13, 23}));  // rows_fixed= lines
}

TEST(KV201, MaxNumSeqsWithRowsFixed) {
  FileBuilder f("d.py");
  f.cls("Decoder");
  auto& d = f.declaration("Decoder", 10);
  f.spec(d, 11, RowsDriver::MaxNumSeqs,
         {kw("rows", ex("RowDriver.MAX_NUM_SEQS")), kw("rows_fixed", ex("4"))});
  f.spec(d, 21, RowsDriver::MaxNumSeqs, {kw("rows", ex("RowDriver.MAX_NUM_SEQS"))});
  auto findings = run_rule("KV201", {f.build()});
  EXPECT_EQ(lines_of(findings), (std::vector<uint32_t>{13}));
  EXPECT_NE(findings[0].message.find("MAX_NUM_SEQS"), std::string::npos);
}

TEST(KV201, SilentWithReasonOrComputedReason) {
  FileBuilder f("d.py");
  f.cls("Decoder");
  auto& d = f.declaration("Decoder", 10);
  f.spec(d, 11, RowsDriver::Fixed,
         {kw("rows", ex("RowDriver.FIXED")), kw("rows_fixed", ex("1")),
          kw("rows_reason", ex("\"one session; the cap is invisible to the model\""))});
  f.spec(d, 21, RowsDriver::Fixed,
         {kw("rows", ex("RowDriver.FIXED")), kw("rows_fixed", ex("len(self.buckets)", {"self.buckets"})),
          kw("rows_reason", ex("self._bucket_reason"))});
  EXPECT_TRUE(run_rule("KV201", {f.build()}).empty());
}

// ---------- KV202 ----------

// One class, one cache site, one Fixed spec with a reason.
struct OneSpec {
  FileBuilder file{"decoder.py"};
  facts::CacheSite& site;
  OneSpec(std::string key, RowsDriver rows, std::string reason = "\"one decoder\"")
      : site((file.cls("CodecDecoder", {{"decode_chunk", {"request_id", "codes"}}}),
              file.site("CodecDecoder", "decode_chunk", "DynamicCache", 18))) {
    if (!key.empty()) {
      site.retention = facts::Retention::SelfContainer;
      site.retained_as = "self._caches";
      site.container_key = ex(key, {}, at("decoder.py", 18, 25));
    }
    auto& d = file.declaration("CodecDecoder", 30);
    file.spec(d, 31, rows,
              {kw("name", ex("\"codec_decoder_cache\"")), kw("rows", ex("RowDriver.FIXED")),
               kw("rows_fixed", ex("1")), kw("rows_reason", ex(reason))});
  }
};

TEST(KV202, FixedOnCacheKeptPerRequestId) {
  OneSpec t("request_id", RowsDriver::Fixed);
  auto findings = run_rule("KV202", {t.file.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.line, 33u);  // the rows= line
  EXPECT_EQ(findings[0].owner_class, "CodecDecoder");
  EXPECT_NE(findings[0].message.find("one cache per `request_id`"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("(line 18)"), std::string::npos);
  ASSERT_FALSE(findings[0].related.empty());
  EXPECT_EQ(findings[0].related[0].loc.line, 18u);
}

TEST(KV202, PerSessionCacheWithHonestReasonIsSilent) {
  OneSpec honest("session_id", RowsDriver::Fixed, "\"one streaming session; the cap is not visible here\"");
  EXPECT_TRUE(run_rule("KV202", {honest.file.build()}).empty());
  OneSpec unexplained("session_id", RowsDriver::Fixed, "\"one\"");
  auto findings = run_rule("KV202", {unexplained.file.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("per session"), std::string::npos) << findings[0].message;
}

TEST(KV202, MaxNumSeqsOrNonRequestKeyIsSilent) {
  OneSpec per_seq("request_id", RowsDriver::MaxNumSeqs);
  EXPECT_TRUE(run_rule("KV202", {per_seq.file.build()}).empty());
  OneSpec per_layer("layer_idx", RowsDriver::Fixed);
  EXPECT_TRUE(run_rule("KV202", {per_layer.file.build()}).empty());
}

TEST(KV202, BatchSizedFromInputUnlessSerialized) {
  OneSpec t("", RowsDriver::Fixed);
  t.site.args.push_back(
      kw("max_batch_size", ex("input_ids.shape[0]", {"input_ids.shape"}, at("decoder.py", 18, 40))));
  auto findings = run_rule("KV202", {t.file.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("max_batch_size=input_ids.shape[0]"), std::string::npos);

  OneSpec from_param("", RowsDriver::Fixed);
  from_param.site.args.push_back(kw("batch_size", ex("request_id.numel", {"request_id.numel"})));
  EXPECT_EQ(run_rule("KV202", {from_param.file.build()}).size(), 1u);  // reads a parameter

  OneSpec serialized("", RowsDriver::Fixed);
  serialized.site.args.push_back(kw("max_batch_size", ex("input_ids.shape[0]", {"input_ids.shape"})));
  serialized.file.evidence("CodecDecoder", "forward", BatchEvidence::Kind::AssertsBatchOne, 12,
                           "input_ids.shape[0] == 1");
  EXPECT_TRUE(run_rule("KV202", {serialized.file.build()}).empty());

  OneSpec constant("", RowsDriver::Fixed);
  constant.site.args.push_back(kw("max_batch_size", ex("1")));
  EXPECT_TRUE(run_rule("KV202", {constant.file.build()}).empty());
}

TEST(KV202, BuiltPerRequestInALoopOrAnIteratingMethod) {
  OneSpec loop("", RowsDriver::Fixed);
  facts::Guard g;
  g.origin = facts::Guard::Origin::Loop;
  g.condition = ex("requests", {}, at("decoder.py", 16));
  loop.site.guards.push_back(g);
  EXPECT_EQ(lines_of(run_rule("KV202", {loop.file.build()})), (std::vector<uint32_t>{33}));

  OneSpec iterating("", RowsDriver::Fixed);
  iterating.file.evidence("CodecDecoder", "decode_chunk", BatchEvidence::Kind::IteratesRequests, 15,
                          "requests");
  EXPECT_EQ(run_rule("KV202", {iterating.file.build()}).size(), 1u);

  OneSpec elsewhere("", RowsDriver::Fixed);
  elsewhere.file.evidence("CodecDecoder", "warmup", BatchEvidence::Kind::IteratesRequests, 15, "requests");
  EXPECT_TRUE(run_rule("KV202", {elsewhere.file.build()}).empty());
}

TEST(KV202, AmbiguousSpecsStaySilent) {
  FileBuilder f("d.py");
  f.cls("Decoder");
  auto& s = f.site("Decoder", "decode", "DynamicCache", 18);
  s.retention = facts::Retention::SelfContainer;
  s.retained_as = "self.cache";
  s.container_key = ex("request_id");
  auto& d = f.declaration("Decoder", 30);
  f.spec(d, 31, RowsDriver::Fixed, {kw("name", ex("\"first\"")), kw("rows_reason", ex("\"x\""))});
  f.spec(d, 41, RowsDriver::Fixed, {kw("name", ex("\"second\"")), kw("rows_reason", ex("\"x\""))});
  EXPECT_TRUE(run_rule("KV202", {f.build()}).empty());
}

// ---------- KV203 ----------

TEST(KV203, MaxNumSeqsOnSerializedOwner) {
  FileBuilder f("talker.py");
  f.cls("MingTalker");
  f.site("MingTalker", "forward", "StaticCache", 20, {kw("max_cache_len", ex("2048"))});
  f.evidence("MingTalker", "forward", BatchEvidence::Kind::TakesFirstElement, 18,
             "runtime_additional_information[0]");
  auto& d = f.declaration("MingTalker", 30);
  f.spec(d, 31, RowsDriver::MaxNumSeqs,
         {kw("name", ex("\"talker\"")), kw("rows", ex("RowDriver.MAX_NUM_SEQS"))});
  auto findings = run_rule("KV203", {f.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.line, 33u);
  EXPECT_EQ(findings[0].severity, kvlint::Severity::Warning);
  EXPECT_NE(findings[0].message.find("runtime_additional_information[0]"), std::string::npos);
  EXPECT_NE(findings[0].message.find("max_num_seqs"), std::string::npos);
  EXPECT_EQ(findings[0].related[0].loc.line, 18u);
}

TEST(KV203, MaxNumSeqsOnPerSessionCache) {
  FileBuilder f("enc.py");
  f.cls("WhisperEncoder");
  auto& s = f.site("WhisperEncoder", "stream", "EncoderDecoderCache", 20);
  s.retention = facts::Retention::SelfContainer;
  s.retained_as = "self._session_caches";
  s.container_key = ex("session_id");
  auto& d = f.declaration("WhisperEncoder", 30);
  f.spec(d, 31, RowsDriver::MaxNumSeqs, {kw("rows", ex("RowDriver.MAX_NUM_SEQS"))});
  auto findings = run_rule("KV203", {f.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("per session"), std::string::npos);
}

TEST(KV203, SilentWhenPerRequestOrFixedOrNoEvidence) {
  auto build = [](RowsDriver rows, bool serialized, std::string key) {
    FileBuilder f("t.py");
    f.cls("Talker");
    auto& s = f.site("Talker", "forward", "DynamicCache", 20);
    if (!key.empty()) {
      s.retention = facts::Retention::SelfContainer;
      s.container_key = ex(key);
    }
    if (serialized) f.evidence("Talker", "forward", BatchEvidence::Kind::TakesFirstElement, 18, "infos[0]");
    auto& d = f.declaration("Talker", 30);
    f.spec(d, 31, rows, {kw("rows_reason", ex("\"serialized\""))});
    return run_rule("KV203", {f.build()});
  };
  EXPECT_EQ(build(RowsDriver::MaxNumSeqs, true, "").size(), 1u);           // control
  EXPECT_TRUE(build(RowsDriver::MaxNumSeqs, true, "request_id").empty());  // kept per request across calls
  EXPECT_TRUE(build(RowsDriver::Fixed, true, "").empty());
  EXPECT_TRUE(build(RowsDriver::MaxNumSeqs, false, "").empty());
}

// ---------- KV204 ----------

TEST(KV204, ProtocolUseAndSpecRowsReadingScope) {
  FileBuilder f("m.py");
  f.cls("Model");
  f.use(facts::ProtocolUse::Kind::ScopeDerivedRows, "", "report_model_local_kv", 7,
        "max_num_seqs if spec.scope == ModelLocalKVScope.REQUEST else 1");
  f.use(facts::ProtocolUse::Kind::CapacitySourceBranch, "", "report", 9, "spec.capacity_source == 'x'");
  auto& d = f.declaration("Model", 20);
  f.spec(
      d, 21, RowsDriver::Other,
      {kw("scope", ex("scope")),
       kw("rows", ex("RowDriver.MAX_NUM_SEQS if scope is ModelLocalKVScope.REQUEST else RowDriver.FIXED",
                     {"RowDriver.MAX_NUM_SEQS", "scope", "ModelLocalKVScope.REQUEST", "RowDriver.FIXED"}))});
  f.spec(d, 31, RowsDriver::Fixed,
         {kw("scope", ex("ModelLocalKVScope.SESSION")), kw("rows", ex("RowDriver.FIXED")),
          kw("rows_fixed", ex("1"))});
  auto findings = run_rule("KV204", {f.build()});
  EXPECT_EQ(lines_of(findings),
            (std::vector<uint32_t>{7, 23}));  // the use; the rows= line (scope= alone is fine)
  EXPECT_NE(findings[0].message.find("lifetime, not multiplicity"), std::string::npos);
}

}  // namespace

namespace {

TEST(KV203, SerializedByADirectHolder) {
  FileBuilder g("generator.py");
  g.cls("MingAudioGenerator", {}, "object");
  g.site("MingAudioGenerator", "generate", "StaticCache", 17);
  auto& d = g.declaration("MingAudioGenerator", 23);
  g.spec(d, 24, RowsDriver::MaxNumSeqs,
         {kw("name", ex("\"talker\"")), kw("rows", ex("RowDriver.MAX_NUM_SEQS"))});
  FileBuilder t("talker.py");
  t.cls("MingTalker").hop("MingTalker", "generator", "MingAudioGenerator");
  t.evidence("MingTalker", "forward", BatchEvidence::Kind::TakesFirstElement, 13,
             "runtime_additional_information[0]");
  auto findings = run_rule("KV203", {g.build(), t.build()});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].loc.file, "generator.py");
  EXPECT_EQ(findings[0].loc.line, 26u);
  EXPECT_NE(findings[0].message.find("is driven by `MingTalker`"), std::string::npos) << findings[0].message;
  EXPECT_EQ(findings[0].related[0].loc.file, "talker.py");
}

}  // namespace
