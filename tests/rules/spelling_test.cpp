// rules/common/spelling: code in findings spelled in the owner file's language, and no
// Python skeleton fix for a C++ class.
#include "rules/common/spelling.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/vocabulary.hpp"
#include "rules/common/declaration_skeleton.hpp"

namespace {

using kvlint::facts::Language;
using kvlint::rules::Spelling;

// Each case: how the facts spell it, what Python findings show (the facts' spelling, unchanged)
// and what C++ findings show.
struct SpellingCase {
  std::string what;
  std::function<std::string(const Spelling&)> spell;
  std::string python;
  std::string cpp;
};

TEST(Spelling, PythonKeepsTheFactsSpellingCppUsesItsOwnAndTheHeadersNames) {
  const std::vector<SpellingCase> cases{
      {"member path", [](const Spelling& s) { return s.code("self.k_cache_.index_copy_"); },
       "self.k_cache_.index_copy_", "k_cache_.index_copy_"},
      {"self", [](const Spelling& s) { return s.code("self"); }, "self", "this"},
      {"library namespace", [](const Spelling& s) { return s.code("torch.cuda.is_available"); },
       "torch.cuda.is_available", "torch::cuda::is_available"},
      {"a local's member", [](const Spelling& s) { return s.code("graph.capture_begin"); },
       "graph.capture_begin", "graph.capture_begin"},
      {"member", [](const Spelling& s) { return s.member("kv_cache_"); }, "self.kv_cache_", "kv_cache_"},
      {"constructor in a sentence", [](const Spelling& s) { return s.method_phrase("__init__"); },
       "`__init__`", "the constructor"},
      {"method in a sentence", [](const Spelling& s) { return s.method_phrase("step"); }, "`step`", "`step`"},
      {"constructor", [](const Spelling& s) { return s.method("CppTalker", "__init__"); },
       "CppTalker.__init__", "CppTalker::CppTalker"},
      {"method", [](const Spelling& s) { return s.method("CppTalker", "model_local_kv_specs"); },
       "CppTalker.model_local_kv_specs", "CppTalker::model_local_kv_specs"},
      {"forward", [](const Spelling& s) { return s.member_call("pool_", "model_local_kv_specs"); },
       "self.pool_.model_local_kv_specs()", "pool_->model_local_kv_specs()"},
      {"forward placeholder",
       [](const Spelling& s) { return s.member_call("<attr>", "model_local_kv_specs"); },
       "self.<attr>.model_local_kv_specs()", "<member>->model_local_kv_specs()"},
      {"fixed rows", [](const Spelling& s) { return s.enum_value("RowDriver", "FIXED"); }, "RowDriver.FIXED",
       "RowDriver::Fixed"},
      {"per-sequence rows", [](const Spelling& s) { return s.enum_value("RowDriver", "MAX_NUM_SEQS"); },
       "RowDriver.MAX_NUM_SEQS", "RowDriver::MaxNumSeqs"},
      {"scope", [](const Spelling& s) { return s.enum_value("ModelLocalKVScope", "INVOCATION"); },
       "ModelLocalKVScope.INVOCATION", "Scope::Invocation"},
      {"field", [](const Spelling& s) { return s.field("rows_reason"); }, "rows_reason", ".rows_reason"},
      {"field with value", [](const Spelling& s) { return s.field("rows_fixed", "1"); }, "rows_fixed=1",
       ".rows_fixed = 1"},
      {"argument", [](const Spelling& s) { return s.argument("max_cache_len", "4096"); },
       "`max_cache_len=4096`", "`4096` as `max_cache_len`"},
      {"spec helper", [](const Spelling& s) { return s.spec_constructor("spec_from_hf_config"); },
       "spec_from_hf_config", "spec_from_config"},
      {"spec type", [](const Spelling& s) { return s.spec_constructor("ModelLocalKVSpec"); },
       "ModelLocalKVSpec", "Spec"},
      {"module base", [](const Spelling& s) { return s.a_module(); }, "an `nn.Module`",
       "a `torch::nn::Module`"},
      {"no specs", [](const Spelling& s) { return s.empty_specs(); }, "[]", "{}"},
  };
  const Spelling python(Language::Python), cpp(Language::Cpp);
  for (const auto& c : cases) {
    EXPECT_EQ(c.spell(python), c.python) << c.what;
    EXPECT_EQ(c.spell(cpp), c.cpp) << c.what;
  }
}

// The same class, once in a Python file and once in a C++ file: only Python gets the skeleton.
TEST(DeclarationSkeleton, OfferedForPythonNeverWrittenIntoCpp) {
  for (const Language language : {Language::Python, Language::Cpp}) {
    const std::string path = language == Language::Python ? "talker.py" : "talker.cpp";
    kvlint::facts::FileFacts file;
    file.path = path;
    file.language = language;
    kvlint::facts::ClassFact cls;
    cls.name = "Talker";
    cls.loc = {file.path, 1, 1, 1, 10};
    cls.bases.push_back({"torch.nn.Module", "torch.nn.Module"});
    cls.body_indent = "    ";
    cls.body_end_byte = 40;
    file.classes.push_back(cls);
    std::vector<kvlint::facts::FileFacts> files;
    files.push_back(std::move(file));
    const kvlint::facts::Project project(std::move(files), kvlint::facts::Vocabulary{});
    const kvlint::facts::ClassRef owner = project.classes().front();
    kvlint::rules::SkeletonSpec spec;
    spec.name = "talker_kv";
    spec.config = "self.config";
    spec.capacity = "self.config.max_position_embeddings";
    spec.capacity_source = "max_position_embeddings";
    spec.scope = "SESSION";
    const auto fix = kvlint::rules::declaration_skeleton_fix(project, owner, {spec});
    EXPECT_EQ(fix.has_value(), language == Language::Python) << path;
  }
}

}  // namespace
