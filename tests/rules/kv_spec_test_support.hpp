// Hand-built facts for the KV2xx/KV4xx/KV5xx unit tests: small builders so a
// test reads like the Python it stands for.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "rules/registry.hpp"
#include "tests/rules/run_rule.hpp"

namespace kvtest {

using namespace kvlint;

inline facts::Location at(const std::string& file, uint32_t line, uint32_t column = 5) {
  return facts::Location{file, line, column, line, column + 10};
}

// An expression as written; literals and plain dotted names are recognised,
// other expressions take their names explicitly.
inline facts::Expression ex(std::string text, std::vector<std::string> names = {}, facts::Location loc = {}) {
  facts::Expression e;
  e.text = text;
  e.loc = loc;
  bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c); });
  bool plain =
      !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(c) || c == '_' || c == '.'; });
  if (digits) {
    e.literal = facts::LiteralKind::Int;
    e.literal_value = text;
  } else if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'')) {
    e.literal = facts::LiteralKind::String;
    e.literal_value = text.substr(1, text.size() - 2);
  } else if (text == "None") {
    e.literal = facts::LiteralKind::NoneValue;
  } else if (plain && names.empty() && text != "True" && text != "False") {
    names.push_back(text);
  }
  e.names = std::move(names);
  return e;
}

inline facts::Argument kw(std::string keyword, facts::Expression value) {
  facts::Argument a;
  a.keyword = std::move(keyword);
  a.value = std::move(value);
  return a;
}

inline facts::Argument positional(uint32_t position, facts::Expression value) {
  facts::Argument a;
  a.position = position;
  a.value = std::move(value);
  return a;
}

// Builds one file's facts; every location gets the file's path.
class FileBuilder {
 public:
  explicit FileBuilder(std::string path) { facts_.path = std::move(path); }

  FileBuilder& cls(std::string name,
                   std::vector<std::pair<std::string, std::vector<std::string>>> methods = {},
                   std::string base = "torch.nn.Module") {
    facts::ClassFact c;
    c.name = std::move(name);
    c.loc = at(facts_.path, next_line_++);
    c.bases.push_back({base, base});
    for (auto& [m, params] : methods) c.methods.push_back({m, at(facts_.path, next_line_++), params, {}, {}});
    facts_.classes.push_back(std::move(c));
    return *this;
  }

  // A cache site at `line` in `owner.method`.
  facts::CacheSite& site(std::string owner, std::string method, std::string cache_class, uint32_t line,
                         std::vector<facts::Argument> args = {}) {
    facts::CacheSite s;
    s.cache_class = cache_class;
    s.written = cache_class;
    s.owner_class = std::move(owner);
    s.method = std::move(method);
    s.loc = at(facts_.path, line, 22);
    for (auto& a : args) fix(a.value, line);
    s.args = std::move(args);
    s.retention = facts::Retention::SelfAttribute;
    s.retained_as = "self.cache";
    facts_.cache_sites.push_back(std::move(s));
    return facts_.cache_sites.back();
  }

  facts::Declaration& declaration(std::string owner, uint32_t line) {
    facts::Declaration d;
    d.owner_class = std::move(owner);
    d.loc = at(facts_.path, line);
    facts_.declarations.push_back(std::move(d));
    return facts_.declarations.back();
  }

  // A spec in `declaration` starting at `line`; field i sits on line + 1 + i.
  facts::SpecFact& spec(facts::Declaration& declaration, uint32_t line, facts::RowsDriver rows,
                        std::vector<facts::Argument> fields, std::string constructor = "spec_from_hf_config",
                        std::string config = "self.config") {
    facts::SpecFact s;
    s.loc = at(facts_.path, line, 9);
    s.constructor = std::move(constructor);
    if (!config.empty()) s.config = ex(config, {}, at(facts_.path, line, 29));
    uint32_t field_line = line + 1;
    for (auto& f : fields) fix(f.value, field_line++);
    s.fields = std::move(fields);
    s.rows = rows;
    declaration.specs.push_back(std::move(s));
    return declaration.specs.back();
  }

  facts::BatchEvidence& evidence(std::string owner, std::string method, facts::BatchEvidence::Kind kind,
                                 uint32_t line, std::string text) {
    facts::BatchEvidence e;
    e.kind = kind;
    e.owner_class = std::move(owner);
    e.method = std::move(method);
    e.loc = at(facts_.path, line);
    e.expression = ex(std::move(text), {"x"}, e.loc);
    facts_.batch_evidence.push_back(std::move(e));
    return facts_.batch_evidence.back();
  }

  facts::ProtocolUse& use(facts::ProtocolUse::Kind kind, std::string owner, std::string function,
                          uint32_t line, std::string text) {
    facts::ProtocolUse u;
    u.kind = kind;
    u.owner_class = std::move(owner);
    u.function = std::move(function);
    u.loc = at(facts_.path, line);
    u.expression = ex(std::move(text), {"x"}, u.loc);
    facts_.protocol_uses.push_back(std::move(u));
    return facts_.protocol_uses.back();
  }

  FileBuilder& constant(std::string owner, std::string name, std::string value) {
    facts_.constants.push_back({std::move(owner), std::move(name), ex(std::move(value))});
    return *this;
  }

  FileBuilder& hop(std::string owner, std::string attribute, std::string target) {
    facts::OwnershipHop h;
    h.owner_class = std::move(owner);
    h.attribute = std::move(attribute);
    h.target_class = std::move(target);
    h.loc = at(facts_.path, next_line_++);
    facts_.hops.push_back(std::move(h));
    return *this;
  }

  facts::FileFacts build() { return facts_; }

 private:
  void fix(facts::Expression& e, uint32_t line) {
    if (e.loc.line == 0) e.loc = at(facts_.path, line, 13);
  }
  facts::FileFacts facts_;
  uint32_t next_line_ = 900;  // classes/methods/hops: lines the tests never assert on
};

using kvlint::rule_testing::lines_of;
using kvlint::rule_testing::run_rule;

}  // namespace kvtest
