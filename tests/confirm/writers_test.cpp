#include "tools/kvlint/confirm/writers.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tools/kvlint/confirm/nvml.hpp"

namespace kvlint::confirm {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::ScratchDir;
using testing::write_file;

ConfirmReport sample_report() {
  ModelRun run;
  run.name = "codec";
  run.owners = {"Dec"};
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(
      R"({"event":"start","model":"codec","pid":7,"python":"3.11.7","torch":"2.4","transformers":"4.44","device":"cpu"})");
  run.feed_line(
      R"({"event":"cache","model":"codec","path":"streaming","concurrency":4,"class":"DynamicCache","file":"/x/model.py","line":18,"owner":"Dec","rows":4,"bytes":18620416,"bytes_per_row":4655104})");
  run.feed_line(
      R"({"event":"declaration","model":"codec","path":"streaming","concurrency":4,"owner":"Dec","name":"kv","bytes_per_row":4655104,"rows_driver":"FIXED","rows_fixed":1,"rows":1})");
  run.feed_line(
      R"({"event":"cache","model":"codec","path":"streaming","concurrency":4,"class":"StaticCache","file":"/x/other model.py","line":5,"owner":"Hidden","rows":1,"bytes":720896,"bytes_per_row":720896})");
  run.feed_line(R"({"event":"path_done","model":"codec","path":"streaming","concurrency":4,"ok":true})");
  run.feed_line(R"({"event":"end","model":"codec"})");
  run.finish();

  InputFinding kv202;
  kv202.name = "unsupported-fixed-row-claim";
  kv202.finding.code = "KV202";
  kv202.finding.loc = {"/x/model.py", 30, 5, 30, 20};
  kv202.finding.owner_class = "Dec";
  kv202.finding.message = "FIXED rows on a per-request cache";
  RelatedLocation
      kept_here;  // built by members: GCC 12 sees the braced temporary's shared path as uninitialized
  kept_here.loc = {"/x/model.py", 18, 9, 0, 0};
  kept_here.message = "kept per request id here";
  kv202.finding.related.push_back(std::move(kept_here));
  kv202.finding.fingerprint = "abc123";
  InputFinding kv403;  // a static-only rule
  kv403.name = "hand-written-geometry";
  kv403.finding.code = "KV403";
  kv403.finding.severity = Severity::Info;
  kv403.finding.loc = {"models/x.py", 3, 1, 3, 9};
  kv403.finding.owner_class = "Dec";
  kv403.finding.message = "geometry as literals";
  return reconcile({kv202, kv403}, {run}, {});
}

TEST(Writers, TextShowsVerdictLinesPerModel) {
  std::string text = render_text(sample_report());
  EXPECT_NE(text.find("model codec: complete"), std::string::npos) << text;
  EXPECT_NE(text.find("  CONFIRMED KV202 /x/model.py:30 Dec: declared FIXED rows_fixed=1, observed rows=4 at "
                      "concurrency 4 "
                      "(4.44 MiB/row)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NOT-CHECKED KV403 models/x.py:3 Dec"), std::string::npos) << text;
  EXPECT_NE(text.find("RT001 warning unflagged-cache /x/other model.py:5 Hidden"), std::string::npos) << text;
}

TEST(Writers, TextNamesTheFactoryExceptionOnTheModelLine) {
  ModelRun run;
  run.name = "talker";
  run.owners = {"Talker"};
  run.paths = {"generate"};
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(
      R"({"event":"start","model":"talker","pid":7,"python":"3.11.7","torch":"2.9.1","transformers":"4.57.6","device":"cpu"})");
  run.feed_line(
      R"({"event":"error","model":"talker","path":"build","concurrency":0,"kind":"exception","message":"KeyError: 'max_cache_len'"})");
  run.feed_line(R"({"event":"end","model":"talker"})");
  run.finish();
  InputFinding kv101;
  kv101.finding.code = "KV101";
  kv101.finding.loc = {"/x/talker.py", 12, 1, 12, 9};
  kv101.finding.owner_class = "Talker";
  std::string text = render_text(reconcile({kv101}, {run}, {}));
  EXPECT_NE(
      text.find("model talker: inconclusive: the factory raised KeyError: 'max_cache_len' (python 3.11.7"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  INCONCLUSIVE KV101 /x/talker.py:12 Talker: the factory raised KeyError"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("complete"), std::string::npos) << text;
}

TEST(Writers, JsonDocumentCarriesVerdictsEvidenceAndModels) {
  auto document = nlohmann::json::parse(render_json(sample_report(), "0.1.0"));
  EXPECT_EQ(document["schema"], "kvlint-confirm");
  EXPECT_EQ(document["version"], 1);
  ASSERT_EQ(document["models"].size(), 1u);
  EXPECT_EQ(document["models"][0]["status"], "complete");
  EXPECT_EQ(document["models"][0]["observed"]["caches"].size(), 2u);
  ASSERT_EQ(document["results"].size(), 2u);
  const auto& kv202 = document["results"][0];
  EXPECT_EQ(kv202["code"], "KV202");
  EXPECT_EQ(kv202["name"], "unsupported-fixed-row-claim");
  EXPECT_EQ(kv202["verdict"], "confirmed");
  EXPECT_EQ(kv202["evidence"]["observed"]["rows"], 4);
  EXPECT_EQ(kv202["evidence"]["observed"]["bytes_per_row_human"], "4.44 MiB");
  EXPECT_EQ(kv202["evidence"]["declared"]["rows_fixed"], 1);
  EXPECT_EQ(kv202["evidence"]["concurrency"], 4);
  EXPECT_EQ(document["results"][1]["verdict"], "not-checked");
  ASSERT_EQ(document["runtime_findings"].size(), 1u);
  EXPECT_EQ(document["runtime_findings"][0]["code"], "RT001");
  EXPECT_EQ(document["summary"]["exit_code"], 1);
}

TEST(Writers, JsonMemoryRowsSumEachOwnerPerPathAndConcurrency) {
  const json document = to_json(sample_report(), "0.1.0");
  const json& memory = document["models"][0]["memory"];
  ASSERT_EQ(memory.size(), 2u) << memory.dump(2);
  const json& dec = memory[0];
  EXPECT_EQ(dec["owner"], "Dec");
  EXPECT_EQ(dec["path"], "streaming");
  EXPECT_EQ(dec["concurrency"], 4);
  EXPECT_EQ(dec["observed_bytes"], 18620416);
  EXPECT_EQ(dec["observed_bytes_per_row"], 4655104);
  EXPECT_EQ(dec["observed_rows"], 4);
  EXPECT_EQ(dec["declared_bytes_per_row"], 4655104);
  EXPECT_EQ(dec["declared_fixed_bytes"], dec["declared_bytes"])
      << "a FIXED spec costs the same at any setting";
  EXPECT_EQ(dec["declared_per_sequence_bytes"], 0);
  EXPECT_EQ(memory[1]["owner"], "Hidden");
  EXPECT_EQ(memory[1]["declared_bytes"], 0);
  EXPECT_EQ(memory[1]["observed_bytes"], 720896);
}

TEST(Writers, ReviewerFormatsShowVerdictsAndTheProjection) {
  std::string page, markdown;
  ASSERT_TRUE(render(sample_report(), "html", "0.1.0", page, 256));
  EXPECT_NE(page.find("<span class=\"badge verdict v-confirmed\">confirmed</span>"), std::string::npos);
  EXPECT_NE(page.find("at max_num_seqs=256"), std::string::npos);
  EXPECT_NE(page.find("id=\"chart-totals\""), std::string::npos);
  ASSERT_TRUE(render(sample_report(), "markdown", "0.1.0", markdown));
  EXPECT_NE(markdown.find("| `codec` | `streaming` | 4 | `Dec` |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| confirmed |"), std::string::npos) << markdown;
}

TEST(Writers, SarifValidatesAgainstTheSchema) {
  const std::string schema = KVLINT_SARIF_SCHEMA;
  if (schema.empty()) GTEST_SKIP() << "KVLINT_SARIF_SCHEMA not configured";
  ScratchDir dir;
  const auto file = dir.path() / "confirm.sarif";
  std::string sarif = render_sarif(sample_report(), "0.1.0");
  write_file(file, sarif);
  auto document = nlohmann::json::parse(sarif);
  const auto& results = document["runs"][0]["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["properties"]["verdict"], "confirmed");
  EXPECT_EQ(results[0]["properties"]["evidence"]["observed"]["rows"], 4);
  EXPECT_EQ(results[2]["ruleId"], "RT001");
  EXPECT_EQ(results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "file:///x/other%20model.py");
  std::string command =
      testing::python() +
      " -c \"import json, sys, jsonschema; "
      "jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))\" '" +
      file.string() + "' '" + schema + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << sarif;
}

// A file name that is not UTF-8 (Latin-1 "café.py") must not cost the report:
// JSON shows it with U+FFFD and keeps its bytes percent-encoded beside it.
TEST(Writers, NonUtf8PathsKeepTheirBytesAndTheDocumentStaysValid) {
  const std::string latin1 = "/x/caf\xe9.py";
  ModelRun run;
  run.name = "codec";
  run.owners = {"Dec"};
  run.process.spawned = true;
  run.process.exit_code = 1;
  run.process.stderr_tail = "bad \xff byte";
  run.feed_line(R"({"event":"start","model":"codec","pid":7})");
  run.finish();
  InputFinding kv101;
  kv101.finding.code = "KV101";
  kv101.finding.loc = {latin1, 8, 9, 8, 30};
  kv101.finding.owner_class = "Dec";
  kv101.finding.message = "undeclared cache in caf\xe9.py";
  RelatedLocation class_here;  // built by members, as kept_here above
  class_here.loc = {latin1, 5, 1, 0, 0};
  class_here.message = "class here";
  kv101.finding.related.push_back(std::move(class_here));
  ConfirmReport report = reconcile({kv101}, {run}, {});
  report.runtime_findings.push_back(
      {"RT001", "unflagged-cache", Severity::Warning, latin1, 8, "Dec", "m", {}});

  json document = json::parse(render_json(report, "0.1.0"));  // throws on invalid UTF-8
  const auto& result = document["results"][0];
  EXPECT_EQ(result["path"], "/x/caf\xef\xbf\xbd.py");
  EXPECT_EQ(result["path_bytes"], "/x/caf%E9.py");
  EXPECT_EQ(result["related"][0]["path_bytes"], "/x/caf%E9.py");
  EXPECT_EQ(result["message"], "undeclared cache in caf\xef\xbf\xbd.py");
  EXPECT_EQ(document["runtime_findings"][0]["path_bytes"], "/x/caf%E9.py");
  EXPECT_EQ(document["models"][0]["process"]["stderr_tail"], "bad \xef\xbf\xbd byte");

  json sarif = json::parse(render_sarif(report, "0.1.0"));
  EXPECT_EQ(sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "file:///x/caf%E9.py");
  EXPECT_NE(render_text(report).find("caf\xe9.py"), std::string::npos);  // text prints bytes as they are

  // Valid paths get no "_bytes" twin.
  json plain = json::parse(render_json(sample_report(), "0.1.0"));
  EXPECT_FALSE(plain["results"][0].contains("path_bytes"));
}

TEST(Writers, AtomicWriteReplacesTheWholeFileAndLeavesNoTemporaries) {
  ScratchDir dir;
  const auto target = dir.path() / "report.json";
  write_file(target, "old content that is longer than the new one");
  write_report_file(target, "new");
  EXPECT_EQ(read_file(target), "new");
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(Writers, AtomicWriteIntoAMissingDirectoryThrowsAndCreatesNothing) {
  ScratchDir dir;
  EXPECT_THROW(write_report_file(dir.path() / "missing" / "report.json", "x"), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing"));
}

TEST(Nvml, AbsentLibraryIsNotAnError) {
  NvmlSampler sampler("libkvlint-test-no-such-nvml.so.1");
  EXPECT_FALSE(sampler.available());
  EXPECT_FALSE(sampler.unavailable_reason().empty());
  EXPECT_FALSE(sampler.sample(::getpid(), ::getpgrp()).has_value());
}

TEST(Nvml, DefaultLibraryLoadsOrDeclinesQuietly) {
  NvmlSampler sampler;  // on a machine without a GPU this must simply be unavailable
  if (!sampler.available()) {
    EXPECT_FALSE(sampler.sample(::getpid(), ::getpgrp()).has_value());
    return;
  }
  // With a GPU, a process that holds no GPU memory is not reported.
  EXPECT_FALSE(sampler.sample(::getpid(), ::getpgrp()).has_value());
}

TEST(Nvml, PeakTrackerKeepsTheMaximum) {
  PeakTracker peak;
  peak.add(std::nullopt);
  EXPECT_FALSE(peak.peak());
  peak.add(10);
  peak.add(30);
  peak.add(20);
  EXPECT_EQ(peak.peak(), 30u);
}

}  // namespace
}  // namespace kvlint::confirm
