// TODO(cli): placeholder; TOML loading, validation and matching land with the CLI work.
#include "tools/kvlint/config/config.hpp"

namespace kvlint {

bool Config::is_selected(std::string_view code) const {
  for (const auto& s : select)
    if (code.starts_with(s)) return true;
  return false;
}
bool Config::is_ignored_for(std::string_view, const std::filesystem::path&) const { return false; }
std::string Config::fingerprint() const { return "0"; }
Config discover_config(const std::filesystem::path&) {
  Config c;
  c.root = std::filesystem::current_path();
  return c;
}
Config load_config_file(const std::filesystem::path& file) { return discover_config(file); }

}  // namespace kvlint
