#include "tools/kvlint/engine/suppressions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rules/registry.hpp"
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr std::string_view kNoReason = "KV901";
constexpr std::string_view kUnknownCode = "KV902";
constexpr std::string_view kUnused = "KV903";
constexpr std::string_view kMalformed = "KV904";

// A malformed suppression (no codes) names nothing: it never suppresses every code.
bool names_code(const facts::Suppression& s, std::string_view code) {
  return std::any_of(s.codes.begin(), s.codes.end(),
                     [&](const std::string& c) { return !c.empty() && code.starts_with(c); });
}

bool code_names(std::string_view written, std::string_view code) {
  return !written.empty() && code.starts_with(written);
}

// Every rule code `written` covers is selected, so "suppressed nothing" is meaningful.
bool fully_selected(std::string_view written, const Config& config) {
  bool any_known = false;
  for (const auto& info : all_rule_infos()) {
    if (!code_names(written, info.code)) continue;
    any_known = true;
    if (!config.is_selected(info.code)) return false;
  }
  return any_known;
}

bool fully_selected(const facts::Suppression& s, const Config& config) {
  return std::all_of(s.codes.begin(), s.codes.end(),
                     [&](const std::string& c) {
                       return fully_selected(c, config) || !is_known_rule_code_or_prefix(c);
                     }) &&
         std::any_of(s.codes.begin(), s.codes.end(),
                     [&](const std::string& c) { return fully_selected(c, config); });
}

// Removes the whole comment (its line, when nothing else is on it).
Fix remove_suppression(const facts::Suppression& s) {
  return Fix{"remove the unused suppression", true, {FixEdit{s.removal.begin, s.removal.end, ""}}};
}

// Removes the unused codes from the list and keeps the rest of the comment as written: a
// code after a kept one goes with the separator before it, a code before every kept one
// with the separator after it. `unused` is parallel to `s.codes`; at least one code stays.
Fix remove_codes(const facts::Suppression& s, const std::vector<char>& unused) {
  Fix fix{"remove the unused codes from the suppression", true, {}};
  bool kept_before = false;
  for (std::size_t i = 0; i < s.code_spans.size(); ++i) {
    if (!unused[i]) {
      kept_before = true;
      continue;
    }
    const FixEdit edit = kept_before ? FixEdit{s.code_spans[i - 1].end, s.code_spans[i].end, ""}
                                     : FixEdit{s.code_spans[i].begin, s.code_spans[i + 1].begin, ""};
    if (!fix.edits.empty() && fix.edits.back().end == edit.begin)
      fix.edits.back().end = edit.end;  // adjacent removals: one edit
    else
      fix.edits.push_back(edit);
  }
  return fix;
}

Finding engine_finding(std::string_view code, const facts::Suppression& s, std::string message) {
  Finding f;
  f.code = std::string(code);
  const RuleInfo* info = find_rule_info(code);
  f.severity = info ? info->severity : Severity::Warning;
  f.loc = s.loc;
  f.message = std::move(message);
  return f;
}

std::string describe_codes(const facts::Suppression& s) {
  std::string out;
  for (const auto& c : s.codes) out += (out.empty() ? "" : ", ") + c;
  return out;
}

}  // namespace

SuppressionOutcome apply_suppressions(std::vector<Finding> findings,
                                      const std::vector<const facts::FileFacts*>& files, const Config& config,
                                      const std::map<std::string, std::filesystem::path>& match_paths) {
  SuppressionOutcome out;
  std::map<std::string, const facts::FileFacts*> by_path;
  for (const auto* f : files) by_path.emplace(f->path, f);
  // Used flags, per file, per suppression index, per code.
  std::map<const facts::FileFacts*, std::vector<std::vector<char>>> used;
  for (const auto* f : files) {
    auto& flags = used[f];
    for (const auto& s : f->suppressions) flags.emplace_back(s.codes.size(), 0);
  }

  auto ignored_by_config = [&](const Finding& f) {
    auto it = match_paths.find(f.loc.file);
    return config.is_ignored_for(
        f.code, it != match_paths.end() ? it->second : std::filesystem::path(f.loc.file.str()));
  };

  // Engine findings about the suppressions themselves.
  for (const auto* file : files) {
    for (const auto& s : file->suppressions) {
      if (!s.malformed.empty()) {
        if (config.is_selected(kMalformed))
          findings.push_back(engine_finding(
              kMalformed, s,
              fmt::format("malformed kvlint suppression suppresses nothing: {}", s.malformed)));
        continue;
      }
      if (s.reason.empty() && config.is_selected(kNoReason))
        findings.push_back(engine_finding(
            kNoReason, s,
            fmt::format("suppression of {} gives no reason; say why after the bracket", describe_codes(s))));
      if (config.is_selected(kUnknownCode))
        for (const auto& c : s.codes)
          if (!is_known_rule_code_or_prefix(c))
            findings.push_back(
                engine_finding(kUnknownCode, s,
                               fmt::format("suppression names unknown code '{}'; it suppresses nothing", c)));
    }
  }

  // Each file's suppressions by the line they apply to, and the distinct codes its file-level
  // ones name: a finding looks at its line's and at those codes, not at every suppression
  // (10,000 `ignore-file` comments times the findings was quadratic). Which file-level
  // suppressions were used follows from the codes of the file's findings, afterwards.
  struct FileSuppressions {
    std::multimap<uint32_t, std::size_t> by_line;
    std::set<std::string> file_level_codes;
    std::set<std::string> finding_codes;
  };
  std::map<const facts::FileFacts*, FileSuppressions> indexed;
  for (const auto* f : files) {
    auto& ix = indexed[f];
    for (std::size_t i = 0; i < f->suppressions.size(); ++i) {
      const auto& s = f->suppressions[i];
      if (s.file_level)
        ix.file_level_codes.insert(s.codes.begin(), s.codes.end());
      else
        ix.by_line.emplace(s.applies_to_line, i);
    }
  }

  for (auto& finding : findings) {
    bool suppressed = false;
    auto it = by_path.find(finding.loc.file);
    if (it != by_path.end()) {
      const auto& sups = it->second->suppressions;
      auto& flags = used[it->second];
      auto& ix = indexed[it->second];
      ix.finding_codes.insert(finding.code);
      // Inline first, so a suppression that also has a per-file-ignore still counts as used.
      for (auto [at, end] = ix.by_line.equal_range(finding.loc.line); at != end; ++at) {
        const auto& s = sups[at->second];
        for (std::size_t c = 0; c < s.codes.size(); ++c)
          if (code_names(s.codes[c], finding.code)) {
            flags[at->second][c] = 1;
            suppressed = true;
          }
      }
      suppressed =
          suppressed || std::any_of(ix.file_level_codes.begin(), ix.file_level_codes.end(),
                                    [&](const std::string& c) { return code_names(c, finding.code); });
    }
    if (!suppressed && ignored_by_config(finding)) suppressed = true;
    if (suppressed)
      ++out.suppressed;
    else
      out.kept.push_back(std::move(finding));
  }

  for (const auto* file : files) {
    const auto& ix = indexed[file];
    auto& flags = used[file];
    for (std::size_t i = 0; i < file->suppressions.size(); ++i) {
      const auto& s = file->suppressions[i];
      if (!s.file_level) continue;
      for (std::size_t c = 0; c < s.codes.size(); ++c)
        flags[i][c] = std::any_of(ix.finding_codes.begin(), ix.finding_codes.end(),
                                  [&](const std::string& code) { return code_names(s.codes[c], code); });
    }
  }

  if (config.is_selected(kUnused)) {
    for (const auto* file : files) {
      const auto& flags = used[file];
      // Only file-level suppressions and per-file-ignores can silence KV903 (no self-reference).
      const bool silenced =
          std::any_of(file->suppressions.begin(), file->suppressions.end(),
                      [&](const facts::Suppression& o) { return o.file_level && names_code(o, kUnused); });
      for (std::size_t i = 0; i < file->suppressions.size(); ++i) {
        const auto& s = file->suppressions[i];
        if (!s.malformed.empty() || names_code(s, kUnused)) continue;
        const bool any_used = std::any_of(flags[i].begin(), flags[i].end(), [](char u) { return u != 0; });
        Finding f;
        if (!any_used) {
          if (!fully_selected(s, config)) continue;
          f = engine_finding(
              kUnused, s, fmt::format("suppression of {} suppressed nothing; remove it", describe_codes(s)));
          if (s.span.end > s.span.begin) f.fix = remove_suppression(s);
        } else {
          // Some codes suppressed something: report the known, fully selected ones that did not.
          std::vector<char> unused(s.codes.size(), 0);
          std::string names;
          for (std::size_t c = 0; c < s.codes.size(); ++c)
            if (!flags[i][c] && is_known_rule_code_or_prefix(s.codes[c]) &&
                fully_selected(s.codes[c], config)) {
              unused[c] = 1;
              names += (names.empty() ? "" : ", ") + s.codes[c];
            }
          if (names.empty()) continue;
          f = engine_finding(
              kUnused, s,
              fmt::format("suppression of {} suppressed nothing through {}; remove {} from the list",
                          describe_codes(s), names, names));
          if (s.code_spans.size() == s.codes.size()) f.fix = remove_codes(s, unused);
        }
        if (silenced || ignored_by_config(f))
          ++out.suppressed;
        else
          out.kept.push_back(std::move(f));
      }
    }
  }
  return out;
}

}  // namespace kvlint
