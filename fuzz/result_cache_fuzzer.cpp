// The per-file facts cache (.kvlint_cache/facts-cache.cbor): decode_result_cache
// must be safe on any bytes. A corrupt or foreign file decodes to nothing; an
// intact one must survive ResultCache's lookups (each entry's facts converted).
// The same bytes are also read as the file index (.kvlint_cache/file-index.bin,
// file_index.hpp), which shares the seal: decode_file_index and FileIndex's loading.
//
// Random bytes almost never carry a valid checksum, so each input is decoded
// twice: as the whole file, and sealed (a correct header and checksum put in
// front), which lets the fuzzer reach the bounded CBOR decoder and the facts
// conversion behind it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/scratch_dir.hpp"
#include "tools/kvlint/engine/file_index.hpp"
#include "tools/kvlint/engine/result_cache.hpp"

namespace {
void exercise_index(std::string_view file_bytes) {
  const auto contents = kvlint::decode_file_index(file_bytes);
  if (!contents) return;
  // An intact index: load it the way check does and look each entry up by its own stamp.
  static const kvlint::fuzz::ScratchDir scratch;
  scratch.write("file-index.bin", file_bytes);
  const kvlint::FileIndex index(scratch.path(), contents->tool_version);
  for (const auto& [path, entry] : contents->entries)
    if (!index.unchanged(path, entry.stamp)) std::abort();  // decoded, so it must be found
}

void exercise(std::string_view file_bytes) {
  exercise_index(file_bytes);
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
