// Markdown for a reviewer's PR comment: a heading with totals; given confirm
// results, the memory table and the runtime-only findings; then the findings
// grouped by file (a table, then each finding's evidence as a nested list,
// folded in <details> when long), cut short under GitHub's comment limit.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint::reporting {
namespace {

// Escapes text for inline Markdown (and GFM table cells): characters that
// would start emphasis, links, code, HTML, a mention or split a cell are
// escaped, line breaks become <br> so a row stays on one line. Control characters (a file
// name's ESC) are shown escaped, as the text and GitHub reports show them.
std::string escape_inline(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : escape_nonprintable(text, /*keep_line_breaks=*/true)) {
    switch (ch) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '#':
      case '~':
        out += '\\';
        out += ch;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '@':
        // A zero-width space after '@' keeps `@name` from mentioning (and
        // notifying) a user or team, as Renovate does; code spans need none.
        out += "@&#8203;";
        break;
      case '\r':
        break;
      case '\n':
        out += "<br>";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// A code span that survives any backticks in `text` (kvlint::code_span's fence). Inside tables
// '|' still needs a backslash (GFM splits cells before parsing code spans); control characters
// are shown escaped, as the text and GitHub reports show them.
std::string code_span(std::string_view text, bool in_table = true) {
  std::string body;
  body.reserve(text.size());
  for (char ch : escape_nonprintable(text, /*keep_line_breaks=*/true)) {
    if (ch == '|' && in_table) {
      body += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      body += ' ';
    } else {
      body += ch;
    }
  }
  return kvlint::code_span(body);
}

// A verdict as read from a confirm JSON: one of the known words as it is, anything else (the
// file is input like any other) escaped after "unknown verdict", so it renders as neither HTML,
// a mention, a heading nor a fence.
std::string verdict_markdown(std::string_view verdict) {
  for (std::string_view known :
       {"confirmed", "refuted", "not-exercised", "inconclusive", "not-checked", "not-run"})
    if (verdict == known) return std::string(verdict);
  return "unknown verdict " + escape_inline(verdict);
}

std::string markdown_location(const facts::Location& loc) {
  return fmt::format("{}:{}:{}", loc.file, loc.line, loc.column);
}

// A message whose `code` spans stay code spans: the text between them is
// escaped, each span gets a fence longer than any backtick run inside it.
std::string message_markdown(std::string_view message, bool in_table) {
  std::string out;
  for (const MessagePart& part : split_code_spans(message)) {
    if (part.code) {
      out += code_span(part.text, in_table);
    } else {
      out += escape_inline(part.text);
    }
  }
  return out;
}

std::string code_cell(const Finding& finding) {
  const std::string name = rule_name(finding.code);
  if (name.empty()) return escape_inline(finding.code);
  return fmt::format("{} {}", escape_inline(finding.code), code_span(name));
}

// GitHub rejects a comment longer than 65,536 characters; the report stops
// adding findings before that (bytes, which are never fewer than characters)
// and says how many it left out.
constexpr std::size_t kCommentLimit = 65536;
constexpr std::size_t kFooterReserve = 600;
// Evidence longer than this many lines is folded into <details>.
constexpr std::size_t kOpenEvidenceLines = 3;

std::string heading(const CheckResult& result, const Totals& totals, const ReviewData* review) {
  std::string text;
  if (result.findings.empty()) {
    text = "## kvlint: all checks passed";
  } else {
    text = fmt::format("## kvlint: {} ({})", plural(result.findings.size(), "finding", "findings"),
                       severity_breakdown(totals));
  }
  std::string details;
  if (result.suppressed > 0) details += fmt::format("{} suppressed", result.suppressed);
  if (!result.diagnostics.empty()) {
    if (!details.empty()) details += ", ";
    details += plural(result.diagnostics.size(), "input problem", "input problems");
  }
  if (!details.empty()) text += "; " + details;
  text += "\n\n";
  if (result.stats.files_found > 0 || !review)
    text += fmt::format("{} checked.\n", plural(result.stats.files_found, "file", "files"));
  if (review) {
    std::map<std::string, std::size_t> verdicts;
    for (const Finding& f : result.findings) {
      auto it = review->verdicts.find(review_key(f));
      ++verdicts[it == review->verdicts.end() ? std::string("not-run") : it->second.verdict];
    }
    std::string parts;
    for (const auto& [verdict, count] : verdicts)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", count, verdict_markdown(verdict));
    text +=
        fmt::format("Runtime (`kvlint confirm`): {}{}.\n", parts.empty() ? "" : parts + "; ",
                    plural(review->runtime_findings.size(), "runtime-only finding", "runtime-only findings"));
  }
  return text;
}

std::string memory_markdown(const ReviewData& review) {
  if (review.memory.empty()) return {};
  std::string out = "\n### Declared vs observed memory\n\n";
  if (review.max_num_seqs)
    for (const Projection& p : project(review.memory, *review.max_num_seqs))
      out += fmt::format(
          "- This model's local KV is **{}** at max_num_seqs={} ({}; declared; the observed caches scale to "
          "{}).\n",
          format_bytes(p.declared_bytes), *review.max_num_seqs, code_span(p.model, false),
          format_bytes(p.observed_bytes));
  if (review.max_num_seqs) out += "\n";
  out +=
      "| Model | Path | Concurrency | Owner | Declared / row | Observed / row | Declared | Observed |\n"
      "|---|---|---:|---|---:|---:|---:|---:|\n";
  for (const MemoryRow& row : review.memory)
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", code_span(row.model), code_span(row.path),
                    row.concurrency, row.owner.empty() ? std::string() : code_span(row.owner),
                    format_bytes(row.declared_bytes_per_row), format_bytes(row.observed_bytes_per_row),
                    format_bytes(row.declared_bytes), format_bytes(row.observed_bytes));
  if (review.base_memory) {
    out +=
        "\n#### Change in declared bytes against the base\n\n| Model | Path | Concurrency | Base | This "
        "change | "
        "Change |\n|---|---|---:|---:|---:|---:|\n";
    const auto base = totals_by_concurrency(*review.base_memory);
    for (const ConcurrencyTotal& t : totals_by_concurrency(review.memory)) {
      auto was = std::find_if(base.begin(), base.end(), [&t](const ConcurrencyTotal& b) {
        return b.model == t.model && b.path == t.path && b.concurrency == t.concurrency;
      });
      const int64_t before = was != base.end() ? was->declared_bytes : 0;
      const int64_t delta = t.declared_bytes - before;
      out += fmt::format("| {} | {} | {} | {} | {} | {}{} |\n", code_span(t.model), code_span(t.path),
                         t.concurrency, was != base.end() ? format_bytes(before) : "(not measured)",
                         format_bytes(t.declared_bytes),
                         delta > 0   ? "+"
                         : delta < 0 ? "-"
                                     : "",
                         format_bytes(delta < 0 ? -delta : delta));
    }
  }
  return out;
}

std::string runtime_markdown(const ReviewData& review) {
  if (review.runtime_findings.empty() && review.models.empty()) return {};
  std::string out =
      "\n### Models booted by `kvlint confirm`\n\n| Model | Status | Device | Reason |\n|---|---|---|---|\n";
  for (const ReviewModel& m : review.models)
    out += fmt::format("| {} | {} | {} | {} |\n", code_span(m.name), escape_inline(m.status),
                       escape_inline(m.device), message_markdown(m.reason, true));
  if (review.runtime_findings.empty()) return out;
  out += "\n### Runtime-only findings\n\n| Code | Location | Owner | Message |\n|---|---|---|---|\n";
  for (const ReviewRuntimeFinding& rt : review.runtime_findings)
    out += fmt::format("| {} {} | {} | {} | {} |\n", escape_inline(rt.finding.code),
                       rt.name.empty() ? std::string() : code_span(rt.name),
                       code_span(fmt::format("{}:{}", rt.finding.loc.file, rt.finding.loc.line)),
                       rt.finding.owner_class.empty() ? std::string() : code_span(rt.finding.owner_class),
                       message_markdown(rt.finding.message, true));
  return out;
}

// The related locations and runtime evidence of one finding, folded into
// <details> when long; empty when it has none.
std::string evidence_markdown(const Finding& finding, const ReviewVerdict* verdict) {
  std::vector<std::string> lines;
  for (const RelatedLocation& related : finding.related)
    lines.push_back(fmt::format("  - {}: {}\n", code_span(markdown_location(related.loc), false),
                                message_markdown(related.message, false)));
  if (verdict && !verdict->summary.empty())
    lines.push_back(fmt::format("  - runtime ({}): {}\n", verdict_markdown(verdict->verdict),
                                message_markdown(verdict->summary, false)));
  if (lines.empty()) return {};
  const std::string title = fmt::format("**{}** at line {}", escape_inline(finding.code), finding.loc.line);
  std::string body;
  for (const auto& line : lines) body += line;
  if (lines.size() <= kOpenEvidenceLines && body.size() < 600) return fmt::format("- {}\n{}", title, body);
  return fmt::format("- <details><summary>{}: {} lines of evidence</summary>\n\n{}\n  </details>\n", title,
                     lines.size(), body);
}

}  // namespace

std::string render_markdown(const CheckResult& result, const ReportOptions& options) {
  const ReviewData* review = options.review;
  const Totals totals = count_findings(result.findings);
  std::string out = heading(result, totals, review);

  if (options.statistics && !result.findings.empty()) {
    out += "\n| Count | Code | Name | Severity |\n|---:|---|---|---|\n";
    for (const CodeCount& row : code_statistics(result.findings)) {
      out += fmt::format("| {} | {} | {} | {} |\n", row.count, escape_inline(row.code),
                         row.name.empty() ? std::string() : code_span(row.name), to_string(row.severity));
    }
    return out;
  }
  if (review) out += memory_markdown(*review) + runtime_markdown(*review);

  // Findings grouped by file, in the result's order (sorted by path).
  std::size_t shown = 0;
  std::size_t index = 0;
  while (index < result.findings.size()) {
    const std::string& file = result.findings[index].loc.file;
    std::string block =
        fmt::format("\n### {}\n\n| Severity | Code | Line | Owner | Message |{}\n|---|---|---:|---|---|{}\n",
                    code_span(file, false), review ? " Verdict |" : "", review ? "---|" : "");
    std::string evidence;
    std::size_t in_block = 0;
    bool full = false;
    for (; index < result.findings.size() && result.findings[index].loc.file == file; ++index) {
      const Finding& finding = result.findings[index];
      const ReviewVerdict* verdict = nullptr;
      if (review) {
        auto it = review->verdicts.find(review_key(finding));
        if (it != review->verdicts.end()) verdict = &it->second;
      }
      std::string row = fmt::format(
          "| {} | {} | {}:{} | {} | {} |", to_string(finding.severity), code_cell(finding), finding.loc.line,
          finding.loc.column, finding.owner_class.empty() ? std::string() : code_span(finding.owner_class),
          message_markdown(finding.message, true));
      if (review)
        row += fmt::format(" {} |", verdict ? verdict_markdown(verdict->verdict) : std::string("not-run"));
      row += "\n";
      const std::string more = evidence_markdown(finding, verdict);
      if (out.size() + block.size() + evidence.size() + row.size() + more.size() + 1 + kFooterReserve >
          kCommentLimit) {
        full = true;
        break;
      }
      block += row;
      evidence += more;
      ++in_block;
    }
    if (in_block > 0) out += block + (evidence.empty() ? std::string() : "\n" + evidence);
    shown += in_block;
    if (full) break;
  }
  if (shown < result.findings.size())
    out += fmt::format(
        "\n**{} more {}** not shown: a GitHub comment holds at most 65,536 characters. The whole "
        "report: `kvlint check --format html -o report.html`.\n",
        result.findings.size() - shown, result.findings.size() - shown == 1 ? "finding" : "findings");

  if (!result.diagnostics.empty()) {
    std::string problems = "\n### Input problems\n\n";
    std::size_t listed = 0;
    for (const Diagnostic& diagnostic : result.diagnostics) {
      std::string line = fmt::format("- {} {}: {}\n", code_span(diagnostic_where(diagnostic), false),
                                     code_span(diagnostic.kind, false), escape_inline(diagnostic.message));
      if (out.size() + problems.size() + line.size() + 200 > kCommentLimit) break;
      problems += line;
      ++listed;
    }
    if (listed < result.diagnostics.size())
      problems += fmt::format("- {} more\n",
                              plural(result.diagnostics.size() - listed, "input problem", "input problems"));
    out += problems;
  }
  return out;
}

}  // namespace kvlint::reporting
