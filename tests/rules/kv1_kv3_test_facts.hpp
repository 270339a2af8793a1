// Hand-built facts for the KV1xx / KV3xx rule unit tests: small constructors for
// the facts IR so each test states only what its case is about.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/project.hpp"
#include "rules/registry.hpp"
#include "tests/rules/run_rule.hpp"

namespace kvlint::testing_facts {

inline facts::Location at(const std::string& file, uint32_t line, uint32_t column = 5) {
  return facts::Location{file, line, column, line, column + 10};
}

inline facts::ClassFact make_class(const std::string& file, std::string name, uint32_t line,
                                   std::vector<std::string> bases = {"torch.nn.Module"}) {
  facts::ClassFact c;
  c.name = std::move(name);
  c.loc = at(file, line, 1);
  for (auto& b : bases) c.bases.push_back({b, b});
  return c;
}

inline facts::Expression expr(std::string text, std::vector<std::string> names = {},
                              facts::Location loc = {}) {
  facts::Expression e;
  e.text = std::move(text);
  e.names = std::move(names);
  e.loc = std::move(loc);
  return e;
}

inline facts::Expression string_literal(std::string value) {
  facts::Expression e;
  e.text = "\"" + value + "\"";
  e.literal = facts::LiteralKind::String;
  e.literal_value = std::move(value);
  return e;
}

inline facts::Guard guard(facts::Guard::Origin origin, std::string text, facts::Location loc,
                          std::vector<std::string> self_attributes = {},
                          std::vector<std::string> parameters = {}, std::vector<std::string> calls = {}) {
  facts::Guard g;
  g.origin = origin;
  g.negated = origin == facts::Guard::Origin::Else;
  g.condition = expr(std::move(text), {}, std::move(loc));
  g.self_attributes = std::move(self_attributes);
  g.parameters = std::move(parameters);
  g.calls = std::move(calls);
  return g;
}

inline facts::CacheSite cache_site(const std::string& file, std::string owner, uint32_t line,
                                   facts::Retention retention = facts::Retention::Local,
                                   std::string retained_as = {}, std::string cache_class = "DynamicCache") {
  facts::CacheSite s;
  s.cache_class = cache_class;
  s.written = cache_class;
  s.owner_class = std::move(owner);
  s.method = "forward";
  s.loc = at(file, line, 9);
  s.retention = retention;
  s.retained_as = std::move(retained_as);
  return s;
}

inline facts::ImplicitCacheSite implicit_site(const std::string& file, std::string owner, uint32_t line,
                                              std::string callee = "self.lm") {
  facts::ImplicitCacheSite s;
  s.owner_class = std::move(owner);
  s.method = "forward";
  s.loc = at(file, line, 13);
  s.callee = std::move(callee);
  // `self.a.b` as the front end records it: rooted at self, path ["a", "b"].
  if (s.callee == "self" || s.callee.starts_with("self.")) {
    s.callee_root = facts::ImplicitCacheSite::CalleeRoot::Self;
    for (std::size_t start = 5; start < s.callee.size() + 1 && s.callee.size() > 4;) {
      const std::size_t dot = s.callee.find('.', start);
      s.callee_path.push_back(
          s.callee.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }
  return s;
}

inline facts::CaptureSite capture_site(const std::string& file, std::string owner, uint32_t line) {
  facts::CaptureSite s;
  s.kind = facts::CaptureSite::Kind::GraphContext;
  s.owner_class = std::move(owner);
  s.method = "capture";
  s.loc = at(file, line, 18);
  s.written = "torch.cuda.graph";
  return s;
}

inline facts::SpecFact spec(const std::string& file, uint32_t line, std::string name,
                            std::vector<std::pair<std::string, std::string>> string_fields = {}) {
  facts::SpecFact s;
  s.loc = at(file, line, 13);
  s.constructor = "spec_from_hf_config";
  facts::Argument a;
  a.keyword = "name";
  a.value = string_literal(std::move(name));
  s.fields.push_back(a);
  for (auto& [k, v] : string_fields) {
    facts::Argument f;
    f.keyword = k;
    f.value = string_literal(v);
    s.fields.push_back(f);
  }
  s.rows = facts::RowsDriver::MaxNumSeqs;
  return s;
}

inline facts::Declaration declaration(const std::string& file, std::string owner, uint32_t line,
                                      std::vector<facts::SpecFact> specs = {},
                                      std::vector<std::string> forwards = {}) {
  facts::Declaration d;
  d.owner_class = std::move(owner);
  d.loc = at(file, line, 5);
  d.specs = std::move(specs);
  for (auto& via : forwards) {
    facts::Forward f;
    f.via_attribute = via;
    f.loc = at(file, line + 1, 16);
    d.forwards.push_back(f);
  }
  return d;
}

inline facts::OwnershipHop hop(const std::string& file, std::string owner, std::string attribute,
                               std::string target, uint32_t line) {
  facts::OwnershipHop h;
  h.owner_class = std::move(owner);
  h.attribute = std::move(attribute);
  h.target_class = std::move(target);
  h.loc = at(file, line, 9);
  return h;
}

inline facts::FileFacts file_facts(std::string path) {
  facts::FileFacts f;
  f.path = path;
  return f;
}

using rule_testing::lines_of;
using rule_testing::run_rule;

}  // namespace kvlint::testing_facts
