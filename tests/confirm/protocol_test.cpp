#include "tools/kvlint/confirm/protocol.hpp"

#include <gtest/gtest.h>

namespace kvlint::confirm {
namespace {

TEST(Protocol, ParsesEveryEventKind) {
  std::string error;
  auto start = parse_event_line(
      R"({"event":"start","model":"codec","pid":123,"python":"3.11.7","torch":"2.4","transformers":"4.44","device":"cpu"})",
      error);
  ASSERT_TRUE(start) << error;
  EXPECT_EQ(std::get<StartEvent>(*start).pid, 123);

  auto cache = parse_event_line(
      R"({"event":"cache","model":"codec","path":"streaming","concurrency":4,"class":"DynamicCache","file":"/abs/model.py","line":18,"owner":"Dec","rows":4,"positions":71,"layers":8,"bytes":18620416,"bytes_per_row":4655104,"objects":4,"alive_after_step":true,"in_capture":false,"growth":[1,2,3]})",
      error);
  ASSERT_TRUE(cache) << error;
  const auto& c = std::get<CacheEvent>(*cache);
  EXPECT_EQ(c.line, 18u);
  EXPECT_EQ(c.rows, 4);
  EXPECT_EQ(c.bytes_per_row, 4655104);
  EXPECT_EQ(c.cache_class, "DynamicCache");
  EXPECT_EQ(c.growth.size(), 3u);
  EXPECT_TRUE(c.alive_after_step);

  // Raw tensor K/V: the holder class and the attribute paths keeping it.
  auto raw = parse_event_line(
      R"({"event":"cache","model":"m","path":"serve","concurrency":2,"class":"raw-tensor","file":"/abs/ring.py","line":28,"owner":"Talker","rows":2,"bytes":4096,"bytes_per_row":2048,"holder":"_Session","kept_by":["_sessions[a].k","_sessions[b].k"]})",
      error);
  ASSERT_TRUE(raw) << error;
  EXPECT_EQ(std::get<CacheEvent>(*raw).holder, "_Session");
  EXPECT_EQ(std::get<CacheEvent>(*raw).kept_by,
            (std::vector<std::string>{"_sessions[a].k", "_sessions[b].k"}));
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"serve","concurrency":2,"file":"/a.py","line":1,"rows":1,"kept_by":[3]})",
      error));

  auto capture = parse_event_line(
      R"({"event":"capture","model":"m","path":"graph","concurrency":1,"kind":"graph_context","file":"/a.py","line":40,"owner":"W","count":3,"resident_bytes":null})",
      error);
  ASSERT_TRUE(capture) << error;
  EXPECT_FALSE(std::get<CaptureEvent>(*capture).resident_bytes.has_value());
  EXPECT_FALSE(std::get<CaptureEvent>(*capture).allocated_bytes.has_value());
  EXPECT_FALSE(std::get<CaptureEvent>(*capture).retained);
  EXPECT_EQ(std::get<CaptureEvent>(*capture).count, 3);
  // Eight captures a later path holds: resident_bytes as the H200 reserved for the MiMo fixture's
  // buckets; allocated_bytes (a delta, which may be negative) carried as given.
  auto held = parse_event_line(
      R"({"event":"capture","model":"m","path":"graph","concurrency":4,"kind":"graph_context","file":"/a.py","line":53,"owner":"W","count":8,"resident_bytes":352321536,"allocated_bytes":-4096,"retained":true})",
      error);
  ASSERT_TRUE(held) << error;
  EXPECT_EQ(std::get<CaptureEvent>(*held).resident_bytes, 352321536);
  EXPECT_EQ(std::get<CaptureEvent>(*held).allocated_bytes, -4096);
  EXPECT_TRUE(std::get<CaptureEvent>(*held).retained);

  auto declaration = parse_event_line(
      R"({"event":"declaration","model":"m","path":"streaming","concurrency":4,"owner":"Dec","name":"codec","bytes_per_row":4655104,"rows_driver":"FIXED","rows_fixed":1,"rows":1,"total_bytes":4655104,"capacity":71,"scope":"REQUEST","capacity_source":"x","declared":true})",
      error);
  ASSERT_TRUE(declaration) << error;
  EXPECT_EQ(std::get<DeclarationEvent>(*declaration).rows_fixed, 1);

  auto done = parse_event_line(
      R"({"event":"path_done","model":"m","path":"streaming","concurrency":4,"ok":true})", error);
  ASSERT_TRUE(done) << error;
  EXPECT_TRUE(std::get<PathDoneEvent>(*done).ok);

  auto failure = parse_event_line(
      R"({"event":"error","model":"m","path":"streaming","concurrency":4,"kind":"memory","message":"OOM"})",
      error);
  ASSERT_TRUE(failure) << error;
  EXPECT_EQ(std::get<ErrorEvent>(*failure).kind, "memory");

  auto end = parse_event_line(R"({"event":"end","model":"m"})", error);
  ASSERT_TRUE(end) << error;
  EXPECT_TRUE(std::holds_alternative<EndEvent>(*end));
}

TEST(Protocol, RejectsWhatIsNotAKnownEvent) {
  std::string error;
  EXPECT_FALSE(parse_event_line("Loading checkpoint shards: 100%", error));
  EXPECT_EQ(error, "not JSON");
  EXPECT_FALSE(parse_event_line("[1, 2]", error));
  EXPECT_FALSE(parse_event_line(R"({"event":"party","model":"m"})", error));
  EXPECT_NE(error.find("unknown event"), std::string::npos);
  EXPECT_FALSE(parse_event_line(R"({"model":"m"})", error));
  EXPECT_FALSE(
      parse_event_line(R"({"event":"cache","model":"m","path":"p","concurrency":1,"rows":1})", error));
  EXPECT_NE(error.find("file"), std::string::npos);
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":"4","file":"/a","line":1,"rows":1})", error));
}

// Numbers from the harness are checked before any arithmetic: out of range is a
// protocol error (the run becomes inconclusive), never a wrapped or undefined value.
TEST(Protocol, NumbersOutOfRangeAreRejectedNotWrapped) {
  std::string error;
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":8,"growth":[1e300]})",
      error));
  EXPECT_EQ(error, "\"growth\" out of range (0 to 9007199254740992)");
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":8,"growth":[-5]})",
      error));
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":1e300})",
      error));
  EXPECT_NE(error.find("\"bytes\" out of range"), std::string::npos) << error;
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":NaN})",
      error));
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":-1,"bytes":8})",
      error));
  EXPECT_NE(error.find("\"rows\" out of range"), std::string::npos) << error;
  EXPECT_FALSE(parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":18446744073709551615})",
      error));
  EXPECT_FALSE(parse_event_line(
      R"({"event":"capture","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"count":1,"resident_bytes":-1})",
      error));

  // bytes_per_row * rows used to wrap to total_bytes -2.
  EXPECT_FALSE(parse_event_line(
      R"({"event":"declaration","model":"m","path":"p","concurrency":1,"owner":"O","bytes_per_row":9223372036854775807,"rows":2})",
      error));
  EXPECT_NE(error.find("\"bytes_per_row\" out of range"), std::string::npos) << error;
  // Each factor in range, the product not.
  EXPECT_FALSE(parse_event_line(
      R"({"event":"declaration","model":"m","path":"p","concurrency":1,"owner":"O","bytes_per_row":9007199254740992,"rows":9007199254740992})",
      error));
  EXPECT_EQ(error, "\"bytes_per_row\" * \"rows\" out of range");

  // The largest values in range, and integral floats, still parse.
  auto declaration = parse_event_line(
      R"({"event":"declaration","model":"m","path":"p","concurrency":1,"owner":"O","bytes_per_row":4096.0,"rows":-2})",
      error);
  ASSERT_TRUE(declaration) << error;
  EXPECT_EQ(std::get<DeclarationEvent>(*declaration).total_bytes, -8192);
  auto cache = parse_event_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":9007199254740992,"growth":[9007199254740992]})",
      error);
  ASSERT_TRUE(cache) << error;
  EXPECT_EQ(std::get<CacheEvent>(*cache).growth.at(0), int64_t{1} << 53);
}

TEST(Protocol, AnOutOfRangeNumberMakesTheRunInconclusive) {
  ModelRun run;
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":8,"growth":[1e300]})");
  run.feed_line(R"({"event":"end","model":"m"})");
  run.finish();
  EXPECT_TRUE(run.caches.empty());
  EXPECT_EQ(run.status, RunStatus::Inconclusive);
  EXPECT_NE(run.reason.find("\"growth\" out of range"), std::string::npos) << run.reason;
}

TEST(Protocol, ByteCountsWhoseSumOverflowsMakeTheRunInconclusive) {
  ModelRun run;
  run.process.spawned = true;
  run.process.exit_code = 0;
  const std::string cache =
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":9007199254740992})";
  for (int i = 0; i < 1024; ++i) run.feed_line(cache);  // 2^63 in all: one past INT64_MAX
  run.feed_line(R"({"event":"end","model":"m"})");
  run.finish();
  EXPECT_EQ(run.caches.size(), 1023u);
  EXPECT_EQ(run.status, RunStatus::Inconclusive);
  EXPECT_NE(run.reason.find("byte counts add up beyond"), std::string::npos) << run.reason;
}

TEST(Protocol, GarbageKeepsEarlierEventsAndIgnoresLaterOnes) {
  ModelRun run;
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(R"({"event":"start","model":"m","pid":1})");
  run.feed_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":3,"rows":1,"bytes":8})");
  run.feed_line("");  // blank lines are not garbage
  run.feed_line("warning: something printed to stdout");
  run.feed_line(
      R"({"event":"cache","model":"m","path":"p","concurrency":1,"file":"/a.py","line":4,"rows":1,"bytes":8})");
  run.feed_line(R"({"event":"end","model":"m"})");
  run.finish();
  EXPECT_EQ(run.caches.size(), 1u);
  EXPECT_EQ(run.status, RunStatus::Inconclusive);
  EXPECT_EQ(run.reason.rfind("garbage on stdout: warning: something printed", 0), 0u) << run.reason;
}

TEST(Protocol, ReasonsFollowTheProcessEnd) {
  ModelRun crashed;
  crashed.process.spawned = true;
  crashed.process.signal = 11;
  crashed.finish();
  EXPECT_EQ(crashed.reason, "crashed (SIGSEGV)");

  ModelRun hung;
  hung.process.spawned = true;
  hung.process.timed_out = true;
  hung.process.signal = 15;
  hung.process.timeout_s = 2;
  hung.finish();
  EXPECT_EQ(hung.reason, "timed out after 2 s");

  ModelRun oom;
  oom.process.spawned = true;
  oom.process.exit_code = 0;
  oom.feed_line(R"({"event":"error","model":"m","kind":"memory","message":"CUDA out of memory"})");
  oom.feed_line(R"({"event":"end","model":"m"})");
  oom.finish();
  EXPECT_EQ(oom.reason, "out of memory");

  ModelRun complete;
  complete.process.spawned = true;
  complete.process.exit_code = 0;
  complete.feed_line(R"({"event":"end","model":"m"})");
  complete.finish();
  EXPECT_EQ(complete.status, RunStatus::Complete);
  EXPECT_TRUE(complete.reason.empty());

  ModelRun silent;
  silent.process.spawned = true;
  silent.process.exit_code = 1;
  silent.finish();
  EXPECT_EQ(silent.reason, "harness exited with status 1 before \"end\"");

  ModelRun missing;
  missing.process.spawn_error = "python9: No such file or directory";
  missing.finish();
  EXPECT_EQ(missing.status, RunStatus::Inconclusive);
  EXPECT_NE(missing.reason.find("could not start"), std::string::npos);
}

TEST(Protocol, FactoryThatRaisesLeavesTheRunInconclusiveNamingTheException) {
  ModelRun run;
  run.paths = {"generate"};
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(R"({"event":"start","model":"m","pid":1,"python":"3.11","device":"cpu"})");
  run.feed_line(
      R"({"event":"error","model":"m","path":"build","concurrency":0,"kind":"exception","message":"AttributeError: 'Qwen2Config' object\nhas no attribute 'talker_max_cache_len'"})");
  run.feed_line(R"({"event":"end","model":"m"})");
  run.finish();
  EXPECT_EQ(run.status, RunStatus::Inconclusive);
  EXPECT_EQ(
      run.reason,
      "the factory raised AttributeError: 'Qwen2Config' object has no attribute 'talker_max_cache_len'");
}

TEST(Protocol, EveryPathFailingLeavesTheRunInconclusive) {
  ModelRun run;
  run.paths = {"eager"};
  run.process.spawned = true;
  run.process.exit_code = 0;
  run.feed_line(
      R"({"event":"error","model":"m","path":"eager","concurrency":4,"kind":"exception","message":"RuntimeError: shape mismatch"})");
  run.feed_line(R"({"event":"path_done","model":"m","path":"eager","concurrency":4,"ok":false})");
  run.feed_line(R"({"event":"end","model":"m"})");
  run.finish();
  EXPECT_EQ(run.status, RunStatus::Inconclusive);
  EXPECT_EQ(run.reason, "no path completed (path eager, concurrency 4: RuntimeError: shape mismatch)");
  // One completed path is enough for a complete run; the failed one stays an error event.
  run.feed_line(R"({"event":"path_done","model":"m","path":"eager","concurrency":1,"ok":true})");
  run.ended = true;
  run.finish();
  EXPECT_EQ(run.status, RunStatus::Complete);
}

}  // namespace
}  // namespace kvlint::confirm
