// FileFacts <-> JSON, an exact round trip. Used by the engine's per-file facts
// cache and by `kvlint facts FILE` (a debug dump of what a front end saw).
#pragma once

#include <nlohmann/json.hpp>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

// Bump when the JSON layout changes, so stale per-file caches are ignored.
// 2: attribute_assignments, constructions, declarations' local_assignments.
// 4: methods' calls and parameter_types, functions, constructions' factory and args, captured_writes_kv.
// 5: implicit caches' callee and retention.
// 6: specs' unpacked arguments, suppressions' malformed flag.
// 7: byte positions for fixes (suppression spans, class body end and indent, import point).
// 8: the file's language.
// 9: C++ classes' qualified name and out-of-line entries.
// 10: reverse assignments, getattr reads in names, calls' arguments; calls' kv_read_only.
// 11: guards' given names, calls' passes (keywords and guards of each call into an object).
// 12: cache sites' stores_existing (a value pushed into a K/V container, not constructed).
// 13: cache sites' raw_kv (a kept tensor read as attention K/V).
// 14: raw_kv's accesses (each method's first write, read and hand-on).
// 15: cache sites' tensor_library (libtorch, ggml or onnxruntime: what the K/V was seen as).
// 16: cache sites' evidence (a ggml K/V's context, its creation and buffer; writes from other classes).
// 17: attribute assignments' annotated_class.
// 18: held_tensor_views and kv_handoffs (raw K/V handed out by one class and used by another).
inline constexpr int kFactsJsonVersion = 18;

nlohmann::json to_json(const FileFacts& facts);
// Throws nlohmann::json::exception (or std::invalid_argument for an unknown
// enum spelling) when `json` is not a FileFacts document.
FileFacts file_facts_from_json(const nlohmann::json& json);

}  // namespace kvlint::facts
