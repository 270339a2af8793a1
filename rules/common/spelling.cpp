#include "rules/common/spelling.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <utility>

namespace kvlint::rules {
namespace {

constexpr std::string_view kSelf = "self.";
constexpr std::string_view kConstructor = "__init__";

// The C++ front end renders `torch::cuda::is_available` dotted, like an import-resolved Python
// name; the namespaces of the libraries it matches by spelling are the ones a finding shows.
bool rooted_at_library_namespace(std::string_view dotted) {
  const std::string_view root = dotted.substr(0, dotted.find('.'));
  return root == "torch" || root == "at" || root == "c10" || root == "std";
}

// "MAX_NUM_SEQS" -> "MaxNumSeqs", "FIXED" -> "Fixed": the header's enumerators.
std::string camel_case(std::string_view upper_snake) {
  std::string out;
  bool start = true;
  for (char c : upper_snake) {
    if (c == '_') {
      start = true;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    out += static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = false;
  }
  return out;
}

// The header's names for the Python protocol's (runtime/include/kvlint/model_local_kv.h).
std::string_view cpp_name(std::string_view python_name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kNames{{
      {"ModelLocalKVScope", "Scope"},
      {"ModelLocalKVSpec", "Spec"},
      {"spec_from_hf_config", "spec_from_config"},
      {"RowDriver", "RowDriver"},
  }};
  for (const auto& [python, cpp] : kNames)
    if (python == python_name) return cpp;
  return python_name;
}

}  // namespace

std::string Spelling::code(std::string_view dotted) const {
  if (!is_cpp()) return std::string(dotted);
  if (dotted == "self") return "this";
  if (dotted.starts_with(kSelf)) return std::string(dotted.substr(kSelf.size()));
  if (!rooted_at_library_namespace(dotted)) return std::string(dotted);
  std::string out;
  for (char c : dotted) out += c == '.' ? std::string("::") : std::string(1, c);
  return out;
}

std::string Spelling::member(std::string_view attribute) const {
  return is_cpp() ? std::string(attribute) : fmt::format("self.{}", attribute);
}

std::string Spelling::method_phrase(std::string_view method) const {
  if (is_cpp() && method == kConstructor) return "the constructor";
  return fmt::format("`{}`", method);
}

std::string Spelling::method(std::string_view cls, std::string_view method) const {
  if (!is_cpp()) return fmt::format("{}.{}", cls, method);
  return fmt::format("{}::{}", cls, method == kConstructor ? cls : method);
}

std::string Spelling::member_call(std::string_view attribute, std::string_view method) const {
  if (!is_cpp()) return fmt::format("self.{}.{}()", attribute, method);
  // Members that hold another model are pointers or TORCH_MODULE holders: `->`.
  return fmt::format("{}->{}()", attribute == "<attr>" ? std::string_view("<member>") : attribute, method);
}

std::string Spelling::enum_value(std::string_view python_enum, std::string_view python_member) const {
  if (!is_cpp()) return fmt::format("{}.{}", python_enum, python_member);
  return fmt::format("{}::{}", cpp_name(python_enum), camel_case(python_member));
}

std::string Spelling::field(std::string_view name) const {
  return is_cpp() ? fmt::format(".{}", name) : std::string(name);
}

std::string Spelling::field(std::string_view name, std::string_view value) const {
  return is_cpp() ? fmt::format(".{} = {}", name, value) : fmt::format("{}={}", name, value);
}

std::string Spelling::argument(std::string_view keyword, std::string_view value) const {
  return is_cpp() ? fmt::format("`{}` as `{}`", value, keyword) : fmt::format("`{}={}`", keyword, value);
}

std::string Spelling::spec_constructor(std::string_view canonical) const {
  return std::string(is_cpp() ? cpp_name(canonical) : canonical);
}

std::string Spelling::a_module() const {
  return is_cpp() ? "a `torch::nn::Module`" : "an `nn.Module`";
}

std::string Spelling::empty_specs() const {
  return is_cpp() ? "{}" : "[]";
}

}  // namespace kvlint::rules
