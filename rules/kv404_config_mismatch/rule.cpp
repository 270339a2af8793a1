// KV404 config-mismatch: spec_from_hf_config(X) while the cache is built from config Y.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{"KV404", "config-mismatch", Severity::Error,
                         "spec_from_hf_config(X) describes a cache built from a different config Y.",
                         R"doc(## What it does
Links each cache site to its spec (same linking as KV202) and compares the config the spec is
derived from (`spec_from_hf_config(X, ...)`) with the config the cache is built from (the
`config=` argument, or a config-looking first positional such as `StaticCache(self.text_config, ...)`).
It fires when the last attribute components differ (`self.config` vs `self.text_config`,
`self.config` vs `self.talker_config`). `config` in one method and `self.config` in another
compare equal, as do `self._llm_config` and the `llm_config` parameter it was set from (leading
and trailing underscores are ignored, so C++'s member `config_` matches the parameter `config`),
and `self._llm_config` in the owner and `self.gen._llm_config` in a holder.
A spec declared by a holder is compared only when its config path reaches into the held object
(`self.gen._llm_config`): a holder's `self.config.codec_config` may well be what it passed to the
held class as that class's `self.config`, and the facts do not say.

## Why it matters
`spec_from_hf_config()` reads layers, kv-heads, head-dim (and checks dtype) from the config it is
given. Multimodal models carry several configs -- a thinker, a talker, an audio encoder -- with
different geometry, so deriving the spec from the wrong one declares a different model's cache.
The reference document: "Prefer `spec_from_hf_config()` and pass the same config object the cache
is built from."

## Example
```python
self.cache = StaticCache(config=self.talker_config, max_batch_size=1, max_cache_len=TALKER_MAX_CACHE_LEN)
...
spec_from_hf_config(self.config, name="talker_static_cache", ...)     # KV404
```
Fixed:
```python
spec_from_hf_config(self.talker_config, name="talker_static_cache", ...)
```

## How to fix
Pass the same config object to `spec_from_hf_config()` that the cache constructor receives.
)doc"};

// Last dotted component without leading or trailing underscores: `self._llm_config` and the
// `llm_config` parameter it was set from compare equal, as do C++'s member `config_` and the
// constructor parameter `config` it was initialised from.
std::string last_component(const facts::Expression& e) {
  // A local alias (`cfg = self._llm_config`) compares as what it holds.
  std::string text = ss::without_whitespace(e.alias_of.empty() ? e.text : e.alias_of);
  std::string_view tail = facts::simple_name(text);
  while (tail.starts_with('_')) tail.remove_prefix(1);
  while (tail.ends_with('_')) tail.remove_suffix(1);
  return std::string(tail);
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& match : ss::all_matches(project)) {
      const auto& spec = *match.spec.spec;
      if (spec.constructor != "spec_from_hf_config" || !spec.config) continue;
      const facts::Argument* built_from = ss::site_config(*match.site);
      if (!built_from) continue;
      // A holder's `self.config.codec_config` names the holder's attribute, which it
      // may pass to the held class as that class's `self.config`: only a path that
      // reaches into the held object (`self.gen._llm_config`) is comparable.
      if (match.how == facts::Cover::How::DeclaredByHolder &&
          (!match.hop ||
           !ss::without_whitespace(spec.config->text).starts_with("self." + match.hop->attribute + ".")))
        continue;
      if (match.how == facts::Cover::How::DeclaredByHolder && !built_from->value.text.starts_with("self."))
        continue;
      // Built for a module that declares: the module's `self.config` is not the site's.
      if (match.how == facts::Cover::How::DeclaredByBuiltFor) continue;
      std::string spec_tail = last_component(*spec.config);
      std::string site_tail = last_component(built_from->value);
      if (spec_tail.empty() || site_tail.empty() || spec_tail == site_tail) continue;

      const auto& site = *match.site;
      facts::Location loc = spec.config->loc.line ? spec.config->loc : spec.loc;
      const std::string& declarer = match.spec.declaration->owner_class;
      std::string where = ss::declared_in_suffix(declarer, site.owner_class);
      Finding f = kvlint::make_finding(kInfo, loc, site.owner_class);
      const rules::Spelling spelling = rules::Spelling::of(*match.spec.file);
      f.message = fmt::format(
          "`{}` builds `{}` from `{}` (line {}) but {}{} is derived from `{}({})` (line "
          "{}): "
          "the declared geometry comes from a different config; pass `{}`",
          site.owner_class, spelling.code(site.written), built_from->value.text, site.loc.line,
          ss::spec_label(spec), where, spelling.spec_constructor(spec.constructor), spec.config->text,
          loc.line, built_from->value.text);
      f.related.push_back({built_from->value.loc.line ? built_from->value.loc : site.loc,
                           fmt::format("cache built from `{}` here", built_from->value.text)});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv404_config_mismatch() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
