// The names front ends look for. Defaults are the protocol's spellings
// (shared/reference/model-local-kv-caches.md); configuration extends or
// renames them ([tool.kvlint] extra-cache-classes, [tool.kvlint.protocol]).
#pragma once

#include <string>
#include <vector>

namespace kvlint::facts {

// What the C++ front end looks for beyond the shared names ([tool.kvlint.cpp]).
struct CppVocabulary {
  // Members, buffers and container elements holding attention K/V, matched on the name
  // without a trailing `_` or a leading `m_` ("k_cache_" is "k_cache"), also with an `s`
  // or a prefix (`self_attn_k_cache`): K and V apart or concatenated (`att_cache_`,
  // WeNet's), past and present states, the K/V slices of a buffer preallocated for a graph.
  std::vector<std::string> kv_tensor_names = {
      "k_cache",       "v_cache",    "kv_cache",  "key_cache",  "value_cache",     "cache_k",
      "cache_v",       "cache_kv",   "att_cache", "attn_cache", "attention_cache", "past_key_values",
      "past_key",      "past_value", "past_kv",   "key_states", "value_states",    "cached_keys",
      "cached_values", "buf_k",      "buf_v",     "k_buf",      "v_buf",           "kv_buf",
      "k_buffer",      "v_buffer",   "kv_buffer"};
  // Never K/V, matched anywhere in the name: rotary tables (`cos_cached_`, `inv_freq`) and
  // convolution states (`cnn_cache_`, `conv_cache_`, `conv_state_`).
  std::vector<std::string> not_kv_tensor_names = {"cos_",     "sin_", "rotary", "rope",
                                                  "inv_freq", "conv", "cnn"};
  // Functions that allocate a tensor (qualified under torch:: or at::).
  std::vector<std::string> tensor_allocators = {"zeros", "empty", "full", "ones", "zeros_like",
                                                "empty_like", "full_like", "ones_like"};
  // The header's spellings (runtime/include/kvlint/model_local_kv.h), mapped to the
  // canonical constructors of SpecFact::constructor.
  std::string spec_from_config = "spec_from_config";  // -> "spec_from_hf_config"
  std::string spec_type = "Spec";                     // -> "ModelLocalKVSpec"
  std::string header_namespace = "model_local_kv";    // kvlint::model_local_kv
};

struct Vocabulary {
  // Simple names of cache classes; project subclasses are added by the driver
  // after a first pass (see Project::cache_subclasses).
  std::vector<std::string> cache_classes = {
      "DynamicCache",        "StaticCache",          "EncoderDecoderCache", "SlidingWindowCache",
      "HybridCache",         "HybridChunkedCache",   "OffloadedCache",      "OffloadedStaticCache",
      "QuantizedCache",      "QuantoQuantizedCache", "HQQQuantizedCache",   "SinkCache",
      "MambaCache",
  };
  // Protocol names, as the reference spells them.
  std::string declaration_method = "model_local_kv_specs";
  std::vector<std::string> spec_constructors = {"spec_from_hf_config", "ModelLocalKVSpec"};
  std::string collector = "collect_model_local_kv_specs";
  std::string unwrap = "unwrap";
  std::string runnable = "runnable";
  std::string row_driver = "RowDriver";       // RowDriver.FIXED / RowDriver.MAX_NUM_SEQS
  std::string row_fixed = "FIXED";
  std::string row_max_num_seqs = "MAX_NUM_SEQS";
  // Earlier revisions' spellings: `rows=Fixed(n, because=...)`, `rows=MaxNumSeqs()`.
  std::string fixed_call = "Fixed";
  std::string fixed_reason_keyword = "because";
  std::string max_num_seqs_call = "MaxNumSeqs";
  // Field renames: pairs of (written, canonical), e.g. {"batch_capacity", "rows_fixed"}.
  std::vector<std::pair<std::string, std::string>> field_aliases = {
      {"batch_capacity", "rows_fixed"},
      {"max_live_instances", "rows_fixed"},
  };
  std::string scope_enum = "ModelLocalKVScope";
  // Module bases: a class is an nn.Module when its bases reach one of these
  // (matched on the resolved dotted name's suffix).
  std::vector<std::string> module_bases = {"torch.nn.Module", "nn.Module", "PreTrainedModel",
                                           "torch.nn.modules.module.Module", "torch.nn.Cloneable"};
  CppVocabulary cpp;
};

// Stable text of everything in a vocabulary, for cache keys and configuration
// fingerprints: equal signatures mean front ends produce equal facts.
std::string signature(const Vocabulary& vocabulary);

}  // namespace kvlint::facts
