// The spelling of every facts enum's values (the facts JSON's names, part of its format), and
// `enum_table(E{})`, the table of enum E: the JSON codec writes and reads the names, the binary
// codec checks a value read back is one of E's.
#pragma once

#include <array>
#include <utility>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

inline constexpr std::array<std::pair<LiteralKind, const char*>, 6> kLiteralKinds{{
    {LiteralKind::None, "none"},
    {LiteralKind::Int, "int"},
    {LiteralKind::Float, "float"},
    {LiteralKind::String, "string"},
    {LiteralKind::Bool, "bool"},
    {LiteralKind::NoneValue, "none_value"},
}};
inline constexpr std::array<std::pair<Guard::Origin, const char*>, 7> kGuardOrigins{{
    {Guard::Origin::If, "if"},
    {Guard::Origin::Else, "else"},
    {Guard::Origin::EarlyReturn, "early_return"},
    {Guard::Origin::Ternary, "ternary"},
    {Guard::Origin::Loop, "loop"},
    {Guard::Origin::CallerGuard, "caller_guard"},
    {Guard::Origin::With, "with"},
}};
inline constexpr std::array<std::pair<Language, const char*>, 2> kLanguages{{
    {Language::Python, "python"},
    {Language::Cpp, "cpp"},
}};
inline constexpr std::array<std::pair<Retention, const char*>, 6> kRetentions{{
    {Retention::SelfAttribute, "self_attribute"},
    {Retention::SelfContainer, "self_container"},
    {Retention::Returned, "returned"},
    {Retention::PassedToCall, "passed_to_call"},
    {Retention::Local, "local"},
    {Retention::ModuleGlobal, "module_global"},
}};
inline constexpr std::array<std::pair<TensorLibrary, const char*>, 3> kTensorLibraries{{
    {TensorLibrary::LibTorch, "libtorch"},
    {TensorLibrary::Ggml, "ggml"},
    {TensorLibrary::OnnxRuntime, "onnxruntime"},
}};
inline constexpr std::array<std::pair<ImplicitCacheSite::Reason, const char*>, 2> kImplicitReasons{{
    {ImplicitCacheSite::Reason::NoPastKeyValues, "no_past_key_values"},
    {ImplicitCacheSite::Reason::PastKeyValuesStartsNone, "past_key_values_starts_none"},
}};
inline constexpr std::array<std::pair<ImplicitCacheSite::CalleeRoot, const char*>, 4> kCalleeRoots{{
    {ImplicitCacheSite::CalleeRoot::Self, "self"},
    {ImplicitCacheSite::CalleeRoot::Local, "local"},
    {ImplicitCacheSite::CalleeRoot::Parameter, "parameter"},
    {ImplicitCacheSite::CalleeRoot::Other, "other"},
}};
inline constexpr std::array<std::pair<ImplicitCacheSite::Kept, const char*>, 6> kKeptKinds{{
    {ImplicitCacheSite::Kept::Stored, "stored"},
    {ImplicitCacheSite::Kept::Reused, "reused"},
    {ImplicitCacheSite::Kept::Returned, "returned"},
    {ImplicitCacheSite::Kept::UsedOnce, "used_once"},
    {ImplicitCacheSite::Kept::Dropped, "dropped"},
    {ImplicitCacheSite::Kept::Unknown, "unknown"},
}};
inline constexpr std::array<std::pair<RawKvAccess::Kind, const char*>, 3> kRawKvAccessKinds{{
    {RawKvAccess::Kind::Write, "write"},
    {RawKvAccess::Kind::Read, "read"},
    {RawKvAccess::Kind::Pass, "pass"},
}};
inline constexpr std::array<std::pair<KvEvidence::Kind, const char*>, 5> kKvEvidenceKinds{{
    {KvEvidence::Kind::ArenaMember, "arena_member"},
    {KvEvidence::Kind::ArenaCreated, "arena_created"},
    {KvEvidence::Kind::ArenaSized, "arena_sized"},
    {KvEvidence::Kind::ArenaBuffer, "arena_buffer"},
    {KvEvidence::Kind::WrittenByOther, "written_by_other"},
}};
inline constexpr std::array<std::pair<CaptureSite::Kind, const char*>, 4> kCaptureKinds{{
    {CaptureSite::Kind::GraphContext, "graph_context"},
    {CaptureSite::Kind::CaptureBegin, "capture_begin"},
    {CaptureSite::Kind::MakeGraphedCallables, "make_graphed_callables"},
    {CaptureSite::Kind::StreamBeginCapture, "stream_begin_capture"},
}};
inline constexpr std::array<std::pair<RowsDriver, const char*>, 4> kRowsDrivers{{
    {RowsDriver::Absent, "absent"},
    {RowsDriver::Fixed, "fixed"},
    {RowsDriver::MaxNumSeqs, "max_num_seqs"},
    {RowsDriver::Other, "other"},
}};
inline constexpr std::array<std::pair<BatchEvidence::Kind, const char*>, 3> kBatchKinds{{
    {BatchEvidence::Kind::TakesFirstElement, "takes_first_element"},
    {BatchEvidence::Kind::AssertsBatchOne, "asserts_batch_one"},
    {BatchEvidence::Kind::IteratesRequests, "iterates_requests"},
}};
inline constexpr std::array<std::pair<ProtocolUse::Kind, const char*>, 3> kProtocolKinds{{
    {ProtocolUse::Kind::CapacitySourceBranch, "capacity_source_branch"},
    {ProtocolUse::Kind::ScopeDerivedRows, "scope_derived_rows"},
    {ProtocolUse::Kind::Collector, "collector"},
}};

constexpr const auto& enum_table(LiteralKind) {
  return kLiteralKinds;
}
constexpr const auto& enum_table(Guard::Origin) {
  return kGuardOrigins;
}
constexpr const auto& enum_table(Language) {
  return kLanguages;
}
constexpr const auto& enum_table(Retention) {
  return kRetentions;
}
constexpr const auto& enum_table(TensorLibrary) {
  return kTensorLibraries;
}
constexpr const auto& enum_table(ImplicitCacheSite::Reason) {
  return kImplicitReasons;
}
constexpr const auto& enum_table(ImplicitCacheSite::CalleeRoot) {
  return kCalleeRoots;
}
constexpr const auto& enum_table(ImplicitCacheSite::Kept) {
  return kKeptKinds;
}
constexpr const auto& enum_table(RawKvAccess::Kind) {
  return kRawKvAccessKinds;
}
constexpr const auto& enum_table(KvEvidence::Kind) {
  return kKvEvidenceKinds;
}
constexpr const auto& enum_table(CaptureSite::Kind) {
  return kCaptureKinds;
}
constexpr const auto& enum_table(RowsDriver) {
  return kRowsDrivers;
}
constexpr const auto& enum_table(BatchEvidence::Kind) {
  return kBatchKinds;
}
constexpr const auto& enum_table(ProtocolUse::Kind) {
  return kProtocolKinds;
}

}  // namespace kvlint::facts
