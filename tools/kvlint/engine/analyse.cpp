// Stage 3, analyse. Takes the files the prefilter passed (later, those widening and the rules'
// demand add); gives each its facts::FileFacts, through the per-file result cache or the front
// end: Python through analyzers/python, C++ through the module cpp_module.cpp loads.
// Invariant: a result is keyed by the content hash, the tool, the configuration and the
// vocabulary, and a C++ one also by its compile command and checked headers; a front-end
// failure on one file is that file's diagnostic, never the run's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>

#include "analyzers/facts/compact.hpp"
#include "analyzers/python/python_frontend.hpp"
#include "tools/kvlint/engine/project_run.hpp"
#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

// The files the prefilter passed and did not defer: those that may hold a seed fact.
void ProjectRun::analyse_seeds() {
  analyse(readable_matching([](const FileState& f) { return f.anchor_hit && !f.deferred; }), vocabulary_);
  // Deferring saves parsing: the deferred files whose facts the cache holds are taken now, so a
  // run over a tree that changed a little (a pre-commit run) asks the rules once, as before.
  if (cache_) analyse(readable_matching([](const FileState& f) { return f.deferred; }), vocabulary_, true);
}

// Analyses `indices` with `vocabulary` (cache first), replacing earlier facts; with
// `cached_only`, takes the Python files the cache holds and leaves the others as they are.
void ProjectRun::analyse(const std::vector<std::size_t>& indices, const facts::Vocabulary& vocabulary,
                         bool cached_only) {
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
      // The front end's own scan is one memmem per needle; the prefilter's is one sampled pass
      // per list (the raw K/V needles are the same whatever the vocabulary).
      if (!state.raw_kv_text) state.raw_kv_text = initial_prefilter_.may_hold_raw_kv(*content);
      analysis.facts = analyzers.local(worker).analyze(state.file.display, *content, state.module_name,
                                                       {.may_hold_raw_kv = state.raw_kv_text});
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
void ProjectRun::analyse_cpp(const std::vector<std::size_t>& indices, const facts::Vocabulary& vocabulary) {
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
    } else if (!cpp.missing_headers.empty() || (cpp.cuda_read_as_cpp && cpp.errors > 0)) {
      d.kind = "degraded";
      // What degraded mode does (cpp_frontend.cpp, degraded_headers.cpp): the LibTorch / CUDA /
      // pybind11 / ggml / ONNX Runtime declarations a missing header brings are stood in for (built in, or
      // the CUDA toolkit's own headers where it is installed); errors a missing declaration explains go
      // unreported; the file's own syntax errors are reported below.
      if (cpp.missing_headers.empty())  // every header found, but no compile command for CUDA
        d.message =
            "analysed without full types: a CUDA file read as C++ (no compile command names it), so the "
            "CUDA compiler's built-ins were not declared, and errors they explain are not reported";
      else
        d.message = fmt::format(
            "analysed without full types: {} not found ({}{}); LibTorch, CUDA, pybind11, ggml and ONNX "
            "Runtime names were read from stand-in declarations, and errors the missing declarations explain "
            "are not reported",
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

bool IncludedFilesCheck::holds(const std::vector<FileDependency>& dependencies) {
  return std::all_of(dependencies.begin(), dependencies.end(), [&](const FileDependency& d) {
    const Seen s = now(d.path);
    return d.content_hash ? s.regular && s.read && s.hash == *d.content_hash : !s.regular;
  });
}

IncludedFilesCheck::Seen IncludedFilesCheck::now(const std::string& path) {
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

}  // namespace kvlint::pipeline
