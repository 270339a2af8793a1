#include "rules/common/spec_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <set>
#include <utility>

namespace kvlint::spec_support {

using facts::Argument;
using facts::CacheSite;
using facts::ClassRef;
using facts::Cover;
using facts::Expression;
using facts::FileFacts;
using facts::Project;
using facts::SpecFact;

// ---------- text ----------

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string without_whitespace(std::string_view text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out.push_back(c);
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::vector<std::string> identifier_words(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) words.push_back(lowercase(current));
    current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    // camelCase boundary: a capital after a lowercase letter or digit.
    if (std::isupper(c) && !current.empty() &&
        (std::islower(static_cast<unsigned char>(current.back())) ||
         std::isdigit(static_cast<unsigned char>(current.back()))))
      flush();
    current.push_back(static_cast<char>(c));
  }
  flush();
  return words;
}

namespace {

bool any_word_in(std::string_view text, std::initializer_list<std::string_view> vocabulary) {
  for (const auto& w : identifier_words(text))
    for (auto v : vocabulary)
      if (w == v) return true;
  return false;
}

std::string expression_words_text(const Expression& e) {
  std::string all = e.text;
  for (const auto& n : e.names) all += " " + n;
  return all;
}

}  // namespace

bool mentions_session(std::string_view text) {
  return any_word_in(text, {"session", "sessions", "sess"});
}

bool mentions_request(const Expression& expression) {
  std::string all = expression_words_text(expression);
  if (mentions_session(all)) return false;
  if (any_word_in(all, {"request", "requests", "req", "reqs", "seq", "seqs", "sequence", "sequences", "rid",
                        "rids", "stream", "streams"}))
    return true;
  // A bare id is a request's unless the key says whose it is (`layer_id`, `bucket_id`).
  if (any_word_in(all,
                  {"layer", "layers",   "bucket", "buckets", "graph", "graphs",   "speaker", "spk", "voice",
                   "lang",  "language", "model",  "head",    "heads", "shape",    "size",    "len", "length",
                   "dtype", "device",   "step",   "task",    "name",  "codebook", "chunk"}))
    return false;
  return any_word_in(all, {"id", "ids", "uid", "uids"});
}

bool iterates_requests(const Expression& iterable) {
  // Token ids are not requests, so `id`/`ids` do not count here.
  return any_word_in(expression_words_text(iterable),
                     {"request", "requests", "req", "reqs", "batch", "seq", "seqs", "sequences"});
}

bool is_plain_name(const Expression& expression) {
  if (expression.literal != facts::LiteralKind::None) return false;
  std::string text = without_whitespace(expression.text);
  if (text.empty()) return false;
  for (char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return !std::isdigit(static_cast<unsigned char>(text.front()));
}

bool reads_name_containing(const Expression& expression, std::string_view needle) {
  for (const auto& n : expression.names)
    if (contains_ci(n, needle)) return true;
  return contains_ci(expression.text, needle);
}

std::vector<std::string> name_tails(const Expression& expression) {
  std::vector<std::string> out;
  auto add = [&](std::string_view dotted) {
    std::string tail(facts::simple_name(dotted));
    if (tail.empty() || tail == "self" || tail == "cls") return;
    if (std::find(out.begin(), out.end(), tail) == out.end()) out.push_back(tail);
  };
  for (const auto& n : expression.names) add(n);
  if (out.empty() && is_plain_name(expression)) add(without_whitespace(expression.text));
  return out;
}

// ---------- values ----------

std::optional<long long> parse_int(std::string_view text) {
  std::string digits;
  for (char c : trim(text))
    if (c != '_' && !std::isspace(static_cast<unsigned char>(c))) digits.push_back(c);
  if (digits.empty()) return std::nullopt;
  bool negative = false;
  std::string_view body = digits;
  if (body.front() == '-' || body.front() == '+') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  int base = 10;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    base = 16;
    body.remove_prefix(2);
  }
  long long value = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value, base);
  if (ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return negative ? -value : value;
}

std::optional<long long> int_value(const Project& project, const FileFacts& file,
                                   std::string_view owner_class, const Expression& expression) {
  if (expression.literal == facts::LiteralKind::Int) {
    if (auto v = parse_int(expression.literal_value)) return v;
    return parse_int(expression.text);
  }
  if (expression.literal == facts::LiteralKind::None) {
    if (auto v = parse_int(expression.text)) return v;  // `-1` written as a unary minus
  }
  if (!is_plain_name(expression)) return std::nullopt;
  std::string dotted = without_whitespace(expression.text);
  std::string_view name = facts::simple_name(dotted);
  std::string_view prefix = std::string_view(dotted).substr(0, dotted.size() - name.size());
  if (prefix.ends_with('.')) prefix.remove_suffix(1);
  // `self.X` / `cls.X` read the enclosing class; `Other.X` reads class Other.
  std::string_view cls = owner_class;
  if (!prefix.empty() && prefix != "self" && prefix != "cls") cls = facts::simple_name(prefix);
  const facts::Constant* constant = project.constant(file, cls, name);
  if (!constant && prefix.empty()) {
    // An imported module-level constant: accept it when exactly one file defines it.
    for (const auto& defined : project.module_constants(name)) {
      if (constant) return std::nullopt;
      constant = defined.second;
    }
  }
  if (!constant || constant->value.literal != facts::LiteralKind::Int) return std::nullopt;
  if (auto v = parse_int(constant->value.literal_value)) return v;
  return parse_int(constant->value.text);
}

// ---------- specs ----------

std::vector<SpecRef> all_specs(const Project& project) {
  std::vector<SpecRef> out;
  for (const auto& file : project.files())
    for (const auto& declaration : file.declarations)
      for (const auto& spec : declaration.specs) out.push_back(SpecRef{&file, &declaration, &spec});
  return out;
}

const Expression* field_value(const SpecFact& spec, std::string_view canonical) {
  const Argument* a = spec.field(canonical);
  return a ? &a->value : nullptr;
}

facts::Location field_loc(const SpecFact& spec, std::string_view canonical) {
  const Argument* a = spec.field(canonical);
  if (a && a->value.loc.line != 0) return a->value.loc;
  return spec.loc;
}

std::string field_string(const SpecFact& spec, std::string_view canonical) {
  const Argument* a = spec.field(canonical);
  if (!a) return {};
  if (a->value.literal == facts::LiteralKind::String) return a->value.literal_value;
  return a->value.text;
}

std::string spec_label(const SpecFact& spec) {
  const Argument* name = spec.field("name");
  if (!name) return "the spec";
  const std::string& shown =
      name->value.literal == facts::LiteralKind::String ? name->value.literal_value : name->value.text;
  return "spec " + code_span(shown);  // a name is any string, backticks included
}

// ---------- cache sites ----------

bool is_window_argument(const Argument& argument) {
  return !argument.keyword.empty() && contains_ci(argument.keyword, "window");
}

const Argument* window_argument(const CacheSite& site) {
  for (const auto& a : site.args)
    if (is_window_argument(a)) return &a;
  // A SlidingWindowCache's max_cache_len is its window.
  if (site.cache_class == "SlidingWindowCache")
    for (const auto& a : site.args)
      if (a.keyword == "max_cache_len") return &a;
  return nullptr;
}

const Argument* bound_argument(const CacheSite& site) {
  for (const auto& a : site.args)
    if (a.keyword == "max_cache_len" || a.keyword == "max_length") return &a;
  return window_argument(site);
}

bool is_sliding_site(const CacheSite& site) {
  return site.cache_class == "SlidingWindowCache" || window_argument(site) != nullptr;
}

bool looks_like_config(const Expression& expression) {
  if (!is_plain_name(expression)) return false;
  std::string tail = lowercase(facts::simple_name(without_whitespace(expression.text)));
  return tail.find("config") != std::string::npos || tail.find("cfg") != std::string::npos;
}

const Argument* site_config(const CacheSite& site) {
  for (const auto& a : site.args)
    if (a.keyword == "config") return &a;
  for (const auto& a : site.args)
    if (a.keyword.empty() && a.position == 0 && looks_like_config(a.value)) return &a;
  return nullptr;
}

const FileFacts* file_of(const Project& project, const CacheSite& site) {
  std::less<const CacheSite*> before;
  for (const auto& file : project.files()) {
    if (file.cache_sites.empty()) continue;
    const CacheSite* first = file.cache_sites.data();
    const CacheSite* last = first + file.cache_sites.size();
    if (!before(&site, first) && before(&site, last)) return &file;
  }
  return nullptr;
}

// ---------- linking ----------

namespace {

struct Candidate {
  SpecRef spec;
  Cover::How how;
  ClassRef declarer;
  const facts::OwnershipHop* hop;
};

// Words too generic to tie a spec to one cache.
bool generic_attribute(std::string_view squashed) {
  for (std::string_view g :
       {"cache", "caches", "kvcache", "kvcaches", "pastkeyvalues", "pastkv", "pkv", "kv"})
    if (squashed == g) return true;
  return false;
}

std::string squash(std::string_view text) {
  std::string out;
  for (char c : text)
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(c)));
  return out;
}

bool capacity_matches(const Project& project, const FileFacts& site_file, const CacheSite& site,
                      const Candidate& c) {
  const Argument* bound = bound_argument(site);
  const Expression* capacity = field_value(*c.spec.spec, "physical_capacity_positions");
  if (!bound || !capacity) return false;
  auto bound_tails = name_tails(bound->value);
  for (const auto& t : name_tails(*capacity))
    if (std::find(bound_tails.begin(), bound_tails.end(), t) != bound_tails.end()) return true;
  auto site_value = int_value(project, site_file, site.owner_class, bound->value);
  auto spec_value = int_value(project, *c.spec.file, c.spec.declaration->owner_class, *capacity);
  return site_value && spec_value && *site_value == *spec_value;
}

bool mention_matches(const CacheSite& site, const Candidate& c) {
  std::string haystack = squash(field_string(*c.spec.spec, "name")) + " " +
                         squash(field_string(*c.spec.spec, "allocation_note"));
  std::string attribute = squash(facts::simple_name(site.retained_as));
  if (attribute.size() >= 3 && !generic_attribute(attribute) && haystack.find(attribute) != std::string::npos)
    return true;
  std::string cls = squash(site.owner_class);
  return !cls.empty() && haystack.find(cls) != std::string::npos;
}

std::optional<Candidate> pick(const Project& project, const FileFacts& site_file, const CacheSite& site,
                              const std::vector<Candidate>& tier, MatchBasis& basis) {
  if (tier.empty()) return std::nullopt;
  std::vector<Candidate> by_capacity;
  for (const auto& c : tier)
    if (capacity_matches(project, site_file, site, c)) by_capacity.push_back(c);
  if (by_capacity.size() == 1) {
    basis = MatchBasis::Capacity;
    return by_capacity.front();
  }
  const auto& pool = by_capacity.empty() ? tier : by_capacity;
  std::vector<Candidate> by_mention;
  for (const auto& c : pool)
    if (mention_matches(site, c)) by_mention.push_back(c);
  if (by_mention.size() == 1) {
    basis = MatchBasis::Mention;
    return by_mention.front();
  }
  if (by_mention.empty() && pool.size() == 1) {
    basis = MatchBasis::OnlySpec;
    return pool.front();
  }
  return std::nullopt;
}

}  // namespace

std::optional<SiteSpecMatch> match_site(const Project& project, ClassRef owner, const CacheSite& site) {
  const FileFacts* site_file = file_of(project, site);
  if (!site_file || !owner) return std::nullopt;
  std::vector<Candidate> own, holders;
  std::set<const SpecFact*> seen;
  for (const Cover& cover : project.coverage(owner)) {
    // A holder that forwards to the owner contributes the owner's own specs,
    // already in the first tier; its own specs describe its own caches.
    if (cover.how == Cover::How::ForwardedByHolder) continue;
    auto& tier = (cover.how == Cover::How::Own || cover.how == Cover::How::Inherited) ? own : holders;
    for (const auto& spec : cover.declaration->specs)
      if (seen.insert(&spec).second)
        tier.push_back(
            Candidate{SpecRef{cover.file, cover.declaration, &spec}, cover.how, cover.declarer, cover.hop});
  }
  for (const auto* tier : {&own, &holders}) {
    MatchBasis basis = MatchBasis::OnlySpec;
    if (auto c = pick(project, *site_file, site, *tier, basis))
      return SiteSpecMatch{site_file, &site, owner, c->spec, c->how, c->declarer, c->hop, basis};
  }
  return std::nullopt;
}

std::vector<SiteSpecMatch> all_matches(const Project& project) {
  std::vector<SiteSpecMatch> out;
  std::set<std::pair<const CacheSite*, const SpecFact*>> seen;
  // Only a covered class's sites can match a spec (match_site reads its coverage).
  for (ClassRef cls : project.covered_classes())
    for (const CacheSite* site : project.cache_sites_of(cls))
      if (auto m = match_site(project, cls, *site))
        if (seen.emplace(site, m->spec.spec).second) out.push_back(*m);
  return out;
}

const facts::BatchEvidence* serialized_evidence(const Project& project, ClassRef cls) {
  if (!cls) return nullptr;
  for (const auto* e : project.batch_evidence_of(cls))
    if (e->kind == facts::BatchEvidence::Kind::TakesFirstElement ||
        e->kind == facts::BatchEvidence::Kind::AssertsBatchOne)
      return e;
  return nullptr;
}

const facts::BatchEvidence* serialized_evidence(const Project& project, const SiteSpecMatch& match) {
  if (const auto* e = serialized_evidence(project, match.owner)) return e;
  if (match.how == Cover::How::DeclaredByHolder)
    if (const auto* e = serialized_evidence(project, match.declarer)) return e;
  for (const facts::Holder& h : project.holders(match.owner))
    if (const auto* e = serialized_evidence(project, h.holder)) return e;
  return nullptr;
}

std::string declared_in_suffix(std::string_view declarer, std::string_view site_owner) {
  return declarer == site_owner ? std::string() : fmt::format(" in `{}`", declarer);
}

}  // namespace kvlint::spec_support
