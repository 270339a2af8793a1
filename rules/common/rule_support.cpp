#include "rules/common/rule_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "rules/common/spelling.hpp"

namespace kvlint::rules {

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string_view library_name(facts::TensorLibrary library) {
  switch (library) {
    case facts::TensorLibrary::Ggml:
      return "ggml";
    case facts::TensorLibrary::OnnxRuntime:
      return "ONNX Runtime";
    case facts::TensorLibrary::LibTorch:
      break;
  }
  return "LibTorch";
}

// "self._caches" -> "_caches"; "self.cfg.x" -> "cfg.x"; anything else -> "".
std::string strip_self(std::string_view dotted) {
  constexpr std::string_view kSelf = "self.";
  if (!dotted.starts_with(kSelf)) return {};
  return std::string(dotted.substr(kSelf.size()));
}

// The member a site keeps its tensor in, quoted: "`k_cache`" for "self.k_cache", "`k`" for a
// store's "cache.k" (written through a reference to the store).
std::string kept_member(const facts::CacheSite& site) {
  std::string member = strip_self(site.retained_as);
  if (member.empty()) member = site.retained_as.substr(site.retained_as.rfind('.') + 1);
  return member.empty() ? std::string() : code_span(member);
}

}  // namespace

bool contains_ci(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end();
}

bool mentions(const facts::Expression& expression, std::string_view word) {
  if (contains_ci(expression.text, word)) return true;
  return std::any_of(expression.names.begin(), expression.names.end(),
                     [&](const std::string& n) { return contains_ci(n, word); });
}

bool guard_mentions(const facts::Guard& guard, std::string_view word) {
  auto any = [&](const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& n) { return contains_ci(n, word); });
  };
  return mentions(guard.condition, word) || any(guard.self_attributes) || any(guard.parameters);
}

std::string quoted(std::string_view text) {
  return code_span(text);
}

bool foreign_tensor(const facts::CacheSite& site) {
  return site.tensor_library != facts::TensorLibrary::LibTorch;
}

std::string describe_construction(const facts::CacheSite& site, std::string_view verb) {
  if (foreign_tensor(site)) {
    // What was seen: the library's tensor, the members that keep it and the call that made it.
    const std::string_view kind = site.tensor_library == facts::TensorLibrary::Ggml ? "tensor" : "value";
    if (site.stores_existing)
      return fmt::format("keeps a {} K/V store {} (a `{}`) that `{}` fills",
                         library_name(site.tensor_library), kept_member(site), site.cache_class,
                         site.written);
    if (site.raw_kv)
      return fmt::format("keeps {} K/V {}{} {} that `{}` returns", library_name(site.tensor_library), kind,
                         site.raw_kv->members.size() == 1 ? "" : "s", raw_kv_members(*site.raw_kv),
                         site.written);
    const std::string member = kept_member(site);
    return fmt::format("allocates {} K/V {}{}{} with `{}`", library_name(site.tensor_library), kind,
                       member.empty() ? "" : " ", member, site.written);
  }
  if (site.raw_kv) {
    // What was seen, not a class: the tensors and how they were allocated (or, with no
    // allocation of their own, grown by concatenation).
    const bool grown = site.written.ends_with("cat") || site.written.ends_with("concat") ||
                       site.written.ends_with("concatenate");
    return fmt::format("{} raw K/V tensor{} {} {} `{}`", grown ? "grows" : "allocates",
                       site.raw_kv->members.size() == 1 ? "" : "s", raw_kv_members(*site.raw_kv),
                       grown ? "by" : "with", site.written);
  }
  if (!site.stores_existing) return fmt::format("{} a `{}`", verb, site.cache_class);
  const char first = site.cache_class.empty() ? 'x' : site.cache_class.front();
  const bool vowel = first == 'a' || first == 'e' || first == 'i' || first == 'o' || first == 'A' ||
                     first == 'E' || first == 'I' || first == 'O';
  return fmt::format("stores {} `{}`", vowel ? "an" : "a", site.cache_class);
}

// How raw K/V was used as K/V: "written as K/V by slice assignment at line 26, read as K/V by
// `F.scaled_dot_product_attention` at line 31".
std::string describe_raw_kv_use(const facts::RawKv& kv) {
  std::string uses;
  if (kv.written_at)
    uses = kv.written_by.starts_with("handed to") || kv.written_by.starts_with("installed as")
               ? fmt::format("{} at line {}", kv.written_by, kv.written_at->line)
               : fmt::format("written as K/V by {} at line {}", kv.written_by, kv.written_at->line);
  if (kv.read_at)
    uses += fmt::format("{}read as K/V by `{}` at line {}", uses.empty() ? "" : ", ", kv.read_by,
                        kv.read_at->line);
  return uses;
}

std::string raw_kv_members(const facts::RawKv& kv) {
  std::string members;
  for (const auto& m : kv.members) members += (members.empty() ? "`" : "/`") + m + "`";
  return members;
}

std::string describe_raw_kv_access(const facts::RawKv& kv, const facts::RawKvAccess& access) {
  using K = facts::RawKvAccess::Kind;
  switch (access.kind) {
    case K::Write:
      return fmt::format("writes raw K/V {} by {}", raw_kv_members(kv), access.by);
    case K::Read:
      return fmt::format("reads raw K/V {} with `{}`", raw_kv_members(kv), access.by);
    case K::Pass:
      break;
  }
  return fmt::format("hands raw K/V {} on ({})", raw_kv_members(kv), access.by);
}

namespace {
// A parameter that passes a cache in (`past_key_values`, `cache`), not the switch asking for one.
bool passes_a_cache(std::string_view parameter) {
  return parameter != "use_cache" && (contains_ci(parameter, "past") || contains_ci(parameter, "cache"));
}

// Built in the arm of `if use_cache and past_key_values is None:` (or `if past is None:`): the
// caller asked for a cache and passed none.
bool for_the_caller(const facts::Construction& built) {
  return std::any_of(built.guards.begin(), built.guards.end(), [](const facts::Guard& g) {
    if ((g.origin != facts::Guard::Origin::If && g.origin != facts::Guard::Origin::Ternary) || g.negated)
      return false;
    const auto& ps = g.parameters;
    const bool asks = std::find(ps.begin(), ps.end(), "use_cache") != ps.end();
    const bool passed_none =
        contains_ci(g.condition.text, "is None") && std::any_of(ps.begin(), ps.end(), passes_a_cache);
    return asks || passed_none;
  });
}
// Built by transformers' generation hook (`prepare_inputs_for_generation(self, input_ids,
// past_key_values=None, ...)` builds the model's own cache class when none is passed): the
// cache is generate()'s, handed back with the inputs.
bool built_for_generate(const facts::Built& built) {
  return built.construction && built.construction->method == "prepare_inputs_for_generation";
}
}  // namespace

bool kept_by_the_model(const facts::Project& project, facts::ClassRef owner, int depth) {
  if (!owner) return true;
  // A layer of a transformers cache (`StaticLayer(CacheLayerMixin)`): its tensors are the cache
  // object's, which is reported where it is built.
  for (const facts::ClassRef& a : project.ancestors(owner))
    for (const facts::BaseClass& base : a.cls->bases)
      if (facts::simple_name(base.resolved) == "CacheLayerMixin") return false;
  for (const facts::BaseClass& base : owner.cls->bases)
    if (facts::simple_name(base.resolved) == "CacheLayerMixin") return false;
  if (project.is_module(owner) != facts::Tristate::No) return true;
  if (depth >= 3) return false;
  // Not a module: the model's when something that may be the model's holds or builds it. A
  // module-level function that builds it may be called by the model. A class whose builders the
  // analysis cannot see is the model's when it keeps the K/V itself (depth 0), not when it only
  // builds the class that does (transformers' continuous-batching manager, built by a mixin).
  bool known = false;
  for (const auto& h : project.holders(owner)) {
    known = true;
    if (kept_by_the_model(project, h.holder, depth + 1)) return true;
  }
  for (const auto& built : project.constructions_of(owner)) {
    known = true;
    // `if use_cache and past_key_values is None: past_key_values = HybridCache(config)`, or
    // built in prepare_inputs_for_generation: built because the caller asked for a cache, as
    // transformers models do; the caller keeps it.
    if ((built.construction && for_the_caller(*built.construction)) || built_for_generate(built)) continue;
    if (!built.by || kept_by_the_model(project, built.by, depth + 1)) return true;
  }
  return !known && depth == 0;
}

std::string describe_retention(const facts::CacheSite& site, const Spelling& spelling) {
  using R = facts::Retention;
  const std::string as = spelling.code(site.retained_as);
  // describe_construction named the member already.
  if (foreign_tensor(site) && site.retention == R::SelfAttribute && site.stores_existing)
    return "holds it by value";
  if (foreign_tensor(site) && site.retention == R::SelfAttribute)
    return site.raw_kv ? fmt::format("feeds {} back ({})", raw_kv_members(*site.raw_kv),
                                     describe_raw_kv_use(*site.raw_kv))
                       : std::string("keeps it across calls");
  if (site.raw_kv && (site.retention == R::SelfAttribute || site.retention == R::SelfContainer)) {
    const std::string kept =
        site.retention == R::SelfContainer && site.container_key && !site.container_key->text.empty()
            ? fmt::format("keeps them per `{}` in `{}`", site.container_key->text, as)
            : fmt::format("keeps them in `{}`", as);
    std::string uses = describe_raw_kv_use(*site.raw_kv);
    if (uses.empty()) {  // no use in the class: its name and its attention shape are the evidence
      std::string shape;
      for (const auto& d : site.raw_kv->shape) shape += (shape.empty() ? "" : ", ") + d.text;
      uses = fmt::format("named as K/V and shaped by attention heads and head_dim: `({})`", shape);
    }
    return fmt::format("{} ({})", kept, uses);
  }
  switch (site.retention) {
    case R::SelfAttribute:
      return as.empty() ? "keeps one on the instance" : fmt::format("keeps one as `{}`", as);
    case R::SelfContainer:
      if (site.container_key && !site.container_key->text.empty())
        return as.empty() ? fmt::format("keeps one per `{}`", site.container_key->text)
                          : fmt::format("keeps one per `{}` in `{}`", site.container_key->text, as);
      return as.empty() ? "keeps them in a container on the instance" : fmt::format("keeps them in `{}`", as);
    case R::Returned:
      return "builds one per call and returns it";
    case R::PassedToCall:
      // The front end records the keyword (`past_key_values`) for a direct argument and
      // the callee (`self.llm`) for a local handed on later.
      if (as.empty()) return "builds one per call and passes it on";
      return site.retained_as.find('.') != std::string::npos
                 ? fmt::format("builds one per call and passes it to `{}`", as)
                 : fmt::format("builds one per call and passes it as `{}`", as);
    case R::Local:
      return "builds one per call";
    case R::ModuleGlobal:
      return "keeps one at module level";
  }
  return "builds one";
}

std::string describe_guard(const facts::Guard& guard) {
  using O = facts::Guard::Origin;
  const std::string& c = guard.condition.text;
  switch (guard.origin) {
    case O::If:
      return guard.negated ? fmt::format("`{}` being false", c) : fmt::format("`if {}`", c);
    case O::Else:
      return fmt::format("the `else` of `if {}`", c);
    case O::EarlyReturn:
      return fmt::format("the early return `if {}`", c);
    case O::Ternary:
      return fmt::format("the conditional expression on `{}`", c);
    case O::Loop:
      return fmt::format("the loop over `{}`", c);
    case O::CallerGuard:
      return fmt::format("`if {}` in its callers", c);
    case O::With:
      return fmt::format("`with {}`", c);
  }
  return quoted(c);
}

bool is_branching_guard(const facts::Guard& guard) {
  using O = facts::Guard::Origin;
  return guard.origin != O::Loop && guard.origin != O::With;
}

std::string retained_attribute(const facts::CacheSite& site) {
  using R = facts::Retention;
  if (site.retention != R::SelfAttribute && site.retention != R::SelfContainer) return {};
  return strip_self(site.retained_as);
}

const facts::Guard* owner_state_guard(const facts::Guards& guards, std::string_view retained) {
  for (const auto& g : guards) {
    if (!is_branching_guard(g) || g.self_attributes.empty()) continue;
    // `if self.cache is None:` tests the cache's own slot: lazy creation, not a mode.
    bool only_own_slot =
        !retained.empty() &&
        std::all_of(g.self_attributes.begin(), g.self_attributes.end(), [&](const std::string& a) {
          return a == retained ||
                 (a.starts_with(retained) && a.size() > retained.size() && a[retained.size()] == '.');
        });
    if (only_own_slot) continue;
    // `if bs in self.graphs:` picks replay or eager per call: dispatch, not a deployment mode.
    bool only_graph_state =
        std::all_of(g.self_attributes.begin(), g.self_attributes.end(),
                    [](const std::string& a) { return contains_ci(a, "graph") || contains_ci(a, "captur"); });
    if (only_graph_state) continue;
    return &g;
  }
  return nullptr;
}

bool is_graph_pool_spec(const facts::SpecFact& spec) {
  for (const char* field : {"name", "allocation_note", "capacity_source", "rows_reason"}) {
    const facts::Argument* a = spec.field(field);
    if (!a) continue;
    for (const char* word : {"graph", "captur", "bucket"})
      if (contains_ci(a->value.text, word) || contains_ci(a->value.literal_value, word)) return true;
  }
  return false;
}

bool declares_graph_pool(const facts::Declaration& declaration) {
  // A spec with `**kwargs` may carry the naming fields unseen: it may be the pool.
  return std::any_of(declaration.specs.begin(), declaration.specs.end(),
                     [](const facts::SpecFact& s) { return is_graph_pool_spec(s) || !s.unpacked.empty(); });
}

bool is_graph_wrapper(const facts::Project& project, facts::ClassRef cls) {
  if (!cls) return false;
  const std::string& n = cls.cls->name;
  for (const char* word : {"CUDAGraph", "GraphWrapper", "GraphRunner"})
    if (n.find(word) != std::string::npos) return true;
  // A module that captures (MiMo captures in its constructor) is still there under
  // enforce_eager; only a non-module that captures is a wrapper the eager path lacks.
  return project.is_module(cls) != facts::Tristate::Yes && !project.captures_of(cls).empty();
}

std::string declaration_name(const facts::Project& project) {
  return project.vocabulary().declaration_method;
}

std::string join_names(const std::vector<std::string>& names) {
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const auto& n : names)
    if (seen.insert(n).second) unique.push_back(n);
  std::string out;
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (i > 0) out += (i + 1 == unique.size()) ? " and " : ", ";
    out += quoted(unique[i]);
  }
  return out;
}

RelatedLocation related(const facts::Location& loc, std::string message) {
  return RelatedLocation{loc, std::move(message)};
}

void relate_holder_declarations(const facts::Project& project, facts::ClassRef owner, Finding& finding) {
  for (const auto& h : project.holders(owner)) {
    const auto declarations = project.inherited_declarations(h.holder);  // own first
    if (declarations.empty()) continue;
    const facts::Cover& applies = declarations.front();
    finding.related.push_back(related(
        applies.declaration->loc,
        fmt::format(
            "`{}()` here does not cover `{}`",
            Spelling::of(applies.declarer).method(applies.declarer.cls->name, declaration_name(project)),
            owner.cls->name)));
  }
}

namespace {

bool is_entry_method(std::string_view name) {
  return name == "generate" || name == "forward";
}

// A name a model or a part of one goes by: `tts_model`, `AutoModelForCausalLM`, `talker`.
bool model_like_word(std::string_view name) {
  for (std::string_view word : {"model", "transformer", "decoder", "encoder", "backbone", "talker", "thinker",
                                "llm", "causal", "generation"})
    if (contains_ci(name, word)) return true;
  return name.ends_with("lm") || name.ends_with("LM") || name.starts_with("lm") || name.starts_with("Auto");
}

// The rest of a callee path after something that may be a model: calling it, its
// forward / generate, or a part named like a model (`self.tts.tts_model(...)`).
bool reaches_entry(const std::vector<std::string>& rest) {
  if (rest.empty() || is_entry_method(rest.back())) return true;
  return std::any_of(rest.begin(), rest.end(), [](const std::string& r) { return model_like_word(r); });
}

bool takes_cache(const facts::MethodFact& method) {
  return std::any_of(method.parameters.begin(), method.parameters.end(), passes_a_cache);
}

const facts::MethodFact* find_method(const facts::Project& project, facts::ClassRef cls,
                                     std::string_view name) {
  std::vector<facts::ClassRef> lineage{cls};
  for (facts::ClassRef a : project.ancestors(cls)) lineage.push_back(a);
  for (facts::ClassRef c : lineage)
    for (const facts::CodeRef& m : project.methods_of(c))
      if (m.method->name == name) return m.method;
  return nullptr;
}

bool path_is_model(const facts::Project& project, facts::ClassRef cls, std::vector<std::string> path,
                   int depth);

// A class outside the project, by its resolved name: one from transformers, or named like a model.
bool external_class_is_model(std::string_view resolved) {
  return resolved.starts_with("transformers.") || model_like_word(facts::simple_name(resolved));
}

bool attribute_is_model(const facts::Project& project, facts::ClassRef cls, const std::string& attribute,
                        std::vector<std::string> rest, int depth) {
  std::vector<facts::ClassRef> lineage{cls};
  for (facts::ClassRef a : project.ancestors(cls)) lineage.push_back(a);
  bool held = false;
  for (const auto& file : project.files())
    for (const auto& hop : file.hops) {
      if (hop.attribute != attribute) continue;
      facts::ClassRef holder = project.class_of(file, hop.owner_class);
      if (std::find(lineage.begin(), lineage.end(), holder) == lineage.end()) continue;
      held = true;
      if (facts::ClassRef target = project.find_class(hop.target_class, &file)) {
        if (path_is_model(project, target, rest, depth + 1)) return true;
      } else if (external_class_is_model(hop.target_class)) {
        return true;
      }
    }
  if (held) return false;
  auto assignments = project.attribute_assignments_of(cls, attribute);
  if (assignments.empty()) return project.is_module(cls) != facts::Tristate::No && reaches_entry(rest);
  for (const facts::AttributeAssignment* a : assignments) {
    const facts::Expression& v = a->value;
    if (v.literal != facts::LiteralKind::None || v.names.empty()) continue;  // `None`, `{}`, `[]`, literals
    for (const auto& n : v.names)
      if (facts::simple_name(n) == "from_pretrained" || facts::simple_name(n) == "from_config") return true;
    if (reaches_entry(rest)) return true;  // a module handed in or built by a factory
  }
  return false;
}

bool path_is_model(const facts::Project& project, facts::ClassRef cls, std::vector<std::string> path,
                   int depth) {
  if (depth > 4) return false;
  if (path.empty()) return project.is_module(cls) != facts::Tristate::No;  // calling it runs forward
  const std::string head = path.front();
  path.erase(path.begin());
  if (const facts::MethodFact* m = find_method(project, cls, head))
    return path.empty() && (head == "generate" || takes_cache(*m));
  return attribute_is_model(project, cls, head, std::move(path), depth);
}

}  // namespace

bool implicit_callee_is_model(const facts::Project& project, const facts::FileFacts& file,
                              facts::ClassRef owner, const facts::ImplicitCacheSite& site) {
  using Root = facts::ImplicitCacheSite::CalleeRoot;
  const auto& path = site.callee_path;
  switch (site.callee_root) {
    case Root::Self:
      return owner && path_is_model(project, owner, path, 0);
    case Root::Local:
      if (!site.callee_origin_class.empty()) {
        if (facts::ClassRef target = project.find_class(site.callee_origin_class, &file))
          return path_is_model(project, target, path, 1);
        return external_class_is_model(site.callee_origin_class);
      }
      if (site.callee_origin)
        for (const auto& n : site.callee_origin->names)
          if (facts::simple_name(n) == "from_pretrained" || facts::simple_name(n) == "from_config")
            return true;
      return false;
    case Root::Parameter:
      return path.empty() || is_entry_method(path.back());
    case Root::Other:
      return false;
  }
  return false;
}

bool implicit_cache_is_kept(const facts::ImplicitCacheSite& site) {
  using Kept = facts::ImplicitCacheSite::Kept;
  if (!site.callee_path.empty() && site.callee_path.back() == "generate") return true;  // its own decode loop
  return site.kept != Kept::Dropped && site.kept != Kept::UsedOnce;
}

}  // namespace kvlint::rules
