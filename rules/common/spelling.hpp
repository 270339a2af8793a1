// Code in findings, spelled the way the file it is about writes it. The facts keep one
// spelling for both front ends -- Python's: members as `self.x`, the constructor as the method
// `__init__`, dotted names -- and rules word their messages through a Spelling made for the
// owner's file, so a C++ reviewer reads `kv_cache_`, `Talker::Talker`, `RowDriver::Fixed` and
// `.rows_fixed = 1` where a Python reviewer reads `self.kv_cache`, `Talker.__init__`,
// `RowDriver.FIXED` and `rows_fixed=1`. The Python spelling is exactly what the facts say.
#pragma once

#include <string>
#include <string_view>

#include "analyzers/facts/project.hpp"

namespace kvlint::rules {

class Spelling {
 public:
  explicit Spelling(facts::Language language) : language_(language) {}
  static Spelling of(const facts::FileFacts& file) { return Spelling(file.language); }
  // The owner's file; Python when there is no owner.
  static Spelling of(facts::ClassRef owner) {
    return Spelling(owner ? owner.file->language : facts::Language::Python);
  }

  bool is_cpp() const { return language_ == facts::Language::Cpp; }

  // A name in the facts' dotted form: "self.k_cache_.index_copy_" -> "k_cache_.index_copy_";
  // "torch.cuda.is_available" -> "torch::cuda::is_available" when rooted at a library
  // namespace (torch, at, c10, std); any other dotted name is member access in both languages.
  std::string code(std::string_view dotted) const;
  // An attribute of the instance, given without `self.`: "self.cache" / "cache_".
  std::string member(std::string_view attribute) const;
  // A method named in a sentence: `step`, and the constructor as "`__init__`" / "the constructor".
  std::string method_phrase(std::string_view method) const;
  // A method of a class: "Talker.step" / "Talker::step"; "Talker.__init__" / "Talker::Talker".
  std::string method(std::string_view cls, std::string_view method) const;
  // A call of a method on a member, the member given without `self.` (or as a placeholder
  // such as "<attr>"): "self.gen.model_local_kv_specs()" / "gen_->model_local_kv_specs()".
  std::string member_call(std::string_view attribute, std::string_view method) const;
  // A value of a protocol enum, named by the Python protocol: ("RowDriver", "MAX_NUM_SEQS") ->
  // "RowDriver.MAX_NUM_SEQS" / "RowDriver::MaxNumSeqs"; ("ModelLocalKVScope", "REQUEST") ->
  // "ModelLocalKVScope.REQUEST" / "Scope::Request" (the names of kvlint/model_local_kv.h).
  std::string enum_value(std::string_view python_enum, std::string_view python_member) const;
  // A spec field: "rows_reason" / ".rows_reason"; with its value: "rows_fixed=1" / ".rows_fixed = 1".
  std::string field(std::string_view name) const;
  std::string field(std::string_view name, std::string_view value) const;
  // A constructor argument the front end named by its parameter, quoted:
  // "`max_cache_len=4096`" / "`4096` as `max_cache_len`" (C++ passes it by position).
  std::string argument(std::string_view keyword, std::string_view value) const;
  // A spec constructor by its canonical (Python) name: "spec_from_hf_config" / "spec_from_config",
  // "ModelLocalKVSpec" / "Spec".
  std::string spec_constructor(std::string_view canonical) const;
  // The module base class with its article: "an `nn.Module`" / "a `torch::nn::Module`".
  std::string a_module() const;
  // An empty list of specs as a declaration returns it: "[]" / "{}".
  std::string empty_specs() const;

 private:
  facts::Language language_;
};

}  // namespace kvlint::rules
