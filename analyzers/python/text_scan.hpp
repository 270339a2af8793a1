// Text tests that tell, without parsing a Python file, whether it could give the front end
// certain facts. Each may say yes for a file that gives no such fact, never no for one that
// does: the engine parses on a yes and trusts a no (engine.cpp, ProjectRun).
//
// Two uses. The seed tests (passes_use_cache_true, may_build_cache) refine the prefilter: of
// the files that name the vocabulary, those that could hold a fact the rules start from (a
// seed) are parsed up front, the others only give context (classes, holders, calls) and wait.
// The witness tests (defines_function, assigns, hands_self_to, mentions) answer
// a facts::Demand: which of those waiting files could add to an answer the rules asked for.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint::python {

// ---- seeds ----

// A `use_cache` keyword, dict key or subscript set to a literal `True` (`f(use_cache=True)`,
// `dict(use_cache=True)`, `{"use_cache": True}`, `kwargs["use_cache"] = True`): what the front
// end reads as a call that makes transformers build a cache (an implicit cache site) or writes
// K/V. A parameter default in a `def` or `lambda` (`def __init__(self, use_cache=True)`) is
// none, nor is a `use_cache` in a string or comment (code in a docstring).
bool passes_use_cache_true(std::string_view source);

// One of `cache_classes` called or built through a class method (`Name(`, `mod.Name(`,
// `Name.from_legacy_cache(`), imported under another name (`Name as Alias`, whose calls then
// build it), or, like transformers' base class `Cache`, named in a `class` statement's bases (a
// project cache class, which the engine adds to the vocabulary and whose builders are seeds).
bool may_build_cache(std::string_view source, const std::vector<std::string>& cache_classes);

// The text raw K/V needs (analyzers/python/raw_kv.cpp): a tensor allocation (`zeros(`, `empty(`,
// `full(`, `ones(`, their `_like` and `new_` forms) and a K/V marker: an attention call
// (`scaled_dot_product_attention`, `flash_attn`) or a K/V name (`k_cache`, `self.keys`,
// `self._kv`, `KVCache`, `_ring`, `past_k`). The front end records raw K/V only in a file that
// passes, so this is exact for what it records.
bool may_hold_raw_kv(std::string_view source);
// Its two lists: a file passes when it holds a substring from each (the engine's prefilter
// searches for them in one pass each, tools/kvlint/engine/prefilter.cpp).
std::span<const std::string_view> raw_kv_allocations();
std::span<const std::string_view> raw_kv_markers();

// ---- witnesses ----

// `name` as a whole identifier anywhere (code, strings, comments).
bool mentions(std::string_view source, std::string_view name);
// `def name` anywhere: a module-level function of that name, or a method.
bool defines_function(std::string_view source, std::string_view name);
// `name = ...` or `name: T = ...`, chained (`A = name = 3`) or not: how a module-level constant is
// written (any other assignment to the name passes too).
bool assigns(std::string_view source, std::string_view name);
// `obj.<attribute> = self`: an object handing itself over (facts::ReverseAssignment).
bool hands_self_to(std::string_view source, std::string_view attribute);
// Every identifier hands_self_to is true for, found in one pass, so the engine can answer it for
// a file whose bytes it does not keep (tools/kvlint/engine/widen.cpp); nullopt when a line break
// stands between some `=` handing self and the name before it (a comment may hide there), where
// only hands_self_to itself can tell.
std::optional<std::vector<std::string>> names_handed_self(std::string_view source);

}  // namespace kvlint::python
