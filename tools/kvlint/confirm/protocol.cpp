#include "tools/kvlint/confirm/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "tools/kvlint/engine/bounded_json.hpp"

namespace kvlint::confirm {
namespace {

using nlohmann::json;

// Thrown inside the parser for a field that is missing or of the wrong type.
struct FieldError {
  std::string message;
};

std::string get_string(const json& object, const char* key, bool required = false) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) throw FieldError{fmt::format("missing \"{}\"", key)};
    return {};
  }
  if (!it->is_string()) throw FieldError{fmt::format("\"{}\" is not a string", key)};
  return it->get<std::string>();
}

// Counts and byte sizes above 2^53 (8 PiB) are not measurements but garbage, and
// keeping every number within it leaves headroom for the sums and differences
// the reconciler forms. It is also where doubles stop holding integers exactly.
constexpr int64_t kMaxMagnitude = int64_t{1} << 53;

enum class Sign { NonNegative, Any };

// An integer within [-kMaxMagnitude, kMaxMagnitude] (or [0, ...]); Python may
// write 4.0 for an int, so integral floats are accepted. Never converts an
// out-of-range double (undefined behaviour): it is checked first.
int64_t integer_value(const json& value, std::string_view key, Sign sign) {
  const int64_t low = sign == Sign::NonNegative ? 0 : -kMaxMagnitude;
  auto out_of_range = [&] {
    return FieldError{fmt::format("\"{}\" out of range ({} to {})", key, low, kMaxMagnitude)};
  };
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(kMaxMagnitude)) throw out_of_range();
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < low || v > kMaxMagnitude) throw out_of_range();
    return v;
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (!std::isfinite(v) || std::trunc(v) != v)
      throw FieldError{fmt::format("\"{}\" is not an integer", key)};
    if (v < static_cast<double>(low) || v > static_cast<double>(kMaxMagnitude)) throw out_of_range();
    return static_cast<int64_t>(v);
  }
  throw FieldError{fmt::format("\"{}\" is not an integer", key)};
}

int64_t get_int(const json& object, const char* key, bool required = false, int64_t fallback = 0,
                Sign sign = Sign::Any) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) throw FieldError{fmt::format("missing \"{}\"", key)};
    return fallback;
  }
  return integer_value(*it, key, sign);
}

// A measured count or byte size: never negative.
int64_t get_count(const json& object, const char* key, bool required = false, int64_t fallback = 0) {
  return get_int(object, key, required, fallback, Sign::NonNegative);
}

std::optional<int64_t> get_optional_int(const json& object, const char* key, Sign sign = Sign::Any) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return integer_value(*it, key, sign);
}

bool get_bool(const json& object, const char* key, bool fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw FieldError{fmt::format("\"{}\" is not a boolean", key)};
  return it->get<bool>();
}

uint32_t get_line(const json& object) {
  int64_t line = get_count(object, "line", true);
  if (line < 0 || line > std::numeric_limits<uint32_t>::max()) throw FieldError{"\"line\" out of range"};
  return static_cast<uint32_t>(line);
}

int get_concurrency(const json& object, bool required) {
  int64_t value = get_count(object, "concurrency", required);
  if (value < 0 || value > std::numeric_limits<int>::max()) throw FieldError{"\"concurrency\" out of range"};
  return static_cast<int>(value);
}

HarnessEvent parse_object(const json& object) {
  const std::string event = get_string(object, "event", true);
  const std::string model = get_string(object, "model");
  if (event == "start") {
    StartEvent e{model,
                 get_count(object, "pid"),
                 get_string(object, "python"),
                 get_string(object, "torch"),
                 get_string(object, "transformers"),
                 get_string(object, "device")};
    return e;
  }
  if (event == "cache") {
    CacheEvent e;
    e.model = model;
    e.path = get_string(object, "path", true);
    e.concurrency = get_concurrency(object, true);
    e.cache_class = get_string(object, "class");
    e.file = get_string(object, "file", true);
    e.line = get_line(object);
    e.owner = get_string(object, "owner");
    e.rows = get_count(object, "rows", true);
    e.positions = get_count(object, "positions");
    e.layers = get_count(object, "layers");
    e.bytes = get_count(object, "bytes");
    e.bytes_per_row = get_count(object, "bytes_per_row", false, e.rows > 0 ? e.bytes / e.rows : 0);
    e.objects = get_count(object, "objects");
    e.alive_after_step = get_bool(object, "alive_after_step", false);
    e.in_capture = get_bool(object, "in_capture", false);
    if (auto it = object.find("growth"); it != object.end() && !it->is_null()) {
      if (!it->is_array()) throw FieldError{"\"growth\" is not an array"};
      for (const auto& step : *it) {
        if (!step.is_number()) throw FieldError{"\"growth\" holds a non-number"};
        e.growth.push_back(integer_value(step, "growth", Sign::NonNegative));
      }
    }
    if (auto it = object.find("chain"); it != object.end() && !it->is_null()) {
      if (!it->is_array()) throw FieldError{"\"chain\" is not an array"};
      for (const auto& frame : *it) {
        if (!frame.is_object()) throw FieldError{"\"chain\" holds a non-object"};
        e.chain.push_back({get_string(frame, "file", true), get_line(frame), get_string(frame, "owner")});
      }
    }
    if (auto it = object.find("members"); it != object.end() && !it->is_null()) {
      if (!it->is_array()) throw FieldError{"\"members\" is not an array"};
      for (const auto& member : *it) {
        if (!member.is_object()) throw FieldError{"\"members\" holds a non-object"};
        CacheMember m{get_string(member, "owner"), get_string(member, "name", true), {}};
        if (auto held = member.find("held_in"); held != member.end() && !held->is_null()) {
          if (!held->is_array()) throw FieldError{"\"held_in\" is not an array"};
          for (const auto& holder : *held) {
            if (!holder.is_object()) throw FieldError{"\"held_in\" holds a non-object"};
            m.held_in.emplace_back(get_string(holder, "owner"), get_string(holder, "name", true));
          }
        }
        e.members.push_back(std::move(m));
      }
    }
    e.holder = get_string(object, "holder");
    if (auto it = object.find("kept_by"); it != object.end() && !it->is_null()) {
      if (!it->is_array()) throw FieldError{"\"kept_by\" is not an array"};
      for (const auto& path : *it) {
        if (!path.is_string()) throw FieldError{"\"kept_by\" holds a non-string"};
        e.kept_by.push_back(path.get<std::string>());
      }
    }
    return e;
  }
  if (event == "capture") {
    CaptureEvent e;
    e.model = model;
    e.path = get_string(object, "path", true);
    e.concurrency = get_concurrency(object, true);
    e.kind = get_string(object, "kind");
    e.file = get_string(object, "file", true);
    e.line = get_line(object);
    e.owner = get_string(object, "owner");
    e.count = get_count(object, "count", false, 1);
    e.resident_bytes = get_optional_int(object, "resident_bytes", Sign::NonNegative);
    e.allocated_bytes = get_optional_int(object, "allocated_bytes", Sign::Any);
    e.retained = get_bool(object, "retained", false);
    return e;
  }
  if (event == "declaration") {
    DeclarationEvent e;
    e.model = model;
    e.path = get_string(object, "path", true);
    e.concurrency = get_concurrency(object, true);
    e.owner = get_string(object, "owner", true);
    e.name = get_string(object, "name");
    e.bytes_per_row = get_int(object, "bytes_per_row", true);
    e.rows_driver = get_string(object, "rows_driver");
    e.rows_fixed = get_optional_int(object, "rows_fixed");
    e.rows = get_int(object, "rows");
    if (auto it = object.find("total_bytes"); it != object.end() && !it->is_null()) {
      e.total_bytes = integer_value(*it, "total_bytes", Sign::Any);
    } else if (__builtin_mul_overflow(e.bytes_per_row, e.rows, &e.total_bytes) ||
               std::llabs(e.total_bytes) > kMaxMagnitude) {
      throw FieldError{"\"bytes_per_row\" * \"rows\" out of range"};
    }
    e.capacity = get_int(object, "capacity");
    e.scope = get_string(object, "scope");
    e.capacity_source = get_string(object, "capacity_source");
    e.declared = get_bool(object, "declared", true);
    e.file = get_string(object, "file");
    if (!e.file.empty()) e.line = get_line(object);
    return e;
  }
  if (event == "path_done") {
    PathDoneEvent e{model, get_string(object, "path", true), get_concurrency(object, true),
                    get_bool(object, "ok", false)};
    return e;
  }
  if (event == "error") {
    ErrorEvent e;
    e.model = model;
    e.path = get_string(object, "path");
    if (object.contains("concurrency") && !object["concurrency"].is_null())
      e.concurrency = get_concurrency(object, false);
    e.kind = get_string(object, "kind", true);
    e.message = get_string(object, "message");
    return e;
  }
  if (event == "end") return EndEvent{model};
  throw FieldError{fmt::format("unknown event \"{}\"", event)};
}

// Keeps quoted stdout short in reasons.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 80;
  if (text.size() <= kMax) return std::string(text);
  // Cut before a UTF-8 character, not through one: back off while the next byte continues one.
  std::size_t cut = kMax;
  while (cut > kMax - 3 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

// A harness message (a Python exception, possibly multi-line) for a one-line reason.
std::string one_line(std::string_view text) {
  std::string out;
  bool space = false;
  for (char ch : text) {
    if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
  }
  return out;
}

}  // namespace

std::optional<HarnessEvent> parse_event_line(std::string_view line, std::string& error) {
  std::string why;  // a harness line is short and flat: anything else is garbage alike
  std::optional<json> parsed = parse_json_bounded(line, why);
  if (!parsed) {
    error = "not JSON";
    return std::nullopt;
  }
  const json& object = *parsed;
  if (!object.is_object()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  try {
    return parse_object(object);
  } catch (const FieldError& e) {
    error = e.message;
  } catch (const json::exception& e) {
    error = e.what();
  }
  return std::nullopt;
}

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::NotRun:
      return "not-run";
    case RunStatus::Complete:
      return "complete";
    case RunStatus::Inconclusive:
      return "inconclusive";
  }
  return "not-run";
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return fmt::format("signal {}", signal);
  }
}

void ModelRun::feed_line(std::string_view line) {
  if (!garbage.empty()) return;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // blank lines carry nothing
  std::string error;
  auto event = parse_event_line(line, error);
  if (!event) {
    garbage = fmt::format("{} ({})", excerpt(line), error);
    return;
  }
  // Each byte count is bounded by the parser; bounding their sum over the run
  // keeps every total the reconciler forms from a subset of them within int64.
  int64_t bytes = 0;
  if (const auto* cache = std::get_if<CacheEvent>(&*event)) bytes = cache->bytes;
  if (const auto* capture = std::get_if<CaptureEvent>(&*event)) bytes = capture->resident_bytes.value_or(0);
  if (const auto* declaration = std::get_if<DeclarationEvent>(&*event))
    bytes = std::llabs(declaration->total_bytes);
  if (__builtin_add_overflow(byte_sum_, bytes, &byte_sum_)) {
    garbage = fmt::format("{} (the run's byte counts add up beyond 2^63)", excerpt(line));
    return;
  }
  apply(*event);
}

void ModelRun::apply(const HarnessEvent& event) {
  std::visit(
      [this](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, StartEvent>)
          start = e;
        else if constexpr (std::is_same_v<T, CacheEvent>)
          caches.push_back(e);
        else if constexpr (std::is_same_v<T, CaptureEvent>)
          captures.push_back(e);
        else if constexpr (std::is_same_v<T, DeclarationEvent>)
          declarations.push_back(e);
        else if constexpr (std::is_same_v<T, PathDoneEvent>)
          paths_done.push_back(e);
        else if constexpr (std::is_same_v<T, ErrorEvent>)
          errors.push_back(e);
        else if constexpr (std::is_same_v<T, EndEvent>)
          ended = true;
      },
      event);
}

void ModelRun::finish() {
  auto error_of_kind = [this](std::string_view kind) -> const ErrorEvent* {
    for (const auto& e : errors)
      if (e.kind == kind) return &e;
    return nullptr;
  };
  reason.clear();
  if (!process.spawned) {
    reason = fmt::format("could not start the harness: {}", process.spawn_error);
  } else if (process.timed_out) {
    reason = fmt::format("timed out after {:g} s", process.timeout_s);
  } else if (process.signal != 0) {
    reason = fmt::format("crashed ({})", signal_name(process.signal));
  } else if (error_of_kind("memory") != nullptr) {
    reason = "out of memory";
    if (const auto* e = error_of_kind("memory"); !e->path.empty())
      reason += fmt::format(" (path {}, concurrency {})", e->path, e->concurrency.value_or(0));
  } else if (!garbage.empty()) {
    reason = fmt::format("garbage on stdout: {}", garbage);
  } else if (const auto* e = error_of_kind("import"); e != nullptr) {
    reason = fmt::format("import error: {}", e->message);
  } else if (process.exit_code != 0 && !ended) {
    reason = fmt::format("harness exited with status {} before \"end\"", process.exit_code);
  } else if (!ended) {
    reason = "harness exited without \"end\"";
  } else {
    reason = no_completed_path_reason();
  }
  status = reason.empty() ? RunStatus::Complete : RunStatus::Inconclusive;
}

std::string ModelRun::no_completed_path_reason() const {
  if (std::any_of(paths_done.begin(), paths_done.end(), [](const PathDoneEvent& p) { return p.ok; }))
    return {};
  // A run asked to drive nothing that also reported no error has nothing to be inconclusive about.
  if (paths.empty() && errors.empty()) return {};
  // The factory (path "build") or the harness before any path (no path) failed: no path could run.
  for (const auto& e : errors)
    if (e.path.empty() || e.path == "build")
      return e.path.empty() ? fmt::format("failed before any path: {}", one_line(e.message))
                            : fmt::format("the factory raised {}", one_line(e.message));
  if (!errors.empty()) {
    const auto& e = errors.front();
    return fmt::format("no path completed (path {}, concurrency {}: {})", e.path, e.concurrency.value_or(0),
                       one_line(e.message));
  }
  return "no path completed";
}

bool ModelRun::path_completed(std::string_view path, int concurrency_level) const {
  for (const auto& done : paths_done)
    if (done.ok && done.path == path && done.concurrency == concurrency_level) return true;
  return false;
}

bool ModelRun::enforce_eager(std::string_view path) const {
  return std::find(enforce_eager_paths.begin(), enforce_eager_paths.end(), path) != enforce_eager_paths.end();
}

}  // namespace kvlint::confirm
