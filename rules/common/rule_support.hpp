// Helpers shared by the presence (KV1xx) and inertness (KV3xx) rules: wording
// of evidence, name matching in expressions, and the conventions those rules
// document (graph-pool spec, graph wrapper, owner-state guard).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "rules/finding.hpp"

namespace kvlint::rules {

// Case-insensitive substring test.
bool contains_ci(std::string_view haystack, std::string_view needle);

// True when the expression's text or any dotted name it reads contains `word`
// (case-insensitive).
bool mentions(const facts::Expression& expression, std::string_view word);
// Same over a guard: its condition, and the owner attributes / parameters it reads.
bool guard_mentions(const facts::Guard& guard, std::string_view word);

// "`x`" -- backquoted for messages.
std::string quoted(std::string_view text);

class Spelling;

// How a cache site keeps its object, as a clause: "keeps one per `request_id` in
// `self._caches`", "keeps one as `self.cache`" (C++: "`cache_`"), "builds one per call".
std::string describe_retention(const facts::CacheSite& site, const Spelling& spelling);
// Raw K/V: how the code used it as K/V ("written as K/V by slice assignment at line 26, ...").
std::string describe_raw_kv_use(const facts::RawKv& kv);
// Its attributes as a message names them: "`keys`/`values`", "`layers[\"k_ring\"]`".
std::string raw_kv_members(const facts::RawKv& kv);
// One method's use of it, as a clause: "writes raw K/V `keys`/`values` by slice assignment",
// "reads raw K/V `k_cache` with `F.scaled_dot_product_attention`", "hands raw K/V `kv` on
// (handed to `kernel`)".
std::string describe_raw_kv_access(const facts::RawKv& kv, const facts::RawKvAccess& access);
// Whether raw K/V kept by `owner` is the model's: `owner` is (or may be) a module, or something
// that may be the model's holds or builds it (a module, a module-level function, a class the
// model holds or builds in turn; bounded), or nothing known does. A class that only other
// classes outside the model build (a continuous-batching engine's paged pool) keeps the engine's
// K/V; a layer of a transformers cache (a `CacheLayerMixin`) keeps the cache object's, reported
// where that is built.
bool kept_by_the_model(const facts::Project& project, facts::ClassRef owner, int depth = 0);

// What a site does, for messages: "constructs a `DynamicCache`" (with the verb given:
// "constructs", "builds"), or "stores an `int8_t*`" where it stores a value made elsewhere;
// for a tensor that is not LibTorch's, what was seen: "allocates ggml K/V tensor `k_cache` with
// `ggml_new_tensor_3d`", "keeps ONNX Runtime K/V values `past_k_`/`past_v_` that `sess_->Run` returns".
std::string describe_construction(const facts::CacheSite& site, std::string_view verb);
// A site's tensor is ggml's or ONNX Runtime's, not LibTorch's (no `torch::nn::Module` around it).
bool foreign_tensor(const facts::CacheSite& site);

// A guard as a reviewer reads it: "`if self.async_chunk`", "`else` of `if self.x`",
// "`if self.async_chunk` in its callers".
std::string describe_guard(const facts::Guard& guard);

// A guard that decides whether code runs (not a loop or a `with` header).
bool is_branching_guard(const facts::Guard& guard);

// The attribute a cache site is stored in, without `self.`: "cache" for
// `self.cache`, "_caches" for `self._caches[...]`; empty when not on self.
std::string retained_attribute(const facts::CacheSite& site);

// A branching guard on owner state that decides whether the site's cache is
// built at all. Lazy-initialisation tests on the cache's own slot
// (`if self.cache is None`, `if rid not in self._caches`) are not such a guard, nor
// a replay-or-eager dispatch on graph state (`if bs in self.graphs`).
// Returns nullptr when the site does not depend on owner state.
const facts::Guard* owner_state_guard(const facts::Guards& guards, std::string_view retained_attribute);

// Graph-pool spec convention: the spec's name, allocation_note, capacity_source
// or rows_reason mentions "graph", "captur" or "bucket" (case-insensitive).
// declares_graph_pool also counts a spec with unpacked arguments (`**common`), whose
// naming fields cannot be seen.
bool is_graph_pool_spec(const facts::SpecFact& spec);
bool declares_graph_pool(const facts::Declaration& declaration);

// A class whose name says it is a graph wrapper ("CUDAGraph", "GraphWrapper",
// "GraphRunner"), or a class that is not known to be an nn.Module and captures CUDA
// graphs itself (any CaptureSite, bases included).
bool is_graph_wrapper(const facts::Project& project, facts::ClassRef cls);

// Declared method name for messages ("model_local_kv_specs").
std::string declaration_name(const facts::Project& project);

// Unique simple names joined for a message: "`A`, `B` and `C`".
std::string join_names(const std::vector<std::string>& names);

RelatedLocation related(const facts::Location& loc, std::string message);

// Adds, for each module that holds `owner` and has a declaration (its own, else the
// nearest inherited) that does not cover it, that declaration as a related location:
// coverage is won or lost there, so an edit to it (in another file, say) leads back
// to the finding (`check --diff` reports findings through their related locations).
void relate_holder_declarations(const facts::Project& project, facts::ClassRef owner, Finding& finding);

// Whether an implicit-cache call can reach a transformers model: a submodule attribute
// (`self.lm(...)`, a held project module, a class loaded from transformers), a
// `from_pretrained` / `from_config` result, a method such as `generate` on one, or a method
// of the class that takes a cache (`past_key_values`). Not any function with a `use_cache`
// keyword: `self.memcache_get(key, use_cache=True)` in a plain class is not.
bool implicit_callee_is_model(const facts::Project& project, const facts::FileFacts& file,
                              facts::ClassRef owner, const facts::ImplicitCacheSite& site);
// Whether the cache built behind the call outlives it: stored, reused across a loop's
// steps, returned, passed on, or kept by `generate`'s own decode loop. A call whose cache
// is dropped at once (or read by one more call and then dropped) is not.
bool implicit_cache_is_kept(const facts::ImplicitCacheSite& site);

}  // namespace kvlint::rules
