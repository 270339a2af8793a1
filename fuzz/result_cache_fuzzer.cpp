// The per-file facts cache (.kvlint_cache/facts-cache.cbor): decode_result_cache
// must be safe on any bytes. A corrupt or foreign file decodes to nothing; an
// intact one must survive ResultCache's lookups (each entry's facts converted).
//
// Random bytes almost never carry a valid checksum, so each input is decoded
// twice: as the whole file, and sealed (a correct header and checksum put in
// front), which lets the fuzzer reach the bounded CBOR decoder and the facts
// conversion behind it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/scratch_dir.hpp"
#include "tools/kvlint/engine/result_cache.hpp"

namespace {
void exercise(std::string_view file_bytes) {
  const auto contents = kvlint::decode_result_cache(file_bytes);
  if (!contents) return;
  // An intact file: load it the way check does and convert every entry.
  static const kvlint::fuzz::ScratchDir scratch;
  scratch.write("facts-cache.cbor", file_bytes);
  kvlint::ResultCache cache(scratch.path(), contents->tool_version);
  for (const auto& [key, entry] : contents->entries) {
    cache.lookup(key);
    cache.lookup(key);  // a bad entry was dropped by the first lookup
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  exercise(bytes);
  exercise(kvlint::seal_cache_payload(bytes));
  return 0;
}
