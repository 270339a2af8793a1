// Helpers shared by the rows, capacity/geometry and protocol-use rules
// (KV2xx, KV4xx, KV5xx): reading spec fields, resolving literal values through
// constants, and linking a cache site to the spec that describes it.
//
// Linking a site to a spec. The specs "covering" a site are those of the
// declarations in Project::coverage(owner), in two tiers: the owner's own or
// inherited declaration first, then declarations of holders that declare specs
// themselves (a holder that only forwards to the owner adds nothing: the
// forwarded specs are the owner's own). Within a tier a site is matched to a
// spec by, in order:
//   1. capacity: the spec's physical_capacity_positions names the same
//      constant/attribute (last dotted component) as the site's bound argument
//      (max_cache_len / max_length / *window*), or both resolve to one integer;
//   2. mention: the spec's `name` or `allocation_note` mentions the attribute
//      the cache is kept in (generic words such as `cache` excluded) or the
//      owner class (case and underscores ignored);
//   3. only spec: the tier holds exactly one spec.
// A step that selects several specs is narrowed by the next step; a step that
// still leaves several (or none, after step 3) gives no match: rules stay
// silent rather than guess.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "rules/common/rule_support.hpp"

namespace kvlint::spec_support {

// ---------- text ----------
std::string lowercase(std::string_view text);
std::string without_whitespace(std::string_view text);
std::string_view trim(std::string_view text);
using rules::contains_ci;  // one case-insensitive substring test for all rules (rule_support.hpp)
// Lowercased identifier words: split on anything not alphanumeric, on `_` and
// on camelCase boundaries ("requestId" -> request, id).
std::vector<std::string> identifier_words(std::string_view text);
// The expression reads something request-like (request/req/seq/rid/stream, or a
// bare id/uid not qualified by another noun such as `layer_id`), and not a session.
bool mentions_request(const facts::Expression& expression);
bool mentions_session(std::string_view text);
// A loop iterable that walks requests (`requests`, `enumerate(batch)`).
bool iterates_requests(const facts::Expression& iterable);
// The expression is a bare (dotted) name: `self.max_cache_len`, `MAX_LEN`.
bool is_plain_name(const facts::Expression& expression);
// Some name read by the expression (or its text) contains `needle`, case-insensitive.
bool reads_name_containing(const facts::Expression& expression, std::string_view needle);
// Last dotted components of the names read, `self`/`cls` dropped.
std::vector<std::string> name_tails(const facts::Expression& expression);

// ---------- values ----------
std::optional<long long> parse_int(std::string_view text);
// Integer value of an expression: an int literal, or a plain name that is a
// Constant with an int literal value (class, then module, then a unique
// module-level constant of that name anywhere in the project).
std::optional<long long> int_value(const facts::Project& project, const facts::FileFacts& file,
                                   std::string_view owner_class, const facts::Expression& expression);

// ---------- specs ----------
struct SpecRef {
  const facts::FileFacts* file = nullptr;
  const facts::Declaration* declaration = nullptr;
  const facts::SpecFact* spec = nullptr;
};
// Every spec of every declaration, in file order.
std::vector<SpecRef> all_specs(const facts::Project& project);
const facts::Expression* field_value(const facts::SpecFact& spec, std::string_view canonical);
// The field's location when the field is present and located, else the spec's.
facts::Location field_loc(const facts::SpecFact& spec, std::string_view canonical);
// A string field's decoded value (name, rows_reason, allocation_note), else its text.
std::string field_string(const facts::SpecFact& spec, std::string_view canonical);
// `name="talker_cache"` for messages, or "the spec" when unnamed.
std::string spec_label(const facts::SpecFact& spec);
// " in `Holder`" when the spec is declared by another class than the site's owner, else "".
std::string declared_in_suffix(std::string_view declarer, std::string_view site_owner);

// ---------- cache sites ----------
// The argument bounding the positions a site holds: max_cache_len, max_length,
// or a window argument. nullptr when none is given.
const facts::Argument* bound_argument(const facts::CacheSite& site);
bool is_window_argument(const facts::Argument& argument);
const facts::Argument* window_argument(const facts::CacheSite& site);
// SlidingWindowCache, or any sliding-window argument.
bool is_sliding_site(const facts::CacheSite& site);
// Dotted name whose last component says config (`self.config`, `text_cfg`).
bool looks_like_config(const facts::Expression& expression);
// The config the cache is built from: `config=` keyword, or a config-looking
// first positional. nullptr when none.
const facts::Argument* site_config(const facts::CacheSite& site);
const facts::FileFacts* file_of(const facts::Project& project, const facts::CacheSite& site);

// ---------- linking sites to specs ----------
enum class MatchBasis { Capacity, Mention, OnlySpec };

struct SiteSpecMatch {
  const facts::FileFacts* site_file = nullptr;
  const facts::CacheSite* site = nullptr;
  facts::ClassRef owner;  // the class whose coverage was used (the site's class or a subclass)
  SpecRef spec;
  facts::Cover::How how = facts::Cover::How::Own;
  facts::ClassRef declarer;
  const facts::OwnershipHop* hop = nullptr;  // holder cases: the declaring holder's hop
  MatchBasis basis = MatchBasis::OnlySpec;
};

// The spec matching `site` as seen from `owner`, or nothing (see the file comment).
std::optional<SiteSpecMatch> match_site(const facts::Project& project, facts::ClassRef owner,
                                        const facts::CacheSite& site);
// Every (site, spec) link in the project, each pair once, in class order.
std::vector<SiteSpecMatch> all_matches(const facts::Project& project);

// ---------- batch evidence ----------
// Evidence that `cls` serves one request at a time (takes element [0],
// asserts batch size 1); nullptr when none. Ancestors included.
const facts::BatchEvidence* serialized_evidence(const facts::Project& project, facts::ClassRef cls);
// Serialization evidence for a linked site: in the owner, else in the holder that
// declares for it, else in a class that directly holds the owner (ming's talker
// takes runtime_additional_information[0] and calls its generator inline).
const facts::BatchEvidence* serialized_evidence(const facts::Project& project, const SiteSpecMatch& match);

}  // namespace kvlint::spec_support
