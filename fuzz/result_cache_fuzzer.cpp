// The per-file facts cache (.kvlint_cache/facts-cache.cbor), through its
// narrowest public entry: ResultCache reads the file in its constructor, then
// lookup() decodes an entry's facts. A corrupt or foreign file must be ignored
// with a note, a bad entry re-analysed: never a crash.
//
// The constructor keeps its entries private, so to reach lookup() with keys the
// file really holds this target decodes the same bytes once more itself. That
// second decode comes after the constructor's, so a crash in the decoder is
// always reported inside ResultCache first. When the engine gains a pure,
// bounded decode function (branch cache-output), this target should call it
// directly instead.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz/scratch_dir.hpp"
#include "tools/kvlint/engine/result_cache.hpp"

namespace {
// Seeds (scripts/fuzz-seeds) write the same version, so inputs get past the version check.
constexpr const char* kToolVersion = "fuzz";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const kvlint::fuzz::ScratchDir scratch;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  scratch.write("facts-cache.cbor", bytes);
  kvlint::ResultCache cache(scratch.path(), kToolVersion);
  if (!cache.note().empty()) return 0;  // rejected as a whole, as it should be when corrupt

  const nlohmann::json doc = nlohmann::json::from_cbor(bytes, /*strict=*/true, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return 0;
  const auto entries = doc.find("entries");
  if (entries == doc.end() || !entries->is_object()) return 0;
  for (const auto& [key, value] : entries->items()) {
    cache.lookup(key);
    cache.lookup(key);  // a bad entry was dropped by the first lookup
  }
  return 0;
}
