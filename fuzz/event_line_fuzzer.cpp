// The harness -> host protocol: the child's stdout, one JSON event per line.
// Each line goes through parse_event_line() (which must never throw) and the
// whole stream through ModelRun, as the host reads a child, then finish().
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tools/kvlint/confirm/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view stream(reinterpret_cast<const char*>(data), size);
  kvlint::confirm::ModelRun run;
  run.name = "fuzzed";
  run.paths = {"eager", "graph"};
  run.concurrency = {1, 4};
  run.process.spawned = true;
  run.process.exit_code = 0;
  while (!stream.empty()) {
    const std::size_t newline = stream.find('\n');
    const std::string_view line = stream.substr(0, newline);
    std::string error;
    kvlint::confirm::parse_event_line(line, error);
    run.feed_line(line);
    stream.remove_prefix(newline == std::string_view::npos ? stream.size() : newline + 1);
  }
  run.finish();
  run.path_completed("eager", 1);
  return 0;
}
