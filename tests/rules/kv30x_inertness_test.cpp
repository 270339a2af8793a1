// KV301-KV303 over hand-built facts: which guards count as owner state, what makes a
// declaration conditional, what a graph wrapper is, and what gates a capture.
#include <gtest/gtest.h>

#include "tests/rules/kv1_kv3_test_facts.hpp"

namespace kvlint {
namespace {

using namespace testing_facts;
using facts::Retention;
using O = facts::Guard::Origin;

const std::string kFile = "models/codec.py";

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// ---- KV301 ---------------------------------------------------------------

// A codec decoder with one cache site under `guards` and an unconditional one-spec declaration.
facts::FileFacts codec(std::vector<facts::Guard> guards, Retention retention = Retention::SelfContainer,
                       std::string retained_as = "self._caches") {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "CodecDecoder", 3));
  auto site = cache_site(kFile, "CodecDecoder", 20, retention, std::move(retained_as));
  site.guards = std::move(guards);
  f.cache_sites.push_back(site);
  f.declarations.push_back(declaration(kFile, "CodecDecoder", 40, {spec(kFile, 41, "codec_decoder")}));
  return f;
}

TEST(KV301, FiresOnOwnerStateGuardAndUnconditionalSpec) {
  auto out =
      run_rule("KV301", {codec({guard(O::If, "self.async_chunk", at(kFile, 18, 12), {"async_chunk"})})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 41u);  // the spec
  EXPECT_EQ(out[0].owner_class, "CodecDecoder");
  EXPECT_TRUE(has(out[0].message, "`if self.async_chunk` (line 18)")) << out[0].message;
  ASSERT_EQ(out[0].related.size(), 2u);
  EXPECT_EQ(out[0].related[0].loc.line, 20u);
  EXPECT_EQ(out[0].related[1].loc.line, 18u);
}

TEST(KV301, CallerGuardAndEarlyReturnCount) {
  EXPECT_EQ(
      run_rule("KV301", {codec({guard(O::CallerGuard, "self.async_chunk", at(kFile, 12), {"async_chunk"})})})
          .size(),
      1u);
  EXPECT_EQ(
      run_rule("KV301", {codec({guard(O::EarlyReturn, "not self.streaming", at(kFile, 15), {"streaming"})})})
          .size(),
      1u);
}

TEST(KV301, SilentWhenTheSettingIsACallArgument) {
  EXPECT_TRUE(
      run_rule("KV301", {codec({guard(O::If, "use_cache", at(kFile, 18), {}, {"use_cache"})})}).empty());
  EXPECT_TRUE(run_rule("KV301", {codec({})}).empty());
}

TEST(KV301, SilentForLazyCreationOnTheCachesOwnSlot) {
  EXPECT_TRUE(run_rule("KV301", {codec({guard(O::If, "request_id not in self._caches", at(kFile, 18),
                                              {"_caches"}, {"request_id"})})})
                  .empty());
  EXPECT_TRUE(run_rule("KV301", {codec({guard(O::If, "self.cache is None", at(kFile, 18), {"cache"})},
                                       Retention::SelfAttribute, "self.cache")})
                  .empty());
  // ...but a lazy test combined with a mode is still a mode.
  EXPECT_EQ(run_rule("KV301", {codec({guard(O::If, "self.cache is None", at(kFile, 18), {"cache"}),
                                      guard(O::If, "self.async_chunk", at(kFile, 17), {"async_chunk"})},
                                     Retention::SelfAttribute, "self.cache")})
                .size(),
            1u);
}

TEST(KV301, ReplayOrEagerDispatchIsNotAMode) {
  EXPECT_TRUE(
      run_rule("KV301", {codec({guard(O::Else, "bs in self.graphs", at(kFile, 18), {"graphs"}, {"bs"})})})
          .empty());
  EXPECT_TRUE(
      run_rule("KV301", {codec({guard(O::If, "not self._captured", at(kFile, 18), {"_captured"})})}).empty());
}

TEST(KV301, LoopAndWithHeadersAreNotConditions) {
  EXPECT_TRUE(
      run_rule("KV301", {codec({guard(O::Loop, "self.buckets", at(kFile, 18), {"buckets"})})}).empty());
}

TEST(KV301, SilentWhenTheDeclarationIsConditional) {
  auto f = codec({guard(O::If, "self.async_chunk", at(kFile, 18), {"async_chunk"})});
  f.declarations.back().returns_empty_somewhere = true;
  EXPECT_TRUE(run_rule("KV301", {f}).empty());
  f.declarations.back().returns_empty_somewhere = false;
  f.declarations.back().specs.front().guards.push_back(
      guard(O::If, "self.async_chunk", at(kFile, 40), {"async_chunk"}));
  EXPECT_TRUE(run_rule("KV301", {f}).empty());
}

TEST(KV301, SilentWithoutCoverage) {
  auto f = codec({guard(O::If, "self.async_chunk", at(kFile, 18), {"async_chunk"})});
  f.declarations.clear();
  EXPECT_TRUE(run_rule("KV301", {f}).empty());
}

TEST(KV301, SeveralConditionalSitesGiveOneFindingPerSpec) {
  auto f = codec({guard(O::If, "self.async_chunk", at(kFile, 18), {"async_chunk"})});
  auto second = f.cache_sites.front();
  second.loc = at(kFile, 28, 9);
  f.cache_sites.push_back(second);
  auto implicit = implicit_site(kFile, "CodecDecoder", 33);
  implicit.guards.push_back(guard(O::If, "self.async_chunk", at(kFile, 32), {"async_chunk"}));
  f.implicit_caches.push_back(implicit);
  auto out = run_rule("KV301", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].related.size(), 6u);
}

TEST(KV301, MultiSpecDeclarationReportsAtTheDef) {
  auto f = codec({guard(O::If, "self.async_chunk", at(kFile, 18), {"async_chunk"})});
  f.declarations.back().specs.push_back(spec(kFile, 45, "codec_graph_pool"));
  auto out = run_rule("KV301", {f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 40u);
}

// ---- KV302 ---------------------------------------------------------------

facts::FileFacts wrapped_decoder(std::string wrapper_name, bool inside_capture = false) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "CodecDecoder", 3));
  auto site = cache_site(kFile, "CodecDecoder", 10, Retention::SelfContainer, "self._caches");
  site.inside_graph_capture = inside_capture;
  f.cache_sites.push_back(site);
  f.classes.push_back(make_class(kFile, wrapper_name, 30, {}));
  f.hops.push_back(hop(kFile, wrapper_name, "decoder", "CodecDecoder", 33));
  f.declarations.push_back(declaration(kFile, wrapper_name, 40, {spec(kFile, 41, "codec_decoder")}));
  return f;
}

TEST(KV302, FiresAtTheWrappersDeclaration) {
  auto out = run_rule("KV302", {wrapped_decoder("CodecCUDAGraphWrapper")});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 40u);
  EXPECT_EQ(out[0].owner_class, "CodecDecoder");
  EXPECT_TRUE(has(out[0].message, "`enforce_eager`")) << out[0].message;
  ASSERT_GE(out[0].related.size(), 1u);
  EXPECT_EQ(out[0].related[0].loc.line, 10u);
}

TEST(KV302, AClassThatCapturesIsAWrapperWhateverItsName) {
  auto f = wrapped_decoder("DecoderRunner");
  EXPECT_TRUE(run_rule("KV302", {f}).empty());  // neither named nor capturing
  f.captures.push_back(capture_site(kFile, "DecoderRunner", 36));
  EXPECT_EQ(run_rule("KV302", {f}).size(), 1u);
}

TEST(KV302, AModuleThatCapturesInItsConstructorIsNotAWrapper) {
  // MiMo-Audio: the model itself captures; under enforce_eager it is still collected.
  auto f = wrapped_decoder("MiMoAudioLLM");
  f.classes.back().bases = {{"nn.Module", "torch.nn.Module"}};
  f.captures.push_back(capture_site(kFile, "MiMoAudioLLM", 36));
  EXPECT_TRUE(run_rule("KV302", {f}).empty());
}

TEST(KV302, SilentWhenTheModuleDeclaresOrTheCacheLivesInTheCapture) {
  auto f = wrapped_decoder("CodecGraphRunner");
  f.declarations.push_back(declaration(kFile, "CodecDecoder", 20, {spec(kFile, 21, "codec_decoder")}));
  EXPECT_TRUE(run_rule("KV302", {f}).empty());
  EXPECT_TRUE(run_rule("KV302", {wrapped_decoder("CodecGraphRunner", true)}).empty());
}

// ---- KV303 ---------------------------------------------------------------

// A model whose constructor captures a step that writes KV (the engine always builds it).
facts::FileFacts capturing(std::vector<facts::Guard> guards, bool writes_kv = true) {
  auto f = file_facts(kFile);
  f.classes.push_back(make_class(kFile, "MiMoAudioLLM", 3));
  f.classes.back().methods.push_back(
      facts::MethodFact{"__init__",
                        at(kFile, 4),
                        {},
                        {},
                        {facts::CallFact{"self.capture", at(kFile, 5), false, {}, {}, false, {}}}});
  f.classes.back().methods.push_back(facts::MethodFact{"capture", at(kFile, 660), {}, {}, {}});
  auto c = capture_site(kFile, "MiMoAudioLLM", 670);
  c.guards = std::move(guards);
  c.captured_writes_kv = writes_kv;
  f.captures.push_back(c);
  return f;
}

TEST(KV303, FiresWhenGatedOnlyOnCudaAvailability) {
  auto out = run_rule("KV303", {capturing({guard(O::If, "torch.cuda.is_available()", at(kFile, 668), {}, {},
                                                 {"torch.cuda.is_available"})})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].loc.line, 670u);
  EXPECT_EQ(out[0].severity, Severity::Warning);
  EXPECT_TRUE(has(out[0].message, "`if torch.cuda.is_available()` (line 668)")) << out[0].message;
  ASSERT_EQ(out[0].related.size(), 1u);
  EXPECT_EQ(out[0].related[0].loc.line, 668u);
}

TEST(KV303, FiresWithNoGateAtAllAndLoopsAreNotGates) {
  auto out = run_rule("KV303", {capturing({guard(O::Loop, "self.buckets", at(kFile, 669), {"buckets"})})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(has(out[0].message, "runs unconditionally")) << out[0].message;
}

TEST(KV303, SilentWhenTheCapturedCodeHoldsNoKV) {
  EXPECT_TRUE(run_rule("KV303", {capturing({}, false)}).empty());
}

TEST(KV303, SilentWhenNothingInTheTreeBuildsOrRunsIt) {
  // Not a module the engine builds, and nobody in the tree builds it or calls its capture.
  auto f = capturing({});
  f.classes.back().bases.clear();
  EXPECT_TRUE(run_rule("KV303", {f}).empty());
}

TEST(KV303, SilentWhenAnyGuardMentionsEager) {
  EXPECT_TRUE(
      run_rule("KV303",
               {capturing({guard(O::If, "not self.enforce_eager", at(kFile, 668), {"enforce_eager"})})})
          .empty());
  EXPECT_TRUE(
      run_rule("KV303", {capturing({guard(O::CallerGuard, "not cfg.eager", at(kFile, 40))})}).empty());
  EXPECT_TRUE(run_rule("KV303", {capturing({guard(O::EarlyReturn, "self.model_config.enforce_eager",
                                                  at(kFile, 660), {"model_config.enforce_eager"})})})
                  .empty());
}

}  // namespace
}  // namespace kvlint
