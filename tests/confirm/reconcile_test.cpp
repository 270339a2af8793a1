#include "tools/kvlint/confirm/reconcile.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support.hpp"

namespace kvlint::confirm {
namespace {

constexpr const char* kFile = "/kvlint-test-nonexistent/pkg/model.py";

InputFinding finding(std::string code, uint32_t line, std::string owner, std::string file = kFile) {
  InputFinding input;
  input.finding.code = std::move(code);
  input.finding.loc.file = std::move(file);
  input.finding.loc.line = line;
  input.finding.owner_class = std::move(owner);
  input.finding.message = "static message";
  return input;
}

std::string cache_line(std::string path, int concurrency, uint32_t line, std::string owner, int64_t rows,
                       int64_t bytes_per_row, std::string file = kFile) {
  return fmt::format(
      R"({{"event":"cache","model":"m","path":"{}","concurrency":{},"class":"DynamicCache","file":"{}","line":{},"owner":"{}","rows":{},"positions":71,"layers":8,"bytes":{},"bytes_per_row":{},"objects":{}}})",
      path, concurrency, file, line, owner, rows, rows * bytes_per_row, bytes_per_row, rows);
}

std::string declaration_line(std::string path, int concurrency, std::string owner, std::string driver,
                             int64_t rows, int64_t bytes_per_row) {
  const bool fixed = driver == "FIXED";
  return fmt::format(
      R"({{"event":"declaration","model":"m","path":"{}","concurrency":{},"owner":"{}","name":"kv","bytes_per_row":{},"rows_driver":"{}","rows_fixed":{},"rows":{},"total_bytes":{},"capacity":71,"scope":"REQUEST","declared":true}})",
      path, concurrency, owner, bytes_per_row, driver, fixed ? std::to_string(rows) : "null", rows,
      rows * bytes_per_row);
}

std::string done_line(std::string path, int concurrency) {
  return fmt::format(R"({{"event":"path_done","model":"m","path":"{}","concurrency":{},"ok":true}})", path,
                     concurrency);
}

ModelRun make_run(std::string name, std::vector<std::string> owners, const std::vector<std::string>& lines,
                  bool ended = true, std::string device = "cpu") {
  ModelRun run;
  run.name = std::move(name);
  run.owners = std::move(owners);
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(
      fmt::format(R"({{"event":"start","model":"m","pid":1,"python":"3.11","device":"{}"}})", device));
  for (const auto& line : lines) run.feed_line(line);
  if (ended) run.feed_line(R"({"event":"end","model":"m"})");
  run.finish();
  return run;
}

const FindingResult& only(const ConfirmReport& report) {
  EXPECT_EQ(report.results.size(), 1u);
  return report.results.front();
}

constexpr int64_t kRow = 4655104;  // 4.44 MiB

// A cache event with its length and the storage sampled after each update round.
std::string sized_cache_line(std::string path, int concurrency, uint32_t line, std::string owner,
                             std::string cache_class, int64_t positions, int64_t bytes_per_position,
                             std::vector<int64_t> growth) {
  std::string samples;
  for (auto g : growth) samples += (samples.empty() ? "" : ",") + std::to_string(g);
  return fmt::format(
      R"({{"event":"cache","model":"m","path":"{}","concurrency":{},"class":"{}","file":"{}","line":{},"owner":"{}","rows":1,"positions":{},"layers":8,"bytes":{},"bytes_per_row":{},"objects":1,"growth":[{}]}})",
      path, concurrency, cache_class, kFile, line, owner, positions, positions * bytes_per_position,
      positions * bytes_per_position, samples);
}

std::string capacity_declaration_line(std::string path, int concurrency, std::string owner, int64_t capacity,
                                      int64_t bytes_per_position) {
  return fmt::format(
      R"({{"event":"declaration","model":"m","path":"{}","concurrency":{},"owner":"{}","name":"kv","bytes_per_row":{},"rows_driver":"FIXED","rows_fixed":1,"rows":1,"total_bytes":{},"capacity":{},"capacity_source":"max_model_len","declared":true,"file":"/kvlint-test-nonexistent/pkg/decl.py","line":42}})",
      path, concurrency, owner, capacity * bytes_per_position, capacity * bytes_per_position, capacity);
}

constexpr int64_t kPerPosition = 65536;  // 2 x 8 layers x 8 heads x 64 dim x 4 B

TEST(Units, HumanBytesMatchTheReference) {
  EXPECT_EQ(format_bytes(4655104), "4.44 MiB");
  EXPECT_EQ(format_bytes(720896), "704 KiB");
  EXPECT_EQ(format_bytes(147456000), "140.62 MiB");
  EXPECT_EQ(format_bytes(25165824), "24.00 MiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(512), "512 B");
}

TEST(Reconcile, KV101ConfirmedWhenACacheIsCreatedAtTheFindingLine) {
  auto run =
      make_run("codec", {"Dec"}, {cache_line("streaming", 4, 18, "Dec", 4, kRow), done_line("streaming", 4)});
  auto report = reconcile({finding("KV101", 18, "Dec")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  ASSERT_TRUE(r.evidence.observed);
  EXPECT_EQ(r.evidence.observed->rows, 4);
  EXPECT_EQ(r.evidence.concurrency, 4);
  EXPECT_EQ(r.evidence.model, "codec");
  EXPECT_EQ(r.evidence.summary,
            "observed DynamicCache rows=4 at concurrency 4 (4.44 MiB/row), no declaration");
  EXPECT_EQ(report.exit_code(), 1);
}

TEST(Reconcile, KV101RefutedWhenTheRuntimeCollectsACoveringDeclaration) {
  auto run = make_run(
      "codec", {"Dec", "SubDec"},
      {cache_line("streaming", 4, 18, "Dec", 4, kRow),
       declaration_line("streaming", 4, "SubDec", "MAX_NUM_SEQS", 4, kRow), done_line("streaming", 4)});
  auto report = reconcile({finding("KV101", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
  EXPECT_EQ(only(report).evidence.summary,
            "observed DynamicCache rows=4 at concurrency 4 (4.44 MiB/row), but SubDec declares it "
            "(MAX_NUM_SEQS rows=4, "
            "4.44 MiB/row)");
}

TEST(Reconcile, KV101MatchesRelativeFindingPathsByRealPath) {
  testing::ScratchDir dir;
  testing::write_file(dir.path() / "model.py", "x = 1\n");
  const std::string observed = (dir.path() / "." / "model.py").string();
  auto run = make_run("codec", {"Dec"},
                      {cache_line("streaming", 1, 7, "Dec", 1, kRow, observed), done_line("streaming", 1)});
  ReconcileOptions options;
  options.bases = {dir.path()};
  auto report = reconcile({finding("KV102", 7, "Dec", "model.py")}, {run}, options);
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed);
}

TEST(Reconcile, KV101RefutedWhenACompletedPathCreatedNothingThere) {
  auto run = make_run("codec", {"Dec"}, {done_line("stateless", 1)});
  auto report = reconcile({finding("KV101", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
  EXPECT_EQ(report.exit_code(), 0);
}

TEST(Reconcile, KV101NotExercisedWhenNoEntryBootsTheOwner) {
  auto run = make_run("codec", {"Other"}, {done_line("stateless", 1)});
  auto report = reconcile({finding("KV101", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised);
}

TEST(Reconcile, KV101InconclusiveWhenTheOwnersRunDiedBeforeShowingIt) {
  ModelRun run = make_run("codec", {"Dec"}, {done_line("stateless", 1)}, /*ended=*/false);
  run.process.signal = 11;
  run.finish();
  auto report = reconcile({finding("KV101", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Inconclusive);
  EXPECT_EQ(only(report).evidence.summary, "crashed (SIGSEGV)");
}

TEST(Reconcile, ConfirmedEvidenceSurvivesALaterCrash) {
  ModelRun run =
      make_run("codec", {"Dec"}, {cache_line("streaming", 1, 18, "Dec", 1, kRow)}, /*ended=*/false);
  run.process.signal = 11;
  run.finish();
  auto report = reconcile({finding("KV101", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed);
}

TEST(Reconcile, KV202ConfirmedWhenRowsExceedRowsFixed) {
  auto run = make_run("codec", {"Dec"},
                      {cache_line("streaming", 4, 18, "Dec", 4, kRow),
                       declaration_line("streaming", 4, "Dec", "FIXED", 1, kRow), done_line("streaming", 4)});
  auto report = reconcile({finding("KV202", 30, "Dec")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  EXPECT_EQ(r.evidence.summary,
            "declared FIXED rows_fixed=1, observed rows=4 at concurrency 4 (4.44 MiB/row)");
  ASSERT_TRUE(r.evidence.declared);
  EXPECT_EQ(r.evidence.declared->rows_fixed, 1);
}

TEST(Reconcile, KV202RefutedWhenRowsStayWithinRowsFixedAtHigherConcurrency) {
  auto run = make_run("minicpm", {"Enc"},
                      {cache_line("streaming", 4, 18, "Enc", 1, kRow),
                       declaration_line("streaming", 4, "Enc", "FIXED", 1, kRow), done_line("streaming", 4)});
  auto report = reconcile({finding("KV202", 30, "Enc")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
}

TEST(Reconcile, KV202NotExercisedAtConcurrencyOne) {
  auto run = make_run("minicpm", {"Enc"},
                      {cache_line("streaming", 1, 18, "Enc", 1, kRow),
                       declaration_line("streaming", 1, "Enc", "FIXED", 1, kRow), done_line("streaming", 1)});
  auto report = reconcile({finding("KV202", 30, "Enc")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised);
}

TEST(Reconcile, KV203ConfirmedWhenRowsStayOneWhileTheDeclarationScales) {
  auto run =
      make_run("ming", {"Talker"},
               {cache_line("eager", 4, 50, "Talker", 1, 25165824),
                declaration_line("eager", 4, "Talker", "MAX_NUM_SEQS", 4, 25165824), done_line("eager", 4)});
  auto report = reconcile({finding("KV203", 60, "Talker")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  EXPECT_EQ(r.evidence.summary,
            "declared MAX_NUM_SEQS rows=4, observed rows=1 at concurrency 4 (24.00 MiB/row)");
}

TEST(Reconcile, KV203RefutedWhenRowsScale) {
  auto run =
      make_run("mimo", {"Local"},
               {cache_line("eager", 4, 50, "Local", 4, 720896),
                declaration_line("eager", 4, "Local", "MAX_NUM_SEQS", 4, 720896), done_line("eager", 4)});
  auto report = reconcile({finding("KV203", 60, "Local")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
  EXPECT_TRUE(report.runtime_findings.empty());
}

TEST(Reconcile, KV301ConfirmedWhenAPathAllocatesNothingButTheDeclarationReportsBytes) {
  auto run =
      make_run("codec", {"Dec"},
               {cache_line("streaming", 1, 18, "Dec", 1, kRow),
                declaration_line("streaming", 1, "Dec", "MAX_NUM_SEQS", 1, kRow), done_line("streaming", 1),
                declaration_line("stateless", 1, "Dec", "MAX_NUM_SEQS", 1, kRow), done_line("stateless", 1)});
  auto report = reconcile({finding("KV301", 40, "Dec")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  EXPECT_EQ(r.evidence.path, "stateless");
}

TEST(Reconcile, KV301RefutedWhenTheInertPathDeclaresNothing) {
  auto run = make_run("codec", {"Dec"},
                      {cache_line("streaming", 1, 18, "Dec", 1, kRow),
                       declaration_line("streaming", 1, "Dec", "MAX_NUM_SEQS", 1, kRow),
                       done_line("streaming", 1), done_line("stateless", 1)});
  auto report = reconcile({finding("KV301", 40, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
}

TEST(Reconcile, KV302ConfirmedWhereAPathAllocatesAndNothingIsCollectedWhateverItsName) {
  // A user names paths after what they do (Qwen3-TTS's async-chunk "icl" and "xvec"): the verdict
  // comes from what the path showed, not from "eager" in its name.
  auto run = make_run("codec", {"Dec"},
                      {cache_line("icl", 1, 18, "Dec", 1, kRow), done_line("icl", 1),
                       cache_line("xvec", 1, 18, "Dec", 1, kRow), done_line("xvec", 1)});
  auto report = reconcile({finding("KV302", 70, "Dec")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed) << r.evidence.summary;
  EXPECT_EQ(r.evidence.collected_total_bytes, 0);
  EXPECT_EQ(r.evidence.path, "icl");
}

TEST(Reconcile, KV302NotExercisedWithoutAnAllocationOrAPathKnownToRunWithoutTheWrapper) {
  auto run = make_run("codec", {"Dec"}, {done_line("graph", 1)});
  auto report = reconcile({finding("KV302", 70, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised);
}

TEST(Reconcile, KV302IsNotRefutedByACpuPathTheEntryDoesNotMarkEnforceEager) {
  // Declarations covering the cache on a CPU path may just mean the wrapper was there.
  auto run = make_run(
      "codec", {"Dec"},
      {cache_line("enforce_eager", 1, 18, "Dec", 1, kRow),
       declaration_line("enforce_eager", 1, "Dec", "MAX_NUM_SEQS", 1, kRow), done_line("enforce_eager", 1)});
  auto report = reconcile({finding("KV302", 70, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised) << only(report).evidence.summary;
}

TEST(Reconcile, KV302RefutedOnAnEnforceEagerPathWhoseDeclarationsCoverItsCaches) {
  auto run = make_run("codec", {"Dec"},
                      {cache_line("xvec", 1, 18, "Dec", 1, kRow),
                       declaration_line("xvec", 1, "Dec", "MAX_NUM_SEQS", 1, kRow), done_line("xvec", 1)});
  run.enforce_eager_paths = {"xvec"};
  auto report = reconcile({finding("KV302", 70, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
  EXPECT_NE(only(report).evidence.summary.find("xvec (enforce-eager)"), std::string::npos)
      << only(report).evidence.summary;
}

TEST(Reconcile, KV302RefutedOnCudaWhereThePathCapturedNothingAndTheDeclarationsCoverIt) {
  auto run = make_run("codec", {"Dec"},
                      {cache_line("icl", 1, 18, "Dec", 1, kRow),
                       declaration_line("icl", 1, "Dec", "MAX_NUM_SEQS", 1, kRow), done_line("icl", 1)},
                      true, "cuda:0");
  auto report = reconcile({finding("KV302", 70, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted) << only(report).evidence.summary;
}

TEST(Reconcile, KV303ConfirmedByACaptureOnAPathTheEntryMarksEnforceEager) {
  auto run = make_run(
      "mimo", {"Llm"},
      {R"({"event":"capture","model":"m","path":"local","concurrency":1,"kind":"graph_context","file":"/kvlint-test-nonexistent/pkg/model.py","line":670,"owner":"Llm","count":3,"resident_bytes":null})",
       done_line("local", 1)},
      true, "cuda:0");
  run.enforce_eager_paths = {"local"};
  auto report = reconcile({finding("KV303", 670, "Llm")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  ASSERT_TRUE(r.evidence.capture);
  EXPECT_EQ(r.evidence.capture->count, 3);
}

TEST(Reconcile, KV303NotExercisedWhenNoPathIsMarkedEnforceEagerWhateverItsName) {
  // A capture on a path merely named "enforce_eager" is a graph path's capture as far as the
  // entry says: the deployment setting comes from the entry's configuration.
  auto run = make_run(
      "mimo", {"Llm"},
      {R"({"event":"capture","model":"m","path":"enforce_eager","concurrency":1,"kind":"graph_context","file":"/kvlint-test-nonexistent/pkg/model.py","line":670,"owner":"Llm","count":3,"resident_bytes":null})",
       done_line("enforce_eager", 1)},
      true, "cuda:0");
  auto report = reconcile({finding("KV303", 670, "Llm")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised);
  EXPECT_NE(only(report).evidence.summary.find("enforce-eager"), std::string::npos);
}

TEST(Reconcile, KV303RefutedWhenEnforceEagerCapturesNothingOnCuda) {
  auto run = make_run("mimo", {"Llm"}, {done_line("enforce_eager", 1)}, true, "cuda");
  run.enforce_eager_paths = {"enforce_eager"};
  auto report = reconcile({finding("KV303", 670, "Llm")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
}

TEST(Reconcile, KV303NotExercisedOnTheCpu) {
  auto run = make_run("mimo", {"Llm"}, {done_line("enforce_eager", 1)}, true, "cpu");
  run.enforce_eager_paths = {"enforce_eager"};
  auto report = reconcile({finding("KV303", 670, "Llm")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised);
  EXPECT_NE(only(report).evidence.summary.find("CUDA"), std::string::npos);
}

TEST(Reconcile, OwnersListedTogetherInAnEntryCoverEachOther) {
  // The harness names the base class that runs the code; the subclass declares.
  auto run = make_run("lt", {"Base", "Sub"},
                      {cache_line("eager", 4, 37, "Base", 4, 720896),
                       declaration_line("eager", 4, "Sub", "FIXED", 1, 720896), done_line("eager", 4)});
  auto report = reconcile({finding("KV202", 20, "Sub")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed);
  EXPECT_TRUE(report.runtime_findings.empty());
  auto unrelated = make_run("lt", {"Sub"},
                            {cache_line("eager", 4, 37, "Base", 4, 720896),
                             declaration_line("eager", 4, "Sub", "FIXED", 1, 720896), done_line("eager", 4)});
  auto second = reconcile({}, {unrelated}, {});
  ASSERT_EQ(second.runtime_findings.size(), 1u);
  EXPECT_EQ(second.runtime_findings[0].code, "RT001");
}

TEST(Reconcile, OtherCodesAreNotChecked) {
  auto run = make_run("codec", {"Dec"}, {done_line("streaming", 1)});
  auto report = reconcile({finding("KV403", 5, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotChecked);
  EXPECT_EQ(report.exit_code(), 0);
}

TEST(Reconcile, RT001ForAnUnnamedUndeclaredCache) {
  auto run = make_run("codec", {"Dec"},
                      {cache_line("streaming", 1, 99, "Hidden", 1, 720896), done_line("streaming", 1)});
  auto report = reconcile({finding("KV401", 5, "Dec")}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings.front();
  EXPECT_EQ(rt.code, "RT001");
  EXPECT_EQ(rt.name, "unflagged-cache");
  EXPECT_EQ(rt.severity, Severity::Warning);
  EXPECT_EQ(rt.line, 99u);
  EXPECT_EQ(report.exit_code(), 1);
}

TEST(Reconcile, NoRuntimeFindingWhenTheOwnerDeclaresMatchingBytes) {
  auto run = make_run(
      "codec", {"Dec"},
      {cache_line("streaming", 4, 99, "Dec", 4, kRow),
       declaration_line("streaming", 4, "Dec", "MAX_NUM_SEQS", 4, kRow + 1000), done_line("streaming", 4)});
  auto report = reconcile({}, {run}, {});
  EXPECT_TRUE(report.runtime_findings.empty());
  EXPECT_EQ(report.exit_code(), 0);
}

TEST(Reconcile, RT002WhenDeclaredBytesDriftBeyondTheTolerance) {
  auto run = make_run(
      "codec", {"Dec"},
      {cache_line("streaming", 4, 99, "Dec", 4, kRow),
       declaration_line("streaming", 4, "Dec", "MAX_NUM_SEQS", 4, kRow / 2), done_line("streaming", 4)});
  ReconcileOptions options;
  options.tolerance = 0.05;
  auto report = reconcile({}, {run}, options);
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings.front();
  EXPECT_EQ(rt.code, "RT002");
  EXPECT_EQ(rt.severity, Severity::Error);
  ASSERT_TRUE(rt.evidence.declared && rt.evidence.observed);
  EXPECT_EQ(rt.evidence.declared->bytes_per_row, kRow / 2);
  EXPECT_EQ(rt.evidence.observed->bytes_per_row, kRow);
}

TEST(Reconcile, RT001ForASecondCacheBesideTheOneItsOwnersDeclarationMatches) {
  // MiMo-Audio's shape: the declaration describes the cache at line 99 exactly; the owner also
  // builds a smaller one at line 120 that nothing declares. That is an undeclared cache, not drift.
  auto run =
      make_run("local", {"Lm"},
               {cache_line("decode", 4, 99, "Lm", 4, kRow), cache_line("decode", 4, 120, "Lm", 4, kRow / 4),
                declaration_line("decode", 4, "Lm", "MAX_NUM_SEQS", 4, kRow), done_line("decode", 4)});
  ReconcileOptions options;
  options.tolerance = 0.05;
  auto report = reconcile({}, {run}, options);
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings.front();
  EXPECT_EQ(rt.code, "RT001");
  EXPECT_EQ(rt.line, 120u);
  ASSERT_TRUE(rt.evidence.observed && rt.evidence.declared);
  EXPECT_EQ(rt.evidence.observed->bytes_per_row, kRow / 4);
  EXPECT_NE(rt.message.find(fmt::format("is the cache at {}:99", kFile)), std::string::npos) << rt.message;
  EXPECT_NE(rt.message.find("second, undeclared cache"), std::string::npos) << rt.message;
}

TEST(Reconcile, RT002ForEachOfTwoCachesWhenTheDeclarationMatchesNeither) {
  auto run =
      make_run("local", {"Lm"},
               {cache_line("decode", 4, 99, "Lm", 4, kRow), cache_line("decode", 4, 120, "Lm", 4, kRow / 4),
                declaration_line("decode", 4, "Lm", "MAX_NUM_SEQS", 4, kRow * 2), done_line("decode", 4)});
  ReconcileOptions options;
  options.tolerance = 0.05;
  auto report = reconcile({}, {run}, options);
  ASSERT_EQ(report.runtime_findings.size(), 2u);
  for (const auto& rt : report.runtime_findings) EXPECT_EQ(rt.code, "RT002") << rt.line;
}

TEST(Reconcile, RT002WhenTheMatchingCacheRanAtAnotherConcurrency) {
  // A match at concurrency 1 does not speak for a different cache at concurrency 4.
  auto run = make_run("local", {"Lm"},
                      {cache_line("decode", 1, 99, "Lm", 1, kRow),
                       declaration_line("decode", 1, "Lm", "MAX_NUM_SEQS", 1, kRow), done_line("decode", 1),
                       cache_line("decode", 4, 120, "Lm", 4, kRow / 4),
                       declaration_line("decode", 4, "Lm", "MAX_NUM_SEQS", 4, kRow), done_line("decode", 4)});
  ReconcileOptions options;
  options.tolerance = 0.05;
  auto report = reconcile({}, {run}, options);
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings.front().code, "RT002");
  EXPECT_EQ(report.runtime_findings.front().line, 120u);
}

TEST(Reconcile, KV402ConfirmedWhenAStaticCacheHoldsMorePositionsThanDeclared) {
  auto run = make_run(
      "ming", {"Gen"},
      {sized_cache_line("generate", 1, 18, "Gen", "StaticCache", 2048, kPerPosition, {1}),
       capacity_declaration_line("generate", 1, "Gen", 1024, kPerPosition), done_line("generate", 1)});
  auto report = reconcile({finding("KV402", 18, "Gen")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  EXPECT_EQ(
      r.evidence.summary,
      "StaticCache holds 2048 positions (its bound) on path generate at concurrency 1, declared capacity "
      "1024 (max_model_len)");
  ASSERT_TRUE(r.evidence.observed);
  EXPECT_EQ(r.evidence.observed->positions, 2048);
}

TEST(Reconcile, KV401ConfirmedWhenASlidingWindowStopsBelowTheDeclaredCapacity) {
  // Storage stopped growing over the last rounds while the drive kept decoding: bounded at 71.
  auto run = make_run(
      "codec", {"Dec"},
      {sized_cache_line("streaming", 1, 18, "Dec", "DynamicCache", 71, kPerPosition,
                        {72 * kPerPosition, 75 * kPerPosition, 75 * kPerPosition}),
       capacity_declaration_line("streaming", 1, "Dec", 4096, kPerPosition), done_line("streaming", 1)});
  auto report = reconcile({finding("KV401", 40, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
}

TEST(Reconcile, KV401RefutedWhenTheCacheStopsAtTheDeclaredCapacity) {
  auto run = make_run(
      "codec", {"Dec"},
      {sized_cache_line("streaming", 1, 18, "Dec", "DynamicCache", 71, kPerPosition,
                        {72 * kPerPosition, 75 * kPerPosition, 75 * kPerPosition}),
       capacity_declaration_line("streaming", 1, "Dec", 71, kPerPosition), done_line("streaming", 1)});
  auto report = reconcile({finding("KV401", 40, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted) << only(report).evidence.summary;
}

TEST(Reconcile, KV402NotExercisedWhileTheCacheStillGrowsBelowItsCapacity) {
  auto run = make_run(
      "codec", {"Dec"},
      {sized_cache_line("streaming", 1, 18, "Dec", "DynamicCache", 20, kPerPosition,
                        {8 * kPerPosition, 12 * kPerPosition, 20 * kPerPosition}),
       capacity_declaration_line("streaming", 1, "Dec", 71, kPerPosition), done_line("streaming", 1)});
  auto report = reconcile({finding("KV402", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised) << only(report).evidence.summary;
}

TEST(Reconcile, KV402ConfirmedWhenAGrowingCacheOutgrowsTheDeclaredCapacity) {
  auto run = make_run(
      "codec", {"Dec"},
      {sized_cache_line("streaming", 1, 18, "Dec", "DynamicCache", 80, kPerPosition,
                        {40 * kPerPosition, 80 * kPerPosition}),
       capacity_declaration_line("streaming", 1, "Dec", 71, kPerPosition), done_line("streaming", 1)});
  auto report = reconcile({finding("KV402", 18, "Dec")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
}

TEST(Reconcile, KV105ConfirmedWhenTheOwnerHoldsACacheTheCollectorNeverReturns) {
  auto run = make_run(
      "ming", {"Talker", "Gen"},
      {sized_cache_line("generate", 1, 18, "Gen", "StaticCache", 2048, kPerPosition, {1}),
       capacity_declaration_line("generate", 1, "Talker", 2048, kPerPosition), done_line("generate", 1)});
  auto report = reconcile({finding("KV105", 60, "Gen")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  EXPECT_EQ(r.evidence.summary,
            "the collector's walk on path generate returned no spec of Gen (collected: Talker)");
}

TEST(Reconcile, KV105RefutedWhenTheCollectorReturnsTheOwnersSpec) {
  auto run = make_run(
      "ming", {"Talker", "Gen"},
      {sized_cache_line("generate", 1, 18, "Gen", "StaticCache", 2048, kPerPosition, {1}),
       capacity_declaration_line("generate", 1, "Gen", 2048, kPerPosition), done_line("generate", 1)});
  auto report = reconcile({finding("KV105", 60, "Gen")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted);
}

TEST(Reconcile, KV105NotExercisedWhenTheOwnerHeldNothing) {
  // An owner that allocated nothing may be inert on the path: no evidence the walk missed it.
  auto run = make_run("ming", {"Talker", "Gen"}, {done_line("generate", 1)});
  auto report = reconcile({finding("KV105", 60, "Gen")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::NotExercised);
}

TEST(Reconcile, RT003WhenACompletedPathAllocatesNothingForADeclaredSpec) {
  auto run = make_run(
      "codec", {"Dec"},
      {sized_cache_line("streaming", 1, 18, "Dec", "DynamicCache", 71, kPerPosition, {1}),
       capacity_declaration_line("streaming", 1, "Dec", 71, kPerPosition), done_line("streaming", 1),
       capacity_declaration_line("stateless", 1, "Dec", 71, kPerPosition), done_line("stateless", 1)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings.front();
  EXPECT_EQ(rt.code, "RT003");
  EXPECT_EQ(rt.name, "phantom-declaration");
  EXPECT_EQ(rt.severity, Severity::Error);
  EXPECT_EQ(rt.file, "/kvlint-test-nonexistent/pkg/decl.py");
  EXPECT_EQ(rt.line, 42u);
  EXPECT_EQ(rt.evidence.path, "stateless");
  ASSERT_TRUE(rt.evidence.declared);
  EXPECT_EQ(rt.evidence.declared->total_bytes, 71 * kPerPosition);
  EXPECT_EQ(report.exit_code(), 1);
}

TEST(Reconcile, NoRT003WhenTheOwnerAllocatesOrThePathFailedOrKV301SaysIt) {
  // A cache the factory built and that stays alive is memory the path holds.
  auto built = make_run(
      "codec", {"Dec"},
      {R"({"event":"cache","model":"m","path":"build","concurrency":0,"class":"StaticCache","file":"/kvlint-test-nonexistent/pkg/model.py","line":9,"owner":"Dec","rows":1,"positions":71,"layers":8,"bytes":1,"bytes_per_row":1,"objects":1,"alive_after_step":true})",
       capacity_declaration_line("graph", 1, "Dec", 71, kPerPosition), done_line("graph", 1)});
  EXPECT_TRUE(reconcile({}, {built}, {}).runtime_findings.empty());
  // A path that did not complete shows nothing.
  auto failed =
      make_run("codec", {"Dec"},
               {capacity_declaration_line("stateless", 1, "Dec", 71, kPerPosition),
                R"({"event":"path_done","model":"m","path":"stateless","concurrency":1,"ok":false})"});
  EXPECT_TRUE(reconcile({}, {failed}, {}).runtime_findings.empty());
  // The same observation under a KV301 finding is that finding's verdict, not a second report.
  auto flagged = make_run(
      "codec", {"Dec"},
      {capacity_declaration_line("stateless", 1, "Dec", 71, kPerPosition), done_line("stateless", 1)});
  auto report = reconcile({finding("KV301", 40, "Dec")}, {flagged}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed);
  EXPECT_TRUE(report.runtime_findings.empty());
}

// Raw tensor K/V as the harness reports it: a pool kept by the attention layers of a decoder
// whose owners list relates the two classes (the decoder declares, the layer allocates).
std::string raw_pool_line(std::string path, int concurrency, int64_t rows, int64_t bytes_per_row) {
  return fmt::format(
      R"({{"event":"cache","model":"m","path":"{}","concurrency":{},"class":"raw-tensor","file":"{}","line":23,"owner":"PoolAttention","rows":{},"positions":0,"layers":0,"bytes":{},"bytes_per_row":{},"objects":4,"alive_after_step":true,"holder":"PoolAttention","kept_by":["layers.0.k_pool","layers.0.v_pool","layers.1.k_pool","layers.1.v_pool"]}})",
      path, concurrency, kFile, rows, rows * bytes_per_row, bytes_per_row);
}

TEST(Reconcile, DeclaredRawPoolAgreesAndAnUndeclaredOneIsRT001NamingItsAttribute) {
  auto declared =
      make_run("pool", {"PoolDecoder", "PoolAttention"},
               {raw_pool_line("serve", 4, 4, 4096),
                declaration_line("serve", 4, "PoolDecoder", "MAX_NUM_SEQS", 4, 4096), done_line("serve", 4)});
  EXPECT_TRUE(reconcile({}, {declared}, {}).runtime_findings.empty());  // no RT003, RT002, RT004

  auto drifting =
      make_run("pool", {"PoolDecoder", "PoolAttention"},
               {raw_pool_line("serve", 4, 4, 4096),
                declaration_line("serve", 4, "PoolDecoder", "MAX_NUM_SEQS", 4, 2048), done_line("serve", 4)});
  auto drift = reconcile({}, {drifting}, {});
  ASSERT_EQ(drift.runtime_findings.size(), 1u);
  EXPECT_EQ(drift.runtime_findings[0].code, "RT002");

  auto undeclared =
      make_run("pool", {"PoolAttention"}, {raw_pool_line("serve", 4, 4, 4096), done_line("serve", 4)});
  auto report = reconcile({}, {undeclared}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings[0];
  EXPECT_EQ(rt.code, "RT001");
  EXPECT_NE(rt.message.find("raw K/V tensors kept as `layers.0.k_pool` (and 3 more)"), std::string::npos)
      << rt.message;
  ASSERT_TRUE(rt.evidence.observed);
  EXPECT_EQ(rt.evidence.observed->bytes_per_row, 4096);

  // A KV101 at the allocating line is confirmed by the raw store.
  auto flagged = reconcile({finding("KV101", 23, "PoolAttention")}, {undeclared}, {});
  EXPECT_EQ(only(flagged).verdict, Verdict::Confirmed) << only(flagged).evidence.summary;
  EXPECT_TRUE(flagged.runtime_findings.empty());
}

// A cache built several frames below the call a finding names: the harness's innermost frame is
// a vendored helper (another file, another owner); the finding's line and owner are on its chain.
std::string chained_cache_line(std::string path, int concurrency, int64_t rows, int64_t bytes_per_row) {
  return fmt::format(
      R"({{"event":"cache","model":"m","path":"{}","concurrency":{},"class":"DynamicCache","file":"/kvlint-test-nonexistent/pkg/vendored.py","line":300,"owner":"Backbone","rows":{},"positions":8,"layers":2,"bytes":{},"bytes_per_row":{},"objects":{},"chain":[{{"file":"/kvlint-test-nonexistent/pkg/vendored.py","line":300,"owner":"Backbone"}},{{"file":"{}","line":85,"owner":"VAEModel"}},{{"file":"/kvlint-test-nonexistent/boot/entry.py","line":12,"owner":null}}]}})",
      path, concurrency, rows, rows * bytes_per_row, bytes_per_row, rows, kFile);
}

TEST(Reconcile, AFindingOnTheCreatingChainIsConfirmedAndNotAlsoRT001) {
  auto run =
      make_run("vae", {"VAEModel"}, {chained_cache_line("streaming", 4, 4, 7168), done_line("streaming", 4)});
  auto report = reconcile({finding("KV102", 85, "VAEModel")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed) << r.evidence.summary;
  ASSERT_TRUE(r.evidence.observed);
  EXPECT_EQ(r.evidence.observed->rows, 4);
  EXPECT_EQ(r.evidence.observed->bytes_per_row, 7168);
  EXPECT_TRUE(report.runtime_findings.empty()) << report.runtime_findings.front().message;
}

TEST(Reconcile, AFindingWhoseOwnerIsOnTheChainIsConfirmedAtAnotherLine) {
  // The finding names the call in a loop the chain records at another line of the same class.
  auto run =
      make_run("vae", {"VAEModel"}, {chained_cache_line("streaming", 1, 1, 7168), done_line("streaming", 1)});
  auto report = reconcile({finding("KV102", 90, "VAEModel")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
  EXPECT_NE(only(report).evidence.summary.find("VAEModel on its call chain"), std::string::npos);
  // An unrelated owner stays refuted: nothing on a completed path passed through it.
  auto other = reconcile({finding("KV102", 90, "Other")},
                         {make_run("other", {"Other"},
                                   {chained_cache_line("streaming", 1, 1, 7168), done_line("streaming", 1)})},
                         {});
  EXPECT_EQ(only(other).verdict, Verdict::Refuted);
}

TEST(Reconcile, RT001ForACacheOnAPathWhereItsOwnerDeclaresNothingThoughItDeclaresElsewhere) {
  // Declarations are collected per path: the graph path's do not cover the cache the icl path holds.
  auto run = make_run("codec", {"Dec"},
                      {cache_line("graph", 1, 18, "Dec", 1, kRow),
                       declaration_line("graph", 1, "Dec", "MAX_NUM_SEQS", 1, kRow), done_line("graph", 1),
                       cache_line("icl", 1, 18, "Dec", 1, kRow), done_line("icl", 1)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings[0].code, "RT001");
  EXPECT_EQ(report.runtime_findings[0].evidence.path, "icl");
}

TEST(Reconcile, RT001ForACacheOnTheChainOfAClassWhoseKV302TheRunDidNotConfirm) {
  // The KV302 is refuted (its enforce-eager path is covered), so it does not speak for the cache
  // the other path holds undeclared.
  auto run =
      make_run("vae", {"VAEModel"},
               {chained_cache_line("eager", 1, 1, 7168),
                declaration_line("eager", 1, "Backbone", "MAX_NUM_SEQS", 1, 7168), done_line("eager", 1),
                chained_cache_line("other", 1, 1, 7168), cache_line("other", 1, 50, "Elsewhere", 1, 64),
                declaration_line("other", 1, "Elsewhere", "MAX_NUM_SEQS", 1, 64), done_line("other", 1)});
  run.enforce_eager_paths = {"eager"};
  auto report = reconcile({finding("KV302", 40, "VAEModel")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted) << only(report).evidence.summary;
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings[0].code, "RT001");
  EXPECT_EQ(report.runtime_findings[0].evidence.path, "other");
}

TEST(Reconcile, NoRT001ForACacheWhoseChainPassesAClassAKV302Names) {
  // Qwen3-TTS under enforce_eager: the decoder's per-chunk caches are created in helpers of the
  // class the KV302 names; that finding covers them, RT001 would say it twice.
  auto run = make_run("vae", {"VAEModel"},
                      {chained_cache_line("enforce_eager", 1, 1, 7168), done_line("enforce_eager", 1)});
  auto report = reconcile({finding("KV302", 40, "VAEModel")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
  EXPECT_TRUE(report.runtime_findings.empty());
  // Without the finding, the same cache is an RT001.
  auto unflagged = reconcile({}, {run}, {});
  ASSERT_EQ(unflagged.runtime_findings.size(), 1u);
  EXPECT_EQ(unflagged.runtime_findings.front().code, "RT001");
}

TEST(Reconcile, RT001ReportsTheWidestObservationOfItsSite) {
  auto run = make_run("m", {"Dec"},
                      {cache_line("p", 1, 12, "Dec", 1, 64), done_line("p", 1),
                       cache_line("p", 4, 12, "Dec", 4, 64), done_line("p", 4)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  ASSERT_TRUE(report.runtime_findings.front().evidence.observed);
  EXPECT_EQ(report.runtime_findings.front().evidence.observed->rows, 4);
  EXPECT_EQ(report.runtime_findings.front().evidence.concurrency, 4);
}

TEST(Reconcile, RT001NamesNoCacheThatNeverHeldAByte) {
  auto run = make_run("m", {"Dec"}, {cache_line("p", 1, 12, "Dec", 1, 0), done_line("p", 1)});
  auto empty = reconcile({}, {run}, {});
  EXPECT_TRUE(empty.runtime_findings.empty());
  auto holding =
      reconcile({}, {make_run("m", {"Dec"}, {cache_line("p", 1, 12, "Dec", 1, 64), done_line("p", 1)})}, {});
  ASSERT_EQ(holding.runtime_findings.size(), 1u);
  EXPECT_EQ(holding.runtime_findings.front().code, "RT001");
}

TEST(Reconcile, RT004WhenObservedRowsExceedTheDeclaredRows) {
  // FIXED rows_fixed=1 held 3 rows (24 MiB) at concurrency 3, and no static finding says so.
  constexpr int64_t kEight = 8 * 1024 * 1024;
  auto run = make_run("m", {"Map"},
                      {cache_line("generate", 3, 20, "Map", 3, kEight),
                       declaration_line("generate", 3, "Map", "FIXED", 1, kEight), done_line("generate", 3)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings.front();
  EXPECT_EQ(rt.code, "RT004");
  EXPECT_EQ(rt.name, "declared-rows-drift");
  EXPECT_NE(rt.message.find("observed 3 rows (24.00 MiB"), std::string::npos) << rt.message;
  EXPECT_EQ(report.exit_code(), 1);
  // Rows within the declaration: silent. A KV202 on the owner says it instead.
  auto within =
      make_run("m", {"Map"},
               {cache_line("generate", 3, 20, "Map", 3, kEight),
                declaration_line("generate", 3, "Map", "MAX_NUM_SEQS", 3, kEight), done_line("generate", 3)});
  EXPECT_TRUE(reconcile({}, {within}, {}).runtime_findings.empty());
  auto flagged = reconcile({finding("KV202", 20, "Map")}, {run}, {});
  EXPECT_TRUE(flagged.runtime_findings.empty());
  EXPECT_EQ(only(flagged).verdict, Verdict::Confirmed);
}

TEST(Reconcile, RT004WhenAMaxNumSeqsDeclarationsRowsStayFixedAsConcurrencyGrows) {
  auto run = make_run(
      "m", {"Talker"},
      {cache_line("generate", 1, 20, "Talker", 1, 4096),
       declaration_line("generate", 1, "Talker", "MAX_NUM_SEQS", 1, 4096), done_line("generate", 1),
       cache_line("generate", 4, 20, "Talker", 1, 4096),
       declaration_line("generate", 4, "Talker", "MAX_NUM_SEQS", 4, 4096), done_line("generate", 4)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings.front().code, "RT004");
  EXPECT_NE(report.runtime_findings.front().message.find("do not grow"), std::string::npos);
}

// MiMo on CUDA (tests/runtime/fixtures/local_transformer): the caches built inside the eight bucket
// captures are kept in the graphs' pools, 1 + 2 + ... + 134 = 261 rows at the per-call cache's
// line; the owner declares the per-call cache (MAX_NUM_SEQS) and the pool (FIXED) at 704 KiB a row.
constexpr int64_t kMimoRow = 720896;

std::string captured_cache_line(std::string path, int concurrency, int64_t rows) {
  std::string line = cache_line(std::move(path), concurrency, 37, "Mimo", rows, kMimoRow);
  return line.insert(line.size() - 1, R"(,"in_capture":true)");
}

std::string capture_line(std::string path, int concurrency, bool retained) {
  return fmt::format(
      R"({{"event":"capture","model":"m","path":"{}","concurrency":{},"kind":"graph_context","file":"{}","line":53,"owner":"Mimo","count":8,"resident_bytes":352321536,"retained":{}}})",
      path, concurrency, kFile, retained);
}

std::vector<std::string> mimo_graph_path(int64_t pool_rows) {
  return {captured_cache_line("graph", 1, 261), capture_line("graph", 1, false),
          declaration_line("graph", 1, "Mimo", "MAX_NUM_SEQS", 1, kMimoRow),
          declaration_line("graph", 1, "Mimo", "FIXED", pool_rows, kMimoRow), done_line("graph", 1),
          // Concurrency 4 replays the graphs captured at 1: no cache, the captures retained.
          capture_line("graph", 4, true), declaration_line("graph", 4, "Mimo", "MAX_NUM_SEQS", 4, kMimoRow),
          declaration_line("graph", 4, "Mimo", "FIXED", pool_rows, kMimoRow), done_line("graph", 4)};
}

TEST(Reconcile, NoRT004OrRT003WhenTheGraphPoolDeclarationHoldsTheCapturedRows) {
  // The per-call declaration (1 row at concurrency 1) is not the one the captured rows drift from,
  // and concurrency 4 holds the retained pool though it allocates nothing new.
  auto run = make_run("mimo", {"Mimo"}, mimo_graph_path(261), true, "cuda");
  auto report = reconcile({}, {run}, {});
  EXPECT_TRUE(report.runtime_findings.empty())
      << report.runtime_findings.front().code << " " << report.runtime_findings.front().message;
}

TEST(Reconcile, RT004NamesTheWidestDeclarationWhenNoneHoldsTheRows) {
  auto run = make_run("mimo", {"Mimo"}, mimo_graph_path(200), true, "cuda");
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  const auto& rt = report.runtime_findings.front();
  EXPECT_EQ(rt.code, "RT004");
  EXPECT_EQ(rt.evidence.summary, "declared 200 rows, observed 261 at concurrency 1");
}

TEST(Reconcile, RT003WhenNoCaptureIsRetainedEither) {
  auto lines = mimo_graph_path(261);
  lines.erase(lines.begin() + 5);  // concurrency 4 without the retained captures
  auto report = reconcile({}, {make_run("mimo", {"Mimo"}, lines, true, "cuda")}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings.front().code, "RT003");
  EXPECT_EQ(report.runtime_findings.front().evidence.concurrency, 4);
}

TEST(Reconcile, KV303ConfirmedByTheBuildsCaptureWhenEveryPathIsEnforceEager) {
  // MiMo-Audio captures its buckets in its constructor whatever enforce_eager says; an entry whose
  // every path is enforce-eager describes an eager deployment, so that capture is the finding's.
  auto run =
      make_run("mimo", {"Mimo"}, {capture_line("build", 1, false), done_line("local", 1)}, true, "cuda");
  run.paths = {"local"};
  run.enforce_eager_paths = {"local"};
  auto report = reconcile({finding("KV303", 53, "Mimo")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
  EXPECT_NE(only(report).evidence.summary.find("while the factory built the model"), std::string::npos);
  // A build capture says nothing when a path of the entry runs with graphs.
  auto mixed =
      make_run("mimo", {"Mimo"},
               {capture_line("build", 1, false), done_line("local", 1), done_line("graph", 1)}, true, "cuda");
  mixed.paths = {"local", "graph"};
  mixed.enforce_eager_paths = {"local"};
  EXPECT_EQ(only(reconcile({finding("KV303", 53, "Mimo")}, {mixed}, {})).verdict, Verdict::Refuted);
}

TEST(Reconcile, KV303IsNotConfirmedByACaptureRetainedFromAnEarlierPath) {
  // The graph path captured first; enforce_eager then holds those graphs but captures nothing.
  auto run = make_run("mimo", {"Mimo"},
                      {capture_line("graph", 1, false), done_line("graph", 1),
                       capture_line("enforce_eager", 1, true), done_line("enforce_eager", 1)},
                      true, "cuda");
  run.enforce_eager_paths = {"enforce_eager"};
  auto report = reconcile({finding("KV303", 53, "Mimo")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted) << only(report).evidence.summary;
}

TEST(Reconcile, KV103ConfirmedWhenNoFixedDeclarationHoldsTheCapturedRows) {
  // The example's LocalTransformer: only the per-call MAX_NUM_SEQS cache is declared.
  auto run =
      make_run("mimo", {"Mimo"},
               {captured_cache_line("graph", 4, 261), capture_line("graph", 4, false),
                declaration_line("graph", 4, "Mimo", "MAX_NUM_SEQS", 4, kMimoRow), done_line("graph", 4)},
               true, "cuda");
  auto report = reconcile({finding("KV103", 53, "Mimo")}, {run}, {});
  const auto& r = only(report);
  EXPECT_EQ(r.verdict, Verdict::Confirmed);
  EXPECT_EQ(r.evidence.summary,
            "caches built inside captures hold 261 rows (704 KiB/row, 179.44 MiB) on path graph at "
            "concurrency 4; no FIXED declaration of those bytes per row");
  // The same captured rows are that finding's, not also an RT004 against the per-call declaration.
  EXPECT_TRUE(report.runtime_findings.empty());
  auto narrow = make_run("mimo", {"Mimo"}, mimo_graph_path(200), true, "cuda");
  EXPECT_EQ(only(reconcile({finding("KV103", 53, "Mimo")}, {narrow}, {})).verdict, Verdict::Confirmed);
}

TEST(Reconcile, KV103ReadsThePoolTheBuildCapturedOnEveryPathThatHoldsIt) {
  // The real MiMo captures its buckets in its constructor: the captured caches are the build's,
  // held (alive) on every path; a path that does not declare them confirms, one that does not.
  std::string built = captured_cache_line("build", 0, 261);
  built.insert(built.size() - 1, R"(,"alive_after_step":true)");
  auto run = make_run(
      "mimo", {"Mimo"},
      {built, declaration_line("graph", 1, "Mimo", "MAX_NUM_SEQS", 1, kMimoRow), done_line("graph", 1)}, true,
      "cuda");
  const auto confirmed = reconcile({finding("KV103", 53, "Mimo")}, {run}, {});
  EXPECT_EQ(only(confirmed).verdict, Verdict::Confirmed);
  EXPECT_NE(only(confirmed).evidence.summary.find("inside captures by the build hold 261 rows"),
            std::string::npos)
      << only(confirmed).evidence.summary;
  auto declared =
      make_run("mimo", {"Mimo"},
               {built, declaration_line("graph", 1, "Mimo", "FIXED", 261, kMimoRow), done_line("graph", 1)},
               true, "cuda");
  EXPECT_EQ(only(reconcile({finding("KV103", 53, "Mimo")}, {declared}, {})).verdict, Verdict::Refuted);
  // A path that did not complete collected no declaration: it shows nothing either way.
  auto failed =
      make_run("mimo", {"Mimo"},
               {built, R"({"event":"path_done","model":"m","path":"graph","concurrency":1,"ok":false})"},
               true, "cuda");
  EXPECT_NE(only(reconcile({finding("KV103", 53, "Mimo")}, {failed}, {})).verdict, Verdict::Confirmed);
}

TEST(Reconcile, KV103RefutedByAPoolDeclarationAndNotExercisedOnTheCpu) {
  auto run = make_run("mimo", {"Mimo"}, mimo_graph_path(261), true, "cuda");
  const auto refuted = reconcile({finding("KV103", 53, "Mimo")}, {run}, {});
  EXPECT_EQ(only(refuted).verdict, Verdict::Refuted);
  EXPECT_NE(only(refuted).evidence.summary.find("hold 261 rows"), std::string::npos);
  auto cpu =
      make_run("mimo", {"Mimo"},
               {cache_line("graph", 1, 37, "Mimo", 1, kMimoRow),
                declaration_line("graph", 1, "Mimo", "MAX_NUM_SEQS", 1, kMimoRow), done_line("graph", 1)});
  const auto on_cpu = reconcile({finding("KV103", 53, "Mimo")}, {cpu}, {});
  EXPECT_EQ(only(on_cpu).verdict, Verdict::NotExercised);
  EXPECT_NE(only(on_cpu).evidence.summary.find("CUDA"), std::string::npos);
}

// The C++ host's event for a class's tensor members (speech_decoder.cpp): K and V grown with
// torch::cat on two lines are one cache at the busiest (K's) line, its chain every allocating line,
// its members both. `members`: JSON array text.
constexpr const char* kCppFile = "/kvlint-test-nonexistent/src/speech_decoder.cpp";
std::string member_cache_line(std::string owner, uint32_t line, std::vector<uint32_t> chain_lines,
                              std::string members, int64_t rows = 3) {
  std::string chain;
  for (auto l : chain_lines)
    chain += fmt::format(R"({}{{"file":"{}","line":{},"owner":"{}"}})", chain.empty() ? "" : ",", kCppFile, l,
                         owner);
  return fmt::format(
      R"({{"event":"cache","model":"m","path":"generate","concurrency":3,"class":"allocation","file":"{}","line":{},"owner":"{}","rows":{},"positions":2,"layers":4,"bytes":{},"bytes_per_row":16384,"objects":2,"chain":[{}],"members":{}}})",
      kCppFile, line, owner, rows, rows * 16384, chain, members);
}

InputFinding member_finding(uint32_t line, std::string owner, std::string member) {
  InputFinding input = finding("KV101", line, std::move(owner), kCppFile);
  input.finding.member = std::move(member);
  return input;
}

constexpr const char* kKvMembers =
    R"([{"owner":"StreamingDecoder","name":"past_keys_"},{"owner":"StreamingDecoder","name":"past_values_"}])";

TEST(Reconcile, CppKV101OnEitherMemberAtConstructionOrGrowthIsConfirmed) {
  // KV101s at the empty first construction (lines 9, 10: freed, never on a chain) and at the
  // growth (17, 18): each matches the one K/V cache by its line or by its member.
  auto run = make_run(
      "speech", {"StreamingDecoder"},
      {member_cache_line("StreamingDecoder", 17, {17, 18, 27}, kKvMembers), done_line("generate", 3)});
  auto report = reconcile({member_finding(9, "StreamingDecoder", "past_keys_"),
                           member_finding(10, "StreamingDecoder", "past_values_"),
                           member_finding(17, "StreamingDecoder", "past_keys_"),
                           member_finding(18, "StreamingDecoder", "past_values_")},
                          {run}, {});
  ASSERT_EQ(report.results.size(), 4u);
  for (const auto& r : report.results) {
    EXPECT_EQ(r.verdict, Verdict::Confirmed) << r.input.finding.loc.line << ": " << r.evidence.summary;
    ASSERT_TRUE(r.evidence.observed);
    EXPECT_EQ(r.evidence.observed->rows, 3);
  }
  EXPECT_NE(
      report.results[1].evidence.summary.find("held in `past_keys_`, `past_values_` of StreamingDecoder"),
      std::string::npos)
      << report.results[1].evidence.summary;
  EXPECT_TRUE(report.runtime_findings.empty()) << report.runtime_findings.front().message;
}

TEST(Reconcile, CppKV101IsNotConfirmedByOtherMembersOrAnotherClassesMemberOfTheSameName) {
  // The K/V is gone; the decoder's last hidden state (a member of its own) and the vocoder's tail
  // are alive. Both classes listed in one entry count as one owner, yet the members tell them apart.
  auto run = make_run("speech", {"StreamingDecoder", "Drafter", "Vocoder"},
                      {member_cache_line("StreamingDecoder", 19, {19, 27},
                                         R"([{"owner":"StreamingDecoder","name":"last_hidden_"}])"),
                       member_cache_line("StreamingDecoder", 17, {17, 18}, kKvMembers),
                       member_cache_line("Vocoder", 34, {34}, R"([{"owner":"Vocoder","name":"overlap_"}])"),
                       done_line("generate", 3)});
  auto report = reconcile({member_finding(29, "Drafter", "past_keys_")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Refuted) << only(report).evidence.summary;
  EXPECT_FALSE(only(report).evidence.observed);
  auto scratch_only = make_run("speech", {"StreamingDecoder"},
                               {member_cache_line("StreamingDecoder", 19, {19},
                                                  R"([{"owner":"StreamingDecoder","name":"last_hidden_"}])"),
                                done_line("generate", 3)});
  auto scratch = reconcile({member_finding(9, "StreamingDecoder", "past_keys_")}, {scratch_only}, {});
  EXPECT_EQ(only(scratch).verdict, Verdict::Refuted) << only(scratch).evidence.summary;
  // A finding without a member (an older kvlint's JSON) still matches by owner.
  auto unnamed = reconcile({finding("KV101", 9, "StreamingDecoder", kCppFile)}, {scratch_only}, {});
  EXPECT_EQ(only(unnamed).verdict, Verdict::Confirmed) << only(unnamed).evidence.summary;
}

TEST(Reconcile, CppKV101OnTheOtherMembersGrowthLineIsNoRT001) {
  // Degraded mode gives KV101s at the first construction only: the cache's busiest line (K's
  // growth) is named by no finding, but its members are, so it is no RT001.
  auto run =
      make_run("speech", {"StreamingDecoder"},
               {member_cache_line("StreamingDecoder", 17, {17, 18}, kKvMembers), done_line("generate", 3)});
  auto report = reconcile(
      {member_finding(9, "Other", "past_keys_"), member_finding(10, "StreamingDecoder", "past_values_")},
      {run}, {});
  EXPECT_TRUE(report.runtime_findings.empty()) << report.runtime_findings.front().message;
  auto unflagged = reconcile({}, {run}, {});
  ASSERT_EQ(unflagged.runtime_findings.size(), 1u);
  EXPECT_EQ(unflagged.runtime_findings.front().code, "RT001");
}

// A state struct per stream in a std::vector: the host names the struct's members and, in held_in,
// the holder's member they were reached through; the C++ front end words the finding on the holder
// (`streams_` of StreamPool, where the structs are kept).
TEST(Reconcile, CppKV101OnTheHoldersContainerMemberMatchesTheStructsKV) {
  constexpr const char* kHeld =
      R"([{"owner":"StreamState","name":"buf_k","held_in":[{"owner":"StreamPool","name":"streams_"}]},)"
      R"({"owner":"StreamState","name":"buf_v","held_in":[{"owner":"StreamPool","name":"streams_"}]}])";
  auto run = make_run("pool", {"StreamPool", "StreamState"},
                      {member_cache_line("StreamState", 21, {21, 23}, kHeld), done_line("generate", 3)});
  auto report = reconcile({member_finding(40, "StreamPool", "streams_")}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
  ASSERT_TRUE(only(report).evidence.observed);
  EXPECT_EQ(only(report).evidence.observed->rows, 3);
  EXPECT_TRUE(report.runtime_findings.empty()) << report.runtime_findings.front().message;
  // Another member of the holder does not hold them.
  auto other = reconcile({member_finding(40, "StreamPool", "drafts_")}, {run}, {});
  EXPECT_EQ(only(other).verdict, Verdict::Refuted) << only(other).evidence.summary;
}

TEST(Reconcile, RT004ForACppMemberCacheWithMoreRowsThanDeclared) {
  auto run = make_run(
      "speech", {"StreamingDecoder"},
      {member_cache_line("StreamingDecoder", 17, {17, 18}, kKvMembers),
       declaration_line("generate", 3, "StreamingDecoder", "FIXED", 1, 16384), done_line("generate", 3)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings.front().code, "RT004") << report.runtime_findings.front().message;
  EXPECT_EQ(report.runtime_findings.front().line, 17u);
}

// The C++ host's caches are one cache by owner and members, not by line: the lines are where the
// plugin binary allocated, which an edit since it was built moves, and which a forward producing K,
// V and the hidden state at one call shares between caches.
std::string at_concurrency(std::string cache_line, int concurrency) {
  const std::string from = R"("concurrency":3)";
  cache_line.replace(cache_line.find(from), from.size(), fmt::format(R"("concurrency":{})", concurrency));
  return cache_line;
}

TEST(Reconcile, CppKV202NamingAMemberMatchesItsCacheWhenItsLineNowHoldsAnotherMember) {
  // The findings come from a revision edited since the plugin was built: line 19, where the KV202
  // on past_values_ now sits, is where the built plugin allocates the last hidden state.
  auto run = make_run(
      "speech", {"StreamingDecoder"},
      {member_cache_line("StreamingDecoder", 19, {19},
                         R"([{"owner":"StreamingDecoder","name":"last_hidden_"}])", 1),
       member_cache_line("StreamingDecoder", 17, {17, 18}, kKvMembers),
       declaration_line("generate", 3, "StreamingDecoder", "FIXED", 1, 16384), done_line("generate", 3)});
  InputFinding kv202 = finding("KV202", 19, "StreamingDecoder", kCppFile);
  kv202.finding.member = "past_values_";
  auto report = reconcile({kv202}, {run}, {});
  EXPECT_EQ(only(report).verdict, Verdict::Confirmed) << only(report).evidence.summary;
  ASSERT_TRUE(only(report).evidence.observed);
  EXPECT_EQ(only(report).evidence.observed->rows, 3);
  EXPECT_EQ(only(report).evidence.observed->line, 17u);
}

TEST(Reconcile, RT004ForACppMemberCacheWhoseRowsStayFixedAcrossConcurrencyAtAnotherBusiestLine) {
  // K and V tie for the busiest line; at concurrency 1 the host named V's, at 3 K's: one cache.
  auto run = make_run(
      "speech", {"StreamingDecoder"},
      {at_concurrency(member_cache_line("StreamingDecoder", 18, {17, 18}, kKvMembers, 1), 1),
       member_cache_line("StreamingDecoder", 17, {17, 18}, kKvMembers, 1),
       at_concurrency(declaration_line("generate", 3, "StreamingDecoder", "MAX_NUM_SEQS", 1, 16384), 1),
       declaration_line("generate", 3, "StreamingDecoder", "MAX_NUM_SEQS", 3, 16384),
       done_line("generate", 1), done_line("generate", 3)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 1u);
  EXPECT_EQ(report.runtime_findings.front().code, "RT004") << report.runtime_findings.front().message;
  EXPECT_EQ(report.runtime_findings.front().evidence.concurrency, 3);
}

TEST(Reconcile, CppCachesOfOtherMembersAtOneLineAreReportedEach) {
  // One forward call allocates K, V and the hidden state the class keeps: two caches at line 21.
  auto run = make_run("speech", {"StreamingDecoder"},
                      {member_cache_line("StreamingDecoder", 21, {21}, kKvMembers),
                       member_cache_line("StreamingDecoder", 21, {21},
                                         R"([{"owner":"StreamingDecoder","name":"last_hidden_"}])"),
                       done_line("generate", 3)});
  auto report = reconcile({}, {run}, {});
  ASSERT_EQ(report.runtime_findings.size(), 2u);
  EXPECT_EQ(report.runtime_findings[0].code, "RT001");
  EXPECT_EQ(report.runtime_findings[1].code, "RT001");
}

}  // namespace
}  // namespace kvlint::confirm
