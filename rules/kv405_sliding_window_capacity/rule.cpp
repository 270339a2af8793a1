// KV405 sliding-window-capacity: a sliding-window cache declared with a capacity
// other than sliding_window - 1.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <set>

#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{"KV405", "sliding-window-capacity", Severity::Warning,
                         "A sliding-window cache declared with a capacity other than sliding_window - 1.",
                         R"doc(## What it does
Warns when a spec describes a sliding-window cache and its `physical_capacity_positions` is not
`<...>.sliding_window - 1`. A spec describes a sliding-window cache when the cache it is linked to
(same linking as KV202) is a `SlidingWindowCache` or is given a window argument
(`sliding_window=`, `window_length=`), or when the spec's `name`, `capacity_source` or capacity
expression mentions "sliding". Accepted capacities: `X.sliding_window - 1`, `W - 1` where `W` is
the window expression the constructor is given, and an integer (or int constant) equal to a known
literal window minus one (the constructor's window argument, or a constant whose name contains
`SLIDING_WINDOW`).

## Why it matters
A sliding `DynamicCache` keeps the last `sliding_window - 1` positions, not `sliding_window`, and
certainly not `max_model_len`. The reference document's Qwen3-TTS codec decoder is "bounded by
`sliding_window - 1 = 71`" at 4.44 MiB per row; declaring the window itself, or a model-length
bound, misstates every row by a factor the reviewer cannot see.

## Example
```python
spec_from_hf_config(self.config, name="codec_decoder_sliding_cache",
                    physical_capacity_positions=self.config.sliding_window,     # KV405
                    capacity_source="sliding_window", ...)
```
Fixed:
```python
                    physical_capacity_positions=self.config.sliding_window - 1,
                    capacity_source="sliding_window - 1 = 71", ...)
```

## How to fix
Declare `sliding_window - 1`, read from the same config or constant the cache's window comes from.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    auto matches = ss::all_matches(project);
    for (const auto& ref : ss::all_specs(project)) {
      const auto& spec = *ref.spec;
      const auto* capacity = ss::field_value(spec, "physical_capacity_positions");
      if (!capacity) continue;
      const std::string& owner = ref.declaration->owner_class;

      std::vector<const ss::SiteSpecMatch*> sliding_sites;
      for (const auto& m : matches)
        if (m.spec.spec == &spec && ss::is_sliding_site(*m.site)) sliding_sites.push_back(&m);
      bool says_sliding = ss::contains_ci(ss::field_string(spec, "name"), "sliding") ||
                          ss::contains_ci(ss::field_string(spec, "capacity_source"), "sliding") ||
                          ss::reads_name_containing(*capacity, "sliding");
      if (sliding_sites.empty() && !says_sliding) continue;

      if (accepted(project, ref, *capacity, sliding_sites)) continue;

      facts::Location loc = ss::field_loc(spec, "physical_capacity_positions");
      const rules::Spelling spelling = rules::Spelling::of(*ref.file);
      std::string evidence;
      if (!sliding_sites.empty()) {
        const auto& site = *sliding_sites.front()->site;
        const facts::Argument* w = ss::window_argument(site);
        evidence = w ? fmt::format("`{}` is built with {} (line {})", spelling.code(site.written),
                                   spelling.argument(w->keyword, w->value.text), site.loc.line)
                     : fmt::format("`{}` is a sliding-window cache (line {})", spelling.code(site.written),
                                   site.loc.line);
      } else {
        evidence = "the spec describes a sliding-window cache";
      }
      Finding f = kvlint::make_finding(kInfo, loc, sliding_sites.empty() ? owner : sliding_sites.front()->site->owner_class);
      f.message = fmt::format(
          "`{}` declares `{}` for {} (line {}) but {}: a sliding-window "
          "cache holds `sliding_window - 1` positions; declare that",
          owner, spelling.field("physical_capacity_positions", capacity->text), ss::spec_label(spec),
          loc.line, evidence);
      f.related.push_back({spec.loc, "the spec"});
      for (const auto* m : sliding_sites)
        f.related.push_back({m->site->loc, "sliding-window cache built here"});
      out.push_back(std::move(f));
    }
  }

 private:
  // `physical_capacity_positions=physical` with `physical = self.window - 1` earlier in
  // the declaration: the local's value (one level), else the field as written.
  static const facts::Expression& through_local(const facts::Declaration& declaration,
                                                const facts::Expression& capacity) {
    const std::string name = ss::without_whitespace(capacity.text);
    const facts::Expression* bound = &capacity;
    for (const auto& local : declaration.local_assignments)
      if (local.name == name && local.loc.line <= capacity.loc.line) bound = &local.value;
    return *bound;
  }
  // `self.prefix_length` where the class sets `self.prefix_length =
  // int(getattr(config, "sliding_window", 0))`: the window, read through the attribute.
  static bool attribute_reads_sliding_window(const facts::Project& project, const facts::FileFacts& file,
                                             const std::string& owner_class, std::string_view window) {
    constexpr std::string_view kSelf = "self.";
    if (!window.starts_with(kSelf)) return false;
    std::string_view attribute = window.substr(kSelf.size());
    if (attribute.empty() || attribute.find_first_of(".[(") != std::string_view::npos) return false;
    const facts::ClassRef owner = project.class_of(file, owner_class);
    if (!owner) return false;
    for (const facts::AttributeAssignment* a : project.attribute_assignments_of(owner, attribute)) {
      if (ss::contains_ci(a->value.text, "sliding_window")) return true;
      for (const auto& n : a->value.names)
        if (ss::contains_ci(n, "sliding_window")) return true;
    }
    return false;
  }
  static bool accepted(const facts::Project& project, const ss::SpecRef& ref,
                       const facts::Expression& capacity,
                       const std::vector<const ss::SiteSpecMatch*>& sliding_sites) {
    const facts::Expression& resolved = through_local(*ref.declaration, capacity);
    std::string text = ss::without_whitespace(resolved.text);
    if (text.size() > 2 && text.ends_with("-1")) {
      std::string window = text.substr(0, text.size() - 2);
      std::string tail = ss::lowercase(facts::simple_name(window));
      if (tail.find("sliding_window") != std::string::npos) return true;
      if (attribute_reads_sliding_window(project, *ref.file, ref.declaration->owner_class, window))
        return true;
      for (const auto* m : sliding_sites)
        if (const auto* w = ss::window_argument(*m->site);
            w && ss::without_whitespace(w->value.text) == window)
          return true;
    }
    auto value = ss::int_value(project, *ref.file, ref.declaration->owner_class, resolved);
    if (!value) return false;
    std::set<long long> windows;
    for (const auto* m : sliding_sites)
      if (const auto* w = ss::window_argument(*m->site))
        if (auto v = ss::int_value(project, *m->site_file, m->site->owner_class, w->value))
          windows.insert(*v);
    auto add_constants = [&](const facts::FileFacts& file) {
      for (const auto& c : file.constants)
        if (ss::contains_ci(c.name, "sliding_window") && c.value.literal == facts::LiteralKind::Int)
          if (auto v = ss::parse_int(c.value.literal_value)) windows.insert(*v);
    };
    add_constants(*ref.file);
    for (const auto* m : sliding_sites) add_constants(*m->site_file);
    return windows.count(*value + 1) > 0;
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv405_sliding_window_capacity() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
