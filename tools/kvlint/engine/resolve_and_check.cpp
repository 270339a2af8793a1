// Stage 5, resolve and check. Takes the analysed files; builds the facts::Project, runs the
// selected rules side by side, and while deferred files remain analyses those the rules'
// questions could need (widen.cpp's demand step) and runs them again. Then drops findings on
// context files, applies suppressions, fingerprints and sorts.
// Invariant: the engine knows no individual rule, and findings are deterministic whatever -j
// and the cache did.
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzers/facts/line_ends.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/engine/project_run.hpp"
#include "tools/kvlint/engine/suppressions.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

namespace {

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

}  // namespace

bool finding_less(const Finding& a, const Finding& b) {
  return std::tie(a.loc.file, a.loc.line, a.loc.column, a.code, a.owner_class, a.message) <
         std::tie(b.loc.file, b.loc.line, b.loc.column, b.code, b.owner_class, b.message);
}

bool diagnostic_less(const Diagnostic& a, const Diagnostic& b) {
  return std::tie(a.path, a.line, a.column, a.kind, a.message) <
         std::tie(b.path, b.line, b.column, b.kind, b.message);
}

void ProjectRun::finish_analysis() {
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
  // Files are in discovery order (sorted by path within a project).
  for (const auto& f : files_)
    if (!f.widened_by.empty()) {
      result_.widened.push_back({f.file.display, std::string(f.widened_by)});
      result_.details.push_back(fmt::format("widening step {} analysed {}", f.widened_by, f.file.display));
    }
}

// The rules run on the files analysed so far. While deferred files remain, the project
// records what the rules ask (facts::Demand); when a deferred file could add to an answer, the
// demanded files are analysed, the widening rounds run again, and the rules run again, so
// their findings are those of a run that analysed every deferred file. Then the analysis is
// final and the last round's findings are taken.
void ProjectRun::run_rules() {
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
  std::optional<facts::Project>& project = project_;
  facts::Demand& demand = demand_;
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
    pull_in(widening_step("demand"), [&] {
      analyse(needed, vocabulary_);
      return true;
    });
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

std::string fingerprint_string(const Finding& finding, std::string_view evidence_text) {
  return fingerprint_parts(finding.code, finding.loc.file, finding.owner_class,
                           normalize_whitespace(evidence_text));
}

}  // namespace kvlint::pipeline
