// Classes by name and inheritance. Takes a name as written in a file (simple, dotted, relative);
// gives the project class it names (find_class, class_of), its C++ parts, ancestors,
// descendants, whether it is a module or a cache class, and the sites, assignments and
// constants of the class with its bases'.
// Invariant: a name imported from another package never resolves to a project class that only
// shares its simple name (may_be_module); every class asked about by name is recorded in the
// Demand, so a deferred file that defines it can still be analysed.
#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::ends_with_component;
using project_detail::module_matches;

// An absolute dotted prefix (`transformers.models.whisper.modeling_whisper`) may name a Python
// module of the project: the module itself, a package above it (a re-export), or either seen
// from a project root inside the package (`model_executor.models.x` for
// `vllm_omni.model_executor.models.x`). A prefix none of whose tails starts the module's name
// is another package's, a third-party library's: its class is not this one, whatever its name.
bool may_be_module(std::string_view module_name, std::string_view prefix) {
  if (module_name.empty() || prefix.empty()) return true;  // nothing known to contradict it
  if (ends_with_component(module_name, prefix)) return true;
  for (std::string_view tail = prefix;;) {
    if (module_name == tail || (module_name.starts_with(tail) && module_name[tail.size()] == '.'))
      return true;
    const auto dot = tail.find('.');
    if (dot == std::string_view::npos) return false;
    tail.remove_prefix(dot + 1);
  }
}

ClassRef Project::class_of(const FileFacts& file, std::string_view simple) const {
  if (simple.empty()) return {};
  const ClassFact* cls = nullptr;
  if (const auto in_file = index_->in_file.find(&file); in_file != index_->in_file.end()) {
    const auto found = in_file->second.find(simple);
    if (found != in_file->second.end()) cls = found->second;
  } else {  // facts the project was not given
    const auto found = std::find_if(file.classes.begin(), file.classes.end(),
                                    [&](const ClassFact& c) { return c.name == simple; });
    if (found != file.classes.end()) cls = &*found;
  }
  if (!cls) return {};
  const auto joined = index_->joined_to.find(cls);
  return joined == index_->joined_to.end() ? ClassRef{&file, cls} : joined->second;
}

std::vector<ClassRef> Project::parts(ClassRef cls) const {
  if (!cls) return {};
  auto it = index_->parts.find(cls.cls);
  return it == index_->parts.end() ? std::vector<ClassRef>{cls} : it->second;
}

std::vector<CodeRef> Project::methods_of(ClassRef cls) const {
  std::vector<CodeRef> out;
  for (ClassRef part : parts(cls))
    for (const auto& m : part.cls->methods) out.push_back(CodeRef{part.file, cls, &m});
  return out;
}

ClassRef Project::find_class(std::string_view name, const FileFacts* from) const {
  std::string_view simple = simple_name(name);
  if (demand_ && !simple.empty()) demand_->class_named(simple);
  if (from) {
    // A dotted name that is not a relative import of this file is not defined here.
    if (name == simple || name.starts_with('.')) {
      if (ClassRef here = class_of(*from, simple)) return here;
    }
  }
  auto it = index_->by_simple_name.find(std::string(simple));
  if (it == index_->by_simple_name.end()) return {};
  const std::string_view prefix = dotted_prefix(name);
  // A Python name imported from another package (`transformers...WhisperEncoder`) is not a
  // project class that happens to share its simple name (a `WhisperEncoder` helper elsewhere).
  std::vector<ClassRef> plausible;
  const bool absolute = !prefix.empty() && !name.starts_with('.');
  for (const auto& c : it->second)
    if (!absolute || c.file->language != Language::Python || may_be_module(c.file->module_name, prefix))
      plausible.push_back(c);
  const auto& candidates = plausible;
  if (candidates.empty()) return {};
  if (candidates.size() == 1) return candidates.front();
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
  std::unordered_set<const ClassFact*> seen{cls.cls};
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

std::vector<ClassRef> Project::descendants(ClassRef cls) const {
  if (!cls) return {};
  // A class not given to the project derives from `cls` by naming it, or a class deriving from
  // it, among its bases.
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->mentioned(cls.cls->name);
  }
  auto it = index_->subclasses_of.find(cls.cls);
  if (it == index_->subclasses_of.end()) return {};
  if (demand_)
    for (ClassRef sub : it->second) demand_->mentioned(sub.cls->name);
  return it->second;
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
  // The file itself, then the other files of the owner class (a .cpp reads its header's
  // constants): class constants first, then namespace-level ones.
  std::vector<const FileFacts*> files{&file};
  for (ClassRef part : parts(class_of(file, owner_class)))
    if (std::find(files.begin(), files.end(), part.file) == files.end()) files.push_back(part.file);
  if (!owner_class.empty())
    for (const FileFacts* f : files)
      for (const auto& c : f->constants)
        if (c.name == name && c.owner_class == owner_class) return &c;
  for (const FileFacts* f : files) {
    const Constant* module_level = nullptr;
    for (const auto& c : f->constants)
      if (c.name == name && c.owner_class.empty()) module_level = &c;  // the last one in a file wins
    if (module_level) return module_level;
  }
  return nullptr;
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
    bool vocabulary_class =
        name == "Cache" || std::find(vocabulary_.cache_classes.begin(), vocabulary_.cache_classes.end(),
                                     name) != vocabulary_.cache_classes.end();
    if (!vocabulary_class && is_cache_class(c)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace kvlint::facts
