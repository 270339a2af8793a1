#include "analyzers/facts/project.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace kvlint::facts {

namespace {

// Ownership chains in real projects are short (runner -> model -> generator);
// the bound keeps a pathological cycle of holders from exploding.
constexpr int kMaxHolderDepth = 6;
// Resolving an attribute's or parameter's class may go through callers' attributes and
// parameters in turn; real chains are two or three links.
constexpr int kMaxTypeDepth = 4;
// Calls followed from a capture: capture -> wrapper method -> model step -> transformer.
constexpr int kMaxCallDepth = 6;

std::vector<std::string_view> split_dotted(std::string_view dotted) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto dot = dotted.find('.');
    parts.push_back(dotted.substr(0, dot));
    if (dot == std::string_view::npos) break;
    dotted.remove_prefix(dot + 1);
  }
  return parts;
}

bool is_uppercase(std::string_view name) {
  return !name.empty() && name.front() >= 'A' && name.front() <= 'Z';
}

std::optional<std::size_t> parameter_index(const MethodFact& method, std::string_view name) {
  for (std::size_t i = 0; i < method.parameters.size(); ++i)
    if (method.parameters[i] == name) return i;
  return std::nullopt;
}

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

struct Project::Index {
  std::unordered_map<std::string, std::vector<ClassRef>> by_simple_name;
  // Per file, its first class of each simple name: class_of, which every find_class from a file
  // asks first, scanned the file's classes (a file of 5,000 classes each deriving from the last
  // made the ancestor walks cubic).
  std::unordered_map<const FileFacts*, std::unordered_map<std::string_view, const ClassFact*>> in_file;
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
  std::unordered_map<const ClassFact*, std::vector<Built>> constructions;
  std::deque<OwnershipHop> parameter_hops;  // stable addresses for Holder::hop
  std::unordered_map<const ClassFact*, std::vector<Holder>> parameter_holders_of;
  // C++ out-of-line entries: the class each is part of, and each class's parts (itself first).
  std::unordered_map<const ClassFact*, ClassRef> joined_to;
  std::unordered_map<const ClassFact*, std::vector<ClassRef>> parts;
  // `decoder._graph_wrapper = self`, as a hop from the receiving class (keyed by it).
  std::unordered_map<const ClassFact*, std::vector<const OwnershipHop*>> reverse_hops_from;
  // Calls of a bare function name (`capture_decode_step(self, bs)`), by that name.
  std::unordered_map<std::string, std::vector<std::pair<CodeRef, const CallFact*>>> function_calls;
  // Calls through an object (`self.decoder.enable_graphs()`), by the callee's last name, in the
  // order invocations_of visits them (each query scanned every call of the project); built on
  // the first query, which only the enforce_eager rules make.
  std::once_flag method_calls_built;
  std::unordered_map<std::string_view, std::vector<std::pair<CodeRef, const CallFact*>>> method_calls;
  // built_for's answers: coverage() asks it of every class on its holder walk, once per rule.
  std::mutex built_for_mutex;
  std::unordered_map<const ClassFact*, std::vector<ClassRef>> built_for;
};

namespace {

std::string_view directory_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
}

// The definition an out-of-line entry in `from` belongs to: the one in the same directory
// (dec.h beside dec.cpp) when there are several with its qualified name, else the first.
ClassRef definition_for(const std::vector<ClassRef>& definitions, const FileFacts& from) {
  if (definitions.empty()) return {};
  for (const ClassRef& d : definitions)
    if (directory_of(d.file->path) == directory_of(from.path)) return d;
  return definitions.front();
}

}  // namespace

Project::Project(std::vector<FileFacts> files, Vocabulary vocabulary, ClassesOnly)
    : files_(std::move(files)), vocabulary_(std::move(vocabulary)), index_(std::make_unique<Index>()) {
  index_classes();
}

std::vector<std::string> Project::cache_subclasses(std::vector<FileFacts>& files,
                                                   const Vocabulary& vocabulary) {
  Project project(std::move(files), vocabulary, ClassesOnly{});
  std::vector<std::string> out = project.cache_subclasses();
  files = std::move(project).release_files();
  return out;
}

// classes(), by_simple_name, and the C++ out-of-line parts: what find_class, ancestors and
// is_cache_class read.
void Project::index_classes() {
  auto& ix = *index_;
  // One C++ class is one class across translation units: the entries of the .cpp files that
  // define its methods out of line join the header's definition by qualified name. Without an
  // analysed definition the first such entry stands for the class.
  std::unordered_map<std::string, std::vector<ClassRef>> definitions;
  for (const auto& file : files_)
    if (file.language == Language::Cpp)
      for (const auto& cls : file.classes)
        if (!cls.out_of_line && !cls.qualified_name.empty())
          definitions[cls.qualified_name].push_back(ClassRef{&file, &cls});
  std::unordered_map<std::string, ClassRef> stand_ins;
  for (const auto& file : files_) {
    auto& in_file = ix.in_file[&file];
    for (const auto& cls : file.classes) {
      in_file.try_emplace(cls.name, &cls);
      ClassRef ref{&file, &cls};
      if (file.language == Language::Cpp && cls.out_of_line) {
        ClassRef joined = definition_for(definitions[cls.qualified_name], file);
        if (!joined) joined = stand_ins.try_emplace(cls.qualified_name, ref).first->second;
        if (!(joined == ref)) {
          ix.joined_to.emplace(&cls, joined);
          auto& parts = ix.parts[joined.cls];
          if (parts.empty()) parts.push_back(joined);
          parts.push_back(ref);
          continue;
        }
      }
      classes_.push_back(ref);
      ix.by_simple_name[cls.name].push_back(ref);
    }
  }
}

void Demand::add(std::set<std::string> Wants::*names, std::string_view name) {
  std::lock_guard lock(mutex_);
  (wants_.*names).emplace(name);
}
void Demand::class_named(std::string_view simple) {
  add(&Wants::classes, simple);
}
void Demand::function_named(std::string_view name) {
  add(&Wants::functions, name);
}
void Demand::built(std::string_view simple) {
  add(&Wants::built, simple);
}
void Demand::mentioned(std::string_view name) {
  add(&Wants::mentioned, name);
}
void Demand::constant_named(std::string_view name) {
  add(&Wants::constants, name);
}
void Demand::handed_self(std::string_view attribute) {
  add(&Wants::handed_self, attribute);
}
void Demand::everything() {
  std::lock_guard lock(mutex_);
  wants_.everything = true;
}
Demand::Wants Demand::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(wants_, {});
}

Project::Project(std::vector<FileFacts> files, Vocabulary vocabulary, Demand* demand)
    : Project(std::move(files), std::move(vocabulary), ClassesOnly{}) {
  auto& ix = *index_;
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
    for (const auto& c : file.constructions)
      if (ClassRef target = find_class(c.target_class, &file))
        ix.constructions[target.cls].push_back(Built{&file, class_of(file, c.owner_class), &c});
    for (const auto& a : file.attribute_assignments) {
      if (a.value.names.size() != 1 || a.value.names.front() != a.value.text) continue;
      const CodeRef code = code_at(file, a.owner_class, a.method);
      if (!code) continue;
      const auto index = parameter_index(*code.method, a.value.text);
      if (!index || *index >= code.method->parameter_types.size()) continue;
      const std::string& type = code.method->parameter_types[*index];
      if (type.empty()) continue;
      if (ClassRef target = find_class(type, &file)) {
        ix.parameter_hops.push_back(OwnershipHop{a.owner_class, a.attribute, type, a.loc, false});
        ix.parameter_holders_of[target.cls].push_back(Holder{code.cls, &ix.parameter_hops.back()});
      }
    }
  }
  for (ClassRef c : classes_)
    for (ClassRef a : ancestors(c)) ix.subclasses_of[a.cls].push_back(c);
  auto index_function_calls = [&](CodeRef caller) {
    for (const auto& call : caller.method->calls)
      if (call.callee.find('.') == std::string::npos)
        ix.function_calls[call.callee].emplace_back(caller, &call);
  };
  for (ClassRef c : classes_)
    for (const auto& m : c.cls->methods) index_function_calls(CodeRef{c.file, c, &m});
  for (const auto& file : files_)
    for (const auto& fn : file.functions) index_function_calls(CodeRef{&file, {}, &fn});
  // Once attributes and parameters resolve: the objects a class hands itself to hold it.
  for (const auto& file : files_)
    for (const auto& r : file.reverse_assignments) {
      const CodeRef code = code_at(file, r.owner_class, r.method);
      if (!code || !code.cls) continue;
      const auto parts = split_dotted(r.object);
      ClassRef receiver;
      if (parts.size() == 1)
        receiver = parameter_class(code, parts.front());
      else if (parts.size() == 2 && parts.front() == "self")
        receiver = attribute_class(code.cls, parts.back());
      if (!receiver || receiver == code.cls) continue;
      ix.parameter_hops.push_back(
          OwnershipHop{receiver.cls->name, r.attribute, code.cls.cls->name, r.loc, false});
      const OwnershipHop* hop = &ix.parameter_hops.back();
      ix.reverse_hops_from[receiver.cls].push_back(hop);
      ix.parameter_holders_of[code.cls.cls].push_back(Holder{receiver, hop});
    }
  // The questions asked from here on are the rules'.
  demand_ = demand;
}

Project::~Project() = default;

std::vector<FileFacts> Project::release_files() && {
  classes_.clear();
  index_ = std::make_unique<Index>();
  return std::move(files_);
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

std::vector<CodeRef> Project::code_calling(const std::vector<std::string>& methods) const {
  if (demand_)
    for (const std::string& m : methods) {
      if (m == "forward" || m == "__call__")
        demand_->everything();
      else
        demand_->mentioned(m);
    }
  std::vector<CodeRef> out;
  for (ClassRef c : classes_)
    for (const CodeRef& m : methods_of(c)) out.push_back(m);
  for (const auto& file : files_)
    for (const auto& f : file.functions) out.push_back(CodeRef{&file, {}, &f});
  return out;
}

std::vector<std::pair<const FileFacts*, const ReverseAssignment*>> Project::reverse_assignments_of(
    std::string_view attribute) const {
  if (demand_) demand_->handed_self(attribute);
  std::vector<std::pair<const FileFacts*, const ReverseAssignment*>> out;
  for (const auto& file : files_)
    for (const auto& r : file.reverse_assignments)
      if (r.attribute == attribute) out.emplace_back(&file, &r);
  return out;
}

std::vector<std::pair<const FileFacts*, const Constant*>> Project::module_constants(
    std::string_view name) const {
  if (demand_) demand_->constant_named(name);
  std::vector<std::pair<const FileFacts*, const Constant*>> out;
  for (const auto& file : files_)
    for (const auto& c : file.constants)
      if (c.owner_class.empty() && c.name == name) out.emplace_back(&file, &c);
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

// ---- following code ----------------------------------------------------------

CodeRef Project::find_method(ClassRef cls, std::string_view name) const {
  if (!cls) return {};
  auto look = [&](ClassRef c) -> CodeRef {
    for (const CodeRef& m : methods_of(c))
      if (m.method->name == name) return m;
    return {};
  };
  if (CodeRef here = look(cls)) return here;
  for (ClassRef a : ancestors(cls))
    if (CodeRef there = look(a)) return there;
  return {};
}

CodeRef Project::code_at(const FileFacts& file, std::string_view owner_class, std::string_view method) const {
  if (owner_class.empty()) {
    for (const auto& f : file.functions)
      if (f.name == method) return CodeRef{&file, {}, &f};
    return {};
  }
  ClassRef cls = class_of(file, owner_class);
  if (!cls) return {};
  // The method as defined in `file` first: a method's sites are facts of the file defining it.
  std::vector<CodeRef> methods = methods_of(cls);
  for (const CodeRef& m : methods)
    if (m.method->name == method && m.file == &file) return m;
  for (const CodeRef& m : methods)
    if (m.method->name == method) return m;
  return {};
}

CodeRef Project::find_function(const FileFacts& from, std::string_view name) const {
  if (demand_) demand_->function_named(name);
  for (const auto& f : from.functions)
    if (f.name == name) return CodeRef{&from, {}, &f};
  for (const auto& import : from.imports) {
    if (import.local_name != name) continue;
    const std::string_view target = import.target;
    const std::string_view simple = simple_name(target);
    std::string_view prefix = target.substr(0, target.size() - simple.size());
    if (prefix.ends_with('.')) prefix.remove_suffix(1);
    for (const auto& file : files_) {
      if (!module_matches(file.module_name, prefix)) continue;
      for (const auto& f : file.functions)
        if (f.name == simple) return CodeRef{&file, {}, &f};
    }
  }
  return {};
}

ClassRef Project::attribute_class(ClassRef cls, std::string_view attribute) const {
  return attribute_class_at(cls, attribute, 0);
}

ClassRef Project::attribute_class_at(ClassRef cls, std::string_view attribute, int depth) const {
  if (!cls || depth > kMaxTypeDepth) return {};
  std::vector<ClassRef> chain{cls};
  for (ClassRef a : ancestors(cls)) chain.push_back(a);
  for (ClassRef c : chain) {
    auto it = index_->hops_from.find(c.cls);
    if (it == index_->hops_from.end()) continue;
    for (const OwnershipHop* hop : it->second)
      if (hop->attribute == attribute && !hop->in_container)
        if (ClassRef target = find_class(hop->target_class, c.file)) return target;
  }
  // `decoder._graph_wrapper = self` in the class that hands itself over.
  if (demand_) demand_->handed_self(attribute);
  for (ClassRef c : chain) {
    auto it = index_->reverse_hops_from.find(c.cls);
    if (it == index_->reverse_hops_from.end()) continue;
    for (const OwnershipHop* hop : it->second)
      if (hop->attribute == attribute)
        if (ClassRef target = find_class(hop->target_class, c.file)) return target;
  }
  // `self.decoder = decoder`: the class the parameter receives.
  for (ClassRef c : chain) {
    auto it = index_->attribute_assignments.find(c.cls);
    if (it == index_->attribute_assignments.end()) continue;
    for (const AttributeAssignment* a : it->second) {
      if (a->attribute != attribute || a->value.literal != LiteralKind::None) continue;
      if (a->value.names.size() != 1 || a->value.names.front() != a->value.text) continue;
      CodeRef code = code_at(*c.file, c.cls->name, a->method);
      if (!code || !parameter_index(*code.method, a->value.text)) continue;
      if (ClassRef target = parameter_class_at(code, a->value.text, depth + 1)) return target;
    }
  }
  return {};
}

ClassRef Project::parameter_class(CodeRef code, std::string_view parameter) const {
  return parameter_class_at(code, parameter, 0);
}

ClassRef Project::parameter_class_at(CodeRef code, std::string_view parameter, int depth) const {
  if (!code || depth > kMaxTypeDepth) return {};
  const auto index = parameter_index(*code.method, parameter);
  if (!index) return {};
  if (*index < code.method->parameter_types.size() && !code.method->parameter_types[*index].empty())
    if (ClassRef annotated = find_class(code.method->parameter_types[*index], code.file)) return annotated;
  if (!code.cls) return function_parameter_class(code, *index, parameter, depth);
  // What the in-project callers pass: `Cls(decoder=self.decoder)`, `Graph.capture(self, ...)`.
  const bool is_init = code.method->name == "__init__";
  for (const Built& b : constructions_of(code.cls)) {
    const Construction& c = *b.construction;
    if (is_init ? !c.factory.empty() : c.factory != code.method->name) continue;
    const Argument* passed = nullptr;
    for (const auto& a : c.args)
      if (a.keyword == parameter || (a.keyword.empty() && a.position == *index)) passed = &a;
    if (!passed) continue;
    const std::string& text = passed->value.text;
    if (text == "self" && b.by) return b.by;
    if (text.starts_with("self.") && text.find('.', 5) == std::string::npos && b.by)
      if (ClassRef held = attribute_class_at(b.by, std::string_view(text).substr(5), depth + 1)) return held;
    if (CodeRef caller = code_at(*b.file, c.owner_class, c.method))
      if (ClassRef forwarded = parameter_class_at(caller, text, depth + 1)) return forwarded;
  }
  return {};
}

// A module-level function's parameter: what its in-project callers pass
// (`capture_decode_step(self, bs)` from class T gives T for `model`).
ClassRef Project::function_parameter_class(CodeRef code, std::size_t index, std::string_view parameter,
                                           int depth) const {
  if (demand_) demand_->mentioned(code.method->name);
  auto it = index_->function_calls.find(code.method->name);
  if (it == index_->function_calls.end()) return {};
  for (const auto& [caller, call] : it->second) {
    if (!(find_function(*caller.file, call->callee) == code)) continue;
    const Argument* passed = nullptr;
    for (const auto& a : call->args)
      if (a.keyword == parameter || (a.keyword.empty() && a.position == index)) passed = &a;
    if (!passed) continue;
    const std::string& text = passed->value.text;
    if (text == "self" && caller.cls) return caller.cls;
    if (text.starts_with("self.") && text.find('.', 5) == std::string::npos && caller.cls)
      if (ClassRef held = attribute_class_at(caller.cls, std::string_view(text).substr(5), depth + 1))
        return held;
    if (ClassRef forwarded = parameter_class_at(caller, text, depth + 1)) return forwarded;
  }
  return {};
}

ClassRef Project::receiver_class(CodeRef from, const std::vector<std::string_view>& parts) const {
  if (parts.size() < 2 || !from) return {};
  const std::string_view root = parts.front();
  ClassRef type;
  if (root == "self" || root == "cls")
    type = from.cls;
  else if (parameter_index(*from.method, root))
    type = parameter_class(from, root);
  else if (is_uppercase(root))
    type = find_class(root, from.file);
  for (std::size_t i = 1; type && i + 1 < parts.size(); ++i) type = attribute_class(type, parts[i]);
  return type;
}

std::vector<CodeRef> Project::resolve_call(CodeRef from, std::string_view callee) const {
  if (!from) return {};
  const auto parts = split_dotted(callee);
  auto called = [&](ClassRef module) -> std::vector<CodeRef> {
    for (const char* entry : {"forward", "__call__"})
      if (CodeRef m = find_method(module, entry)) return {m};
    return {};
  };
  if (parts.size() == 1) {
    if (parameter_index(*from.method, callee)) return called(parameter_class(from, callee));
    if (CodeRef f = find_function(*from.file, callee)) return {f};
    return {};
  }
  ClassRef type = receiver_class(from, parts);
  if (!type) return {};
  if (CodeRef m = find_method(type, parts.back())) return {m};
  if (parts.front() == "cls" || is_uppercase(parts.front())) return {};
  return called(attribute_class(type, parts.back()));
}

std::vector<KvWrite> Project::kv_writes_in(CodeRef code) const {
  std::vector<KvWrite> out;
  const std::string& name = code.method->name;
  const std::string owner = code.cls ? code.cls.cls->name : std::string();
  auto here = [&](const std::string& site_owner, const std::string& site_method) {
    return site_owner == owner && site_method == name;
  };
  for (const auto& s : code.file->cache_sites)
    if (here(s.owner_class, s.method) && !s.caller_requested) {
      KvWrite w;
      w.kind = KvWrite::Kind::BuildsCache;
      w.cache_site = &s;
      w.loc = s.loc;
      out.push_back(std::move(w));
    }
  for (const auto& s : code.file->implicit_caches)
    if (here(s.owner_class, s.method)) {
      KvWrite w;
      w.kind = KvWrite::Kind::ImplicitCache;
      w.implicit = &s;
      w.callee = s.callee;
      w.loc = s.loc;
      out.push_back(std::move(w));
    }
  // Raw K/V the class keeps, written (else read, else handed on) here; allocated here, it is above.
  for (const auto& s : code.file->cache_sites) {
    if (!s.raw_kv || s.owner_class != owner || !code.cls || here(s.owner_class, s.method)) continue;
    const RawKvAccess* use = nullptr;
    for (const RawKvAccess& a : s.raw_kv->accesses)
      if (a.method == name && (!use || static_cast<int>(a.kind) < static_cast<int>(use->kind))) use = &a;
    if (!use) continue;
    KvWrite w;
    w.kind = KvWrite::Kind::RawKv;
    w.cache_site = &s;
    w.callee = use->by;
    w.reads_only = use->kind == RawKvAccess::Kind::Read;
    w.raw_access = use;
    w.loc = use->loc;
    out.push_back(std::move(w));
  }
  for (const auto& call : code.method->calls) {
    if (!call.writes_kv) continue;
    const bool reported =
        std::any_of(out.begin(), out.end(), [&](const KvWrite& w) { return w.loc == call.loc; });
    if (reported) continue;
    KvWrite w;
    w.kind = KvWrite::Kind::WritesCache;
    w.callee = call.callee;
    w.reads_only = call.kv_read_only;
    w.loc = call.loc;
    out.push_back(std::move(w));
  }
  for (auto& w : out) {
    w.where = code;
    w.holder = code.cls;
  }
  return out;
}

std::vector<KvWrite> Project::kv_reached_by(const FileFacts& file, const CaptureSite& capture) const {
  std::vector<KvWrite> out;
  const CodeRef at = code_at(file, capture.owner_class, capture.method);
  const ClassRef owner = class_of(file, capture.owner_class);
  // In the capture body itself.
  for (const auto& s : file.cache_sites)
    if (s.inside_graph_capture && !s.caller_requested && s.owner_class == capture.owner_class &&
        s.method == capture.method && s.loc.line >= capture.loc.line) {
      KvWrite w;
      w.kind = KvWrite::Kind::BuildsCache;
      w.where = at;
      w.holder = owner;
      w.cache_site = &s;
      w.loc = s.loc;
      out.push_back(std::move(w));
    }
  if (capture.captured_writes_kv) {
    KvWrite w;
    w.kind = KvWrite::Kind::WritesCache;
    w.where = at;
    w.holder = owner;
    w.loc = capture.loc;
    // The first captured call that writes K/V, else the first that reads it.
    if (at)
      for (const auto& call : at.method->calls)
        if (call.writes_kv && call.loc.line >= capture.loc.line &&
            std::find(capture.captured_calls.begin(), capture.captured_calls.end(), call.callee) !=
                capture.captured_calls.end() &&
            (w.callee.empty() || (w.reads_only && !call.kv_read_only))) {
          w.callee = call.callee;
          w.reads_only = call.kv_read_only;
          w.loc = call.loc;
          if (!w.reads_only) break;
        }
    out.push_back(std::move(w));
  }
  if (!at) return out;

  struct Item {
    CodeRef code;
    std::size_t entry;  // index into capture.captured_calls
    int depth;
  };
  std::deque<Item> queue;
  std::set<const MethodFact*> visited{at.method};
  for (std::size_t i = 0; i < capture.captured_calls.size(); ++i)
    for (CodeRef target : resolve_call(at, capture.captured_calls[i])) queue.push_back({target, i, 1});
  while (!queue.empty()) {
    Item item = queue.front();
    queue.pop_front();
    if (!visited.insert(item.code.method).second) continue;
    const std::string& entry = capture.captured_calls[item.entry];
    const std::string_view root = split_dotted(entry).front();
    const bool via_parameter = parameter_index(*at.method, root).has_value();
    for (KvWrite& w : kv_writes_in(item.code)) {
      w.entry = entry;
      if (via_parameter) {
        w.through_parameter = std::string(root);
        w.parameter_class = parameter_class(at, root);
      }
      out.push_back(std::move(w));
    }
    if (item.depth >= kMaxCallDepth) continue;
    for (const auto& call : item.code.method->calls)
      for (CodeRef target : resolve_call(item.code, call.callee))
        if (!visited.count(target.method)) queue.push_back({target, item.entry, item.depth + 1});
  }
  return out;
}

std::vector<Built> Project::constructions_of(ClassRef cls) const {
  if (!cls) return {};
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->built(cls.cls->name);
  }
  auto it = index_->constructions.find(cls.cls);
  return it == index_->constructions.end() ? std::vector<Built>{} : it->second;
}

std::vector<Invocation> Project::invocations_of(ClassRef cls, std::string_view method) const {
  std::vector<Invocation> out;
  if (!cls) return out;
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->mentioned(method);
  }
  auto is_target = [&](ClassRef type) {
    if (!type) return false;
    if (type == cls) return true;
    auto bases = ancestors(type);
    return std::find(bases.begin(), bases.end(), cls) != bases.end();
  };
  std::call_once(index_->method_calls_built, [&] {
    auto add = [&](CodeRef caller) {
      for (const auto& call : caller.method->calls)
        if (const auto dot = call.callee.rfind('.'); dot != std::string::npos)
          index_->method_calls[std::string_view(call.callee).substr(dot + 1)].emplace_back(caller, &call);
    };
    for (ClassRef c : classes_)
      for (const CodeRef& m : methods_of(c)) add(m);
    for (const auto& file : files_)
      for (const auto& f : file.functions) add(CodeRef{&file, {}, &f});
  });
  auto it = index_->method_calls.find(method);
  if (it == index_->method_calls.end()) return out;
  for (const auto& [caller, call] : it->second) {
    const auto parts = split_dotted(call->callee);
    if (parts.front() == "cls") continue;
    if (parts.front() == "self" && parts.size() == 2) continue;  // the class calling itself
    if (caller.cls == cls && parts.front() == "self") continue;
    if (is_target(receiver_class(caller, parts))) out.push_back(Invocation{caller, call});
  }
  return out;
}

std::vector<Invocation> Project::function_callers(CodeRef function) const {
  std::vector<Invocation> out;
  if (!function || function.cls) return out;
  if (demand_) demand_->mentioned(function.method->name);
  auto it = index_->function_calls.find(function.method->name);
  if (it == index_->function_calls.end()) return out;
  for (const auto& [caller, call] : it->second)
    if (find_function(*caller.file, call->callee) == function) out.push_back(Invocation{caller, call});
  return out;
}

std::vector<std::string> Project::self_callers(ClassRef cls, std::string_view method) const {
  std::vector<std::string> out{std::string(method)};
  if (!cls) return out;
  std::vector<ClassRef> chain{cls};
  for (ClassRef a : ancestors(cls)) chain.push_back(a);
  for (bool grew = true; grew;) {
    grew = false;
    for (ClassRef c : chain)
      for (const CodeRef& code : methods_of(c)) {
        const MethodFact& m = *code.method;
        if (std::find(out.begin(), out.end(), m.name) != out.end()) continue;
        const bool calls_one = std::any_of(m.calls.begin(), m.calls.end(), [&](const CallFact& call) {
          const auto parts = split_dotted(call.callee);
          return parts.size() == 2 && parts.front() == "self" &&
                 std::find(out.begin(), out.end(), parts.back()) != out.end();
        });
        if (calls_one) {
          out.push_back(m.name);
          grew = true;
        }
      }
  }
  return out;
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
