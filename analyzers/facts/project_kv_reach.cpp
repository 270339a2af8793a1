// Code that writes attention K/V. Takes a method or a graph capture; gives the KvWrites in that
// method (caches built, implicit caches, raw K/V kept by its class, K/V-writing calls), and for a
// capture those in its body plus those reached through the calls it captures.
// Invariant: the call walk visits each method once and stops at kMaxCallDepth.
#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::kMaxCallDepth;
using project_detail::parameter_index;
using project_detail::split_dotted;

namespace {
// The call a raw K/V read or hand-on goes through: `F.scaled_dot_product_attention` for a read,
// `model.step` for "handed to `model.step`".
std::string_view raw_access_callee(const RawKvAccess& a) {
  std::string_view by = a.by;
  constexpr std::string_view kHanded = "handed to `";
  if (by.starts_with(kHanded) && by.ends_with('`'))
    return by.substr(kHanded.size(), by.size() - kHanded.size() - 1);
  return by;
}
}  // namespace

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
  // Raw K/V the capturing class keeps, handed to or read by a call the capture makes
  // (`model._generate_frame(self.hidden, self.caches)` in the `with` body).
  if (at && owner)
    for (const auto& s : file.cache_sites) {
      if (!s.raw_kv || s.owner_class != capture.owner_class) continue;
      const auto captured =
          std::find_if(s.raw_kv->accesses.begin(), s.raw_kv->accesses.end(), [&](const RawKvAccess& a) {
            return a.kind != RawKvAccess::Kind::Write && a.method == capture.method &&
                   a.loc.line >= capture.loc.line &&
                   std::find(capture.captured_calls.begin(), capture.captured_calls.end(),
                             raw_access_callee(a)) != capture.captured_calls.end();
          });
      if (captured == s.raw_kv->accesses.end()) continue;
      KvWrite w;
      w.kind = KvWrite::Kind::RawKv;
      w.where = at;
      w.holder = owner;
      w.cache_site = &s;
      w.callee = captured->by;
      w.reads_only = captured->kind == RawKvAccess::Kind::Read;
      w.raw_access = &*captured;
      w.loc = captured->loc;
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

}  // namespace kvlint::facts
