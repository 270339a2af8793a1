// Building the Project view. Takes every analysed file's facts and the vocabulary; gives the
// index (project_index.hpp) that every query reads: classes by simple name, C++ out-of-line
// parts joined to their definition, per-class sites, hops and holders (with the holders that
// parameters and reverse assignments imply), transitive subclasses and function calls by name.
// Also Demand, the record of what the rules asked about classes not given to the project.
// Invariant: `demand_` is set only after indexing, so the questions recorded are the rules'.
#include "analyzers/facts/project.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::parameter_index;
using project_detail::split_dotted;

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
  // The questions asked from here on are the rules' (and the join's, which is theirs).
  demand_ = demand;
  join_raw_kv_handoffs();
}

Project::~Project() = default;

std::vector<FileFacts> Project::release_files() && {
  // The joined raw K/V sites are this project's reading, not the files' facts.
  for (std::size_t i = 0; i < joined_from_.size(); ++i) files_[i].cache_sites.resize(joined_from_[i]);
  classes_.clear();
  index_ = std::make_unique<Index>();
  return std::move(files_);
}

}  // namespace kvlint::facts
