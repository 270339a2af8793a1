// KV101-KV105 over hand-built facts: coverage, ownership and module-ness cases the
// fixtures cannot isolate from the front end.
#include <gtest/gtest.h>

#include "tests/rules/kv1_kv3_test_facts.hpp"

namespace kvlint {
namespace {

using namespace testing_facts;
using facts::Retention;

const std::string kFile = "models/decoder.py";

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// ---- KV101 ---------------------------------------------------------------

TEST(KV101, FiresOnUndeclaredPerRequestCacheAndNamesRetention) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "StreamingDecoder", 10));
  auto site = cache_site(kFile, "StreamingDecoder", 18, Retention::SelfContainer, "self._caches");
  site.container_key = expr("request_id", {"request_id"});
  f.cache_sites.push_back(site);
  auto out = run_rule("KV101", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, "KV101");
  EXPECT_EQ(out[0].loc.line, 18u);
  EXPECT_EQ(out[0].owner_class, "StreamingDecoder");
  EXPECT_EQ(out[0].severity, Severity::Error);
  EXPECT_TRUE(has(out[0].message, "keeps one per `request_id` in `self._caches`")) << out[0].message;
  EXPECT_TRUE(has(out[0].message, "`DynamicCache`")) << out[0].message;
}

TEST(KV101, LocalPerCallCacheStillCounts) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Talker", 3));
  f.cache_sites.push_back(cache_site(kFile, "Talker", 7, Retention::Local, "", "StaticCache"));
  auto out = run_rule("KV101", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has(out[0].message, "builds one per call")) << out[0].message;
}

TEST(KV101, RetentionWordingForCallsAndReturns) {
  using rules_case = std::pair<facts::CacheSite, std::string>;
  std::vector<rules_case> cases = {
      {cache_site(kFile, "Talker", 7, Retention::PassedToCall, "past_key_values"),
       "passes it as `past_key_values`"},
      {cache_site(kFile, "Talker", 7, Retention::PassedToCall, "self.llm"), "passes it to `self.llm`"},
      {cache_site(kFile, "Talker", 7, Retention::Returned, "return"), "builds one per call and returns it"},
      {cache_site(kFile, "Talker", 7, Retention::SelfAttribute, "self.cache"), "keeps one as `self.cache`"},
  };
  for (const auto& [site, wording] : cases) {
    auto f = file_facts(kFile);
    f.classes.push_back(make_class(kFile, "Talker", 3));
    f.cache_sites.push_back(site);
    auto out = run_rule("KV101", {f});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(has(out[0].message, wording)) << out[0].message;
  }
}

TEST(KV101, SilentForOwnDeclaration) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Talker", 3));
  f.cache_sites.push_back(cache_site(kFile, "Talker", 7));
  f.declarations.push_back(declaration(kFile, "Talker", 20, {spec(kFile, 21, "talker")}));
  EXPECT_TRUE(run_rule("KV101", {f}).empty());
}

TEST(KV101, SilentForDeclarationInheritedFromBaseInAnotherFile) {
  auto base = file_facts("pkg/base.py");
  base.module_name = "pkg.base";
  base.classes.push_back(make_class("pkg/base.py", "CodecBase", 5));
  base.declarations.push_back(declaration("pkg/base.py", "CodecBase", 9, {spec("pkg/base.py", 10, "codec")}));
  auto sub = file_facts("pkg/codec.py");
  sub.module_name = "pkg.codec";
  sub.classes.push_back(make_class("pkg/codec.py", "Codec", 4, {"pkg.base.CodecBase"}));
  sub.cache_sites.push_back(cache_site("pkg/codec.py", "Codec", 8, Retention::SelfAttribute, "self.cache"));
  EXPECT_TRUE(run_rule("KV101", {base, sub}).empty());
}

TEST(KV101, SilentForCallerRequestedAndModuleLevelSites) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Qwen2Model", 3));
  auto requested = cache_site(kFile, "Qwen2Model", 9, Retention::Returned);
  requested.caller_requested = true;
  f.cache_sites.push_back(requested);
  f.cache_sites.push_back(cache_site(kFile, "", 30, Retention::ModuleGlobal));
  EXPECT_TRUE(run_rule("KV101", {f}).empty());
}

TEST(KV101, SilentWhenHolderDeclaresForIt) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Generator", 3, {}));
  f.classes.push_back(make_class(kFile, "TTSModel", 20));
  f.classes.push_back(make_class(kFile, "OmniModel", 40));
  f.cache_sites.push_back(cache_site(kFile, "Generator", 7, Retention::SelfAttribute, "self.cache"));
  f.hops.push_back(hop(kFile, "TTSModel", "gen", "Generator", 24));
  f.hops.push_back(hop(kFile, "OmniModel", "tts", "TTSModel", 44));
  // Declared two holders up.
  f.declarations.push_back(declaration(kFile, "OmniModel", 50, {spec(kFile, 51, "talker")}));
  EXPECT_TRUE(run_rule("KV101", {f}).empty());
}

TEST(KV101, ForwardToAClassWithoutDeclarationCoversNothing) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Generator", 3, {}));
  f.classes.push_back(make_class(kFile, "TTSModel", 20));
  f.cache_sites.push_back(cache_site(kFile, "Generator", 7, Retention::SelfAttribute, "self.cache"));
  f.hops.push_back(hop(kFile, "TTSModel", "gen", "Generator", 24));
  f.declarations.push_back(declaration(kFile, "TTSModel", 30, {}, {"gen"}));
  auto out = run_rule("KV101", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has(out[0].message, "forwards to a `model_local_kv_specs` that `Generator` does not have"))
      << out[0].message;
  // A base outside the project may supply the method: stay silent.
  f.classes.front().bases = {{"GeneratorMixin", "vllm_omni.mixins.GeneratorMixin"}};
  EXPECT_TRUE(run_rule("KV101", {f}).empty());
}

TEST(KV101, HolderThatDeclaresNothingIsNamed) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Generator", 3, {}));
  f.classes.push_back(make_class(kFile, "TTSModel", 20));
  f.cache_sites.push_back(cache_site(kFile, "Generator", 7, Retention::SelfAttribute, "self.cache"));
  f.hops.push_back(hop(kFile, "TTSModel", "gen", "Generator", 24));
  auto out = run_rule("KV101", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has(out[0].message, "`TTSModel` holds it as `self.gen` (line 24)")) << out[0].message;
  EXPECT_TRUE(has(out[0].message, "not an `nn.Module`")) << out[0].message;
  ASSERT_EQ(out[0].related.size(), 1u);
  EXPECT_EQ(out[0].related[0].loc.line, 24u);
}

// ---- KV102 ---------------------------------------------------------------

TEST(KV102, FiresAtCallWithNoneOriginAsEvidence) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "LocalDecoder", 3));
  auto site = implicit_site(kFile, "LocalDecoder", 12, "self.lm");
  site.reason = facts::ImplicitCacheSite::Reason::PastKeyValuesStartsNone;
  site.none_origin = at(kFile, 9);
  f.implicit_caches.push_back(site);
  auto out = run_rule("KV102", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 12u);
  EXPECT_TRUE(has(out[0].message, "starts as `None` (line 9)")) << out[0].message;
  ASSERT_EQ(out[0].related.size(), 1u);
  EXPECT_EQ(out[0].related[0].loc.line, 9u);
}

TEST(KV102, SilentWhenOwnerCoveredOrModuleLevel) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "LocalDecoder", 3));
  f.implicit_caches.push_back(implicit_site(kFile, "LocalDecoder", 12));
  f.implicit_caches.push_back(implicit_site(kFile, "", 40));
  f.declarations.push_back(declaration(kFile, "LocalDecoder", 20, {spec(kFile, 21, "local")}));
  EXPECT_TRUE(run_rule("KV102", {f}).empty());
}

TEST(KV102, SilentWhenTheHeldCalleeDeclaresItself) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "LocalTransformer", 3));
  f.classes.push_back(make_class(kFile, "AudioLLM", 20));
  f.hops.push_back(hop(kFile, "AudioLLM", "local", "LocalTransformer", 23));
  f.implicit_caches.push_back(implicit_site(kFile, "AudioLLM", 30, "self.local.generate"));
  f.declarations.push_back(declaration(kFile, "LocalTransformer", 10, {spec(kFile, 11, "local")}));
  EXPECT_TRUE(run_rule("KV102", {f}).empty());
  // A different attribute is not covered by that declaration.
  f.implicit_caches.push_back(implicit_site(kFile, "AudioLLM", 31, "self.other"));
  EXPECT_EQ(lines_of(run_rule("KV102", {f})), std::vector<uint32_t>{31});
}

TEST(KV102, OneShotCallIsAnInfoHintKeptCacheAnError) {
  using Kept = facts::ImplicitCacheSite::Kept;
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Scorer", 3));
  for (auto [line, kept] : {std::pair{10u, Kept::Dropped}, std::pair{11u, Kept::UsedOnce},
                            std::pair{12u, Kept::Stored}, std::pair{13u, Kept::Reused}}) {
    auto site = implicit_site(kFile, "Scorer", line);
    site.kept = kept;
    site.kept_at = at(kFile, line + 20);
    f.implicit_caches.push_back(site);
  }
  auto generate = implicit_site(kFile, "Scorer", 14, "self.lm.generate");
  generate.kept = Kept::Dropped;  // generate keeps it across its own decode loop
  f.implicit_caches.push_back(generate);
  auto out = run_rule("KV102", {f});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].severity, Severity::Info);
  EXPECT_TRUE(has(out[0].message, "dropped at once")) << out[0].message;
  EXPECT_EQ(out[1].severity, Severity::Info);
  EXPECT_TRUE(has(out[1].message, "after one more call, line 31")) << out[1].message;
  EXPECT_EQ(out[2].severity, Severity::Error);
  EXPECT_TRUE(has(out[2].message, "stored (line 32)")) << out[2].message;
  EXPECT_EQ(out[3].severity, Severity::Error);
  EXPECT_TRUE(has(out[3].message, "reused across a loop's steps")) << out[3].message;
  EXPECT_EQ(out[4].severity, Severity::Error);
}

TEST(KV102, CalleeMustBeAbleToBeAModel) {
  auto f = file_facts(kFile);
  auto store = make_class(kFile, "FeatureStore", 3, {});
  store.methods.push_back({"memcache_get", at(kFile, 5), {"key", "use_cache"}, {}, {}});
  store.methods.push_back({"step", at(kFile, 7), {"x", "past_key_values", "use_cache"}, {}, {}});
  f.classes.push_back(store);
  f.classes.push_back(make_class(kFile, "MemcacheClient", 30, {}));
  f.hops.push_back(hop(kFile, "FeatureStore", "client", "MemcacheClient", 4));
  f.hops.push_back(hop(kFile, "FeatureStore", "talker", "transformers.AutoModelForCausalLM", 4));
  f.implicit_caches.push_back(implicit_site(kFile, "FeatureStore", 10, "self.memcache_get"));
  f.implicit_caches.push_back(implicit_site(kFile, "FeatureStore", 11, "self.client.get"));
  f.implicit_caches.push_back(implicit_site(kFile, "FeatureStore", 12, "self.step"));
  f.implicit_caches.push_back(implicit_site(kFile, "FeatureStore", 13, "self.talker.generate"));
  auto helper = implicit_site(kFile, "FeatureStore", 14, "helper");
  helper.callee_root = facts::ImplicitCacheSite::CalleeRoot::Other;
  f.implicit_caches.push_back(helper);
  EXPECT_EQ(lines_of(run_rule("KV102", {f})), (std::vector<uint32_t>{12, 13}));
}

// ---- KV103 ---------------------------------------------------------------

facts::FileFacts graph_runner_project(std::vector<facts::SpecFact> model_specs) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "LocalTransformer", 3));
  f.classes.push_back(make_class(kFile, "LocalGraphRunner", 20, {}));
  f.classes.push_back(make_class(kFile, "AudioLLM", 50));
  f.cache_sites.push_back(cache_site(kFile, "LocalTransformer", 8));
  f.hops.push_back(hop(kFile, "LocalGraphRunner", "local", "LocalTransformer", 22));
  f.hops.push_back(hop(kFile, "AudioLLM", "runner", "LocalGraphRunner", 53));
  auto capture = capture_site(kFile, "LocalGraphRunner", 30);
  capture.captured_calls = {"self.local"};  // the held module: its forward runs in the capture
  f.captures.push_back(capture);
  f.classes[0].methods.push_back(facts::MethodFact{"forward", at(kFile, 6), {}, {}, {}});
  f.classes[1].methods.push_back(facts::MethodFact{"capture", at(kFile, 28), {}, {}, {}});
  f.declarations.push_back(declaration(kFile, "AudioLLM", 60, std::move(model_specs)));
  return f;
}

TEST(KV103, FiresWhenOnlyTheEagerCacheIsDeclared) {
  auto out = run_rule("KV103", {graph_runner_project({spec(kFile, 61, "local_transformer")})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 30u);
  EXPECT_EQ(out[0].owner_class, "LocalGraphRunner");
  EXPECT_TRUE(has(out[0].message, "`LocalTransformer.forward` builds a `DynamicCache`, line 8"))
      << out[0].message;
  EXPECT_TRUE(has(out[0].message, "declaration on `AudioLLM` (line 60) has no graph-pool spec"))
      << out[0].message;
}

TEST(KV103, GraphPoolConventionSilencesIt) {
  // Named after the pool, or only its rows_reason / allocation_note says so.
  EXPECT_TRUE(run_rule("KV103", {graph_runner_project(
                                    {spec(kFile, 61, "local"), spec(kFile, 62, "local_graph_pool")})})
                  .empty());
  EXPECT_TRUE(run_rule("KV103", {graph_runner_project({spec(kFile, 61, "local"),
                                                       spec(kFile, 62, "local_fixed",
                                                            {{"rows_reason", "one per captured BUCKET"}})})})
                  .empty());
  EXPECT_TRUE(run_rule("KV103", {graph_runner_project(
                                    {spec(kFile, 62, "pool", {{"allocation_note", "CUDA graph pool"}})})})
                  .empty());
}

TEST(KV103, SilentWhenNothingCapturedHoldsKV) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "VocoderGraphs", 3, {}));
  f.captures.push_back(capture_site(kFile, "VocoderGraphs", 9));
  auto requested = cache_site(kFile, "VocoderGraphs", 5, Retention::Returned);
  requested.caller_requested = true;  // built only if a caller asks: nobody in the capture does
  f.cache_sites.push_back(requested);
  EXPECT_TRUE(run_rule("KV103", {f}).empty());
}

TEST(KV103, SilentWhenTheCapturedCallDoesNotReachTheCache) {
  // The runner holds the transformer, but captures something else.
  auto f = graph_runner_project({spec(kFile, 61, "local_transformer")});
  f.captures[0].captured_calls = {"self.vocoder"};
  EXPECT_TRUE(run_rule("KV103", {f}).empty());
}

TEST(KV103, GraphPoolDeclaredOnTheCacheHolderCounts) {
  auto f = graph_runner_project({spec(kFile, 61, "local")});
  f.declarations.push_back(declaration(kFile, "LocalTransformer", 12, {spec(kFile, 13, "captured_buckets")}));
  EXPECT_TRUE(run_rule("KV103", {f}).empty());
}

// ---- KV104 ---------------------------------------------------------------

TEST(KV104, FiresOnDeclarationWithNothingBehindIt) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "SpeakerEncoder", 3));
  f.declarations.push_back(declaration(kFile, "SpeakerEncoder", 10, {spec(kFile, 11, "speaker_cache")}));
  auto out = run_rule("KV104", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 10u);
  EXPECT_EQ(out[0].severity, Severity::Warning);
  EXPECT_TRUE(has(out[0].message, "`speaker_cache`")) << out[0].message;
  ASSERT_EQ(out[0].related.size(), 1u);
  EXPECT_EQ(out[0].related[0].loc.line, 11u);
}

TEST(KV104, SilentForForwarderHeldCacheSubclassCacheAndCapture) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Forwarder", 3));
  f.declarations.push_back(declaration(kFile, "Forwarder", 5, {}, {"inner"}));
  // Holds a class that builds one (declared by the holder).
  f.classes.push_back(make_class(kFile, "Talker", 10));
  f.classes.push_back(make_class(kFile, "Generator", 20, {}));
  f.hops.push_back(hop(kFile, "Talker", "gen", "Generator", 12));
  f.cache_sites.push_back(cache_site(kFile, "Generator", 25, Retention::Local, "", "StaticCache"));
  f.declarations.push_back(declaration(kFile, "Talker", 14, {spec(kFile, 15, "talker")}));
  // A base that declares for the subclass that builds.
  f.classes.push_back(make_class(kFile, "CodecBase", 30));
  f.classes.push_back(make_class(kFile, "Codec", 40, {"CodecBase"}));
  f.declarations.push_back(declaration(kFile, "CodecBase", 32, {spec(kFile, 33, "codec")}));
  f.cache_sites.push_back(cache_site(kFile, "Codec", 44));
  // A graph wrapper declaring its pool.
  f.classes.push_back(make_class(kFile, "Graphs", 50, {}));
  f.captures.push_back(capture_site(kFile, "Graphs", 55));
  f.declarations.push_back(declaration(kFile, "Graphs", 58, {spec(kFile, 59, "graph_pool")}));
  EXPECT_TRUE(run_rule("KV104", {f}).empty());
}

// ---- KV105 ---------------------------------------------------------------

facts::FileFacts ming_project(bool forwards, std::vector<std::string> generator_bases = {}) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "MingAudioGenerator", 3, std::move(generator_bases)));
  f.declarations.push_back(declaration(kFile, "MingAudioGenerator", 9, {spec(kFile, 10, "talker")}));
  f.classes.push_back(make_class(kFile, "TTSModel", 30));
  f.hops.push_back(hop(kFile, "TTSModel", "gen", "MingAudioGenerator", 40));
  f.declarations.push_back(
      declaration(kFile, "TTSModel", 50, {},
                  forwards ? std::vector<std::string>{"gen"} : std::vector<std::string>{"other"}));
  return f;
}

TEST(KV105, FiresWhenHolderDoesNotForward) {
  auto out = run_rule("KV105", {ming_project(false)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 9u);
  EXPECT_EQ(out[0].owner_class, "MingAudioGenerator");
  EXPECT_TRUE(has(out[0].message,
                  "`TTSModel` holds it as `self.gen` (line 40) but its `model_local_kv_specs` "
                  "does not forward to it"))
      << out[0].message;
}

TEST(KV105, SilentWhenForwardedOrModuleOrUnknownBase) {
  EXPECT_TRUE(run_rule("KV105", {ming_project(true)}).empty());
  EXPECT_TRUE(run_rule("KV105", {ming_project(false, {"torch.nn.Module"})}).empty());
  EXPECT_TRUE(run_rule("KV105", {ming_project(false, {"somelib.GeneratorBase"})}).empty());
}

TEST(KV105, ForwardChainMustStartAtAModule) {
  // TTSModel (module) -> self.wrapper: Wrapper (plain, pure forwarder) -> self.gen: Generator (plain, specs).
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Generator", 3, {}));
  f.declarations.push_back(declaration(kFile, "Generator", 5, {spec(kFile, 6, "talker")}));
  f.classes.push_back(make_class(kFile, "Wrapper", 10, {}));
  f.hops.push_back(hop(kFile, "Wrapper", "gen", "Generator", 12));
  f.declarations.push_back(declaration(kFile, "Wrapper", 14, {}, {"gen"}));
  f.classes.push_back(make_class(kFile, "TTSModel", 20));
  f.hops.push_back(hop(kFile, "TTSModel", "wrapper", "Wrapper", 22));
  f.declarations.push_back(declaration(kFile, "TTSModel", 24, {}, {"wrapper"}));
  EXPECT_TRUE(run_rule("KV105", {f}).empty());
  // Break the first hop: the wrapper is a pure forwarder (not reported), the generator is.
  f.declarations.back().forwards.clear();
  auto out = run_rule("KV105", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].owner_class, "Generator");
  EXPECT_TRUE(has(out[0].message,
                  "`Wrapper` holds it as `self.gen` (line 12) but forwards to it, and `Wrapper` is "
                  "itself not reached"))
      << out[0].message;
}

TEST(KV105, NobodyHoldsIt) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Orphan", 3, {"object"}));
  f.declarations.push_back(declaration(kFile, "Orphan", 9, {spec(kFile, 10, "x")}));
  auto out = run_rule("KV105", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has(out[0].message, "no module holds it")) << out[0].message;
}

TEST(KV105, AbstractBaseJudgedThroughItsHeldSubclass) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "GeneratorBase", 3, {}));
  f.declarations.push_back(declaration(kFile, "GeneratorBase", 5, {spec(kFile, 6, "talker")}));
  f.classes.push_back(make_class(kFile, "MingGenerator", 10, {"GeneratorBase"}));
  f.classes.push_back(make_class(kFile, "TTSModel", 30));
  f.hops.push_back(hop(kFile, "TTSModel", "gen", "MingGenerator", 33));
  f.declarations.push_back(declaration(kFile, "TTSModel", 40, {}, {"gen"}));
  EXPECT_TRUE(run_rule("KV105", {f}).empty());
  // Without the forward the held subclass is reported, at its class line.
  f.declarations.back().forwards.clear();
  auto out = run_rule("KV105", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].owner_class, "MingGenerator");
  EXPECT_EQ(out[0].loc.line, 10u);
  EXPECT_TRUE(has(out[0].message, "inherits")) << out[0].message;
}

// A holder's declaration that does not cover the owner is where coverage was lost:
// it is a related location, so `check --diff` reports the finding when it is edited.
TEST(KV101, HolderDeclarationThatDoesNotCoverIsRelated) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "Generator", 3, {}));
  f.classes.push_back(make_class(kFile, "TTSModel", 20));
  f.cache_sites.push_back(cache_site(kFile, "Generator", 7, Retention::SelfAttribute, "self.cache"));
  f.hops.push_back(hop(kFile, "TTSModel", "gen", "Generator", 24));
  f.declarations.push_back(declaration(kFile, "TTSModel", 30, {}));
  auto out = run_rule("KV101", {f});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].related.size(), 2u);
  EXPECT_EQ(out[0].related[1].loc.line, 30u);
  EXPECT_EQ(out[0].related[1].message, "`TTSModel.model_local_kv_specs()` here does not cover `Generator`");
}

TEST(KV102, HolderDeclarationThatDoesNotCoverIsRelated) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "LocalDecoder", 3));
  f.classes.push_back(make_class(kFile, "Talker", 40));
  f.implicit_caches.push_back(implicit_site(kFile, "LocalDecoder", 12));
  f.hops.push_back(hop(kFile, "Talker", "decoder", "LocalDecoder", 44));
  f.declarations.push_back(declaration(kFile, "Talker", 50, {}));
  auto out = run_rule("KV102", {f});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_FALSE(out[0].related.empty());
  EXPECT_EQ(out[0].related.back().loc.line, 50u);
  EXPECT_EQ(out[0].related.back().message,
            "`Talker.model_local_kv_specs()` here does not cover `LocalDecoder`");
}

}  // namespace
}  // namespace kvlint
