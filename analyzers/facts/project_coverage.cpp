// Which declarations cover a class. Takes a class; gives its own or inherited declaration, the
// holders that keep it (through hops, subclasses of holders, parameters and reverse
// assignments), the modules it is built for, and from them its Covers (coverage), plus the sets
// of classes that declare or may be covered, which the rules iterate.
// Invariant: holder walks stop at kMaxHolderDepth; an override hides its bases' declarations;
// built_for's answers are memoised under their mutex and re-record the same Demand.
#include <algorithm>
#include <deque>
#include <mutex>
#include <set>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::kMaxHolderDepth;

std::vector<ClassRef> Project::declaring_classes() const {
  std::set<const ClassFact*> wanted;
  for (ClassRef c : classes_)
    if (index_->declarations.count(c.cls)) {
      wanted.insert(c.cls);
      for (ClassRef sub : descendants(c)) wanted.insert(sub.cls);
    }
  std::vector<ClassRef> out;
  for (ClassRef c : classes_)
    if (wanted.count(c.cls)) out.push_back(c);
  return out;
}

std::vector<ClassRef> Project::covered_classes() const {
  // coverage() walks holders up from a class, at most kMaxHolderDepth holders deep, to one with
  // a declaration of its own or inherited; these are the classes that walk can start from: the
  // declaring ones, and those they hold, through their hops or their bases' (a subclass of a
  // holder inherits its hop), as many hops down.
  std::set<const ClassFact*> wanted;
  std::vector<ClassRef> level = declaring_classes();
  for (ClassRef c : level) wanted.insert(c.cls);
  for (int depth = 0; depth < kMaxHolderDepth && !level.empty(); ++depth) {
    std::vector<ClassRef> next;
    for (ClassRef c : level) {
      std::vector<ClassRef> with_bases{c};
      for (ClassRef a : ancestors(c)) with_bases.push_back(a);
      for (ClassRef b : with_bases) {
        auto it = index_->hops_from.find(b.cls);
        if (it == index_->hops_from.end()) continue;
        for (const OwnershipHop* hop : it->second)
          if (ClassRef t = find_class(hop->target_class, b.file); t && wanted.insert(t.cls).second)
            next.push_back(t);
      }
    }
    level = std::move(next);
  }
  // And the classes with sites built for a declaring module (coverage() asks built_for()).
  std::set<const ClassFact*> declaring;
  for (ClassRef c : declaring_classes()) declaring.insert(c.cls);
  for (ClassRef c : classes_) {
    if (wanted.count(c.cls) || !index_->cache_sites.count(c.cls) || is_module(c) != Tristate::No) continue;
    for (ClassRef module : built_for(c))
      if (declaring.count(module.cls)) wanted.insert(c.cls);
  }
  std::vector<ClassRef> out;
  for (ClassRef c : classes_)
    if (wanted.count(c.cls)) out.push_back(c);
  return out;
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
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->built(cls.cls->name);
  }
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
  // Subclasses of a holder name it (or a subclass of it) among their bases.
  if (demand_)
    for (const Holder& h : out) demand_->mentioned(h.holder.cls->name);
  return out;
}

std::vector<Holder> Project::parameter_holders(ClassRef cls) const {
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->mentioned(cls.cls->name);
  }
  auto it = index_->parameter_holders_of.find(cls.cls);
  return it == index_->parameter_holders_of.end() ? std::vector<Holder>{} : it->second;
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
        bool forwards = std::any_of(c.declaration->forwards.begin(), c.declaration->forwards.end(),
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
    // A plain object built for a module (a session's buffer); a module is its holders' part.
    if (is_module(cur) != Tristate::No) continue;
    for (ClassRef module : built_for(cur))
      for (const Cover& c : inherited_declarations(module))
        if (!c.declaration->specs.empty())
          out.push_back(Cover{Cover::How::DeclaredByBuiltFor, c.file, c.declaration, c.declarer, nullptr});
  }
  return out;
}

std::vector<ClassRef> Project::built_for(ClassRef cls) const {
  {
    const std::lock_guard lock(index_->built_for_mutex);
    if (auto it = index_->built_for.find(cls.cls); it != index_->built_for.end()) {
      if (demand_) demand_->built(cls.cls->name);  // what the first answer recorded, again
      return it->second;
    }
  }
  std::vector<ClassRef> out;
  for (const Built& b : constructions_of(cls)) {
    const Construction& c = *b.construction;
    const CodeRef code = code_at(*b.file, c.owner_class, c.method);
    for (const Argument& a : c.args) {
      const std::string& text = a.value.text;
      ClassRef module;
      if (text.starts_with("self.") && text.find('.', 5) == std::string::npos) {
        if (b.by) module = attribute_class(b.by, std::string_view(text).substr(5));
      } else if (code && text != "self" && a.value.names.size() == 1 && a.value.names.front() == text) {
        module = parameter_class(code, text);  // a parameter: what the callers hand it
      }
      if (module && module != cls && std::find(out.begin(), out.end(), module) == out.end())
        out.push_back(module);
    }
  }
  const std::lock_guard lock(index_->built_for_mutex);
  index_->built_for.emplace(cls.cls, out);
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
    // Held without being built here: `self.decoder = decoder` with `decoder: Decoder`.
    for (ClassRef c : with_bases) {
      auto it = index_->attribute_assignments.find(c.cls);
      if (it == index_->attribute_assignments.end()) continue;
      for (const AttributeAssignment* a : it->second) {
        if (a->value.names.size() != 1 || a->value.names.front() != a->value.text) continue;
        if (ClassRef t = attribute_class(out[i], a->attribute); t && seen.insert(t.cls).second)
          out.push_back(t);
      }
    }
  }
  return out;
}

}  // namespace kvlint::facts
