// Trims one file's facts to what they hold, for the run that keeps every analysed file's
// facts until its rules have run (on a large tree those facts are the run's peak memory):
// vectors and strings keep no spare capacity (growth by push_back leaves up to half of
// one unused), every location that names the file shares one copy of its path
// (FilePath), and equal guards are one shared guard (the calls of a method under one `if`
// each carried a copy of it). The facts read the same afterwards; only their memory changes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

namespace compact_detail {

class Compactor {
 public:
  explicit Compactor(const std::string& path) : path_(path) {}

  void operator()(std::string& s) { s.shrink_to_fit(); }
  void operator()(Location& l) {
    if (l.file == path_) l.file = path_;
  }
  template <typename T>
  void operator()(std::vector<T>& v) {
    v.shrink_to_fit();
    for (auto& x : v) (*this)(x);
  }
  template <typename T>
  void operator()(std::optional<T>& o) {
    if (o) (*this)(*o);
  }
  void operator()(ByteSpan&) {}
  void operator()(Expression& e) { all(e.text, e.literal_value, e.names, e.loc, e.alias_of); }
  void operator()(Argument& a) { all(a.keyword, a.value); }
  void operator()(Guard& g) { all(g.condition, g.self_attributes, g.parameters, g.calls, g.given); }
  // Each guard becomes the file's one copy of an equal guard, compacted when first seen.
  void operator()(Guards& guards) {
    auto& list = guards.shared();
    list.shrink_to_fit();
    for (auto& shared : list) {
      // A guard the front end already shares is decided once.
      if (auto met = by_address_.find(shared.get()); met != by_address_.end()) {
        shared = met->second.second;
        continue;
      }
      std::shared_ptr<const Guard> original = shared;
      auto& same = guards_[std::hash<std::string>{}(shared->condition.text) ^
                           (std::size_t{shared->condition.loc.line} << 8) ^
                           (std::size_t{shared->condition.loc.column} << 40) ^
                           (static_cast<std::size_t>(shared->origin) << 2) ^ std::size_t{shared->negated}];
      auto found = std::find_if(same.begin(), same.end(), [&](const auto& g) { return *g == *shared; });
      if (found != same.end()) {
        shared = *found;
      } else {
        Guard copy = *shared;
        (*this)(copy);
        shared = std::make_shared<const Guard>(std::move(copy));
        same.push_back(shared);
      }
      by_address_.emplace(original.get(), std::make_pair(original, shared));
    }
  }
  void operator()(CacheSite& s) {
    all(s.cache_class, s.written, s.owner_class, s.method, s.loc, s.args, s.retained_as, s.container_key,
        s.guards);
  }
  void operator()(ImplicitCacheSite& s) {
    all(s.owner_class, s.method, s.loc, s.callee, s.none_origin, s.guards, s.callee_path, s.callee_origin,
        s.callee_origin_class, s.kept_at);
  }
  void operator()(CaptureSite& c) {
    all(c.owner_class, c.method, c.loc, c.written, c.guards, c.captured_calls);
  }
  void operator()(SpecFact& s) { all(s.loc, s.constructor, s.config, s.fields, s.unpacked, s.guards); }
  void operator()(Forward& f) { all(f.via_attribute, f.loc, f.guards); }
  void operator()(LocalAssignment& a) { all(a.name, a.value, a.loc); }
  void operator()(Declaration& d) { all(d.owner_class, d.loc, d.specs, d.forwards, d.local_assignments); }
  void operator()(OwnershipHop& h) { all(h.owner_class, h.attribute, h.target_class, h.loc); }
  void operator()(BatchEvidence& b) { all(b.owner_class, b.method, b.loc, b.expression); }
  void operator()(ProtocolUse& p) { all(p.owner_class, p.function, p.loc, p.expression); }
  void operator()(AttributeAssignment& a) { all(a.owner_class, a.method, a.attribute, a.value, a.loc); }
  void operator()(ReverseAssignment& a) { all(a.owner_class, a.method, a.object, a.attribute, a.loc); }
  void operator()(Construction& c) {
    all(c.owner_class, c.method, c.target_class, c.loc, c.guards, c.factory, c.args);
  }
  void operator()(Constant& c) { all(c.owner_class, c.name, c.value); }
  void operator()(BaseClass& b) { all(b.written, b.resolved); }
  void operator()(CallPass& p) { all(p.loc, p.keywords, p.guards); }
  void operator()(CallFact& c) { all(c.callee, c.loc, c.guards, c.args, c.passes); }
  void operator()(MethodFact& m) { all(m.name, m.loc, m.parameters, m.parameter_types, m.calls); }
  void operator()(ClassFact& c) { all(c.name, c.loc, c.bases, c.methods, c.body_indent, c.qualified_name); }
  void operator()(ImportFact& i) { all(i.local_name, i.target, i.loc); }
  void operator()(Suppression& s) { all(s.loc, s.codes, s.reason, s.malformed, s.code_spans); }
  void operator()(ParseProblem& p) { all(p.loc, p.message); }
  void operator()(FileFacts& f) {
    all(f.module_name, f.imports, f.classes, f.functions, f.cache_sites, f.implicit_caches, f.captures,
        f.declarations, f.hops, f.batch_evidence, f.protocol_uses, f.constants, f.suppressions,
        f.attribute_assignments, f.reverse_assignments, f.constructions, f.parse_problems);
  }

 private:
  template <typename... Parts>
  void all(Parts&... parts) {
    ((*this)(parts), ...);
  }
  FilePath path_;
  // The guards kept so far, by a hash of what tells them apart.
  std::unordered_map<std::size_t, std::vector<std::shared_ptr<const Guard>>> guards_;
  // What each guard met so far became (the front end's shared guards are met many times); the
  // original is held too, so its address cannot be reused for another guard while this runs.
  std::unordered_map<const Guard*, std::pair<std::shared_ptr<const Guard>, std::shared_ptr<const Guard>>>
      by_address_;
};

}  // namespace compact_detail

inline void compact(FileFacts& facts) {
  compact_detail::Compactor compactor(facts.path);
  compactor(facts);
}

}  // namespace kvlint::facts
