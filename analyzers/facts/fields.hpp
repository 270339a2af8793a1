// Every field of every facts struct, in declaration order, written once: the binary cache
// codec (facts_binary.hpp) and facts::compact walk the facts through these lists. A field
// added to a struct in facts.hpp is added here too; the codec's round-trip test compares
// against to_json, which names every field, so a field missing here fails it.
//
//   fields(expression, [](auto&... parts) { ... });  // parts: text, literal, ..., alias_of
//
// Works on const and non-const facts alike (`E` is the struct, const or not).
#pragma once

#include <concepts>
#include <type_traits>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

template <class T, class Struct>
concept FactsStruct = std::same_as<std::remove_const_t<T>, Struct>;

template <FactsStruct<Location> T, class F>
void fields(T& x, F&& f) {
  f(x.file, x.line, x.column, x.end_line, x.end_column);
}
template <FactsStruct<ByteSpan> T, class F>
void fields(T& x, F&& f) {
  f(x.begin, x.end);
}
template <FactsStruct<Expression> T, class F>
void fields(T& x, F&& f) {
  f(x.text, x.literal, x.literal_value, x.names, x.loc, x.alias_of);
}
template <FactsStruct<Argument> T, class F>
void fields(T& x, F&& f) {
  f(x.keyword, x.position, x.value);
}
template <FactsStruct<Guard> T, class F>
void fields(T& x, F&& f) {
  f(x.origin, x.negated, x.condition, x.self_attributes, x.parameters, x.calls, x.given);
}
template <FactsStruct<RawKvAccess> T, class F>
void fields(T& x, F&& f) {
  f(x.kind, x.method, x.loc, x.by);
}
template <FactsStruct<RawKv> T, class F>
void fields(T& x, F&& f) {
  f(x.members, x.written_at, x.written_by, x.read_at, x.read_by, x.named_as_kv, x.shape, x.positions_axis,
    x.rows_axis, x.accesses);
}
template <FactsStruct<KvEvidence> T, class F>
void fields(T& x, F&& f) {
  f(x.kind, x.loc, x.owner_class, x.member, x.method, x.by, x.detail);
}
template <FactsStruct<CacheSite> T, class F>
void fields(T& x, F&& f) {
  f(x.cache_class, x.written, x.owner_class, x.method, x.loc, x.args, x.retention, x.retained_as,
    x.container_key, x.guards, x.caller_requested, x.inside_graph_capture, x.stores_existing, x.raw_kv,
    x.tensor_library, x.evidence);
}
template <FactsStruct<HeldTensorView> T, class F>
void fields(T& x, F&& f) {
  f(x.method, x.site);
}
template <FactsStruct<KvHandoff> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.method, x.loc, x.keyword, x.receiver, x.called, x.receiver_class);
}
template <FactsStruct<ImplicitCacheSite> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.method, x.loc, x.callee, x.reason, x.none_origin, x.guards, x.callee_root, x.callee_path,
    x.callee_origin, x.callee_origin_class, x.through_kwargs_dict, x.kept, x.kept_at);
}
template <FactsStruct<CaptureSite> T, class F>
void fields(T& x, F&& f) {
  f(x.kind, x.owner_class, x.method, x.loc, x.written, x.guards, x.captured_calls, x.captured_writes_kv);
}
template <FactsStruct<SpecFact> T, class F>
void fields(T& x, F&& f) {
  f(x.loc, x.constructor, x.config, x.fields, x.unpacked, x.rows, x.guards);
}
template <FactsStruct<Forward> T, class F>
void fields(T& x, F&& f) {
  f(x.via_attribute, x.loc, x.guards);
}
template <FactsStruct<LocalAssignment> T, class F>
void fields(T& x, F&& f) {
  f(x.name, x.value, x.loc);
}
template <FactsStruct<Declaration> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.loc, x.specs, x.forwards, x.returns_empty_somewhere, x.local_assignments);
}
template <FactsStruct<OwnershipHop> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.attribute, x.target_class, x.loc, x.in_container);
}
template <FactsStruct<BatchEvidence> T, class F>
void fields(T& x, F&& f) {
  f(x.kind, x.owner_class, x.method, x.loc, x.expression);
}
template <FactsStruct<ProtocolUse> T, class F>
void fields(T& x, F&& f) {
  f(x.kind, x.owner_class, x.function, x.loc, x.expression, x.calls_unwrap, x.reads_runnable,
    x.walks_named_modules);
}
template <FactsStruct<AttributeAssignment> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.method, x.attribute, x.value, x.loc, x.annotated_class);
}
template <FactsStruct<ReverseAssignment> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.method, x.object, x.attribute, x.loc);
}
template <FactsStruct<Construction> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.method, x.target_class, x.loc, x.guards, x.factory, x.args);
}
template <FactsStruct<Constant> T, class F>
void fields(T& x, F&& f) {
  f(x.owner_class, x.name, x.value);
}
template <FactsStruct<BaseClass> T, class F>
void fields(T& x, F&& f) {
  f(x.written, x.resolved);
}
template <FactsStruct<CallPass> T, class F>
void fields(T& x, F&& f) {
  f(x.loc, x.positionals, x.keywords, x.unpacked, x.guards);
}
template <FactsStruct<CallFact> T, class F>
void fields(T& x, F&& f) {
  f(x.callee, x.loc, x.writes_kv, x.guards, x.args, x.kv_read_only, x.passes);
}
template <FactsStruct<MethodFact> T, class F>
void fields(T& x, F&& f) {
  f(x.name, x.loc, x.parameters, x.parameter_types, x.calls);
}
template <FactsStruct<ClassFact> T, class F>
void fields(T& x, F&& f) {
  f(x.name, x.loc, x.bases, x.methods, x.body_indent, x.body_end_byte, x.qualified_name, x.out_of_line);
}
template <FactsStruct<ImportFact> T, class F>
void fields(T& x, F&& f) {
  f(x.local_name, x.target, x.loc);
}
template <FactsStruct<Suppression> T, class F>
void fields(T& x, F&& f) {
  f(x.loc, x.file_level, x.codes, x.reason, x.applies_to_line, x.malformed, x.span, x.code_spans, x.removal);
}
template <FactsStruct<ParseProblem> T, class F>
void fields(T& x, F&& f) {
  f(x.loc, x.message);
}
template <FactsStruct<FileFacts> T, class F>
void fields(T& x, F&& f) {
  f(x.path, x.language, x.module_name, x.imports, x.classes, x.functions, x.cache_sites, x.held_tensor_views,
    x.kv_handoffs, x.implicit_caches, x.captures, x.declarations, x.hops, x.batch_evidence, x.protocol_uses,
    x.constants, x.suppressions, x.attribute_assignments, x.reverse_assignments, x.constructions,
    x.parse_problems, x.import_insert_byte);
}

// A struct the lists above describe (Location and the facts structs; not Guards, a container).
template <class T>
concept HasFields = requires(T& x) {
  fields(x, [](auto&...) {});
};

}  // namespace kvlint::facts
