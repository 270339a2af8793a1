// Trims one file's facts to what they hold, for the run that keeps every analysed file's
// facts until its rules have run (on a large tree those facts are the run's peak memory):
// vectors and strings keep no spare capacity (growth by push_back leaves up to half of
// one unused), and every location that names the file shares one copy of its path
// (FilePath). The facts read the same afterwards; only their memory changes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

namespace compact_detail {

class Compactor {
 public:
  explicit Compactor(const std::string& path) : path_(path) {}

  void operator()(std::string& s) const { s.shrink_to_fit(); }
  void operator()(Location& l) const {
    if (l.file == path_) l.file = path_;
  }
  template <typename T>
  void operator()(std::vector<T>& v) const {
    v.shrink_to_fit();
    for (auto& x : v) (*this)(x);
  }
  template <typename T>
  void operator()(std::optional<T>& o) const {
    if (o) (*this)(*o);
  }
  void operator()(ByteSpan&) const {}
  void operator()(Expression& e) const { all(e.text, e.literal_value, e.names, e.loc, e.alias_of); }
  void operator()(Argument& a) const { all(a.keyword, a.value); }
  void operator()(Guard& g) const { all(g.condition, g.self_attributes, g.parameters, g.calls, g.given); }
  void operator()(CacheSite& s) const {
    all(s.cache_class, s.written, s.owner_class, s.method, s.loc, s.args, s.retained_as, s.container_key,
        s.guards);
  }
  void operator()(ImplicitCacheSite& s) const {
    all(s.owner_class, s.method, s.loc, s.callee, s.none_origin, s.guards, s.callee_path, s.callee_origin,
        s.callee_origin_class, s.kept_at);
  }
  void operator()(CaptureSite& c) const {
    all(c.owner_class, c.method, c.loc, c.written, c.guards, c.captured_calls);
  }
  void operator()(SpecFact& s) const { all(s.loc, s.constructor, s.config, s.fields, s.unpacked, s.guards); }
  void operator()(Forward& f) const { all(f.via_attribute, f.loc, f.guards); }
  void operator()(LocalAssignment& a) const { all(a.name, a.value, a.loc); }
  void operator()(Declaration& d) const {
    all(d.owner_class, d.loc, d.specs, d.forwards, d.local_assignments);
  }
  void operator()(OwnershipHop& h) const { all(h.owner_class, h.attribute, h.target_class, h.loc); }
  void operator()(BatchEvidence& b) const { all(b.owner_class, b.method, b.loc, b.expression); }
  void operator()(ProtocolUse& p) const { all(p.owner_class, p.function, p.loc, p.expression); }
  void operator()(AttributeAssignment& a) const { all(a.owner_class, a.method, a.attribute, a.value, a.loc); }
  void operator()(ReverseAssignment& a) const { all(a.owner_class, a.method, a.object, a.attribute, a.loc); }
  void operator()(Construction& c) const {
    all(c.owner_class, c.method, c.target_class, c.loc, c.guards, c.factory, c.args);
  }
  void operator()(Constant& c) const { all(c.owner_class, c.name, c.value); }
  void operator()(BaseClass& b) const { all(b.written, b.resolved); }
  void operator()(CallPass& p) const { all(p.loc, p.keywords, p.guards); }
  void operator()(CallFact& c) const { all(c.callee, c.loc, c.guards, c.args, c.passes); }
  void operator()(MethodFact& m) const { all(m.name, m.loc, m.parameters, m.parameter_types, m.calls); }
  void operator()(ClassFact& c) const {
    all(c.name, c.loc, c.bases, c.methods, c.body_indent, c.qualified_name);
  }
  void operator()(ImportFact& i) const { all(i.local_name, i.target, i.loc); }
  void operator()(Suppression& s) const { all(s.loc, s.codes, s.reason, s.malformed, s.code_spans); }
  void operator()(ParseProblem& p) const { all(p.loc, p.message); }
  void operator()(FileFacts& f) const {
    all(f.module_name, f.imports, f.classes, f.functions, f.cache_sites, f.implicit_caches, f.captures,
        f.declarations, f.hops, f.batch_evidence, f.protocol_uses, f.constants, f.suppressions,
        f.attribute_assignments, f.reverse_assignments, f.constructions, f.parse_problems);
  }

 private:
  template <typename... Parts>
  void all(Parts&... parts) const {
    ((*this)(parts), ...);
  }
  FilePath path_;
};

}  // namespace compact_detail

inline void compact(FileFacts& facts) {
  compact_detail::Compactor(facts.path)(facts);
}

}  // namespace kvlint::facts
