// The harness -> host protocol (runtime-protocol.md): one JSON object per line
// on the child's stdout. parse_event_line() turns a line into a typed event;
// ModelRun accumulates one child's events plus how the child ended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kvlint::confirm {

struct StartEvent {
  std::string model;
  int64_t pid = 0;
  std::string python, torch, transformers, device;
};

// One frame of the call chain that created a cache (outside torch/transformers), innermost first.
struct CacheFrame {
  std::string file;
  uint32_t line = 0;
  std::string owner;
};

// A data member a cache's memory is stored in (the C++ host reads it from the plugin's debug
// information): `past_values_` of `StreamingDecoder`.
struct CacheMember {
  std::string owner;  // the class declaring the member
  std::string name;
  // The members of other classes its object was reached through (StreamPool's `streams_` for the
  // `buf_k` of each StreamState in it), as a static finding on the holder names the K/V.
  std::vector<std::pair<std::string, std::string>> held_in;  // class, member
};

// One distinct creation site per path per concurrency, aggregated at peak.
struct CacheEvent {
  std::string model, path;
  int concurrency = 0;
  std::string cache_class;  // "DynamicCache"
  std::string file;         // absolute, as the harness saw it
  uint32_t line = 0;
  std::string owner;
  int64_t rows = 0, positions = 0, layers = 0, bytes = 0, bytes_per_row = 0, objects = 0;
  bool alive_after_step = false, in_capture = false;
  std::vector<int64_t> growth;
  // The creating call chain (optional; empty from older harnesses): a finding at
  // any of its lines, or naming any of its owners, is this cache's.
  std::vector<CacheFrame> chain;
  // The members holding its memory (optional; the C++ host's, when it knows them): a finding
  // naming a member is this cache's when the member and its class are among these, and is not
  // when the cache names other members only.
  std::vector<CacheMember> members;
  // Raw tensor K/V (class "raw-tensor", optional): the class of the object keeping the tensors and
  // the attribute paths from the booted model that keep them (`layers.0.attn.k_pool`).
  std::string holder;
  std::vector<std::string> kept_by;
};

struct CaptureEvent {
  std::string model, path;
  int concurrency = 0;
  std::string kind, file;
  uint32_t line = 0;
  std::string owner;
  int64_t count = 0;
  std::optional<int64_t> resident_bytes;   // memory_reserved delta over the capture(s)
  std::optional<int64_t> allocated_bytes;  // memory_allocated delta: what the pools still hold live
  // Captured on an earlier path (or the build) and still alive: the path holds the pool, it did not
  // capture (so it is no evidence of capturing on that path).
  bool retained = false;
};

struct DeclarationEvent {
  std::string model, path;
  int concurrency = 0;
  std::string owner, name;
  int64_t bytes_per_row = 0;
  std::string rows_driver;  // "FIXED" | "MAX_NUM_SEQS"
  std::optional<int64_t> rows_fixed;
  int64_t rows = 0, total_bytes = 0, capacity = 0;
  std::string scope, capacity_source;
  bool declared = true;
  // Where the declaring class's model_local_kv_specs() is defined (optional; "" / 0 unknown).
  std::string file;
  uint32_t line = 0;
};

struct PathDoneEvent {
  std::string model, path;
  int concurrency = 0;
  bool ok = false;
};

struct ErrorEvent {
  std::string model, path;  // path empty: model-wide (import, build)
  std::optional<int> concurrency;
  std::string kind;  // "exception" | "memory" | "import"
  std::string message;
};

struct EndEvent {
  std::string model;
};

using HarnessEvent =
    std::variant<StartEvent, CacheEvent, CaptureEvent, DeclarationEvent, PathDoneEvent, ErrorEvent, EndEvent>;

// Parses one stdout line. Returns nullopt and sets `error` when the line is not
// a JSON object, names no known event, or lacks a field the event needs.
std::optional<HarnessEvent> parse_event_line(std::string_view line, std::string& error);

enum class RunStatus { NotRun, Complete, Inconclusive };
std::string_view to_string(RunStatus status);

// How the child process ended (filled by the host from ChildExit).
struct ProcessEnd {
  bool spawned = false;
  std::string spawn_error;
  bool timed_out = false;
  double timeout_s = 0;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string stderr_tail;
};

// Everything one boot entry's child reported, kept even when it died midway.
struct ModelRun {
  std::string name;
  std::vector<std::string> owners;  // owner classes the entry boots (config)
  std::vector<std::string> paths;   // paths the entry was asked to drive
  // The entry's `enforce-eager` paths: driven as a deployment with enforce_eager set (config).
  std::vector<std::string> enforce_eager_paths;
  std::vector<int> concurrency;
  std::optional<StartEvent> start;
  std::vector<CacheEvent> caches;
  std::vector<CaptureEvent> captures;
  std::vector<DeclarationEvent> declarations;
  std::vector<PathDoneEvent> paths_done;
  std::vector<ErrorEvent> errors;
  bool ended = false;   // an "end" event arrived
  std::string garbage;  // first line that broke the protocol (empty: none)
  ProcessEnd process;
  std::optional<int64_t> gpu_peak_bytes;  // NVML, sampled from outside; nullopt: not sampled

  RunStatus status = RunStatus::NotRun;
  std::string reason;  // why inconclusive

  // Feeds one stdout line. After the first garbage line later lines are ignored
  // (the stream can no longer be trusted), but what came before is kept.
  void feed_line(std::string_view line);
  void apply(const HarnessEvent& event);
  // Sets status and reason from the events and the process end. Priority of
  // reasons: timeout, signal, out of memory, garbage, import error, exit status,
  // missing "end", then no completed path (the factory raised, or every path failed).
  void finish();
  // Why no path ran to completion (naming the exception the harness sent); empty when one did,
  // or when the run was asked to drive no path and reported no error.
  std::string no_completed_path_reason() const;

  bool path_completed(std::string_view path, int concurrency) const;
  // Whether the entry configures `path` as run under enforce_eager.
  bool enforce_eager(std::string_view path) const;

 private:
  int64_t byte_sum_ = 0;  // cache bytes and |declared total_bytes| fed so far (feed_line)
};

// "SIGSEGV" for 11; "signal N" when unnamed.
std::string signal_name(int signal);

}  // namespace kvlint::confirm
