// TOML text -> Config, through load_config_file (the loader's narrowest public
// entry reads a file). The first byte picks the file name: odd is
// pyproject.toml ([tool.kvlint] table), even is kvlint.toml (top level). Only
// ConfigError may escape the loader; a loaded Config must then answer
// selection, per-file-ignores (glob matching) and fingerprint queries.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/scratch_dir.hpp"
#include "tools/kvlint/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const kvlint::fuzz::ScratchDir scratch;
  if (size == 0) return -1;  // no file-name selector: not a useful input
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto file = scratch.write((data[0] & 1) ? "pyproject.toml" : "kvlint.toml", text);
  try {
    const kvlint::Config config = kvlint::load_config_file(file);
    for (std::string_view code : {"KV101", "KV202", "KV901", "KV9", "X"}) {
      config.is_selected(code);
      config.is_ignored_for(code, "tests/models/deep/file.py");
      config.is_ignored_for(code, config.root / "pkg" / "legacy_x.py");
    }
    config.fingerprint();
  } catch (const kvlint::ConfigError&) {
    // A clear error for bad input is the contract.
  }
  return 0;
}
