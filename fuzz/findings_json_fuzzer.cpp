// `kvlint confirm --findings FILE`: findings JSON (kvlint-findings v1) ->
// InputFinding list. Only InputError (a clear message, exit 2) may escape.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/kvlint/confirm/findings_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kvlint::confirm::parse_findings_json(text, "fuzzed.json");
  } catch (const kvlint::confirm::InputError&) {
  }
  return 0;
}
