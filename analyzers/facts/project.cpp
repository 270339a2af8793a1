#include "analyzers/facts/project.hpp"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

namespace kvlint::facts {

namespace {

// Ownership chains in real projects are short (runner -> model -> generator);
// the bound keeps a pathological cycle of holders from exploding.
constexpr int kMaxHolderDepth = 6;

bool ends_with_component(std::string_view dotted, std::string_view suffix) {
  if (dotted == suffix) return true;
  return dotted.size() > suffix.size() && dotted.ends_with(suffix) &&
         dotted[dotted.size() - suffix.size() - 1] == '.';
}

// "pkg.models.decoder" matches a written prefix ".decoder" or "pkg.models.decoder".
bool module_matches(std::string_view module_name, std::string_view prefix) {
  while (prefix.starts_with('.')) prefix.remove_prefix(1);
  if (prefix.empty() || module_name.empty()) return false;
  return ends_with_component(module_name, prefix);
}

}  // namespace

struct Project::Index {
  std::unordered_map<std::string, std::vector<ClassRef>> by_simple_name;
  // Per class: sites whose owner_class is that class in the same file.
  std::unordered_map<const ClassFact*, std::vector<const CacheSite*>> cache_sites;
  std::unordered_map<const ClassFact*, std::vector<const ImplicitCacheSite*>> implicit_caches;
  std::unordered_map<const ClassFact*, std::vector<const CaptureSite*>> captures;
  std::unordered_map<const ClassFact*, std::vector<const BatchEvidence*>> batch_evidence;
  std::unordered_map<const ClassFact*, std::vector<const AttributeAssignment*>> attribute_assignments;
  std::unordered_map<const ClassFact*, const Declaration*> declarations;
  std::unordered_map<const ClassFact*, std::vector<const OwnershipHop*>> hops_from;
  std::unordered_map<const ClassFact*, std::vector<Holder>> holders_of;
  std::unordered_map<const ClassFact*, std::vector<ClassRef>> subclasses_of;  // transitive
};

Project::Project(std::vector<FileFacts> files, Vocabulary vocabulary)
    : files_(std::move(files)), vocabulary_(std::move(vocabulary)), index_(std::make_unique<Index>()) {
  auto& ix = *index_;
  for (const auto& file : files_) {
    for (const auto& cls : file.classes) {
      ClassRef ref{&file, &cls};
      classes_.push_back(ref);
      ix.by_simple_name[cls.name].push_back(ref);
    }
  }
  for (const auto& file : files_) {
    auto owner = [&](std::string_view name) { return class_of(file, name).cls; };
    for (const auto& s : file.cache_sites)
      if (auto* c = owner(s.owner_class)) ix.cache_sites[c].push_back(&s);
    for (const auto& s : file.implicit_caches)
      if (auto* c = owner(s.owner_class)) ix.implicit_caches[c].push_back(&s);
    for (const auto& s : file.captures)
      if (auto* c = owner(s.owner_class)) ix.captures[c].push_back(&s);
    for (const auto& s : file.batch_evidence)
      if (auto* c = owner(s.owner_class)) ix.batch_evidence[c].push_back(&s);
    for (const auto& a : file.attribute_assignments)
      if (auto* c = owner(a.owner_class)) ix.attribute_assignments[c].push_back(&a);
    for (const auto& d : file.declarations)
      if (auto* c = owner(d.owner_class)) ix.declarations.emplace(c, &d);
    for (const auto& h : file.hops) {
      ClassRef holder = class_of(file, h.owner_class);
      if (!holder) continue;
      ix.hops_from[holder.cls].push_back(&h);
      if (ClassRef target = find_class(h.target_class, &file))
        ix.holders_of[target.cls].push_back(Holder{holder, &h});
    }
  }
  for (ClassRef c : classes_)
    for (ClassRef a : ancestors(c)) ix.subclasses_of[a.cls].push_back(c);
}

Project::~Project() = default;

ClassRef Project::class_of(const FileFacts& file, std::string_view simple) const {
  if (simple.empty()) return {};
  for (const auto& cls : file.classes)
    if (cls.name == simple) return ClassRef{&file, &cls};
  return {};
}

ClassRef Project::find_class(std::string_view name, const FileFacts* from) const {
  std::string_view simple = simple_name(name);
  if (from) {
    // A dotted name that is not a relative import of this file is not defined here.
    if (name == simple || name.starts_with('.')) {
      if (ClassRef here = class_of(*from, simple)) return here;
    }
  }
  auto it = index_->by_simple_name.find(std::string(simple));
  if (it == index_->by_simple_name.end()) return {};
  const auto& candidates = it->second;
  if (candidates.size() == 1) return candidates.front();
  std::string_view prefix = name.substr(0, name.size() - simple.size());
  if (prefix.ends_with('.')) prefix.remove_suffix(1);
  for (const auto& c : candidates)
    if (module_matches(c.file->module_name, prefix)) return c;
  // Ambiguous: prefer a candidate in the same directory tree as `from`.
  if (from) {
    auto dir = std::string_view(from->path).substr(0, from->path.rfind('/') + 1);
    for (const auto& c : candidates)
      if (std::string_view(c.file->path).starts_with(dir)) return c;
  }
  return candidates.front();
}

std::vector<ClassRef> Project::ancestors(ClassRef cls) const {
  std::vector<ClassRef> out;
  std::set<const ClassFact*> seen{cls.cls};
  std::deque<ClassRef> queue{cls};
  while (!queue.empty()) {
    ClassRef cur = queue.front();
    queue.pop_front();
    for (const auto& base : cur.cls->bases) {
      ClassRef b = find_class(base.resolved, cur.file);
      if (b && seen.insert(b.cls).second) {
        out.push_back(b);
        queue.push_back(b);
      }
    }
  }
  return out;
}

Tristate Project::is_module(ClassRef cls) const {
  bool unknown = false;
  std::set<const ClassFact*> seen;
  std::deque<ClassRef> queue{cls};
  while (!queue.empty()) {
    ClassRef cur = queue.front();
    queue.pop_front();
    if (!seen.insert(cur.cls).second) continue;
    for (const auto& base : cur.cls->bases) {
      for (const auto& m : vocabulary_.module_bases)
        if (ends_with_component(base.resolved, m) || ends_with_component(base.written, m))
          return Tristate::Yes;
      if (base.resolved == "object" || base.resolved == "ABC" || base.resolved == "abc.ABC" ||
          base.resolved.ends_with("Protocol") || base.resolved.ends_with("Generic") ||
          base.resolved.find('[') != std::string::npos)
        continue;
      if (ClassRef b = find_class(base.resolved, cur.file))
        queue.push_back(b);
      else
        unknown = true;
    }
  }
  return unknown ? Tristate::Unknown : Tristate::No;
}

const Declaration* Project::own_declaration(ClassRef cls) const {
  auto it = index_->declarations.find(cls.cls);
  if (it != index_->declarations.end()) return it->second;
  for (ClassRef a : ancestors(cls)) {
    auto jt = index_->declarations.find(a.cls);
    if (jt != index_->declarations.end()) return jt->second;
  }
  return nullptr;
}

std::vector<Cover> Project::inherited_declarations(ClassRef cls) const {
  std::vector<Cover> out;
  auto it = index_->declarations.find(cls.cls);
  if (it != index_->declarations.end()) {
    out.push_back(Cover{Cover::How::Own, cls.file, it->second, cls, nullptr});
    return out;  // an override hides its bases' declarations
  }
  for (ClassRef a : ancestors(cls)) {
    auto jt = index_->declarations.find(a.cls);
    if (jt != index_->declarations.end()) {
      out.push_back(Cover{Cover::How::Inherited, a.file, jt->second, a, nullptr});
      break;
    }
  }
  return out;
}

std::vector<Holder> Project::holders(ClassRef cls) const {
  std::vector<Holder> out;
  auto collect = [&](ClassRef target) {
    auto it = index_->holders_of.find(target.cls);
    if (it != index_->holders_of.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  };
  collect(cls);
  // A subclass of a holder inherits the hop (`self.gen = Generator()` in the base's
  // __init__) and may declare for it. Bases of `cls` are not followed: a holder of a
  // base class holds the subclass only when it constructs the subclass.
  const std::size_t direct = out.size();
  for (std::size_t i = 0; i < direct; ++i) {
    auto it = index_->subclasses_of.find(out[i].holder.cls);
    if (it == index_->subclasses_of.end()) continue;
    for (ClassRef sub : it->second) out.push_back(Holder{sub, out[i].hop});
  }
  return out;
}

std::vector<Cover> Project::coverage(ClassRef cls) const {
  std::vector<Cover> out = inherited_declarations(cls);
  std::set<const ClassFact*> visited{cls.cls};
  struct Item {
    ClassRef cls;
    int depth;
  };
  std::deque<Item> queue{{cls, 0}};
  while (!queue.empty()) {
    auto [cur, depth] = queue.front();
    queue.pop_front();
    if (depth >= kMaxHolderDepth) continue;
    for (const Holder& h : holders(cur)) {
      for (const Cover& c : inherited_declarations(h.holder)) {
        bool forwards = std::any_of(
            c.declaration->forwards.begin(), c.declaration->forwards.end(),
            [&](const Forward& f) { return f.via_attribute == h.hop->attribute; });
        if (forwards && depth == 0) {
          out.push_back(Cover{Cover::How::ForwardedByHolder, c.file, c.declaration, c.declarer, h.hop});
        } else if (!c.declaration->specs.empty()) {
          out.push_back(Cover{Cover::How::DeclaredByHolder, c.file, c.declaration, c.declarer, h.hop});
        } else if (forwards) {
          out.push_back(Cover{Cover::How::ForwardedByHolder, c.file, c.declaration, c.declarer, h.hop});
        }
      }
      if (visited.insert(h.holder.cls).second) queue.push_back({h.holder, depth + 1});
    }
  }
  return out;
}

std::vector<ClassRef> Project::owned_closure(ClassRef cls) const {
  std::vector<ClassRef> out{cls};
  std::set<const ClassFact*> seen{cls.cls};
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::vector<ClassRef> with_bases{out[i]};
    for (ClassRef a : ancestors(out[i])) with_bases.push_back(a);
    for (ClassRef c : with_bases) {
      auto it = index_->hops_from.find(c.cls);
      if (it == index_->hops_from.end()) continue;
      for (const OwnershipHop* hop : it->second)
        if (ClassRef t = find_class(hop->target_class, c.file); t && seen.insert(t.cls).second)
          out.push_back(t);
    }
  }
  return out;
}

namespace {
template <typename T, typename Map>
std::vector<const T*> gather(const Project& p, ClassRef cls, const Map& map) {
  std::vector<const T*> out;
  auto add = [&](ClassRef c) {
    auto it = map.find(c.cls);
    if (it != map.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  };
  add(cls);
  for (ClassRef a : p.ancestors(cls)) add(a);
  return out;
}
}  // namespace

std::vector<const CacheSite*> Project::cache_sites_of(ClassRef cls) const {
  return gather<CacheSite>(*this, cls, index_->cache_sites);
}
std::vector<const ImplicitCacheSite*> Project::implicit_caches_of(ClassRef cls) const {
  return gather<ImplicitCacheSite>(*this, cls, index_->implicit_caches);
}
std::vector<const CaptureSite*> Project::captures_of(ClassRef cls) const {
  return gather<CaptureSite>(*this, cls, index_->captures);
}
std::vector<const BatchEvidence*> Project::batch_evidence_of(ClassRef cls) const {
  return gather<BatchEvidence>(*this, cls, index_->batch_evidence);
}

std::vector<const AttributeAssignment*> Project::attribute_assignments_of(ClassRef cls,
                                                                          std::string_view attribute) const {
  std::vector<const AttributeAssignment*> out;
  for (const AttributeAssignment* a : gather<AttributeAssignment>(*this, cls, index_->attribute_assignments))
    if (a->attribute == attribute) out.push_back(a);
  return out;
}

const Constant* Project::constant(const FileFacts& file, std::string_view owner_class,
                                  std::string_view name) const {
  const Constant* module_level = nullptr;
  for (const auto& c : file.constants) {
    if (c.name != name) continue;
    if (!owner_class.empty() && c.owner_class == owner_class) return &c;
    if (c.owner_class.empty()) module_level = &c;
  }
  return module_level;
}

bool Project::is_cache_class(ClassRef cls) const {
  auto is_cache_name = [&](std::string_view name) {
    return name == "Cache" || std::find(vocabulary_.cache_classes.begin(), vocabulary_.cache_classes.end(),
                                        name) != vocabulary_.cache_classes.end();
  };
  if (is_cache_name(cls.cls->name)) return true;
  std::vector<ClassRef> chain{cls};
  for (ClassRef a : ancestors(cls)) chain.push_back(a);
  for (ClassRef link : chain)
    for (const auto& b : link.cls->bases)
      if (is_cache_name(simple_name(b.resolved))) return true;
  return false;
}

std::vector<std::string> Project::cache_subclasses() const {
  std::vector<std::string> out;
  for (ClassRef c : classes_) {
    const std::string& name = c.cls->name;
    bool vocabulary_class = name == "Cache" || std::find(vocabulary_.cache_classes.begin(),
                                                         vocabulary_.cache_classes.end(),
                                                         name) != vocabulary_.cache_classes.end();
    if (!vocabulary_class && is_cache_class(c)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace kvlint::facts
