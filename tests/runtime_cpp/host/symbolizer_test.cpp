// The host's attribution by function name, which is all it has without LLVM (the GPU machine):
// LibTorch's and the standard library's inline functions, instantiated inside the plugin, are
// skipped so an allocation lands on the model's own function and class.
#include "symbolizer.hpp"

#include <gtest/gtest.h>

namespace host = kvlint::model_host;

TEST(HostSymbolizer, LibraryFunctionsInstantiatedInThePluginAreSkipped) {
  EXPECT_TRUE(host::is_library_function("torch::zeros(c10::ArrayRef<long>, c10::TensorOptions)"));
  EXPECT_TRUE(host::is_library_function("at::Tensor::select(long, long) const"));
  // A member template's demangled name starts with its return type.
  EXPECT_TRUE(
      host::is_library_function("int& std::vector<int, std::allocator<int> >::emplace_back<int>(int&&)"));
  EXPECT_TRUE(host::is_library_function(
      "std::pair<std::__detail::_Node_iterator<std::pair<long const, at::Tensor>, false, false>, bool> "
      "std::_Hashtable<long, std::pair<long const, at::Tensor> >::_M_emplace<long&, at::Tensor>(long&, "
      "at::Tensor&&)"));
  EXPECT_TRUE(host::is_library_function("kvlint::model_plugin::declarations_of<Foo>(Foo const&)"));
}

TEST(HostSymbolizer, ModelFunctionsKeepTheirClass) {
  EXPECT_FALSE(host::is_library_function("kvlint_example::CppTalker::kv_for(long)"));
  EXPECT_EQ(host::owner_of_function("kvlint_example::CppTalker::kv_for(long)"), "CppTalker");
  // A namespace named like a library one, deeper down, is the model's.
  EXPECT_FALSE(host::is_library_function("my_model::torch::Cache::grow(int)"));
  EXPECT_FALSE(host::is_library_function("build_cache(int)"));
  EXPECT_EQ(host::owner_of_function("build_cache(int)"), "");
}

// The object graph the host walks from the plugin's model for tensor members: owning smart pointers
// to the model's classes and the model's classes held by value; library types are not followed.
TEST(HostSymbolizer, OwningPointersAndValuesOfModelClassesAreEdges) {
  const auto unique = host::object_edge("std::unique_ptr<asr::Decoder, std::default_delete<asr::Decoder> >");
  ASSERT_TRUE(unique.has_value());
  EXPECT_EQ(unique->pointee, "asr::Decoder");
  EXPECT_TRUE(unique->by_pointer);
  const auto shared = host::object_edge("std::shared_ptr<speech::Tier<2> >");
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->pointee, "speech::Tier<2>");
  const auto value = host::object_edge("asr::DecoderState");
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->pointee, "asr::DecoderState");
  EXPECT_FALSE(value->by_pointer);
  EXPECT_FALSE(host::object_edge("std::unique_ptr<torch::jit::Module, std::default_delete<torch::jit::Module> >"));
  EXPECT_FALSE(host::object_edge("std::vector<at::Tensor, std::allocator<at::Tensor> >"));
  EXPECT_FALSE(host::object_edge("torch::nn::Linear"));
}

// A std::vector member is read apart: its elements (one state struct per stream) are the edges.
TEST(HostSymbolizer, VectorElementTypeIsItsFirstTemplateArgument) {
  EXPECT_EQ(host::vector_element(
                "std::vector<std::unique_ptr<tts::StreamState, std::default_delete<tts::StreamState> >, "
                "std::allocator<std::unique_ptr<tts::StreamState, "
                "std::default_delete<tts::StreamState> > > >"),
            "std::unique_ptr<tts::StreamState, std::default_delete<tts::StreamState> >");
  EXPECT_EQ(host::vector_element("std::vector<at::Tensor, std::allocator<at::Tensor> >"), "at::Tensor");
  EXPECT_EQ(host::vector_element("std::unique_ptr<asr::Decoder, std::default_delete<asr::Decoder> >"), "");
}
