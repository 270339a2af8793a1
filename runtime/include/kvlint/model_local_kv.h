// The model-local KV declaration protocol for C++ models
// (../shared/reference/model-local-kv-caches.md), header-only, C++17 and later.
//
//   #include <kvlint/model_local_kv.h>
//   namespace mlkv = kvlint::model_local_kv;
//   std::vector<mlkv::Spec> model_local_kv_specs() const {
//     return {mlkv::spec_from_config(config_, {.name = "talker_static_kv",
//                                              .physical_capacity_positions = kMaxCacheLen,
//                                              .capacity_source = "static buffer of kMaxCacheLen positions",
//                                              .scope = mlkv::Scope::Invocation,
//                                              .dtype = torch::kBFloat16,
//                                              .rows = mlkv::RowDriver::Fixed,
//                                              .rows_fixed = 1,
//                                              .rows_reason = "the talker serves one request at a time"})};
//   }
//
// The names mirror the Python protocol (ModelLocalKVScope, RowDriver, ModelLocalKVSpec,
// spec_from_hf_config) so C++ model code reads like it, and `kvlint check` reads the fields as
// written. `dtype` takes a c10::ScalarType when LibTorch's headers are on the include path and an
// element size in bytes always, so the header compiles (and can be linted) without LibTorch.
// Define KVLINT_MODEL_LOCAL_KV_NO_TORCH to ignore LibTorch even when it is there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#if !defined(KVLINT_MODEL_LOCAL_KV_NO_TORCH) && defined(__has_include)
#if __has_include(<c10/core/ScalarType.h>)
#include <c10/core/ScalarType.h>
#define KVLINT_MODEL_LOCAL_KV_HAS_TORCH 1
#endif
#endif

namespace kvlint::model_local_kv {

// When the memory appears and goes. It says nothing about how wide the allocation is (RowDriver).
enum class Scope { Invocation, Request, Session, Model };

// Who decides the number of rows: a count the model controls (with a reason a reviewer can
// check), or one row per in-flight sequence (only the engine knows that number).
enum class RowDriver { Fixed, MaxNumSeqs };

// The Python enum member names, as the runtime protocol's events spell them.
constexpr std::string_view name_of(Scope scope) noexcept {
  switch (scope) {
    case Scope::Invocation:
      return "INVOCATION";
    case Scope::Request:
      return "REQUEST";
    case Scope::Session:
      return "SESSION";
    case Scope::Model:
      return "MODEL";
  }
  return "";
}

constexpr std::string_view name_of(RowDriver rows) noexcept {
  return rows == RowDriver::Fixed ? "FIXED" : "MAX_NUM_SEQS";
}

// The element type of the K/V tensors: its size in bytes, and its name when LibTorch gave it.
struct Dtype {
  std::size_t element_size = 0;
  std::string_view name;  // "BFloat16" from a c10::ScalarType; empty for a bare size

  constexpr Dtype() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): `.dtype = 2` reads as "two bytes per element"
  constexpr Dtype(std::size_t bytes) : element_size(bytes) {}
#ifdef KVLINT_MODEL_LOCAL_KV_HAS_TORCH
  // NOLINTNEXTLINE(google-explicit-constructor): `.dtype = torch::kBFloat16`, as in Python
  Dtype(c10::ScalarType type) : element_size(c10::elementSize(type)), name(c10::toString(type)) {}
#endif
};

namespace detail {

// Runs after every other field of a Spec is initialised, like the Python dataclass's
// __post_init__: a FIXED count is a claim a reviewer must be able to check, so it needs a reason.
struct PostInit {
  PostInit(std::string_view spec_name, RowDriver rows, std::int64_t rows_fixed,
           std::string_view rows_reason) {
    if (rows == RowDriver::Fixed && (rows_fixed < 1 || rows_reason.empty()))
      throw std::invalid_argument(std::string(spec_name) +
                                  ": FIXED rows need rows_fixed >= 1 and a rows_reason");
  }
};

}  // namespace detail

// One distinct allocation of model-local K/V. An aggregate, so fields can be written by name;
// constructing one with RowDriver::Fixed and no rows_reason throws std::invalid_argument.
struct Spec {
  // Every member has a default initializer, so code built with -Wextra may leave any out.
  std::string name{};
  std::int64_t layers = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t physical_capacity_positions = 0;  // positions held per row
  std::string capacity_source{};                 // diagnostic text only; never branch on it
  Scope scope = Scope::Invocation;
  Dtype dtype{};
  RowDriver rows = RowDriver::Fixed;  // not given: FIXED, which then needs a reason
  std::int64_t rows_fixed = 1;
  std::string rows_reason{};
  std::string allocation_note{};  // layout (one object N rows wide, N objects...); empty: none
  // Not protocol fields: where the spec is declared, for runtime findings anchored on the
  // declaration (RT003). Evaluated where the Spec is initialised (GCC and Clang evaluate these
  // builtins at the aggregate initialisation, C++17 and later), or passed on by spec_from_config
  // from its call site. The file is as the compiler was given it (absolute under CMake).
  const char* declared_file = __builtin_FILE();
  std::uint32_t declared_line = __builtin_LINE();
  // Not a field: the construction-time check (must stay last so every field is set before it runs).
  detail::PostInit post_init_{name, rows, rows_fixed, rows_reason};

  // 2 (K and V) x layers x kv_heads x head_dim x positions x element size.
  constexpr std::int64_t bytes_per_row() const noexcept {
    return 2 * layers * kv_heads * head_dim * physical_capacity_positions *
           static_cast<std::int64_t>(dtype.element_size);
  }
  // Rows at peak for an engine running `max_num_seqs` sequences.
  constexpr std::int64_t row_count(std::int64_t max_num_seqs) const noexcept {
    return rows == RowDriver::Fixed ? rows_fixed : max_num_seqs;
  }
  constexpr std::int64_t total_bytes(std::int64_t max_num_seqs) const noexcept {
    return bytes_per_row() * row_count(max_num_seqs);
  }
};

// The fields spec_from_config takes: a Spec's, in the same order, with the geometry optional
// (an explicit value overrides the config's).
struct SpecArgs {
  std::string name{};
  std::optional<std::int64_t> layers{};
  std::optional<std::int64_t> kv_heads{};
  std::optional<std::int64_t> head_dim{};
  std::int64_t physical_capacity_positions = 0;
  std::string capacity_source{};
  Scope scope = Scope::Invocation;
  Dtype dtype{};
  RowDriver rows = RowDriver::Fixed;
  std::int64_t rows_fixed = 1;
  std::string rows_reason{};
  std::string allocation_note{};
};

namespace detail {

// Config fields by name (a struct member; std::optional members count when they hold a value).
// Each trait is false for a config without the member, so any config struct compiles.
#define KVLINT_MLKV_CONFIG_FIELD(field)                                                             \
  template <typename C, typename = void>                                                            \
  struct has_##field : std::false_type {};                                                          \
  template <typename C>                                                                             \
  struct has_##field<C, std::void_t<decltype(std::declval<const C&>().field)>> : std::true_type {}; \
  template <typename C>                                                                             \
  std::optional<std::int64_t> field(const C& config) {                                              \
    if constexpr (has_##field<C>::value)                                                            \
      return positive(config.field);                                                                \
    else                                                                                            \
      return std::nullopt;                                                                          \
  }

// A config value that is set: present and positive (Python's `getattr(..., None) or fallback`).
template <typename T>
std::optional<std::int64_t> positive(const T& value) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (value > 0) return static_cast<std::int64_t>(value);
    return std::nullopt;
  } else {
    if (value.has_value() && *value > 0) return static_cast<std::int64_t>(*value);
    return std::nullopt;
  }
}

KVLINT_MLKV_CONFIG_FIELD(num_hidden_layers)
KVLINT_MLKV_CONFIG_FIELD(num_layers)
KVLINT_MLKV_CONFIG_FIELD(num_key_value_heads)
KVLINT_MLKV_CONFIG_FIELD(num_attention_heads)
KVLINT_MLKV_CONFIG_FIELD(head_dim)
KVLINT_MLKV_CONFIG_FIELD(hidden_size)
#undef KVLINT_MLKV_CONFIG_FIELD

[[noreturn]] inline void missing(std::string_view spec_name, std::string_view what) {
  // Raise rather than guess: a wrong geometry is worse than no declaration.
  throw std::invalid_argument(std::string(spec_name) + ": " + std::string(what));
}

}  // namespace detail

// Builds a spec from the same config object the cache is built from, like the Python
// spec_from_hf_config: layers from num_hidden_layers (or num_layers), kv_heads from
// num_key_value_heads (or num_attention_heads), head_dim from head_dim (or hidden_size /
// num_attention_heads, which must divide). An explicit `.layers/.kv_heads/.head_dim` wins. Throws
// std::invalid_argument when a field is neither given nor derivable, or for FIXED rows without a
// reason. `file`/`line` default to the call site: the spec's declaring line.
template <typename Config>
Spec spec_from_config(const Config& config, SpecArgs args, const char* file = __builtin_FILE(),
                      std::uint32_t line = __builtin_LINE()) {
  namespace d = detail;
  auto layers = args.layers ? args.layers : d::num_hidden_layers(config);
  if (!layers) layers = d::num_layers(config);
  if (!layers)
    d::missing(args.name, "the config has neither num_hidden_layers nor num_layers, and no .layers");
  const auto heads = d::num_attention_heads(config);
  auto kv_heads = args.kv_heads ? args.kv_heads : d::num_key_value_heads(config);
  if (!kv_heads) kv_heads = heads;
  if (!kv_heads)
    d::missing(args.name,
               "the config has neither num_key_value_heads nor num_attention_heads, and no .kv_heads");
  auto head_dim = args.head_dim ? args.head_dim : d::head_dim(config);
  if (!head_dim) {
    const auto hidden = d::hidden_size(config);
    if (!hidden || !heads)
      d::missing(args.name,
                 "the config has no head_dim and no hidden_size / num_attention_heads, and no .head_dim");
    if (*hidden % *heads != 0)
      d::missing(args.name, "hidden_size is not a multiple of num_attention_heads; give .head_dim");
    head_dim = *hidden / *heads;
  }
  return Spec{std::move(args.name),
              *layers,
              *kv_heads,
              *head_dim,
              args.physical_capacity_positions,
              std::move(args.capacity_source),
              args.scope,
              args.dtype,
              args.rows,
              args.rows_fixed,
              std::move(args.rows_reason),
              std::move(args.allocation_note),
              file,
              line};
}

}  // namespace kvlint::model_local_kv
