#include "tools/kvlint/confirm/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "tools/kvlint/confirm/child_process.hpp"
#include "tools/kvlint/confirm/findings_input.hpp"

extern char** environ;  // NOLINT: POSIX

namespace kvlint::confirm {
namespace fs = std::filesystem;

namespace {

bool holds_runtime(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "kvlint_runtime", ec);
}

// A temporary directory removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "kvlint-confirm-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string top_package(const std::string& reference) {
  std::string module = reference.substr(0, reference.find(':'));
  return module.substr(0, module.find('.'));
}

std::vector<fs::path> python_paths(const RuntimeModel& model, const Config& config) {
  std::vector<fs::path> out;
  for (const auto& p : model.python_path) {
    fs::path path(p);
    if (path.is_relative()) path = config.root / path;
    std::error_code ec;
    fs::path absolute = fs::weakly_canonical(fs::absolute(path, ec), ec);
    out.push_back(ec ? fs::absolute(path) : absolute);
  }
  return out;
}

bool is_under(const fs::path& file, const fs::path& dir) {
  auto f = file.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
    if (d->empty()) continue;  // trailing separator
    if (f == file.end() || *f != *d) return false;
  }
  return true;
}

// The harness that `pip install` put into the kvlint package, seen from the
// executable's directory (the scripts directory of the same prefix: a venv,
// ~/.local, /usr/local). site-packages or Debian's dist-packages, lib or lib64,
// any Python version: the harness is plain Python run by the model's own
// interpreter, so when two Python versions of one prefix hold a copy either
// serves (the last in name order, for a stable choice).
fs::path installed_runtime(const fs::path& bin_dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"}) {
    const fs::path lib_dir = bin_dir / ".." / lib;
    for (fs::directory_iterator it(lib_dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().filename().string().rfind("python3", 0) != 0) continue;
      for (const char* packages : {"site-packages", "dist-packages"}) {
        fs::path candidate = it->path() / packages / "kvlint" / "runtime";
        if (holds_runtime(candidate)) found.push_back(candidate);
      }
    }
  }
  if (found.empty()) return {};
  std::sort(found.begin(), found.end());
  return fs::weakly_canonical(found.back(), ec);
}

fs::path real(const fs::path& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : out;
}

}  // namespace

fs::path locate_runtime_pythonpath() {
  if (const char* env = std::getenv("KVLINT_RUNTIME_PYTHONPATH"); env != nullptr && *env != '\0')
    return fs::path(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& candidate : {exe.parent_path() / ".." / "runtime" / "python",
                                  exe.parent_path() / ".." / ".." / "runtime" / "python"})
      if (holds_runtime(candidate)) return fs::weakly_canonical(candidate, ec);
    if (fs::path installed = installed_runtime(exe.parent_path()); !installed.empty()) return installed;
  }
#ifdef KVLINT_RUNTIME_SOURCE_DIR
  fs::path built_from = fs::path(KVLINT_RUNTIME_SOURCE_DIR) / "runtime" / "python";
#else
  // This file is <repo>/tools/kvlint/confirm/runner.cpp; __FILE__ is absolute in CMake builds.
  fs::path built_from =
      fs::path(__FILE__).parent_path().parent_path().parent_path().parent_path() / "runtime" / "python";
#endif
  if (built_from.is_absolute() && holds_runtime(built_from)) return built_from;
  return {};
}

fs::path locate_model_host() {
  if (const char* env = std::getenv("KVLINT_MODEL_HOST"); env != nullptr && *env != '\0')
    return fs::path(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  // build/kvlint -> build/runtime-host/kvlint-model-host (runtime/build-host), or beside kvlint.
  for (const auto& candidate :
       {exe.parent_path() / "runtime-host" / "kvlint-model-host", exe.parent_path() / "kvlint-model-host"})
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  return {};
}

void validate_entry(const RuntimeModel& model) {
  auto reference_ok = [](const std::string& ref) {
    auto colon = ref.find(':');
    return colon != std::string::npos && colon > 0 && colon + 1 < ref.size();
  };
  if (!model.plugin.empty()) {
    // A C++ model: kvlint-model-host boots the plugin; factory/driver do not apply, and there is
    // no Python package to find its owner classes under.
    if (model.owners.empty())
      throw InputError(fmt::format(
          "runtime model \"{}\": a plugin entry must list its owner classes in owners", model.name));
  } else if (!reference_ok(model.factory))
    throw InputError(fmt::format("runtime model \"{}\": factory must be \"module:callable\", got \"{}\"",
                                 model.name, model.factory));
  if (model.plugin.empty() && !reference_ok(model.driver))
    throw InputError(fmt::format("runtime model \"{}\": driver must be \"module:callable\", got \"{}\"",
                                 model.name, model.driver));
  if (model.timeout_s <= 0)
    throw InputError(fmt::format("runtime model \"{}\": timeout must be positive", model.name));
  if (model.device != "auto" && model.device != "cpu" && model.device != "cuda")
    throw InputError(fmt::format("runtime model \"{}\": device must be auto, cpu or cuda", model.name));
  for (int c : model.concurrency)
    if (c < 1)
      throw InputError(fmt::format("runtime model \"{}\": concurrency values must be >= 1", model.name));
}

std::vector<SelectedEntry> select_entries(const std::vector<InputFinding>& findings, const Config& config,
                                          const std::vector<std::string>& requested, bool all) {
  if (all && !requested.empty()) throw InputError("--all and --model exclude each other");
  for (const auto& name : requested) {
    bool known = std::any_of(config.runtime.models.begin(), config.runtime.models.end(),
                             [&](const RuntimeModel& m) { return m.name == name; });
    if (!known) {
      std::string names;
      for (const auto& m : config.runtime.models) names += (names.empty() ? "" : ", ") + m.name;
      throw InputError(fmt::format("no runtime model named \"{}\" in the configuration (known: {})", name,
                                   names.empty() ? "none" : names));
    }
  }
  std::vector<SelectedEntry> out;
  for (const auto& model : config.runtime.models) {
    SelectedEntry entry{&model, model.owners};
    if (model.owners.empty()) {
      // No owners listed: the entry boots every flagged class defined under its package.
      std::vector<fs::path> roots;
      const std::string package = top_package(model.factory);
      for (const auto& p : python_paths(model, config)) roots.push_back(p / package);
      if (roots.empty()) roots.push_back(real(config.root) / package);
      for (const auto& input : findings) {
        const auto& owner = input.finding.owner_class;
        if (owner.empty() || std::find(entry.owners.begin(), entry.owners.end(), owner) != entry.owners.end())
          continue;
        fs::path file = real(input.finding.loc.file.str());
        if (std::any_of(roots.begin(), roots.end(), [&](const fs::path& r) { return is_under(file, r); }))
          entry.owners.push_back(owner);
      }
    }
    bool wanted;
    if (all) {
      wanted = true;
    } else if (!requested.empty()) {
      wanted = std::find(requested.begin(), requested.end(), model.name) != requested.end();
    } else {
      wanted = std::any_of(findings.begin(), findings.end(), [&](const InputFinding& input) {
        return std::find(entry.owners.begin(), entry.owners.end(), input.finding.owner_class) !=
               entry.owners.end();
      });
    }
    if (wanted) out.push_back(std::move(entry));
  }
  return out;
}

std::string resolve_interpreter(const RuntimeModel& model, const Config& config) {
  std::string interpreter = !model.interpreter.empty() ? model.interpreter : config.runtime.interpreter;
  if (interpreter.empty()) return "python3";
  if (interpreter.rfind("~/", 0) == 0) {
    if (const char* home = std::getenv("HOME")) interpreter = std::string(home) + interpreter.substr(1);
  }
  if (interpreter.find('/') != std::string::npos && fs::path(interpreter).is_relative())
    interpreter = (config.root / interpreter).lexically_normal().string();
  return interpreter;
}

nlohmann::json entry_json(const RuntimeModel& model, const Config& config, const RunSettings& settings) {
  std::vector<std::string> paths;
  for (const auto& p : python_paths(model, config)) paths.push_back(p.string());
  return {{"name", model.name},
          {"factory", model.factory},
          {"driver", model.driver},
          {"paths", model.paths},
          {"device", settings.device_override.empty() ? model.device : settings.device_override},
          {"concurrency", model.concurrency},
          {"steps", model.steps},
          {"collector", config.runtime.collector},
          {"owners", model.owners},  // names the owner of `declared: false` events
          {"python_path", paths}};
}

std::vector<std::string> child_environment(const RuntimeModel& model, const Config& config,
                                           const RunSettings& settings) {
  std::map<std::string, std::string> env;
  for (char** item = environ; item != nullptr && *item != nullptr; ++item) {
    std::string_view text(*item);
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    env[std::string(text.substr(0, eq))] = std::string(text.substr(eq + 1));
  }
  std::string pythonpath = settings.runtime_pythonpath.string();
  for (const auto& p : python_paths(model, config)) pythonpath += ":" + p.string();
  env["PYTHONPATH"] = pythonpath;
  for (const auto& [key, value] : model.env) env[key] = value;
  env["HF_HUB_OFFLINE"] = "1";
  env["PYTHONUNBUFFERED"] = "1";
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

std::vector<std::string> model_host_argv(const RuntimeModel& model, const std::vector<std::string>& owners,
                                         const Config& config, const RunSettings& settings) {
  const fs::path host = settings.model_host.empty() ? locate_model_host() : settings.model_host;
  if (host.empty()) return {};
  fs::path plugin(model.plugin);
  if (plugin.is_relative()) plugin = (config.root / plugin).lexically_normal();
  std::vector<std::string> argv{host.string(),
                                "--name",
                                model.name,
                                "--plugin",
                                plugin.string(),
                                "--device",
                                settings.device_override.empty() ? model.device : settings.device_override,
                                "--steps",
                                std::to_string(model.steps)};
  for (const auto& path : model.paths) argv.insert(argv.end(), {"--path", path});
  for (int c : model.concurrency) argv.insert(argv.end(), {"--concurrency", std::to_string(c)});
  for (const auto& owner : owners) argv.insert(argv.end(), {"--owner", owner});
  for (const auto& [key, value] : model.plugin_config)
    argv.insert(argv.end(), {"--config", key + "=" + value});
  return argv;
}

ModelRun run_model(const SelectedEntry& entry, const Config& config, const RunSettings& settings) {
  const RuntimeModel& model = *entry.model;
  ModelRun run;
  run.name = model.name;
  run.owners = entry.owners;
  run.paths = model.paths;
  run.enforce_eager_paths = model.enforce_eager_paths;
  run.concurrency = model.concurrency;
  run.process.timeout_s = model.timeout_s;

  TempDir dir;
  const fs::path entry_file = dir.path() / "ENTRY.json";
  {
    std::ofstream out(entry_file);
    out << entry_json(model, config, settings).dump(2) << "\n";
    if (!out) {
      run.process.spawn_error = "cannot write " + entry_file.string();
      run.finish();
      return run;
    }
  }

  ChildSpec spec;
  if (!model.plugin.empty()) {
    spec.argv = model_host_argv(model, entry.owners, config, settings);
    if (spec.argv.empty()) {
      run.process.spawn_error =
          "the C++ model host is not built: run runtime/build-host, or set KVLINT_MODEL_HOST";
      run.finish();
      return run;
    }
  } else {
    spec.argv = {
        resolve_interpreter(model, config), "-m", "kvlint_runtime", "run", "--entry", entry_file.string()};
  }
  spec.env = child_environment(model, config, settings);
  spec.timeout = std::chrono::milliseconds(static_cast<long long>(model.timeout_s * 1000.0));
  spec.kill_grace = settings.kill_grace;
  spec.interrupt_fd = settings.interrupt_fd;

  PeakTracker peak;
  ChildCallbacks callbacks;
  callbacks.on_line = [&run](std::string_view line, bool complete) {
    // A last line cut short by the child's death is not garbage: the crash is the reason.
    if (!complete) return;
    run.feed_line(line);
  };
  if (settings.nvml != nullptr && settings.nvml->available())
    callbacks.on_tick = [&peak, &settings](pid_t pid) { peak.add(settings.nvml->sample(pid, pid)); };

  ChildExit exit = run_child(spec, callbacks);
  run.process.spawned = exit.spawned;
  run.process.spawn_error = exit.spawn_error;
  run.process.timed_out = exit.timed_out;
  run.process.exit_code = exit.exit_code;
  run.process.signal = exit.signal;
  run.process.stderr_tail = exit.stderr_tail;
  if (auto p = peak.peak()) run.gpu_peak_bytes = static_cast<int64_t>(*p);
  run.finish();
  return run;
}

}  // namespace kvlint::confirm
