#include "analyzers/facts/facts_json.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "analyzers/facts/enum_names.hpp"

namespace kvlint::facts {
namespace {

using nlohmann::json;

// Enum <-> string, through the tables in enum_names.hpp.
template <typename E, std::size_t N>
std::string enum_name(E value, const std::array<std::pair<E, const char*>, N>& table) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  throw std::invalid_argument("unknown enum value");
}
template <typename E, std::size_t N>
E enum_value(const json& j, const std::array<std::pair<E, const char*>, N>& table) {
  const auto& text = j.get_ref<const std::string&>();
  for (const auto& [e, name] : table)
    if (text == name) return e;
  throw std::invalid_argument("unknown enum spelling: " + text);
}

// The file path is stored once at the top level; locations omit it.
json span_to_json(const ByteSpan& s) {
  return json::array({s.begin, s.end});
}

json spans_to_json(const std::vector<ByteSpan>& spans) {
  json out = json::array();
  for (const auto& s : spans) out.push_back(span_to_json(s));
  return out;
}

ByteSpan span_from_json(const json& j) {
  return ByteSpan{j.at(0).get<uint32_t>(), j.at(1).get<uint32_t>()};
}

json loc_json(const Location& l) {
  return json::array({l.line, l.column, l.end_line, l.end_column});
}
Location loc_from(const json& j, const FilePath& file) {
  Location l;
  l.file = file;
  l.line = j.at(0).get<uint32_t>();
  l.column = j.at(1).get<uint32_t>();
  l.end_line = j.at(2).get<uint32_t>();
  l.end_column = j.at(3).get<uint32_t>();
  return l;
}
// A Location whose file differs from the FileFacts path (never produced by the
// front end, but keep the round trip exact anyway).
json loc_json(const Location& l, const std::string& file) {
  json j = loc_json(l);
  if (l.file != file) j.push_back(l.file.str());
  return j;
}
Location loc_from_checked(const json& j, const FilePath& file) {
  Location l = loc_from(j, file);
  if (j.size() > 4) l.file = j.at(4).get<std::string>();
  return l;
}

struct Writer {
  const std::string& file;
  json loc(const Location& l) const { return loc_json(l, file); }
  json expr(const Expression& e) const {
    json j{{"text", e.text}, {"loc", loc(e.loc)}};
    if (e.literal != LiteralKind::None) {
      j["literal"] = enum_name(e.literal, kLiteralKinds);
      j["literal_value"] = e.literal_value;
    }
    if (!e.names.empty()) j["names"] = e.names;
    if (!e.alias_of.empty()) j["alias_of"] = e.alias_of;
    return j;
  }
  json opt_expr(const std::optional<Expression>& e) const { return e ? expr(*e) : json(nullptr); }
  json raw_kv(const RawKv& k) const {
    json shape = json::array();
    for (const auto& e : k.shape) shape.push_back(expr(e));
    return {{"members", k.members},
            {"written_at", k.written_at ? loc(*k.written_at) : json(nullptr)},
            {"written_by", k.written_by},
            {"read_at", k.read_at ? loc(*k.read_at) : json(nullptr)},
            {"read_by", k.read_by},
            {"named_as_kv", k.named_as_kv},
            {"shape", std::move(shape)},
            {"positions_axis", k.positions_axis ? json(*k.positions_axis) : json(nullptr)},
            {"rows_axis", k.rows_axis ? json(*k.rows_axis) : json(nullptr)},
            {"accesses", accesses(k.accesses)}};
  }
  json accesses(const std::vector<RawKvAccess>& list) const {
    json a = json::array();
    for (const auto& x : list)
      a.push_back({{"kind", enum_name(x.kind, kRawKvAccessKinds)},
                   {"method", x.method},
                   {"loc", loc(x.loc)},
                   {"by", x.by}});
    return a;
  }
  json evidence(const std::vector<KvEvidence>& list) const {
    json a = json::array();
    for (const auto& x : list)
      a.push_back({{"kind", enum_name(x.kind, kKvEvidenceKinds)},
                   {"loc", loc(x.loc)},
                   {"owner_class", x.owner_class},
                   {"member", x.member},
                   {"method", x.method},
                   {"by", x.by},
                   {"detail", x.detail}});
    return a;
  }
  json args(const std::vector<Argument>& list) const {
    json a = json::array();
    for (const auto& arg : list)
      a.push_back({{"keyword", arg.keyword}, {"position", arg.position}, {"value", expr(arg.value)}});
    return a;
  }
  json method(const MethodFact& m) const {
    json calls = json::array();
    for (const auto& c : m.calls)
      calls.push_back({{"callee", c.callee},
                       {"loc", loc(c.loc)},
                       {"writes_kv", c.writes_kv},
                       {"kv_read_only", c.kv_read_only},
                       {"guards", guards(c.guards)},
                       {"args", args(c.args)},
                       {"passes", passes(c.passes)}});
    return {{"name", m.name},
            {"loc", loc(m.loc)},
            {"parameters", m.parameters},
            {"parameter_types", m.parameter_types},
            {"calls", calls}};
  }
  json passes(const std::vector<CallPass>& list) const {
    json a = json::array();
    for (const auto& p : list)
      a.push_back({{"loc", loc(p.loc)},
                   {"positionals", p.positionals},
                   {"keywords", p.keywords},
                   {"unpacked", p.unpacked},
                   {"guards", guards(p.guards)}});
    return a;
  }
  json guards(const Guards& list) const {
    json a = json::array();
    for (const auto& g : list) {
      json j{{"origin", enum_name(g.origin, kGuardOrigins)},
             {"negated", g.negated},
             {"condition", expr(g.condition)},
             {"self_attributes", g.self_attributes},
             {"parameters", g.parameters},
             {"calls", g.calls}};
      if (!g.given.empty()) j["given"] = g.given;
      a.push_back(std::move(j));
    }
    return a;
  }
  json cache_site(const CacheSite& s) const {
    return json{{"cache_class", s.cache_class},
                {"written", s.written},
                {"owner_class", s.owner_class},
                {"method", s.method},
                {"loc", loc(s.loc)},
                {"args", args(s.args)},
                {"retention", enum_name(s.retention, kRetentions)},
                {"retained_as", s.retained_as},
                {"container_key", opt_expr(s.container_key)},
                {"guards", guards(s.guards)},
                {"caller_requested", s.caller_requested},
                {"inside_graph_capture", s.inside_graph_capture},
                {"stores_existing", s.stores_existing},
                {"raw_kv", s.raw_kv ? raw_kv(*s.raw_kv) : json(nullptr)},
                {"tensor_library", enum_name(s.tensor_library, kTensorLibraries)},
                {"evidence", evidence(s.evidence)}};
  }
};

struct Reader {
  FilePath file;  // one copy of the path for every location read
  Location loc(const json& j) const { return loc_from_checked(j, file); }
  Expression expr(const json& j) const {
    Expression e;
    e.text = j.at("text").get<std::string>();
    e.loc = loc(j.at("loc"));
    if (j.contains("literal")) {
      e.literal = enum_value(j.at("literal"), kLiteralKinds);
      e.literal_value = j.at("literal_value").get<std::string>();
    }
    if (j.contains("names")) e.names = j.at("names").get<std::vector<std::string>>();
    if (j.contains("alias_of")) e.alias_of = j.at("alias_of").get<std::string>();
    return e;
  }
  std::optional<Expression> opt_expr(const json& j) const {
    if (j.is_null()) return std::nullopt;
    return expr(j);
  }
  std::vector<Argument> args(const json& j) const {
    std::vector<Argument> out;
    for (const auto& a : j)
      out.push_back(
          {a.at("keyword").get<std::string>(), a.at("position").get<uint32_t>(), expr(a.at("value"))});
    return out;
  }
  MethodFact method(const json& j) const {
    MethodFact m;
    m.name = j.at("name").get<std::string>();
    m.loc = loc(j.at("loc"));
    m.parameters = j.at("parameters").get<std::vector<std::string>>();
    m.parameter_types = j.at("parameter_types").get<std::vector<std::string>>();
    for (const auto& c : j.at("calls"))
      m.calls.push_back({c.at("callee").get<std::string>(), loc(c.at("loc")), c.at("writes_kv").get<bool>(),
                         guards(c.at("guards")), args(c.at("args")), c.at("kv_read_only").get<bool>(),
                         passes(c.at("passes"))});
    return m;
  }
  std::vector<CallPass> passes(const json& j) const {
    std::vector<CallPass> out;
    for (const auto& p : j)
      out.push_back({loc(p.at("loc")), p.at("positionals").get<uint32_t>(),
                     p.at("keywords").get<std::vector<std::string>>(), p.at("unpacked").get<bool>(),
                     guards(p.at("guards"))});
    return out;
  }
  std::vector<Guard> guards(const json& j) const {
    std::vector<Guard> out;
    for (const auto& g : j) {
      Guard guard;
      guard.origin = enum_value(g.at("origin"), kGuardOrigins);
      guard.negated = g.at("negated").get<bool>();
      guard.condition = expr(g.at("condition"));
      guard.self_attributes = g.at("self_attributes").get<std::vector<std::string>>();
      guard.parameters = g.at("parameters").get<std::vector<std::string>>();
      guard.calls = g.at("calls").get<std::vector<std::string>>();
      if (g.contains("given")) guard.given = g.at("given").get<std::vector<std::string>>();
      out.push_back(std::move(guard));
    }
    return out;
  }
  CacheSite cache_site(const json& s) const {
    CacheSite site;
    site.cache_class = s.at("cache_class").get<std::string>();
    site.written = s.at("written").get<std::string>();
    site.owner_class = s.at("owner_class").get<std::string>();
    site.method = s.at("method").get<std::string>();
    site.loc = loc(s.at("loc"));
    site.args = args(s.at("args"));
    site.retention = enum_value(s.at("retention"), kRetentions);
    site.retained_as = s.at("retained_as").get<std::string>();
    site.container_key = opt_expr(s.at("container_key"));
    site.guards = guards(s.at("guards"));
    site.caller_requested = s.at("caller_requested").get<bool>();
    site.inside_graph_capture = s.at("inside_graph_capture").get<bool>();
    site.stores_existing = s.at("stores_existing").get<bool>();
    if (const json& k = s.at("raw_kv"); !k.is_null()) {
      RawKv raw;
      raw.members = k.at("members").get<std::vector<std::string>>();
      if (!k.at("written_at").is_null()) raw.written_at = loc(k.at("written_at"));
      raw.written_by = k.at("written_by").get<std::string>();
      if (!k.at("read_at").is_null()) raw.read_at = loc(k.at("read_at"));
      raw.read_by = k.at("read_by").get<std::string>();
      raw.named_as_kv = k.at("named_as_kv").get<bool>();
      for (const auto& e : k.at("shape")) raw.shape.push_back(expr(e));
      if (!k.at("positions_axis").is_null()) raw.positions_axis = k.at("positions_axis").get<uint32_t>();
      if (!k.at("rows_axis").is_null()) raw.rows_axis = k.at("rows_axis").get<uint32_t>();
      for (const auto& x : k.at("accesses"))
        raw.accesses.push_back({enum_value(x.at("kind"), kRawKvAccessKinds),
                                x.at("method").get<std::string>(), loc(x.at("loc")),
                                x.at("by").get<std::string>()});
      site.raw_kv = std::move(raw);
    }
    if (s.contains("tensor_library"))
      site.tensor_library = enum_value(s.at("tensor_library"), kTensorLibraries);
    for (const auto& x : s.at("evidence"))
      site.evidence.push_back({enum_value(x.at("kind"), kKvEvidenceKinds), loc(x.at("loc")),
                               x.at("owner_class").get<std::string>(), x.at("member").get<std::string>(),
                               x.at("method").get<std::string>(), x.at("by").get<std::string>(),
                               x.at("detail").get<std::string>()});
    return site;
  }
};

}  // namespace

json to_json(const FileFacts& f) {
  const Writer w{f.path};
  json j;
  j["version"] = kFactsJsonVersion;
  j["path"] = f.path;
  j["language"] = enum_name(f.language, kLanguages);
  j["module_name"] = f.module_name;

  json& imports = j["imports"] = json::array();
  for (const auto& i : f.imports)
    imports.push_back({{"local_name", i.local_name}, {"target", i.target}, {"loc", w.loc(i.loc)}});

  json& classes = j["classes"] = json::array();
  for (const auto& c : f.classes) {
    json bases = json::array();
    for (const auto& b : c.bases) bases.push_back({{"written", b.written}, {"resolved", b.resolved}});
    json methods = json::array();
    for (const auto& m : c.methods) methods.push_back(w.method(m));
    classes.push_back({{"name", c.name},
                       {"loc", w.loc(c.loc)},
                       {"bases", bases},
                       {"methods", methods},
                       {"body_indent", c.body_indent},
                       {"body_end_byte", c.body_end_byte},
                       {"qualified_name", c.qualified_name},
                       {"out_of_line", c.out_of_line}});
  }

  json& functions = j["functions"] = json::array();
  for (const auto& fn : f.functions) functions.push_back(w.method(fn));

  json& sites = j["cache_sites"] = json::array();
  for (const auto& s : f.cache_sites) sites.push_back(w.cache_site(s));

  json& views = j["held_tensor_views"] = json::array();
  for (const auto& v : f.held_tensor_views)
    views.push_back({{"method", v.method}, {"site", w.cache_site(v.site)}});

  json& handoffs = j["kv_handoffs"] = json::array();
  for (const auto& h : f.kv_handoffs)
    handoffs.push_back({{"owner_class", h.owner_class},
                        {"method", h.method},
                        {"loc", w.loc(h.loc)},
                        {"keyword", h.keyword},
                        {"receiver", h.receiver},
                        {"called", h.called},
                        {"receiver_class", h.receiver_class}});

  json& implicit = j["implicit_caches"] = json::array();
  for (const auto& s : f.implicit_caches)
    implicit.push_back({{"owner_class", s.owner_class},
                        {"method", s.method},
                        {"loc", w.loc(s.loc)},
                        {"callee", s.callee},
                        {"reason", enum_name(s.reason, kImplicitReasons)},
                        {"none_origin", s.none_origin ? w.loc(*s.none_origin) : json(nullptr)},
                        {"guards", w.guards(s.guards)},
                        {"callee_root", enum_name(s.callee_root, kCalleeRoots)},
                        {"callee_path", s.callee_path},
                        {"callee_origin", w.opt_expr(s.callee_origin)},
                        {"callee_origin_class", s.callee_origin_class},
                        {"through_kwargs_dict", s.through_kwargs_dict},
                        {"kept", enum_name(s.kept, kKeptKinds)},
                        {"kept_at", s.kept_at ? w.loc(*s.kept_at) : json(nullptr)}});

  json& captures = j["captures"] = json::array();
  for (const auto& c : f.captures)
    captures.push_back({{"kind", enum_name(c.kind, kCaptureKinds)},
                        {"owner_class", c.owner_class},
                        {"method", c.method},
                        {"loc", w.loc(c.loc)},
                        {"written", c.written},
                        {"guards", w.guards(c.guards)},
                        {"captured_calls", c.captured_calls},
                        {"captured_writes_kv", c.captured_writes_kv}});

  json& declarations = j["declarations"] = json::array();
  for (const auto& d : f.declarations) {
    json locals = json::array();
    for (const auto& l : d.local_assignments)
      locals.push_back({{"name", l.name}, {"value", w.expr(l.value)}, {"loc", w.loc(l.loc)}});
    json specs = json::array();
    for (const auto& s : d.specs)
      specs.push_back({{"loc", w.loc(s.loc)},
                       {"constructor", s.constructor},
                       {"config", w.opt_expr(s.config)},
                       {"fields", w.args(s.fields)},
                       {"unpacked",
                        [&] {
                          json unpacked = json::array();
                          for (const auto& e : s.unpacked) unpacked.push_back(w.expr(e));
                          return unpacked;
                        }()},
                       {"rows", enum_name(s.rows, kRowsDrivers)},
                       {"guards", w.guards(s.guards)}});
    json forwards = json::array();
    for (const auto& fw : d.forwards)
      forwards.push_back(
          {{"via_attribute", fw.via_attribute}, {"loc", w.loc(fw.loc)}, {"guards", w.guards(fw.guards)}});
    declarations.push_back({{"owner_class", d.owner_class},
                            {"loc", w.loc(d.loc)},
                            {"specs", specs},
                            {"forwards", forwards},
                            {"returns_empty_somewhere", d.returns_empty_somewhere},
                            {"local_assignments", locals}});
  }

  json& hops = j["hops"] = json::array();
  for (const auto& h : f.hops)
    hops.push_back({{"owner_class", h.owner_class},
                    {"attribute", h.attribute},
                    {"target_class", h.target_class},
                    {"loc", w.loc(h.loc)},
                    {"in_container", h.in_container}});

  json& evidence = j["batch_evidence"] = json::array();
  for (const auto& b : f.batch_evidence)
    evidence.push_back({{"kind", enum_name(b.kind, kBatchKinds)},
                        {"owner_class", b.owner_class},
                        {"method", b.method},
                        {"loc", w.loc(b.loc)},
                        {"expression", w.expr(b.expression)}});

  json& uses = j["protocol_uses"] = json::array();
  for (const auto& u : f.protocol_uses)
    uses.push_back({{"kind", enum_name(u.kind, kProtocolKinds)},
                    {"owner_class", u.owner_class},
                    {"function", u.function},
                    {"loc", w.loc(u.loc)},
                    {"expression", w.expr(u.expression)},
                    {"calls_unwrap", u.calls_unwrap},
                    {"reads_runnable", u.reads_runnable},
                    {"walks_named_modules", u.walks_named_modules}});

  json& constants = j["constants"] = json::array();
  for (const auto& c : f.constants)
    constants.push_back({{"owner_class", c.owner_class}, {"name", c.name}, {"value", w.expr(c.value)}});

  json& attribute_assignments = j["attribute_assignments"] = json::array();
  for (const auto& a : f.attribute_assignments)
    attribute_assignments.push_back({{"owner_class", a.owner_class},
                                     {"method", a.method},
                                     {"attribute", a.attribute},
                                     {"value", w.expr(a.value)},
                                     {"loc", w.loc(a.loc)},
                                     {"annotated_class", a.annotated_class}});

  json& reverse_assignments = j["reverse_assignments"] = json::array();
  for (const auto& a : f.reverse_assignments)
    reverse_assignments.push_back({{"owner_class", a.owner_class},
                                   {"method", a.method},
                                   {"object", a.object},
                                   {"attribute", a.attribute},
                                   {"loc", w.loc(a.loc)}});

  json& constructions = j["constructions"] = json::array();
  for (const auto& c : f.constructions)
    constructions.push_back({{"owner_class", c.owner_class},
                             {"method", c.method},
                             {"target_class", c.target_class},
                             {"loc", w.loc(c.loc)},
                             {"guards", w.guards(c.guards)},
                             {"factory", c.factory},
                             {"args", w.args(c.args)}});

  json& suppressions = j["suppressions"] = json::array();
  for (const auto& s : f.suppressions)
    suppressions.push_back({{"loc", w.loc(s.loc)},
                            {"file_level", s.file_level},
                            {"codes", s.codes},
                            {"reason", s.reason},
                            {"applies_to_line", s.applies_to_line},
                            {"malformed", s.malformed},
                            {"span", span_to_json(s.span)},
                            {"code_spans", spans_to_json(s.code_spans)},
                            {"removal", span_to_json(s.removal)}});

  json& problems = j["parse_problems"] = json::array();
  for (const auto& p : f.parse_problems) problems.push_back({{"loc", w.loc(p.loc)}, {"message", p.message}});
  j["import_insert_byte"] = f.import_insert_byte;
  return j;
}

FileFacts file_facts_from_json(const json& j) {
  FileFacts f;
  if (j.at("version").get<int>() != kFactsJsonVersion)
    throw std::invalid_argument("facts JSON version mismatch");
  f.path = j.at("path").get<std::string>();
  f.language = enum_value(j.at("language"), kLanguages);
  f.module_name = j.at("module_name").get<std::string>();
  const Reader r{FilePath(f.path)};

  for (const auto& i : j.at("imports"))
    f.imports.push_back(
        {i.at("local_name").get<std::string>(), i.at("target").get<std::string>(), r.loc(i.at("loc"))});

  for (const auto& c : j.at("classes")) {
    ClassFact cls;
    cls.name = c.at("name").get<std::string>();
    cls.loc = r.loc(c.at("loc"));
    for (const auto& b : c.at("bases"))
      cls.bases.push_back({b.at("written").get<std::string>(), b.at("resolved").get<std::string>()});
    for (const auto& m : c.at("methods")) cls.methods.push_back(r.method(m));
    cls.body_indent = c.at("body_indent").get<std::string>();
    cls.body_end_byte = c.at("body_end_byte").get<uint32_t>();
    cls.qualified_name = c.at("qualified_name").get<std::string>();
    cls.out_of_line = c.at("out_of_line").get<bool>();
    f.classes.push_back(std::move(cls));
  }
  for (const auto& fn : j.at("functions")) f.functions.push_back(r.method(fn));

  for (const auto& s : j.at("cache_sites")) f.cache_sites.push_back(r.cache_site(s));
  for (const auto& v : j.at("held_tensor_views"))
    f.held_tensor_views.push_back({v.at("method").get<std::string>(), r.cache_site(v.at("site"))});
  for (const auto& h : j.at("kv_handoffs"))
    f.kv_handoffs.push_back({h.at("owner_class").get<std::string>(), h.at("method").get<std::string>(),
                             r.loc(h.at("loc")), h.at("keyword").get<std::string>(),
                             h.at("receiver").get<std::string>(), h.at("called").get<std::string>(),
                             h.at("receiver_class").get<std::string>()});

  for (const auto& s : j.at("implicit_caches")) {
    ImplicitCacheSite site;
    site.owner_class = s.at("owner_class").get<std::string>();
    site.method = s.at("method").get<std::string>();
    site.loc = r.loc(s.at("loc"));
    site.callee = s.at("callee").get<std::string>();
    site.reason = enum_value(s.at("reason"), kImplicitReasons);
    if (!s.at("none_origin").is_null()) site.none_origin = r.loc(s.at("none_origin"));
    site.guards = r.guards(s.at("guards"));
    site.callee_root = enum_value(s.at("callee_root"), kCalleeRoots);
    site.callee_path = s.at("callee_path").get<std::vector<std::string>>();
    site.callee_origin = r.opt_expr(s.at("callee_origin"));
    site.callee_origin_class = s.at("callee_origin_class").get<std::string>();
    site.through_kwargs_dict = s.at("through_kwargs_dict").get<bool>();
    site.kept = enum_value(s.at("kept"), kKeptKinds);
    if (!s.at("kept_at").is_null()) site.kept_at = r.loc(s.at("kept_at"));
    f.implicit_caches.push_back(std::move(site));
  }

  for (const auto& c : j.at("captures")) {
    CaptureSite site;
    site.kind = enum_value(c.at("kind"), kCaptureKinds);
    site.owner_class = c.at("owner_class").get<std::string>();
    site.method = c.at("method").get<std::string>();
    site.loc = r.loc(c.at("loc"));
    site.written = c.at("written").get<std::string>();
    site.guards = r.guards(c.at("guards"));
    site.captured_calls = c.at("captured_calls").get<std::vector<std::string>>();
    site.captured_writes_kv = c.at("captured_writes_kv").get<bool>();
    f.captures.push_back(std::move(site));
  }

  for (const auto& d : j.at("declarations")) {
    Declaration decl;
    decl.owner_class = d.at("owner_class").get<std::string>();
    decl.loc = r.loc(d.at("loc"));
    for (const auto& s : d.at("specs")) {
      SpecFact spec;
      spec.loc = r.loc(s.at("loc"));
      spec.constructor = s.at("constructor").get<std::string>();
      spec.config = r.opt_expr(s.at("config"));
      spec.fields = r.args(s.at("fields"));
      for (const auto& e : s.at("unpacked")) spec.unpacked.push_back(r.expr(e));
      spec.rows = enum_value(s.at("rows"), kRowsDrivers);
      spec.guards = r.guards(s.at("guards"));
      decl.specs.push_back(std::move(spec));
    }
    for (const auto& fw : d.at("forwards"))
      decl.forwards.push_back(
          {fw.at("via_attribute").get<std::string>(), r.loc(fw.at("loc")), r.guards(fw.at("guards"))});
    decl.returns_empty_somewhere = d.at("returns_empty_somewhere").get<bool>();
    for (const auto& l : d.at("local_assignments"))
      decl.local_assignments.push_back(
          {l.at("name").get<std::string>(), r.expr(l.at("value")), r.loc(l.at("loc"))});
    f.declarations.push_back(std::move(decl));
  }

  for (const auto& h : j.at("hops"))
    f.hops.push_back({h.at("owner_class").get<std::string>(), h.at("attribute").get<std::string>(),
                      h.at("target_class").get<std::string>(), r.loc(h.at("loc")),
                      h.at("in_container").get<bool>()});

  for (const auto& b : j.at("batch_evidence"))
    f.batch_evidence.push_back({enum_value(b.at("kind"), kBatchKinds), b.at("owner_class").get<std::string>(),
                                b.at("method").get<std::string>(), r.loc(b.at("loc")),
                                r.expr(b.at("expression"))});

  for (const auto& u : j.at("protocol_uses")) {
    ProtocolUse use;
    use.kind = enum_value(u.at("kind"), kProtocolKinds);
    use.owner_class = u.at("owner_class").get<std::string>();
    use.function = u.at("function").get<std::string>();
    use.loc = r.loc(u.at("loc"));
    use.expression = r.expr(u.at("expression"));
    use.calls_unwrap = u.at("calls_unwrap").get<bool>();
    use.reads_runnable = u.at("reads_runnable").get<bool>();
    use.walks_named_modules = u.at("walks_named_modules").get<bool>();
    f.protocol_uses.push_back(std::move(use));
  }

  for (const auto& c : j.at("constants"))
    f.constants.push_back(
        {c.at("owner_class").get<std::string>(), c.at("name").get<std::string>(), r.expr(c.at("value"))});

  for (const auto& a : j.at("attribute_assignments"))
    f.attribute_assignments.push_back({a.at("owner_class").get<std::string>(),
                                       a.at("method").get<std::string>(),
                                       a.at("attribute").get<std::string>(), r.expr(a.at("value")),
                                       r.loc(a.at("loc")), a.at("annotated_class").get<std::string>()});

  for (const auto& a : j.at("reverse_assignments"))
    f.reverse_assignments.push_back({a.at("owner_class").get<std::string>(),
                                     a.at("method").get<std::string>(), a.at("object").get<std::string>(),
                                     a.at("attribute").get<std::string>(), r.loc(a.at("loc"))});

  for (const auto& c : j.at("constructions"))
    f.constructions.push_back({c.at("owner_class").get<std::string>(), c.at("method").get<std::string>(),
                               c.at("target_class").get<std::string>(), r.loc(c.at("loc")),
                               r.guards(c.at("guards")), c.at("factory").get<std::string>(),
                               r.args(c.at("args"))});

  for (const auto& s : j.at("suppressions")) {
    Suppression sup;
    sup.loc = r.loc(s.at("loc"));
    sup.file_level = s.at("file_level").get<bool>();
    sup.codes = s.at("codes").get<std::vector<std::string>>();
    sup.reason = s.at("reason").get<std::string>();
    sup.applies_to_line = s.at("applies_to_line").get<uint32_t>();
    sup.malformed = s.at("malformed").get<std::string>();
    sup.span = span_from_json(s.at("span"));
    for (const auto& c : s.at("code_spans")) sup.code_spans.push_back(span_from_json(c));
    sup.removal = span_from_json(s.at("removal"));
    f.suppressions.push_back(std::move(sup));
  }

  for (const auto& p : j.at("parse_problems"))
    f.parse_problems.push_back({r.loc(p.at("loc")), p.at("message").get<std::string>()});
  f.import_insert_byte = j.at("import_insert_byte").get<uint32_t>();
  return f;
}

}  // namespace kvlint::facts
