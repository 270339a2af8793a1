#include "rules/common/declaration_skeleton.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "rules/common/rule_support.hpp"
#include "rules/common/spec_support.hpp"

namespace kvlint::rules {
namespace {

// Where the protocol lives upstream, for a project that neither defines nor imports it.
constexpr std::string_view kUpstreamProtocolModule = "vllm_omni.model_executor.models.model_local_kv";

std::string snake_case(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (std::isupper(c)) {
      if (i > 0 && (std::islower(static_cast<unsigned char>(name[i - 1])) ||
                    (i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1])))))
        out += '_';
      out += static_cast<char>(std::tolower(c));
    } else {
      out += static_cast<char>(c);
    }
  }
  while (!out.empty() && out.front() == '_') out.erase(out.begin());
  return out;
}

// An expression the declaration method can evaluate too: rooted at `self`, or a literal,
// or module constants only.
bool readable_from_method(const facts::Expression& e) {
  if (e.literal == facts::LiteralKind::Int) return true;
  if (e.names.empty()) return false;
  return std::all_of(e.names.begin(), e.names.end(), [](const std::string& n) {
    return n.starts_with("self.") || std::none_of(n.begin(), n.end(), [](char c) {
             return std::islower(static_cast<unsigned char>(c));
           });
  });
}

// The config the cache is built from: `config=` or a positional naming a config, through a
// local alias (`cfg = self._llm_config`); `self.config` when it cannot be read from the method.
std::string config_of(const facts::CacheSite& site) {
  for (const auto& a : site.args) {
    const bool names_config = a.keyword == "config" || (a.keyword.empty() && a.position == 0 &&
                                                        a.value.text.find("config") != std::string::npos);
    if (!names_config) continue;
    if (!a.value.alias_of.empty()) {
      const auto eq = a.value.alias_of.find('=');
      const std::string rhs = eq == std::string::npos
                                  ? std::string()
                                  : std::string(spec_support::trim(a.value.alias_of.substr(eq + 1)));
      if (rhs.starts_with("self.")) return rhs;
    }
    if (readable_from_method(a.value)) return a.value.text;
  }
  return "self.config";
}

std::string attribute_part(std::string_view retained_as) {
  std::string_view last = facts::simple_name(retained_as);
  while (!last.empty() && last.front() == '_') last.remove_prefix(1);
  return std::string(last);
}

std::string owner_prefix(facts::ClassRef owner) {
  return snake_case(owner.cls->name);
}

// FIXED unless the evidence says one row per sequence: the placeholder reason then makes a
// person decide (KV201), rather than the fix guessing a width.
bool iterates_requests(const facts::Project& project, facts::ClassRef owner) {
  for (const auto* e : project.batch_evidence_of(owner))
    if (e->kind == facts::BatchEvidence::Kind::IteratesRequests) return true;
  return false;
}

std::string protocol_module(const facts::Project& project, std::string_view constructor) {
  for (const auto& file : project.files())
    for (const auto& fn : file.functions)
      if (fn.name == constructor && !file.module_name.empty()) return file.module_name;
  for (const auto& file : project.files())
    for (const auto& imp : file.imports)
      if (facts::simple_name(imp.target) == constructor && imp.target.size() > constructor.size() + 1)
        return imp.target.substr(0, imp.target.size() - constructor.size() - 1);
  return std::string(kUpstreamProtocolModule);
}

}  // namespace

SkeletonSpec skeleton_spec(const facts::Project& project, facts::ClassRef owner,
                           const facts::CacheSite& site) {
  SkeletonSpec spec;
  const std::string part = attribute_part(site.retained_as);
  spec.name = owner_prefix(owner) + "_" + (part.empty() ? snake_case(site.cache_class) : part) + "_kv";
  spec.config = config_of(site);
  spec.capacity = spec.config + ".max_position_embeddings";
  spec.capacity_source = "max_position_embeddings";
  for (const auto& a : site.args)
    if (a.keyword == "max_cache_len" && readable_from_method(a.value)) {
      spec.capacity = a.value.text;
      spec.capacity_source = a.value.text;
    }
  switch (site.retention) {
    case facts::Retention::SelfContainer:
      spec.scope = "REQUEST";
      spec.per_sequence = true;
      break;
    case facts::Retention::SelfAttribute:
      spec.scope = "SESSION";
      break;
    case facts::Retention::ModuleGlobal:
      spec.scope = "MODEL";
      break;
    default:
      spec.scope = "INVOCATION";
      spec.per_sequence = iterates_requests(project, owner);
      break;
  }
  return spec;
}

SkeletonSpec skeleton_spec(const facts::Project& project, facts::ClassRef owner,
                           const facts::ImplicitCacheSite& site) {
  SkeletonSpec spec;
  const bool self_attribute = site.callee_root == facts::ImplicitCacheSite::CalleeRoot::Self &&
                              !site.callee_path.empty() && site.callee_path.front() != "generate";
  const std::string part = self_attribute ? attribute_part(site.callee_path.front()) : std::string();
  spec.name = owner_prefix(owner) + (part.empty() ? "" : "_" + part) + "_kv";
  spec.config = self_attribute ? fmt::format("self.{}.config", site.callee_path.front()) : "self.config";
  spec.capacity = spec.config + ".max_position_embeddings";
  spec.capacity_source = "max_position_embeddings";
  spec.scope = site.kept == facts::ImplicitCacheSite::Kept::Stored ? "SESSION" : "INVOCATION";
  spec.per_sequence = spec.scope == "INVOCATION" && iterates_requests(project, owner);
  return spec;
}

std::optional<Fix> declaration_skeleton_fix(const facts::Project& project, facts::ClassRef owner,
                                            std::vector<SkeletonSpec> specs) {
  const facts::ClassFact& cls = *owner.cls;
  // No fix for C++: a C++ skeleton needs more than the facts give -- the member (or header)
  // that holds the config, the method's place in the header and in the .cpp when the class is
  // split, the include and namespace alias of kvlint/model_local_kv.h, and a `dtype` the
  // header takes as a c10::ScalarType or a byte count -- so any guess would not compile (and
  // the Python skeleton must never land in a C++ file). The finding's message says what to add.
  if (owner.file->language != facts::Language::Python) return std::nullopt;
  if (cls.body_end_byte == 0 || cls.body_indent.empty() || specs.empty()) return std::nullopt;
  const facts::Vocabulary& vocabulary = project.vocabulary();
  const std::string constructor =
      vocabulary.spec_constructors.empty() ? "spec_from_hf_config" : vocabulary.spec_constructors.front();
  const std::string unit = cls.body_indent.find('\t') != std::string::npos ? "\t" : "    ";
  const std::string i1 = cls.body_indent, i2 = i1 + unit, i3 = i2 + unit, i4 = i3 + unit;

  std::set<std::string> names;
  std::string body;
  for (auto& spec : specs) {
    std::string name = spec.name;
    for (int n = 2; !names.insert(name).second; ++n) name = fmt::format("{}_{}", spec.name, n);
    body += fmt::format("{}{}(\n", i3, constructor);
    body += fmt::format("{}{},\n", i4, spec.config);
    body += fmt::format("{}name=\"{}\",\n", i4, name);
    body += fmt::format("{}physical_capacity_positions={},\n", i4, spec.capacity);
    body += fmt::format("{}capacity_source=\"{}\",\n", i4, spec.capacity_source);
    body += fmt::format("{}scope={}.{},\n", i4, vocabulary.scope_enum, spec.scope);
    body += fmt::format("{}dtype={}.torch_dtype,\n", i4, spec.config);
    if (spec.per_sequence) {
      body += fmt::format("{}rows={}.MAX_NUM_SEQS,\n", i4, vocabulary.row_driver);
    } else {
      body += fmt::format("{}rows={}.FIXED,\n", i4, vocabulary.row_driver);
      body += fmt::format("{}rows_fixed=1,\n", i4);
      body += fmt::format("{}rows_reason=\"\",  # TODO(kvlint): say why the row count is fixed\n", i4);
    }
    body += fmt::format("{}),\n", i3);
  }
  Fix fix;
  fix.description = fmt::format("add a `{}` skeleton to `{}`", declaration_name(project), cls.name);
  fix.safe = false;
  std::vector<std::string> missing;
  for (const std::string& needed : {constructor, vocabulary.scope_enum, vocabulary.row_driver}) {
    const bool imported = std::any_of(owner.file->imports.begin(), owner.file->imports.end(),
                                      [&](const facts::ImportFact& i) { return i.local_name == needed; });
    const bool defined = std::any_of(owner.file->functions.begin(), owner.file->functions.end(),
                                     [&](const facts::MethodFact& m) { return m.name == needed; }) ||
                         std::any_of(owner.file->classes.begin(), owner.file->classes.end(),
                                     [&](const facts::ClassFact& c) { return c.name == needed; });
    if (!imported && !defined) missing.push_back(needed);
  }
  std::sort(missing.begin(), missing.end());  // as isort writes it: classes first
  if (!missing.empty())
    fix.edits.push_back(FixEdit{
        owner.file->import_insert_byte, owner.file->import_insert_byte,
        fmt::format("from {} import {}\n", protocol_module(project, constructor), fmt::join(missing, ", "))});
  fix.edits.push_back(FixEdit{
      cls.body_end_byte, cls.body_end_byte,
      fmt::format(
          "\n{}def {}(self):\n{}# TODO(kvlint): skeleton written by `kvlint check --fix --unsafe-fixes`; "
          "check every field.\n{}return [\n{}{}]\n",
          i1, declaration_name(project), i2, i2, body, i2)});
  return fix;
}

void SkeletonFixes::add(facts::ClassRef owner, std::size_t finding_index, SkeletonSpec spec) {
  auto it = std::find_if(owners_.begin(), owners_.end(), [&](const Owner& o) { return o.cls == owner; });
  if (it == owners_.end()) it = owners_.insert(owners_.end(), Owner{owner, {}, {}});
  it->specs.push_back(std::move(spec));
  it->findings.push_back(finding_index);
}

void SkeletonFixes::attach(const facts::Project& project, std::vector<Finding>& findings) const {
  for (const auto& owner : owners_) {
    std::optional<Fix> fix = declaration_skeleton_fix(project, owner.cls, owner.specs);
    // Each finding carries the whole skeleton, so its size times their count grows as the square
    // of the owner's caches: past a few (generated code, 3,000 caches in one class took 3.4 GB),
    // only the owner's first finding carries it, and applying that one adds every spec.
    if (owner.findings.size() > kMaxFindingsSharingASkeleton) {
      findings[owner.findings.front()].fix = std::move(fix);
      continue;
    }
    for (std::size_t i : owner.findings) findings[i].fix = fix;
  }
}

}  // namespace kvlint::rules
