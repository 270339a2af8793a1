// Stage 2, prefilter. Takes the read files; marks those holding a vocabulary anchor
// (FileState::anchor_hit) and, of the Python ones, those that can only give context
// (FileState::deferred, analysed when a rule asks). Also the remembered text scans every later
// stage uses (scan_for, containing_any), whose results the file index keeps.
// Invariant: a text test may say yes wrongly, never no (ARCHITECTURE.md): a file it skips
// gives no fact a rule reads.
#include <string.h>
#include <xxhash.h>

#include <algorithm>
#include <new>
#include <span>

#include "analyzers/python/text_scan.hpp"
#include "tools/kvlint/engine/project_run.hpp"
#include "tools/kvlint/engine/token_summary.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

namespace {

// The needles of `list` that NeedleSearch samples (`sampled`), or the others.
std::vector<std::string> raw_kv_needles(std::span<const std::string_view> list, bool sampled) {
  std::vector<std::string> out;
  for (std::string_view n : list)
    if ((n.size() >= NeedleSearch::kWindow) == sampled) out.emplace_back(n);
  return out;
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

bool has_text(std::string_view content, std::string_view needle) {
  return ::memmem(content.data(), content.size(), needle.data(), needle.size()) != nullptr;
}

// Plain code that sizes rows from a lifetime (KV204) names no protocol anchor: a function
// over whatever the models report, with its own enum. Such a file reads a scope and the
// engine's per-sequence multiplicity (`max_num_seqs`) together.
bool reads_scope_and_multiplicity(std::string_view content) {
  auto has = [&](std::string_view needle) { return has_text(content, needle); };
  return has("num_seqs") && (has("scope") || has("Scope"));  // the rare one first: one pass for most files
}

// Raw device K/V laid out in a buffer the class is handed (analyzers/cpp/device_kv.cpp) has no
// name to anchor on: such a file takes an untyped buffer (`init_buffer(void* buf)`) and launches
// device code that writes it (`<<<...>>>`, or a host launcher: `ker_append_kv_launcher`).
bool lays_out_device_memory(std::string_view content) {
  auto has = [&](std::string_view needle) { return has_text(content, needle); };
  return (has("void*") || has("void *")) && (has("launch") || has("<<<"));
}

}  // namespace

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

PrefilterScan::PrefilterScan(const facts::Vocabulary& v)
    : PrefilterScan(prefilter_anchors(v), cpp_prefilter_anchors(v), seed_anchors(v), v.cache_classes) {}

PrefilterScan::PrefilterScan(const std::vector<std::string>& python, const std::vector<std::string>& cpp,
                             const std::vector<std::string>& seeds,
                             const std::vector<std::string>& cache_classes)
    : raw_kv_allocations_(raw_kv_needles(python::raw_kv_allocations(), true)),
      raw_kv_markers_(raw_kv_needles(python::raw_kv_markers(), true)),
      raw_kv_short_markers_(raw_kv_needles(python::raw_kv_markers(), false)),
      python_search_(python),
      cpp_search_(cpp),
      seed_search_(seeds),
      cache_classes_(cache_classes),
      // "+raw-kv": the Python scans also pass python::may_hold_raw_kv's files ("2": its markers
      // took `att_cache`, so a file index's earlier answers are not this scan's).
      python_id_(scan_id("prefilter+raw-kv2", false, python)),
      cpp_id_(scan_id("prefilter-cpp+device-layout", false, cpp)),
      seed_id_(scan_id("seed+raw-kv2", false, seeds) ^ scan_id("seed-cache-classes", false, cache_classes)) {}

bool PrefilterScan::found_in(bool is_cpp, std::string_view content) const {
  return is_cpp ? cpp_search_.found_in(content) || lays_out_device_memory(content)
                : python_search_.found_in(content) || reads_scope_and_multiplicity(content) ||
                      may_hold_raw_kv(content);
}

bool PrefilterScan::may_hold_raw_kv(std::string_view content) const {
  if (!raw_kv_allocations_.found_in(content)) return false;
  return raw_kv_markers_.found_in(content) ||
         std::any_of(raw_kv_short_markers_.begin(), raw_kv_short_markers_.end(),
                     [&](const std::string& n) { return content.find(n) != std::string_view::npos; });
}

bool PrefilterScan::may_hold_seed(std::string_view content) const {
  return seed_search_.found_in(content) || reads_scope_and_multiplicity(content) ||
         python::may_build_cache(content, cache_classes_) || python::passes_use_cache_true(content) ||
         may_hold_raw_kv(content);
}

// What text scan `scan` found in `f`: earlier in this run, or in the run the file index
// recorded it from (then it counts as used by this one); nullopt when it has not run on these bytes.
std::optional<bool> ProjectRun::recalled(FileState& f, std::uint64_t scan) {
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
bool ProjectRun::scan_for(FileState& f, std::uint64_t scan,
                          const std::function<bool(std::string_view)>& search,
                          const std::function<bool(std::string_view)>& summary_may_match) {
  if (const std::optional<bool> hit = recalled(f, scan)) return *hit;
  // The token summary of a file whose bytes are not kept says no without reading them.
  if (!f.kept && f.tokens && summary_may_match) {
    std::string scratch;
    if (!summary_may_match(f.tokens->text(scratch))) {
      f.scans.push_back({scan, false});
      return false;
    }
  }
  const FileBytes content = reread(f);
  if (!content) return false;
  const bool hit = search(*content);
  f.scans.push_back({scan, hit});
  return hit;
}

// Those of `indices` whose bytes contain one of `needles` (where `start` lets it start), in order.
std::vector<std::size_t> ProjectRun::containing_any(const std::vector<std::size_t>& indices,
                                                    const std::vector<std::string>& needles,
                                                    NeedleSearch::Start start) {
  // One sampled pass per file for all needles (class names times three spellings), not
  // one memmem per needle: a pre-commit run searched every unanalysed file this way.
  const NeedleSearch search(needles, start);
  const std::uint64_t scan = scan_id("needles", start == NeedleSearch::Start::WordStart, needles);
  std::vector<char> hit(files_.size(), 0);
  parallel_over(indices, [&](std::size_t i) {
    hit[i] = scan_for(
        files_[i], scan, [&](std::string_view content) { return search.found_in(content); },
        [&](std::string_view tokens) {
          return std::any_of(needles.begin(), needles.end(), [&](const std::string& needle) {
            return summary_may_contain(tokens, needle, start);
          });
        });
  });
  std::vector<std::size_t> out;
  for (std::size_t i : indices)
    if (hit[i]) out.push_back(i);
  return out;
}

// The prefilter: files that contain no anchor cannot produce facts a rule reads. Of the
// Python files that do, those that can give context only are deferred (defer_context_).
void ProjectRun::prefilter() {
  parallel_over(readable_matching([](const FileState&) { return true; }), [&](std::size_t i) {
    FileState& f = files_[i];
    f.anchor_hit = scan_for(f, initial_prefilter_.id(f.is_cpp),
                            [&](std::string_view c) { return initial_prefilter_.found_in(f.is_cpp, c); });
    if (f.anchor_hit && !f.is_cpp && defer_context_)
      f.deferred = !scan_for(f, initial_prefilter_.seed_id(),
                             [&](std::string_view c) { return initial_prefilter_.may_hold_seed(c); });
  });
}

}  // namespace kvlint::pipeline
