// The check pipeline: discover, read, prefilter, analyse in parallel (with the
// per-file result cache), widen the vocabulary to a fixpoint, resolve the
// project, run the selected rules, apply suppressions, fingerprint, sort.
// Knows nothing about individual rules.
#include "tools/kvlint/engine/engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "analyzers/facts/compact.hpp"
#include "analyzers/facts/line_ends.hpp"
#include "analyzers/facts/project.hpp"
#include "analyzers/python/python_frontend.hpp"
#include "analyzers/python/text_scan.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/engine/cpp_module.hpp"
#include "tools/kvlint/engine/discovery.hpp"
#include "tools/kvlint/engine/file_index.hpp"
#include "tools/kvlint/engine/needle_search.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/engine/suppressions.hpp"
#include "tools/kvlint/engine/workers.hpp"

namespace kvlint {
namespace fs = std::filesystem;

namespace {

// Extra rounds after the first pass: subclass discovery and base-class lookups.
constexpr int kMaxWideningRounds = 8;
// Files that build a capturing class, the files that build those, and one level more: where
// enforce_eager gates are found. KV303 follows a capture's gates two levels up from the
// capturing class; KV302 follows a wrapper's two levels up from the class that attaches it
// (the wrapper's builder), which is one level further.
constexpr int kCaptureHolderLevels = 3;
constexpr int kMaxBaseRounds = 2;
// Rounds of the rules asking for deferred files (run_rules); the last analyses every one left.
constexpr int kMaxDemandRounds = 8;

// What the run keeps of one file between phases.
struct FileState {
  DiscoveredFile file;
  std::uint64_t content_hash = 0;   // XXH3-64 of the bytes first read; a re-read must match it
  std::optional<std::string> kept;  // those bytes, while the run's kKeptBytesBudget allows
  bool readable = false;
  bool changed = false;  // a re-read found other bytes (or none): the file changed during the run
  std::string module_name;
  std::optional<facts::FileFacts> facts;  // set once analysed
  std::vector<Diagnostic> analysis_diagnostics;
  bool parsed = false;           // went through the front end at least once this run
  unsigned parses = 0;           // times it went through the front end this run
  std::size_t parsed_bytes = 0;  // the bytes it was parsed from
  bool anchor_hit = false;       // the prefilter: contains a vocabulary anchor
  // Python: the anchors include none that can give a seed fact (python/text_scan.hpp); the file is
  // analysed only when a rule's question needs it.
  bool deferred = false;
  bool is_cpp = false;                       // analysed by the C++ front end
  bool analysis_failed = false;              // the C++ front end could not analyse it at all
  std::vector<FileDependency> dependencies;  // the headers its C++ result depends on
  std::vector<std::string> dropped_options;  // C++: compile options left out (not how the file is read)
  std::optional<std::vector<std::string>> defined_classes;  // names after `class `, scanned on demand
  // Analysed by the base-class search (analyse_bases) this many levels from a file analysed for
  // what it holds; its own bases are searched for below kMaxBaseRounds.
  int base_level = 0;
  // The file index (file_index.hpp): whether the hash and scans came from the index instead of
  // a read (the stamp is file.stamp), the text scans' results as the index recorded them, and
  // those this run used.
  bool from_index = false;
  const std::vector<ScanRecord>* indexed_scans = nullptr;  // the index's, which outlives the run
  std::vector<ScanRecord> scans;
  bool read_once = false;  // from the index, and read by some phase since
};

// A file's bytes for one phase: the run's kept copy, or those read again; empty (false) when
// the file changed since it was first read or cannot be read any more.
class FileBytes {
 public:
  FileBytes() = default;
  static FileBytes kept(const std::string& bytes) {
    FileBytes out;
    out.kept_ = &bytes;
    return out;
  }
  static FileBytes read(std::string bytes) {
    FileBytes out;
    out.read_ = std::move(bytes);
    return out;
  }
  explicit operator bool() const { return kept_ || read_; }
  const std::string& operator*() const { return kept_ ? *kept_ : *read_; }
  const std::string* operator->() const { return &**this; }

 private:
  const std::string* kept_ = nullptr;
  std::optional<std::string> read_;
};

// Where the configuration lives, for cache keys: equal settings in two
// directories resolve paths (and per-file ignores) against different roots.
std::string config_location(const Config& config) {
  std::error_code ec;
  return fs::absolute(config.source ? *config.source : config.root, ec).lexically_normal().string();
}

// -j N, capped at the cores this process may use: more workers than that cannot run at once.
unsigned worker_count(unsigned jobs) {
  const unsigned cores = available_cores();
  return jobs == 0 ? cores : std::min(jobs, cores);
}

// Version plus the identity of this binary, so a rebuilt front end never reuses stale facts.
std::string build_identity() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return std::string(kKvlintVersion);
  return fmt::format("{}+{}.{}.{}", kKvlintVersion, static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec), static_cast<long long>(st.st_mtim.tv_nsec));
}

// Text that a file must contain to possibly produce facts a rule reads.
std::vector<std::string> prefilter_anchors(const facts::Vocabulary& v) {
  std::vector<std::string> anchors = v.cache_classes;
  for (const char* fixed : {"use_cache", "cuda.graph", "capture_begin", "make_graphed_callables",
                            "BeginCapture", "capacity_source", "named_modules", "kvlint:", "cache_utils"})
    anchors.emplace_back(fixed);
  anchors.push_back(v.declaration_method);
  anchors.push_back(v.collector);
  for (const auto& c : v.spec_constructors) anchors.push_back(c);
  // Fewer anchors mean fewer passes over the bytes: one that contains another is
  // implied by it. (A bare "Cache" would be one pass, but lets a quarter more files
  // through to the parser on the transformers tree, which costs more than it saves.)
  std::sort(anchors.begin(), anchors.end(), [](const std::string& a, const std::string& b) {
    return a.size() < b.size() || (a.size() == b.size() && a < b);
  });
  anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
  std::vector<std::string> minimal;
  for (const auto& a : anchors)
    if (!a.empty() && std::none_of(minimal.begin(), minimal.end(), [&](const std::string& shorter) {
          return a.find(shorter) != std::string::npos;
        }))
      minimal.push_back(a);
  return minimal;
}

// The anchors that mark a Python file that may hold a seed fact by themselves: all but the cache
// classes and `use_cache`, which only do so where built or set to True (python/text_scan.hpp),
// the `cache_utils` module, which names them, and `named_modules`, which makes a collector only
// in a function that names the declaration method, the collector or a spec constructor
// (analyzers/python/declarations.cpp, finish_collector), each an anchor here.
std::vector<std::string> seed_anchors(const facts::Vocabulary& v) {
  std::vector<std::string> anchors;
  for (const char* fixed : {"cuda.graph", "capture_begin", "make_graphed_callables", "BeginCapture",
                            "capacity_source", "kvlint:"})
    anchors.emplace_back(fixed);
  anchors.push_back(v.declaration_method);
  anchors.push_back(v.collector);
  for (const auto& c : v.spec_constructors) anchors.push_back(c);
  return anchors;
}

// C++ files also hold K/V as named tensors, written in place at a position or grown by
// concatenation whatever their names (analyzers/cpp/kv_members.cpp), and capture through
// CUDA's stream API.
std::vector<std::string> cpp_prefilter_anchors(const facts::Vocabulary& v) {
  std::vector<std::string> anchors = prefilter_anchors(v);
  for (const auto& name : v.cpp.kv_tensor_names) anchors.push_back(name);
  for (const char* fixed :
       {"cudaGraphInstantiate", "CUDAGraph", "copy_(", "index_put_(", "index_add_(", "::cat("})
    anchors.emplace_back(fixed);
  // A K/V store class named like no cache (`struct LayerKV { torch::Tensor keys, values; }`)
  // allocates its tensors.
  for (const auto& allocator : v.cpp.tensor_allocators)
    for (const char* ns : {"torch::", "at::"}) anchors.push_back(ns + allocator + "(");
  return anchors;
}

// Plain code that sizes rows from a lifetime (KV204) names no protocol anchor: a function
// over whatever the models report, with its own enum. Such a file reads a scope and the
// engine's per-sequence multiplicity (`max_num_seqs`) together.
bool reads_scope_and_multiplicity(std::string_view content) {
  auto has = [&](std::string_view needle) {
    return ::memmem(content.data(), content.size(), needle.data(), needle.size()) != nullptr;
  };
  return has("num_seqs") && (has("scope") || has("Scope"));  // the rare one first: one pass for most files
}

// Names one text scan for the file index: its kind, whether needles count only at a word
// start, and the needles in any order. A scan's result is a function of the bytes and this.
std::uint64_t scan_id(std::string_view kind, bool word_start, const std::vector<std::string>& needles) {
  std::vector<std::string_view> sorted(needles.begin(), needles.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  XXH3_state_t* state = XXH3_createState();
  if (!state) throw std::bad_alloc();
  XXH3_64bits_reset(state);
  auto add = [&](std::string_view text) {
    const std::uint64_t size = text.size();
    XXH3_64bits_update(state, &size, sizeof size);
    XXH3_64bits_update(state, text.data(), text.size());
  };
  add(kind);
  add(word_start ? "word-start" : "anywhere");
  for (std::string_view needle : sorted) add(needle);
  const std::uint64_t id = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return id;
}

// The prefilter's text scan under one vocabulary: whether a file holds an anchor of its
// language (or, Python, reads a scope and the multiplicity together), one scan id per language.
class PrefilterScan {
 public:
  explicit PrefilterScan(const facts::Vocabulary& v)
      : PrefilterScan(prefilter_anchors(v), cpp_prefilter_anchors(v), seed_anchors(v), v.cache_classes) {}
  std::uint64_t id(bool is_cpp) const { return is_cpp ? cpp_id_ : python_id_; }
  bool found_in(bool is_cpp, std::string_view content) const {
    return is_cpp ? cpp_search_.found_in(content)
                  : python_search_.found_in(content) || reads_scope_and_multiplicity(content) ||
                        python::may_hold_raw_kv(content);
  }
  // Of the Python files it passes: whether one may hold a seed fact (python/text_scan.hpp),
  // else it can only give context and is deferred (CheckOptions::defer_context).
  std::uint64_t seed_id() const { return seed_id_; }
  bool may_hold_seed(std::string_view content) const {
    return seed_search_.found_in(content) || reads_scope_and_multiplicity(content) ||
           python::may_build_cache(content, cache_classes_) || python::passes_use_cache_true(content) ||
           python::may_hold_raw_kv(content);
  }

 private:
  PrefilterScan(const std::vector<std::string>& python, const std::vector<std::string>& cpp,
                const std::vector<std::string>& seeds, const std::vector<std::string>& cache_classes)
      : python_search_(python),
        cpp_search_(cpp),
        seed_search_(seeds),
        cache_classes_(cache_classes),
        // "+raw-kv": the Python scans also pass python::may_hold_raw_kv's files.
        python_id_(scan_id("prefilter+raw-kv", false, python)),
        cpp_id_(scan_id("prefilter-cpp", false, cpp)),
        seed_id_(scan_id("seed+raw-kv", false, seeds) ^ scan_id("seed-cache-classes", false, cache_classes)) {
  }
  NeedleSearch python_search_;
  NeedleSearch cpp_search_;
  NeedleSearch seed_search_;
  std::vector<std::string> cache_classes_;
  std::uint64_t python_id_;
  std::uint64_t cpp_id_;
  std::uint64_t seed_id_;
};

// Appends the names written after the word `keyword` and a space or tab in the bytes; with
// `line_start`, only where the keyword is the first word of its line (after spaces, tabs or
// form feeds).
void scan_names_after(std::string_view content, std::string_view keyword, bool line_start,
                      std::vector<std::string>& names) {
  // memmem, not string_view::find: find scans for 'c' and compares at each, slow on source text.
  auto next = [&](std::size_t from) -> std::size_t {
    if (from >= content.size()) return std::string_view::npos;
    const void* hit = ::memmem(content.data() + from, content.size() - from, keyword.data(), keyword.size());
    return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - content.data())
               : std::string_view::npos;
  };
  auto starts_line = [&](std::size_t at) {
    while (at > 0 && (content[at - 1] == ' ' || content[at - 1] == '\t' || content[at - 1] == '\f')) --at;
    return at == 0 || content[at - 1] == '\n' || content[at - 1] == '\r' ||
           (at == 3 && content.substr(0, 3) == "\xEF\xBB\xBF");  // after a UTF-8 byte order mark
  };
  for (std::size_t at = next(0); at != std::string_view::npos; at = next(at + 1)) {
    if (line_start ? !starts_line(at) : at > 0 && is_identifier_byte(content[at - 1])) continue;
    std::size_t begin = at + keyword.size();
    if (begin >= content.size() || (content[begin] != ' ' && content[begin] != '\t')) continue;
    while (begin < content.size() && (content[begin] == ' ' || content[begin] == '\t')) ++begin;
    std::size_t end = begin;
    while (end < content.size() && is_identifier_byte(content[end])) ++end;
    if (end > begin) names.emplace_back(content.substr(begin, end - begin));
  }
}

// Names a file may define as classes: a superset, which only costs a parse. C++: the names
// after `class` or `struct` anywhere (`template <class T>`, elaborated types). Python: after
// `class` where it begins a line, as every class statement does (a compound statement follows
// no `;` or `:` on its line); prose in docstrings and comments ("the class object", "a struct
// module") named bases like `object` and sent whole files to the parser. Strings and comments
// may still add a few.
std::vector<std::string> scan_class_names(std::string_view content, bool is_cpp) {
  std::vector<std::string> names;
  if (is_cpp) {
    for (std::string_view keyword : {std::string_view("class"), std::string_view("struct")})
      scan_names_after(content, keyword, false, names);
  } else {
    scan_names_after(content, "class", true, names);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Whether the files a cached C++ result depends on (FileDependency: included headers, paths
// where missing headers were looked for) are still as they were. Each path is looked at once
// a run; thread-safe.
class IncludedFilesCheck {
 public:
  bool holds(const std::vector<FileDependency>& dependencies) {
    return std::all_of(dependencies.begin(), dependencies.end(), [&](const FileDependency& d) {
      const Seen s = now(d.path);
      return d.content_hash ? s.regular && s.read && s.hash == *d.content_hash : !s.regular;
    });
  }

 private:
  struct Seen {
    bool regular = false;  // a regular file is there
    bool read = false;     // and could be read (else it matches no hash)
    std::uint64_t hash = 0;
  };
  Seen now(const std::string& path) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = seen_.find(path); it != seen_.end()) return it->second;
    }
    Seen s;
    std::error_code ec;
    s.regular = fs::is_regular_file(path, ec);
    if (s.regular) {
      std::ifstream in(path, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      s.read = in.is_open() && !in.bad();
      s.hash = XXH3_64bits(bytes.data(), bytes.size());
    }
    std::lock_guard lock(mutex_);
    seen_.emplace(path, s);
    return s;
  }
  std::mutex mutex_;
  std::map<std::string, Seen> seen_;
};

// Dotted module path: directories holding __init__.py above the file, up to the config root.
class ModuleNamer {
 public:
  explicit ModuleNamer(fs::path root) : root_(std::move(root)) {}
  std::string name_of(const fs::path& absolute) {
    std::vector<std::string> parts;
    const std::string stem = absolute.stem().string();
    if (stem != "__init__") parts.push_back(stem);
    fs::path dir = absolute.parent_path();
    while (dir != root_ && dir.has_relative_path() && is_package(dir)) {
      parts.push_back(dir.filename().string());
      dir = dir.parent_path();
    }
    std::string out;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : ".") + *it;
    return out;
  }

 private:
  bool is_package(const fs::path& dir) {
    auto [it, inserted] = packages_.try_emplace(dir.string(), false);
    if (inserted) {
      std::error_code ec;
      it->second = fs::is_regular_file(dir / "__init__.py", ec);
    }
    return it->second;
  }
  fs::path root_;
  std::map<std::string, bool> packages_;
};

std::string normalize_whitespace(std::string_view text) {
  std::string out;
  bool pending_space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// Where each line of `content` starts (lines end as facts/line_ends.hpp says).
std::vector<std::size_t> line_starts_of(std::string_view content) {
  std::vector<std::size_t> starts{0};
  for (std::size_t at = facts::next_line_start(content, 0); at < content.size();
       at = facts::next_line_start(content, at))
    starts.push_back(at);
  return starts;
}

// Line `line` (from 1) of `content`, whose line starts are `starts`; empty past the end.
std::string_view line_of(std::string_view content, const std::vector<std::size_t>& starts, uint32_t line) {
  if (line == 0 || line > starts.size()) return {};
  const std::size_t start = starts[line - 1];
  return content.substr(start, facts::line_end(content, start) - start);
}

// `normalized_evidence` is the finding's line through normalize_whitespace.
std::string fingerprint_parts(std::string_view code, std::string_view path, std::string_view owner,
                              std::string_view normalized_evidence) {
  std::string buffer;
  for (std::string_view part : {code, path, owner, normalized_evidence}) {
    buffer += std::to_string(part.size());
    buffer += ':';
    buffer += part;
  }
  return fmt::format("{:016x}", XXH3_64bits(buffer.data(), buffer.size()));
}

bool finding_less(const Finding& a, const Finding& b) {
  return std::tie(a.loc.file, a.loc.line, a.loc.column, a.code, a.owner_class, a.message) <
         std::tie(b.loc.file, b.loc.line, b.loc.column, b.code, b.owner_class, b.message);
}

bool diagnostic_less(const Diagnostic& a, const Diagnostic& b) {
  return std::tie(a.path, a.line, a.column, a.kind, a.message) <
         std::tie(b.path, b.line, b.column, b.kind, b.message);
}

// One project: the files one configuration governs, analysed and resolved together.
// Only its reported files give findings, diagnostics and statistics; its context
// files take part in resolution alone.
class ProjectRun {
 public:
  ProjectRun(DiscoveredProject project, const Workers& workers, const std::string& tool_identity,
             bool defer_context)
      : config_(std::move(project.config)),
        workers_(workers),
        config_fingerprint_(config_.fingerprint()),
        config_location_(config_location(config_)),
        tool_identity_(tool_identity),
        defer_context_(defer_context),
        vocabulary_(config_.vocabulary),
        initial_prefilter_(vocabulary_) {
    ModuleNamer namer(config_.root);
    files_.reserve(project.files.size());
    for (auto& f : project.files) {
      FileState state;
      state.module_name = namer.name_of(f.absolute);
      state.is_cpp = config_.is_cpp_name(f.display);
      has_cpp_ = has_cpp_ || state.is_cpp;
      state.file = std::move(f);
      if (state.file.reported) reported_.insert(state.file.display);
      files_.push_back(std::move(state));
    }
    result_.stats.files_found = reported_.size();
    result_.stats.files_context = files_.size() - reported_.size();
  }

  const Config& config() const { return config_; }
  bool has_cpp() const { return has_cpp_; }
  // The C++ front end (loaded once per run) and the command-line compile database; before check().
  void use_cpp(const CppFrontEndModule* module, const fs::path& compile_commands,
               IncludedFilesCheck& included) {
    cpp_module_ = module;
    included_files_ = &included;
    compile_database_ = find_compile_database(compile_commands, config_.cpp.compile_commands, config_.root);
    if (!compile_database_.empty()) {
      ReadOutcome db = read_source(compile_database_, compile_database_.string());
      compile_database_hash_ = XXH3_64bits(db.content.data(), db.content.size());
    } else if (!compile_commands.empty() || !config_.cpp.compile_commands.empty()) {
      Diagnostic d;
      d.path = compile_commands.empty() ? config_.cpp.compile_commands : compile_commands.string();
      d.kind = "config";
      d.message = "no compile_commands.json there; C++ files use the fallback flags";
      result_.diagnostics.push_back(std::move(d));
    }
  }
  const std::set<std::string>& reported() const { return reported_; }
  void add_content_hashes(std::map<std::string, std::uint64_t>& out) const {
    for (const auto& f : files_)
      if (f.readable && reported_.count(f.file.display)) out.emplace(f.file.display, f.content_hash);
  }
  // The dependencies of every C++ result of the run, for the run memo.
  void add_dependencies(std::vector<FileDependency>& out) const {
    for (const auto& f : files_) out.insert(out.end(), f.dependencies.begin(), f.dependencies.end());
  }
  // Reported files that could not be analysed at all (counted in stats().files_failed too).
  std::size_t analysis_failures() const { return analysis_failures_; }
  // Absolute paths of every file of the project (reported or context), for cache pruning.
  void add_paths(std::vector<std::string>& paths) const {
    for (const auto& f : files_) paths.push_back(f.file.absolute);
  }
  // Findings, diagnostics and statistics of this project so far.
  CheckResult& result() { return result_; }

  // Everything this project's result depends on: configuration, vocabulary, and every
  // file's name, module, content, reported flag and input diagnostics.
  void add_to_memo_key(XXH3_state_t* state) const {
    auto add = [&](std::string_view text) {
      const std::uint64_t size = text.size();
      XXH3_128bits_update(state, &size, sizeof size);
      XXH3_128bits_update(state, text.data(), text.size());
    };
    add(config_.root.string());
    add(config_fingerprint_);
    add(config_location_);
    add(facts::signature(vocabulary_));
    if (has_cpp_) {
      add(compile_database_.string());
      XXH3_128bits_update(state, &compile_database_hash_, sizeof compile_database_hash_);
      add(cpp_module_ && cpp_module_->loaded() ? cpp_module_->identity() : "no-cpp-frontend");
    }
    for (const auto& f : files_) {
      add(f.file.display);
      add(f.module_name);
      add(f.readable ? "r" : "-");
      add(f.file.reported ? "reported" : "context");
      XXH3_128bits_update(state, &f.content_hash, sizeof f.content_hash);
    }
    for (const auto& d : result_.diagnostics)
      add(fmt::format("{}:{}:{}:{}:{}", d.path, d.line, d.column, d.kind, d.message));
  }

  // Reads and hashes every file, in parallel, keeping their bytes while the run's `kept_bytes`
  // (shared by its projects) stays within kKeptBytesBudget. A file whose stamp `index` holds
  // is not read: its hash and scan results come from there, its bytes when a phase needs them.
  void read_all(std::atomic<std::size_t>& kept_bytes, const FileIndex* index) {
    kept_bytes_ = &kept_bytes;
    std::vector<std::size_t> all(files_.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    std::vector<std::optional<Diagnostic>> problems(files_.size());
    std::vector<std::size_t> sizes(files_.size());
    parallel_over(all, [&](std::size_t i) {
      if (index) {
        FileState& f = files_[i];
        // Seen by discovery, before the read: a later write moves it.
        if (const FileIndexEntry* entry = index->unchanged(f.file.absolute, f.file.stamp)) {
          f.readable = true;
          f.from_index = true;
          f.content_hash = entry->content_hash;
          f.indexed_scans = &entry->scans;
          f.defined_classes = entry->class_names;
          sizes[i] = f.file.stamp.size;
          return;
        }
      }
      ReadOutcome outcome = read_source(files_[i].file.absolute, files_[i].file.display);
      files_[i].readable = !outcome.problem;
      files_[i].content_hash = XXH3_64bits(outcome.content.data(), outcome.content.size());
      sizes[i] = outcome.content.size();
      problems[i] = std::move(outcome.problem);
      if (!files_[i].readable || keep_within_budget(files_[i], std::move(outcome.content))) return;
      // Past the budget, the bytes in hand answer the prefilter now, and the base-class search
      // for a file the prefilter skips or defers, instead of each of those phases reading them again.
      FileState& f = files_[i];
      const bool hit = initial_prefilter_.found_in(f.is_cpp, outcome.content);
      f.scans.push_back({initial_prefilter_.id(f.is_cpp), hit});
      bool deferred = false;
      if (hit && !f.is_cpp && defer_context_) {
        deferred = !initial_prefilter_.may_hold_seed(outcome.content);
        f.scans.push_back({initial_prefilter_.seed_id(), !deferred});
      }
      // The base-class search and a demand read a file's class names when it is not analysed.
      if (!hit || deferred) f.defined_classes = scan_class_names(outcome.content, f.is_cpp);
    });
    for (std::size_t i = 0; i < files_.size(); ++i) {
      result_.stats.bytes_read += sizes[i];
      if (files_[i].from_index) ++result_.stats.files_unread;
      if (problems[i] && is_reported(files_[i])) {
        result_.diagnostics.push_back(std::move(*problems[i]));
        ++result_.stats.files_failed;
      }
    }
  }

  // Analyses (through `cache` when given), resolves and checks the project.
  void check(ResultCache* cache) {
    cache_ = cache;
    prefilter();
    analyse_with_widening();
    // The kept bytes served the widening rounds' text scans; the rules phase, the run's peak,
    // reads again only the files with findings (their evidence lines).
    for (auto& f : files_) f.kept.reset();
    keep_reads_ = false;
    run_rules();
    result_.stats.bytes_reread = bytes_reread_.load();
    for (const auto& f : files_)
      if (f.changed && is_reported(f)) {
        Diagnostic d;
        d.path = f.file.display;
        d.kind = "read-error";
        d.message =
            "changed while being checked (or no longer readable); its results may be incomplete: check again";
        result_.diagnostics.push_back(std::move(d));
      }
  }

  // Some file read differently later in the run than at first: the result is not one state of the tree.
  bool saw_changes() const {
    return std::any_of(files_.begin(), files_.end(), [](const FileState& f) { return f.changed; });
  }

  // What the run learnt of each file for the next one: its stamp, hash and scan results, when
  // the stamp had settled before the run began (file_index.hpp) and the bytes held still.
  void record_in(FileIndex& index, std::chrono::system_clock::time_point run_start) const {
    for (const auto& f : files_) {
      if (!f.readable || f.changed || !settled_before(f.file.stamp, run_start)) continue;
      FileIndexEntry entry{f.file.stamp, f.content_hash, f.scans, f.defined_classes};
      // No scan ran (the run memo answered): what the index held still holds.
      if (entry.scans.empty() && f.indexed_scans) entry.scans = *f.indexed_scans;
      std::sort(entry.scans.begin(), entry.scans.end(),
                [](const ScanRecord& a, const ScanRecord& b) { return a.scan < b.scan; });
      index.record(f.file.absolute, std::move(entry));
    }
  }

 private:
  bool is_reported(const FileState& f) const { return f.file.reported; }

  // body(file index), or body(file index, worker) for bodies that keep per-worker state.
  template <typename Body>
  void parallel_over(const std::vector<std::size_t>& indices, const Body& body) {
    workers_.for_each(indices.size(), [&](std::size_t k, unsigned worker) {
      if constexpr (std::is_invocable_v<const Body&, std::size_t, unsigned>)
        body(indices[k], worker);
      else
        body(indices[k]);
    });
  }

  // The bytes of `f` as first read: the kept copy, else read again (a phase keeps them only
  // while it works on the file); empty, and `f.changed` set, when the file changed since or
  // cannot be read any more. Each file is worked on by one worker at a time.
  FileBytes reread(FileState& f) {
    if (f.kept) return FileBytes::kept(*f.kept);
    ReadOutcome outcome = read_source(f.file.absolute, f.file.display);
    bytes_reread_.fetch_add(outcome.content.size(), std::memory_order_relaxed);
    if (outcome.problem || XXH3_64bits(outcome.content.data(), outcome.content.size()) != f.content_hash) {
      f.changed = true;
      return {};
    }
    // A file the index knew is first read here; its bytes are kept for the later phases as
    // read_all keeps those it reads (a run whose scans the index cannot answer, after a
    // vocabulary change, needs them in every phase).
    if (f.from_index && !f.read_once && keep_reads_) {
      f.read_once = true;
      if (keep_within_budget(f, std::move(outcome.content))) return FileBytes::kept(*f.kept);
    }
    return FileBytes::read(std::move(outcome.content));
  }

  // Whether `f` still holds the bytes first read, for a file whose facts come from the cache:
  // hashed through a fixed buffer, not read into memory as reread() would. Sets `f.changed` when not.
  bool unchanged_on_disk(FileState& f) {
    if (f.kept) return true;
    const std::optional<FileHash> now = hash_regular_file(f.file.absolute);
    if (now) bytes_reread_.fetch_add(now->size, std::memory_order_relaxed);
    if (!now || now->hash != f.content_hash) f.changed = true;
    return !f.changed;
  }

  // Keeps `bytes` as `f`'s while the run's kept bytes stay within kKeptBytesBudget; `bytes` is
  // left untouched otherwise.
  bool keep_within_budget(FileState& f, std::string&& bytes) {
    const std::size_t size = bytes.size();
    if (kept_bytes_->fetch_add(size, std::memory_order_relaxed) + size > kKeptBytesBudget) {
      kept_bytes_->fetch_sub(size, std::memory_order_relaxed);
      return false;
    }
    f.kept = std::move(bytes);
    return true;
  }

  // What text scan `scan` found in `f`: earlier in this run, or in the run the file index
  // recorded it from (then it counts as used by this one); nullopt when it has not run on these bytes.
  std::optional<bool> recalled(FileState& f, std::uint64_t scan) {
    for (const ScanRecord& r : f.scans)
      if (r.scan == scan) return r.hit;
    if (f.indexed_scans)
      for (const ScanRecord& r : *f.indexed_scans)
        if (r.scan == scan) {
          f.scans.push_back(r);
          return r.hit;
        }
    return std::nullopt;
  }

  // Whether `f`'s bytes contain one of `search`'s needles, scan `scan` (remembered for the index).
  bool scan_for(FileState& f, std::uint64_t scan, const std::function<bool(std::string_view)>& search) {
    if (const std::optional<bool> hit = recalled(f, scan)) return *hit;
    const FileBytes content = reread(f);
    if (!content) return false;
    const bool hit = search(*content);
    f.scans.push_back({scan, hit});
    return hit;
  }

  // Those of `indices` whose bytes contain one of `needles` (where `start` lets it start), in order.
  std::vector<std::size_t> containing_any(const std::vector<std::size_t>& indices,
                                          const std::vector<std::string>& needles,
                                          NeedleSearch::Start start = NeedleSearch::Start::Anywhere) {
    // One sampled pass per file for all needles (class names times three spellings), not
    // one memmem per needle: a pre-commit run searched every unanalysed file this way.
    const NeedleSearch search(needles, start);
    const std::uint64_t scan = scan_id("needles", start == NeedleSearch::Start::WordStart, needles);
    std::vector<char> hit(files_.size(), 0);
    parallel_over(indices, [&](std::size_t i) {
      hit[i] = scan_for(files_[i], scan, [&](std::string_view content) { return search.found_in(content); });
    });
    std::vector<std::size_t> out;
    for (std::size_t i : indices)
      if (hit[i]) out.push_back(i);
    return out;
  }

  // The prefilter: files that contain no anchor cannot produce facts a rule reads. Of the
  // Python files that do, those that can give context only are deferred (defer_context_).
  void prefilter() {
    parallel_over(readable_matching([](const FileState&) { return true; }), [&](std::size_t i) {
      FileState& f = files_[i];
      f.anchor_hit = scan_for(f, initial_prefilter_.id(f.is_cpp),
                              [&](std::string_view c) { return initial_prefilter_.found_in(f.is_cpp, c); });
      if (f.anchor_hit && !f.is_cpp && defer_context_)
        f.deferred = !scan_for(f, initial_prefilter_.seed_id(),
                               [&](std::string_view c) { return initial_prefilter_.may_hold_seed(c); });
    });
  }

  // Analyses `indices` with `vocabulary` (cache first), replacing earlier facts; with
  // `cached_only`, takes the Python files the cache holds and leaves the others as they are.
  void analyse(const std::vector<std::size_t>& indices, const facts::Vocabulary& vocabulary,
               bool cached_only = false) {
    std::vector<std::size_t> python, cpp;
    for (std::size_t i : indices) (files_[i].is_cpp ? cpp : python).push_back(i);
    if (!cpp.empty()) analyse_cpp(cpp, vocabulary);
    if (python.empty()) return;
    // Largest first, so the round does not end waiting on one worker still parsing a big file
    // it took last while the others idle.
    std::stable_sort(python.begin(), python.end(), [&](std::size_t a, std::size_t b) {
      return files_[a].file.stamp.size > files_[b].file.stamp.size;
    });
    // One parser per worker thread, built lazily with this round's vocabulary.
    PerWorker<python::PythonAnalyzer> analyzers(workers_, [&] { return python::PythonAnalyzer(vocabulary); });
    const std::string vocabulary_signature = facts::signature(vocabulary);  // once, not once per file
    parallel_over(python, [&](std::size_t i, unsigned worker) {
      FileState& state = files_[i];
      if (state.changed) return;
      // Keyed by the hash of the bytes first read: a file the cache holds is checked, not read again.
      const std::string key =
          cache_key({state.content_hash, tool_identity_, config_fingerprint_, vocabulary_signature,
                     state.file.display, state.module_name, config_location_});
      if (cache_) {
        if (auto hit = cache_->lookup(key)) {
          if (!unchanged_on_disk(state)) return;
          state.facts = std::move(hit->facts);  // decoded compact (facts_binary.hpp)
          state.analysis_diagnostics = std::move(hit->diagnostics);
          return;
        }
      }
      if (cached_only) return;
      const FileBytes content = reread(state);
      if (!content) return;
      CachedAnalysis analysis;
      try {
        analysis.facts = analyzers.local(worker).analyze(state.file.display, *content, state.module_name);
      } catch (const std::exception& e) {
        // A front-end failure on one file must not take the run down.
        Diagnostic d;
        d.path = state.file.display;
        d.kind = "internal-error";
        d.message = fmt::format("the Python front end failed on this file: {}", e.what());
        state.analysis_diagnostics = {std::move(d)};
        state.facts.reset();
        state.parsed = true;
        return;
      }
      for (const auto& problem : analysis.facts.parse_problems) {
        Diagnostic d;
        d.path = state.file.display;
        d.line = problem.loc.line;
        d.column = problem.loc.column;
        d.kind = "parse-error";
        d.message = problem.message;
        analysis.diagnostics.push_back(std::move(d));
      }
      bytes_parsed_.fetch_add(content->size(), std::memory_order_relaxed);
      ++state.parses;
      state.parsed_bytes = content->size();
      if (cache_) cache_->store(key, state.file.absolute, analysis);
      state.facts = std::move(analysis.facts);
      facts::compact(*state.facts);
      state.analysis_diagnostics = std::move(analysis.diagnostics);
      state.parsed = true;
    });
  }

  // C++ files through the front-end module: the compile command is part of the cache key
  // (equal bytes under other flags are another analysis). Without the module each file is
  // reported as not analysed; the run's Python results are unaffected.
  void analyse_cpp(const std::vector<std::size_t>& indices, const facts::Vocabulary& vocabulary) {
    std::unique_ptr<facts::CppAnalyzer> analyzer;
    if (cpp_module_ && cpp_module_->loaded()) {
      const facts::CppProjectSettings settings = cpp_project_settings(config_, compile_database_);
      analyzer = cpp_module_->make(vocabulary, settings);
      if (analyzer && !analyzer->database_problem().empty()) {
        Diagnostic d;
        d.path = compile_database_.string();
        d.kind = "config";
        d.message = analyzer->database_problem() + "; C++ files use the fallback flags";
        result_.diagnostics.push_back(std::move(d));
      }
    }
    if (!analyzer) {
      // The reason (and the package to install) is the run's one `cpp-frontend` diagnostic.
      const std::string why =
          cpp_module_ && cpp_module_->loaded()
              ? std::string("the C++ front end module is stale; rebuild kvlint")
              : std::string("the C++ front end is not available (see the cpp-frontend diagnostic)");
      for (std::size_t i : indices) {
        Diagnostic d;
        d.path = files_[i].file.display;
        d.kind = "not-analysed";
        d.message = fmt::format("C++ file not analysed: {}", why);
        files_[i].analysis_diagnostics = {std::move(d)};
        files_[i].analysis_failed = true;
      }
      return;
    }
    const std::string vocabulary_signature = facts::signature(vocabulary);
    parallel_over(indices, [&](std::size_t i) {
      FileState& state = files_[i];
      if (state.changed) return;
      facts::CppCommand command = analyzer->command_for(state.file.absolute);
      state.dropped_options = std::move(command.dropped);
      std::string command_text = cpp_module_->identity() + "\n" + command.directory.string();
      for (const auto& a : command.arguments) command_text += "\n" + a;
      const std::string key_module = state.module_name + "\ncpp\n" + command_text;
      const std::string key =
          cache_key({state.content_hash, tool_identity_, config_fingerprint_, vocabulary_signature,
                     state.file.display, key_module, config_location_});
      if (cache_) {
        // The key covers the file and its command; the headers it read are checked here.
        if (auto hit = cache_->lookup(key); hit && included_files_->holds(hit->dependencies)) {
          if (!unchanged_on_disk(state)) return;
          state.facts = std::move(hit->facts);  // decoded compact (facts_binary.hpp)
          state.analysis_diagnostics = std::move(hit->diagnostics);
          state.dependencies = std::move(hit->dependencies);
          state.analysis_failed = false;
          return;
        }
      }
      const FileBytes content = reread(state);
      if (!content) return;
      CachedAnalysis analysis;
      facts::CppAnalysis cpp;
      try {
        cpp = analyzer->analyze(state.file.display, state.file.absolute, *content, command);
      } catch (const std::exception& e) {
        cpp.failed = true;
        cpp.first_error = e.what();
      }
      analysis.facts = std::move(cpp.facts);
      analysis.facts.module_name = state.module_name;
      for (const auto& included : cpp.included)
        analysis.dependencies.push_back({included.path, included.content_hash});
      for (const auto& absent : cpp.absent) analysis.dependencies.push_back({absent, std::nullopt});
      bytes_parsed_.fetch_add(content->size(), std::memory_order_relaxed);
      ++state.parses;
      state.parsed_bytes = content->size();
      Diagnostic d;
      d.path = state.file.display;
      for (const auto& problem : analysis.facts.parse_problems) {  // the walk's budget
        Diagnostic p = d;
        p.line = problem.loc.line;
        p.column = problem.loc.column;
        p.kind = "parse-error";
        p.message = problem.message;
        analysis.diagnostics.push_back(std::move(p));
      }
      if (cpp.failed) {
        d.kind = "compile-error";
        d.message = fmt::format("C++ file not analysed: {}", cpp.first_error);
        analysis.diagnostics.push_back(d);
      } else if (!cpp.missing_headers.empty()) {
        d.kind = "degraded";
        // What degraded mode does (cpp_frontend.cpp, degraded_headers.cpp): the LibTorch / CUDA /
        // pybind11 declarations a missing header brings are stood in for (built in, or the CUDA
        // toolkit's own headers where it is installed); errors a missing declaration explains go
        // unreported; the file's own syntax errors are reported below.
        d.message = fmt::format(
            "analysed without full types: {} not found ({}{}); LibTorch, CUDA and pybind11 names were read "
            "from "
            "stand-in declarations, and errors the missing declarations explain are not reported",
            cpp.missing_headers.size() == 1 ? "a header was" : "headers were",
            fmt::join(cpp.missing_headers, ", "), cpp.missing_headers.size() >= 5 ? ", ..." : "");
        analysis.diagnostics.push_back(d);
        // Degraded mode hides what the missing headers cause, never the file's own syntax
        // errors: those are a compile-error, and --fix leaves the file alone.
        if (cpp.syntax_errors > 0) {
          Diagnostic syntax;
          syntax.path = state.file.display;
          syntax.kind = "compile-error";
          syntax.message =
              fmt::format("syntax error{} ({}, first: {}); analysed what Clang recovered",
                          cpp.syntax_errors == 1 ? "" : "s", cpp.syntax_errors, cpp.first_syntax_error);
          analysis.diagnostics.push_back(std::move(syntax));
        }
      } else if (cpp.errors > 0) {
        d.kind = "compile-error";
        d.message = fmt::format("does not compile ({} error{}, first: {}); analysed what Clang recovered",
                                cpp.errors, cpp.errors == 1 ? "" : "s", cpp.first_error);
        analysis.diagnostics.push_back(d);
      }
      // A failed analysis is not kept (it is cheap to repeat, and must count as failed again);
      // nor one whose headers could not all be listed.
      if (cache_ && !cpp.failed && cpp.dependencies_known) cache_->store(key, state.file.absolute, analysis);
      state.facts = std::move(analysis.facts);
      facts::compact(*state.facts);
      state.analysis_diagnostics = std::move(analysis.diagnostics);
      state.dependencies = std::move(analysis.dependencies);
      state.analysis_failed = cpp.failed;
      state.parsed = true;
    });
    for (std::size_t i : indices)
      if (!files_[i].dropped_options.empty())
        result_.details.push_back(fmt::format(
            "{}: left out {} compile option{} that do not change how it is read: {}", files_[i].file.display,
            files_[i].dropped_options.size(), files_[i].dropped_options.size() == 1 ? "" : "s",
            fmt::join(files_[i].dropped_options, " ")));
  }

  // Classes that capture CUDA graphs are often built by another class only when not
  // eager (`self.wrapper = GraphWrapper(...) if not enforce_eager else None`); that
  // holder names no anchor, so analyse the skipped files that construct a capturing class
  // (`Wrapper(` or `Wrapper.factory(`), then, up to two levels up, the files that construct
  // those holders: the gate may sit there (`if enforce_eager: return` before
  // `self.decoder.enable_cudagraph()`).
  void analyse_capture_holders() {
    std::set<std::string> built;
    for (const auto& f : files_)
      if (f.facts)
        for (const auto& capture : f.facts->captures)
          if (!capture.owner_class.empty()) built.insert(capture.owner_class);
    for (int level = 0; level < kCaptureHolderLevels && !built.empty(); ++level) {
      // C++ files are searched for every spelling. Python files only for what the Python
      // front end can record as a construction of the class: a capitalised name, as a word
      // (`Graph(` in `nx.Graph(`, not in `CUDAGraph(`, which constructs another class); the
      // looser search parsed most of torch and networkx on an installed tree for `graph(`.
      std::vector<std::string> cpp_needles, python_needles;
      for (const auto& name : built) {
        for (std::string needle : {name + "(", name + "."}) {
          if (python::records_constructions_of(name)) python_needles.push_back(needle);
          cpp_needles.push_back(std::move(needle));
        }
        cpp_needles.push_back("<" + name + ">");  // held as `std::unique_ptr<GraphRunner> graphs_`
      }
      std::vector<std::size_t> found = containing_any(
          readable_matching([](const FileState& f) { return !f.facts && f.is_cpp; }), cpp_needles);
      if (!python_needles.empty()) {
        const std::vector<std::size_t> python_found =
            containing_any(readable_matching([](const FileState& f) { return !f.facts && !f.is_cpp; }),
                           python_needles, NeedleSearch::Start::WordStart);
        found.insert(found.end(), python_found.begin(), python_found.end());
        std::sort(found.begin(), found.end());
      }
      analyse(found, vocabulary_);
      // The classes that build the ones just searched for are the next level's targets.
      std::set<std::string> builders;
      for (const auto& f : files_)
        if (f.facts)
          for (const auto& c : f.facts->constructions)
            if (!c.owner_class.empty() && built.count(std::string(facts::simple_name(c.target_class))))
              builders.insert(c.owner_class);
      for (const auto& name : built) builders.erase(name);
      built = std::move(builders);
    }
  }

  std::vector<std::size_t> readable_matching(const std::function<bool(const FileState&)>& predicate) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (files_[i].readable && predicate(files_[i])) out.push_back(i);
    return out;
  }

  // The project cache subclasses among the facts analysed so far, which the project borrows
  // (no copy of every file's facts per widening round) and gives back.
  std::vector<std::string> project_cache_subclasses() {
    std::vector<facts::FileFacts> lent;
    const std::vector<std::size_t> owners = lend_facts(lent);
    std::vector<std::string> names = facts::Project::cache_subclasses(lent, vocabulary_);
    give_back(owners, std::move(lent));
    return names;
  }

  // The analysed files' facts moved into `lent` for a project to borrow (no copy), in file
  // order; returns the files they belong to, for give_back.
  std::vector<std::size_t> lend_facts(std::vector<facts::FileFacts>& lent) {
    std::vector<std::size_t> owners;
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (files_[i].facts) {
        owners.push_back(i);
        lent.push_back(std::move(*files_[i].facts));
      }
    return owners;
  }
  void give_back(const std::vector<std::size_t>& owners, std::vector<facts::FileFacts>&& lent) {
    for (std::size_t k = 0; k < owners.size(); ++k) *files_[owners[k]].facts = std::move(lent[k]);
  }

  // The holders of C++ classes that keep K/V and are no module: `std::shared_ptr<LayerKV> kv_`
  // names no anchor. The files naming `<LayerKV>` (an owning pointer, a container, make_shared),
  // once per class. True when some were analysed.
  bool analyse_kv_store_holders() {
    std::vector<std::string> needles;
    for (const auto& f : files_) {
      if (!f.facts || f.facts->language != facts::Language::Cpp) continue;
      // A module keeping K/V names an anchor or is held by one that does.
      auto is_module = [&](const std::string& name) {
        for (const auto& c : f.facts->classes)
          if (c.name == name)
            for (const auto& b : c.bases)
              if (b.resolved.find("nn.Module") != std::string::npos ||
                  b.resolved.find("nn.Cloneable") != std::string::npos)
                return true;
        return false;
      };
      for (const auto& site : f.facts->cache_sites)
        if (!site.owner_class.empty() && !is_module(site.owner_class) &&
            kv_store_searched_.insert(site.owner_class).second)
          needles.push_back("<" + site.owner_class + ">");
    }
    if (needles.empty()) return false;
    const std::vector<std::size_t> found =
        containing_any(readable_matching([](const FileState& f) { return !f.facts && f.is_cpp; }), needles);
    if (found.empty()) return false;
    analyse(found, vocabulary_);
    return true;
  }

  void analyse_with_widening() {
    analyse(readable_matching([](const FileState& f) { return f.anchor_hit && !f.deferred; }), vocabulary_);
    // Deferring saves parsing: the deferred files whose facts the cache holds are taken now, so a
    // run over a tree that changed a little (a pre-commit run) asks the rules once, as before.
    if (cache_) analyse(readable_matching([](const FileState& f) { return f.deferred; }), vocabulary_, true);
    widen();
  }

  // Bases defined in files the prefilter skipped: parse those so inheritance resolves, up to
  // kMaxBaseRounds levels from the files analysed for what they hold (FileState::base_level).
  // A deferred file stands for one analysed from the start: a class it defines is looked for
  // there first, and only a class no deferred file defines in the skipped files. True when
  // some were analysed.
  bool analyse_bases() {
    for (bool analysed = false;;) {
      std::set<std::string> defined;
      // By simple name, where a class that is wanted may be defined: in any file, or in a
      // Python module that one of the absolute dotted prefixes it was named by may name.
      // find_class takes a class named `typing.Protocol` only from such a module, so the
      // typing_extensions copies and any other `class Protocol` need no parse.
      struct Wanted {
        bool anywhere = false;
        std::set<std::string> module_prefixes;
        int level = kMaxBaseRounds;  // the lowest base_level of the files that want it
      };
      std::map<std::string, Wanted> wanted;
      for (const auto& f : files_)
        if (f.facts)
          for (const auto& c : f.facts->classes)
            if (!c.out_of_line) defined.insert(c.name);
      for (const auto& f : files_) {
        if (!f.facts || f.base_level >= kMaxBaseRounds) continue;
        for (const auto& c : f.facts->classes) {
          // A .cpp defining methods of a class whose header the prefilter skipped: the
          // header holds its members (K/V buffers, held modules).
          if (c.out_of_line && !defined.count(c.name)) {
            Wanted& w = wanted[c.name];
            w.anywhere = true;
            w.level = std::min(w.level, f.base_level);
          }
          for (const auto& b : c.bases) {
            const std::string_view name = b.resolved.empty() ? b.written : b.resolved;
            const std::string_view simple = facts::simple_name(name);
            if (simple.empty() || defined.count(std::string(simple))) continue;
            Wanted& w = wanted[std::string(simple)];
            w.level = std::min(w.level, f.base_level);
            const std::string_view prefix = facts::dotted_prefix(name);
            // Unresolved, relative or bare (a builtin, a star import): find_class looks anywhere.
            if (b.resolved.empty() || prefix.empty() || name.starts_with('.'))
              w.anywhere = true;
            else
              w.module_prefixes.emplace(prefix);
          }
        }
      }
      if (wanted.empty()) return analysed;
      // The class-name scan runs only here, for files not analysed, and at most once each.
      std::vector<std::size_t> unanalysed = readable_matching([](const FileState& f) { return !f.facts; });
      parallel_over(unanalysed, [&](std::size_t i) {
        if (files_[i].defined_classes) return;
        const FileBytes content = reread(files_[i]);
        files_[i].defined_classes =
            content ? scan_class_names(*content, files_[i].is_cpp) : std::vector<std::string>();
      });
      // The level a candidate is found at: one below the lowest file that wants a class it defines.
      auto found_at = [&](const FileState& f) -> std::optional<int> {
        std::optional<int> level;
        for (const std::string& name : *f.defined_classes) {
          const auto it = wanted.find(name);
          if (it == wanted.end()) continue;
          const Wanted& w = it->second;
          const bool may_define =
              w.anywhere || f.is_cpp ||
              std::any_of(w.module_prefixes.begin(), w.module_prefixes.end(), [&](const std::string& prefix) {
                return facts::may_be_module(f.module_name, prefix);
              });
          if (may_define) level = std::min(level.value_or(w.level + 1), w.level + 1);
        }
        return level;
      };
      std::vector<std::size_t> deferred, skipped;
      for (std::size_t i : unanalysed)
        if (const auto level = found_at(files_[i])) {
          files_[i].base_level = files_[i].deferred ? 0 : *level;
          (files_[i].deferred ? deferred : skipped).push_back(i);
        }
      if (!deferred.empty()) {
        analyse(deferred, vocabulary_);
        analysed = true;
        continue;
      }
      if (skipped.empty()) return analysed;
      analyse(skipped, vocabulary_);
      return true;
    }
  }

  void widen() {
    analyse_capture_holders();
    for (int round = 0; round < kMaxWideningRounds; ++round) {
      bool changed = analyse_kv_store_holders();
      changed = analyse_bases() || changed;
      // Project cache subclasses join the vocabulary; files naming them are analysed again.
      std::vector<std::string> added;
      for (auto& name : project_cache_subclasses())
        if (std::find(vocabulary_.cache_classes.begin(), vocabulary_.cache_classes.end(), name) ==
            vocabulary_.cache_classes.end())
          added.push_back(std::move(name));
      if (!added.empty()) {
        for (const auto& name : added) vocabulary_.cache_classes.push_back(name);
        analyse(containing_any(readable_matching([](const FileState&) { return true; }), added), vocabulary_);
        changed = true;
      }
      if (!changed) break;
    }
  }

  void finish_analysis() {
    result_.stats.bytes_parsed = bytes_parsed_.load();
    for (const auto& f : files_)
      if (f.parses > 0) result_.parsed_files.push_back({f.file.absolute, f.is_cpp, f.parsed_bytes, f.parses});
    for (const auto& f : files_) {
      if (!f.readable || !is_reported(f)) continue;
      if (f.analysis_failed) {
        ++result_.stats.files_failed;
        ++analysis_failures_;
      } else if (f.parsed)
        ++result_.stats.files_parsed;
      else if (f.facts)
        ++result_.stats.files_cached;
      else if (f.deferred)
        ++result_.stats.files_deferred;
      else
        ++result_.stats.files_skipped;
      for (const auto& d : f.analysis_diagnostics) result_.diagnostics.push_back(d);
    }
  }

  // The deferred files whose text could add to what the rules asked (facts::Demand), or every
  // one of them when a question names no text to look for.
  std::vector<std::size_t> demanded(const facts::Demand::Wants& wants) {
    const std::vector<std::size_t> deferred =
        readable_matching([](const FileState& f) { return f.deferred && !f.facts; });
    if (wants.everything) return deferred;
    std::vector<std::string> built_needles;  // `Name(` / `Name.`: a construction or a class method call
    for (const auto& name : wants.built)
      for (const char* after : {"(", "."}) built_needles.push_back(name + after);
    const NeedleSearch built(built_needles, NeedleSearch::Start::WordStart);
    std::vector<char> hit(files_.size(), 0);
    parallel_over(deferred, [&](std::size_t i) {
      FileState& f = files_[i];
      const FileBytes content = reread(f);
      if (!content) return;
      if (!f.defined_classes) f.defined_classes = scan_class_names(*content, false);
      auto any = [&](const std::set<std::string>& names, auto&& found) {
        return std::any_of(names.begin(), names.end(),
                           [&](const std::string& n) { return found(*content, n); });
      };
      hit[i] = std::any_of(f.defined_classes->begin(), f.defined_classes->end(),
                           [&](const std::string& name) { return wants.classes.count(name) != 0; }) ||
               any(wants.functions, python::defines_function) || any(wants.constants, python::assigns) ||
               any(wants.handed_self, python::hands_self_to) || any(wants.mentioned, python::mentions) ||
               (!built_needles.empty() && built.found_in(*content));
    });
    std::vector<std::size_t> out;
    for (std::size_t i : deferred)
      if (hit[i]) out.push_back(i);
    return out;
  }

  // The rules run on the files analysed so far. While deferred files remain, the project
  // records what the rules ask (facts::Demand); when a deferred file could add to an answer, the
  // demanded files are analysed, the widening rounds run again, and the rules run again, so
  // their findings are those of a run that analysed every deferred file. Then the analysis is
  // final and the last round's findings are taken.
  void run_rules() {
    std::map<std::string, std::size_t> index_of;
    for (std::size_t i = 0; i < files_.size(); ++i) index_of[files_[i].file.display] = i;
    // The rules read the project only (it has no mutable state but a std::call_once index and
    // the demand it records, both thread-safe), so they run side by side; their findings and
    // failures are taken in registry order.
    std::vector<std::unique_ptr<Rule>> rules;
    for (auto& rule : make_all_rules())
      if (!is_engine_rule(rule->info().code) && config_.is_selected(rule->info().code))
        rules.push_back(std::move(rule));
    std::vector<std::vector<Finding>> produced;
    std::vector<std::optional<std::string>> failures;
    std::optional<facts::Project> project;
    facts::Demand demand;  // outlives the project that records into it
    for (int round = 0;; ++round) {
      std::vector<facts::FileFacts> all;
      const std::vector<std::size_t> owners = lend_facts(all);
      const bool deferring = std::any_of(files_.begin(), files_.end(), [](const FileState& f) {
        return f.readable && f.deferred && !f.facts;
      });
      project.emplace(std::move(all), vocabulary_, deferring ? &demand : nullptr);
      produced.assign(rules.size(), {});
      failures.assign(rules.size(), std::nullopt);
      ++result_.stats.rule_rounds;
      workers_.for_each(rules.size(), [&](std::size_t k, unsigned) {
        try {
          rules[k]->check(*project, produced[k]);
        } catch (const std::exception& e) {
          failures[k] = e.what();
        }
      });
      if (!deferring) break;
      const facts::Demand::Wants wants = demand.take();
      std::vector<std::size_t> needed = wants.empty() ? std::vector<std::size_t>{} : demanded(wants);
      if (needed.empty()) break;
      if (round + 1 >= kMaxDemandRounds)
        needed = readable_matching([](const FileState& f) { return f.deferred && !f.facts; });
      give_back(owners, std::move(*project).release_files());
      project.reset();
      analyse(needed, vocabulary_);
      widen();
    }
    finish_analysis();
    std::vector<Finding> findings;
    for (std::size_t k = 0; k < rules.size(); ++k) {
      if (failures[k]) {
        const RuleInfo& info = rules[k]->info();
        Diagnostic d;
        d.kind = "internal-error";
        d.message = fmt::format("rule {} ({}) failed: {}", info.code, info.name, *failures[k]);
        result_.diagnostics.push_back(std::move(d));
        continue;
      }
      // Context files take part in resolution only: their findings are not reported.
      for (auto& f : produced[k])
        if (config_.is_selected(f.code) && reported_.count(f.loc.file)) findings.push_back(std::move(f));
    }
    std::vector<const facts::FileFacts*> file_ptrs;
    for (const auto& f : project->files())
      if (reported_.count(f.path)) file_ptrs.push_back(&f);
    // per-file-ignores match a file by its absolute path: only the files findings can be on
    // (one fs::path per file of the tree was 20 MB on an installed site-packages).
    std::map<std::string, fs::path> match_paths;
    auto add_match_path = [&](const std::string& display) {
      if (auto it = index_of.find(display); it != index_of.end())
        match_paths.try_emplace(display, files_[it->second].file.absolute);
    };
    for (const auto* f : file_ptrs) add_match_path(f->path);
    for (const auto& f : findings) add_match_path(f.loc.file);
    SuppressionOutcome outcome = apply_suppressions(std::move(findings), file_ptrs, config_, match_paths);
    result_.suppressed = outcome.suppressed;
    result_.findings = std::move(outcome.kept);
    std::sort(result_.findings.begin(), result_.findings.end(), finding_less);

    // Fingerprints: path relative to the config root, so they survive a different working directory.
    // The n-th finding (n > 0) with the same code, path, owner and evidence line gets a
    // fingerprint of its own; the first one's fingerprint is the key (a hash of those four).
    std::unordered_map<std::string, std::size_t> occurrences;
    // Findings are sorted by file and line: each file with findings is read once more and its
    // lines indexed once, and each line is normalized once however many findings it has (3,000
    // on one 86 KB line were quadratic).
    std::size_t evidence_file = files_.size();
    FileBytes evidence_content;
    std::vector<std::size_t> evidence_lines;
    std::pair<std::size_t, uint32_t> normalized_line{files_.size(), 0};
    std::string normalized;
    for (auto& f : result_.findings) {
      std::string path = f.loc.file;
      std::size_t file = files_.size();
      if (auto it = index_of.find(f.loc.file); it != index_of.end()) {
        file = it->second;
        if (evidence_file != file) {
          evidence_file = file;
          evidence_content = reread(files_[file]);
          evidence_lines = evidence_content ? line_starts_of(*evidence_content) : std::vector<std::size_t>{};
        }
        fs::path rel = fs::path(files_[file].file.absolute).lexically_relative(config_.root);
        if (!rel.empty() && *rel.begin() != "..") path = rel.generic_string();
      }
      if (normalized_line != std::pair{file, f.loc.line}) {
        normalized_line = {file, f.loc.line};
        normalized = file < files_.size() && evidence_content
                         ? normalize_whitespace(line_of(*evidence_content, evidence_lines, f.loc.line))
                         : std::string();
      }
      std::string base = fingerprint_parts(f.code, path, f.owner_class, normalized);
      const std::size_t n = occurrences[base]++;
      f.fingerprint = n == 0 ? base : fingerprint_parts(base, std::to_string(n), {}, {});
    }
  }

  Config config_;
  const Workers& workers_;
  std::string config_fingerprint_;
  std::string config_location_;
  const std::string& tool_identity_;
  const bool defer_context_;  // CheckOptions::defer_context
  ResultCache* cache_ = nullptr;
  std::atomic<std::size_t> bytes_parsed_{0};
  std::atomic<std::size_t> bytes_reread_{0};        // by reread(), every phase counted
  std::atomic<std::size_t>* kept_bytes_ = nullptr;  // the run's, shared by its projects (read_all)
  bool keep_reads_ = true;                          // false once the kept bytes are dropped for the rules
  std::vector<FileState> files_;
  bool has_cpp_ = false;
  const CppFrontEndModule* cpp_module_ = nullptr;
  IncludedFilesCheck* included_files_ = nullptr;
  std::size_t analysis_failures_ = 0;
  std::set<std::string> kv_store_searched_;  // classes analyse_kv_store_holders looked for
  fs::path compile_database_;
  std::uint64_t compile_database_hash_ = 0;
  std::set<std::string> reported_;  // display paths of the reported files
  facts::Vocabulary vocabulary_;
  // The prefilter under the vocabulary the run starts with (read_all and check's first phase,
  // before any widening round adds to vocabulary_).
  PrefilterScan initial_prefilter_;
  CheckResult result_;
};

}  // namespace

std::string fingerprint_of(const Finding& finding, std::string_view evidence_text) {
  return fingerprint_parts(finding.code, finding.loc.file, finding.owner_class,
                           normalize_whitespace(evidence_text));
}

CheckResult run_check(const CheckOptions& options) {
  CheckResult result;
  std::error_code ec;
  const fs::path cache_dir =
      options.cache_dir.empty() ? fs::path() : fs::absolute(options.cache_dir, ec).lexically_normal();
  DiscoveryOptions discovery;
  discovery.force_exclude = options.force_exclude;
  discovery.cache_dir = cache_dir;
  discovery.nearest_config = options.nearest_config;
  discovery.overrides = options.overrides;
  discovery.load_context = options.load_project_context;
  DiscoveryResult found = discover_files(options.paths, options.config, discovery);
  result.diagnostics = std::move(found.diagnostics);
  result.stats.files_failed += found.missing;
  for (auto& note : found.notes) result.notes.push_back(std::move(note));
  if (!found.links_leaving_tree.empty())
    result.details.push_back(fmt::format(
        "not following {} symbolic link{} that leave{} the checked tree: {}", found.links_leaving_tree.size(),
        found.links_leaving_tree.size() == 1 ? "" : "s", found.links_leaving_tree.size() == 1 ? "s" : "",
        fmt::join(found.links_leaving_tree, ", ")));

  const Workers workers(worker_count(options.jobs));
  const std::string tool_identity = build_identity();
  // Stamps within kRacyWindow of this are not trusted next time (file_index.hpp).
  const auto run_start = options.started_at.value_or(std::chrono::system_clock::now());
  std::vector<std::unique_ptr<ProjectRun>> projects;
  for (auto& project : found.projects)
    projects.push_back(
        std::make_unique<ProjectRun>(std::move(project), workers, tool_identity, options.defer_context));
  auto cache_dir_of = [&](const ProjectRun& project) {
    return cache_dir.empty() ? project.config().root / ".kvlint_cache" : cache_dir;
  };
  // A cache directory that must not be used (a symbolic link: a committed
  // `.kvlint_cache` link would redirect writes) is one note; its projects run uncached.
  std::map<fs::path, bool> usable_cache_dirs;
  auto cache_usable = [&](const ProjectRun& project) {
    if (!options.use_cache) return false;
    const fs::path dir = cache_dir_of(project);
    auto [it, inserted] = usable_cache_dirs.emplace(dir, true);
    if (inserted) {
      if (auto problem = cache_directory_problem(dir)) {
        result.notes.push_back(std::move(*problem));
        it->second = false;
      }
    }
    return it->second;
  };
  // One file index per cache directory, shared by the projects that use it.
  std::map<fs::path, std::unique_ptr<FileIndex>> indexes;
  std::atomic<std::size_t> kept_bytes{0};
  for (auto& project : projects) {
    FileIndex* index = nullptr;
    if (cache_usable(*project)) {
      auto& slot = indexes[cache_dir_of(*project)];
      if (!slot) slot = std::make_unique<FileIndex>(cache_dir_of(*project), tool_identity);
      index = slot.get();
    }
    project->read_all(kept_bytes, index);
    project->add_content_hashes(result.content_hashes);
  }
  // What the run learnt of its files, for the next run's reads; a failure only costs that
  // run its shortcut, and is said once (the cache's own note comes first when both fail).
  auto save_indexes = [&](bool say_failure) {
    for (auto& [dir, index] : indexes) {
      std::vector<std::string> paths_in_run;
      for (const auto& project : projects)
        if (cache_dir_of(*project) == dir) {
          project->record_in(*index, run_start);
          project->add_paths(paths_in_run);
        }
      std::string error;
      if (!index->save(paths_in_run, error) && say_failure)
        result.notes.push_back(fmt::format("caching disabled: cannot write the file index: {}", error));
    }
  };
  // The C++ front end is loaded only when some project has C++ files: one diagnostic per run
  // when it cannot be (each C++ file is then reported as not analysed).
  std::optional<CppFrontEndModule> cpp_module;
  for (const auto& project : projects)
    if (project->has_cpp() && !cpp_module) {
      cpp_module.emplace();
      if (!cpp_module->loaded()) {
        Diagnostic d;
        d.kind = "cpp-frontend";
        d.message = cpp_module->problem();
        result.diagnostics.push_back(std::move(d));
      }
    }
  IncludedFilesCheck included_files;
  for (auto& project : projects)
    if (project->has_cpp())
      project->use_cpp(cpp_module ? &*cpp_module : nullptr, options.compile_commands, included_files);
  // A finding fails the run at or above the fail-on level of its own file's configuration.
  auto count_failing = [&] {
    std::map<std::string, Severity> fail_on;
    for (const auto& project : projects)
      for (const auto& display : project->reported()) fail_on.emplace(display, project->config().fail_on);
    result.findings_failing = 0;
    for (const auto& f : result.findings) {
      auto it = fail_on.find(f.loc.file);
      const Severity level = it != fail_on.end() ? it->second
                             : projects.empty()  ? options.config.fail_on
                                                 : projects.front()->config().fail_on;
      if (f.severity >= level) ++result.findings_failing;
    }
  };
  // The memo and the caches hold every finding; the report only those the filter keeps.
  auto keep_reported = [&] {
    if (options.report_filter)
      std::erase_if(result.findings, [&](const Finding& f) { return !options.report_filter(f); });
    count_failing();
  };
  for (const auto& project : projects) {
    const CheckStats& s = project->result().stats;
    result.stats.files_found += s.files_found;
    result.stats.files_context += s.files_context;
    result.stats.bytes_read += s.bytes_read;
    result.stats.files_failed += s.files_failed;
    result.stats.files_unread += s.files_unread;
  }

  // The whole-run memo: one key over every project, kept with the first project's cache.
  std::string memo_key;
  const bool use_memo = !projects.empty() && cache_usable(*projects.front());
  if (use_memo) {
    XXH3_state_t* state = XXH3_createState();
    if (!state) throw std::bad_alloc();
    XXH3_128bits_reset(state);
    XXH3_128bits_update(state, tool_identity.data(), tool_identity.size());
    for (const auto& project : projects) project->add_to_memo_key(state);
    for (const auto& d : result.diagnostics) {
      const std::string text = fmt::format("{}:{}:{}:{}", d.path, d.kind, d.message, d.line);
      XXH3_128bits_update(state, text.data(), text.size());
    }
    const XXH128_hash_t digest = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    memo_key = fmt::format("{:016x}{:016x}", digest.high64, digest.low64);
    if (auto memo = load_run_memo(cache_dir_of(*projects.front()), memo_key);
        memo && included_files.holds(memo->dependencies)) {
      result.findings = std::move(memo->findings);
      result.diagnostics = std::move(memo->diagnostics);
      result.suppressed = memo->suppressed;
      result.stats.files_cached = memo->files_analysed;
      result.stats.files_skipped = memo->files_skipped;
      result.stats.files_deferred = memo->files_deferred;
      result.stats.files_failed += memo->files_failed;
      save_indexes(true);
      keep_reported();
      return result;
    }
  }

  // One per-file cache per cache directory, shared by the projects that use it.
  std::map<fs::path, std::unique_ptr<ResultCache>> caches;
  for (const auto& project : projects) {
    ResultCache* cache = nullptr;
    if (cache_usable(*project)) {
      auto& slot = caches[cache_dir_of(*project)];
      if (!slot) {
        slot = std::make_unique<ResultCache>(cache_dir_of(*project), tool_identity);
        if (!slot->note().empty()) result.notes.push_back(slot->note());
      }
      cache = slot.get();
    }
    project->check(cache);
    CheckResult& part = project->result();
    for (auto& f : part.findings) result.findings.push_back(std::move(f));
    for (auto& d : part.diagnostics) result.diagnostics.push_back(std::move(d));
    for (auto& detail : part.details) result.details.push_back(std::move(detail));
    for (auto& parsed : part.parsed_files) result.parsed_files.push_back(std::move(parsed));
    result.suppressed += part.suppressed;
    result.stats.files_parsed += part.stats.files_parsed;
    result.stats.files_cached += part.stats.files_cached;
    result.stats.files_skipped += part.stats.files_skipped;
    result.stats.files_deferred += part.stats.files_deferred;
    result.stats.rule_rounds += part.stats.rule_rounds;
    result.stats.files_failed += project->analysis_failures();
    result.stats.bytes_parsed += part.stats.bytes_parsed;
    result.stats.bytes_reread += part.stats.bytes_reread;
  }
  std::sort(result.findings.begin(), result.findings.end(), finding_less);
  std::sort(result.diagnostics.begin(), result.diagnostics.end(), diagnostic_less);
  // A cache that cannot be written (read-only directory, full disk) is one
  // note; the run's result stands, and no memo is written beside it.
  bool caches_saved = true;
  for (auto& [dir, cache] : caches) {
    std::vector<std::string> paths_in_run;
    for (const auto& project : projects)
      if (cache_dir_of(*project) == dir) project->add_paths(paths_in_run);
    if (!cache->save(paths_in_run)) {
      result.notes.push_back(cache->note());
      caches_saved = false;
    }
  }
  save_indexes(caches_saved);
  // A run that saw a file change under it is not remembered as the result of the tree.
  const bool saw_changes = std::any_of(projects.begin(), projects.end(),
                                       [](const auto& project) { return project->saw_changes(); });
  if (use_memo && caches_saved && !saw_changes) {
    RunMemo memo{result.findings,
                 result.diagnostics,
                 result.suppressed,
                 result.stats.files_parsed + result.stats.files_cached,
                 result.stats.files_skipped,
                 result.stats.files_deferred,
                 0,
                 {}};
    for (const auto& project : projects) {
      memo.files_failed += project->analysis_failures();
      project->add_dependencies(memo.dependencies);
    }
    std::sort(memo.dependencies.begin(), memo.dependencies.end(),
              [](const FileDependency& a, const FileDependency& b) { return a.path < b.path; });
    memo.dependencies.erase(std::unique(memo.dependencies.begin(), memo.dependencies.end()),
                            memo.dependencies.end());
    std::string error;
    if (!save_run_memo(cache_dir_of(*projects.front()), memo_key, memo, error))
      result.notes.push_back(fmt::format("caching disabled: cannot write the cache: {}", error));
  }
  keep_reported();
  return result;
}

}  // namespace kvlint
