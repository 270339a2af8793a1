#include "analyzers/facts/vocabulary.hpp"

#include <string_view>

namespace kvlint::facts {

namespace {

// Length-prefixed so fields cannot run into each other.
void add_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

}  // namespace

std::string signature(const Vocabulary& v) {
  std::string out;
  auto list = [&](std::string_view tag, const std::vector<std::string>& items) {
    add_field(out, tag);
    for (const auto& i : items) add_field(out, i);
  };
  list("cache", v.cache_classes);
  list("spec", v.spec_constructors);
  list("bases", v.module_bases);
  list("names",
       {v.declaration_method, v.collector, v.unwrap, v.runnable, v.row_driver, v.row_fixed,
        v.row_max_num_seqs, v.fixed_call, v.fixed_reason_keyword, v.max_num_seqs_call, v.scope_enum});
  for (const auto& [written, canonical] : v.field_aliases) list("alias", {written, canonical});
  list("cpp-kv", v.cpp.kv_tensor_names);
  list("cpp-not-kv", v.cpp.not_kv_tensor_names);
  list("cpp-alloc", v.cpp.tensor_allocators);
  list("cpp-names", {v.cpp.spec_from_config, v.cpp.spec_type, v.cpp.header_namespace});
  return out;
}

}  // namespace kvlint::facts
