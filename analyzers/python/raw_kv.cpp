// Where Python raw K/V comes from: tensors a class allocates and keeps (on self, in a container
// on self, in a dict kept there) and treats as attention keys or values, although no cache class
// built them (facts::CacheSite with cache_class "Tensor" and facts::RawKv). K/V is known by what
// the code does: written in a step (slice assignment, copy_, index_copy_, scatter_, growth by
// torch.cat), read by attention (scaled_dot_product_attention, flash-attn, `q @ k`), or handed on
// to a call; a name that says K/V (`k_cache`, `keys`, `_kv_buf`, a class named `...KVCache`) is
// evidence beside a use, never alone. Look-alikes are left out by what they are: parameters,
// tensors under two dimensions, names of rotary tables, masks, positions, convolution or hidden
// state, and whatever the class only stores from a parameter (the engine's paged pool).
//
// The uses are recorded by the walk as it passes (any order against the allocation); the class's
// allocations are judged when its node closes (finish_class_raw_kv).
#include <algorithm>
#include <array>

#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {
namespace {

// `torch.<name>(...)` allocates a tensor of a shape it is given (or of another's, `_like`).
constexpr std::array<std::string_view, 9> kTorchAllocators = {
    "empty", "zeros", "full", "ones", "empty_like", "zeros_like", "full_like", "ones_like", "empty_strided"};
// `<tensor>.<name>(...)`.
constexpr std::array<std::string_view, 4> kTensorAllocators = {"new_empty", "new_zeros", "new_full",
                                                               "new_ones"};
// In-place writes that put K/V into a kept tensor at a position.
constexpr std::array<std::string_view, 7> kInPlaceWrites = {
    "copy_", "index_copy_", "index_put_", "scatter_", "index_add_", "masked_scatter_", "slice_scatter"};
// Calls that read keys and values as attention does.
constexpr std::array<std::string_view, 9> kAttentionReads = {"scaled_dot_product_attention",
                                                             "flash_attn_func",
                                                             "flash_attn_with_kvcache",
                                                             "flash_attn_varlen_func",
                                                             "flash_attn_kvpacked_func",
                                                             "flash_attn_varlen_kvpacked_func",
                                                             "memory_efficient_attention",
                                                             "sdpa",
                                                             "flex_attention"};
constexpr std::array<std::string_view, 3> kMatmuls = {"matmul", "bmm", "einsum"};
// Views between a kept tensor and the use (`self.k_cache[layer].narrow(2, pos, 1).copy_(k)`).
constexpr std::array<std::string_view, 16> kViews = {
    "transpose", "view",    "narrow", "select", "permute", "reshape", "contiguous", "flatten",
    "unsqueeze", "squeeze", "expand", "to",     "unbind",  "split",   "chunk",      "index_select"};
// Calls whose argument is no K/V use: queries and builtins.
constexpr std::array<std::string_view, 14> kNotUses = {"len",   "isinstance", "getattr", "hasattr",   "print",
                                                       "id",    "type",       "zip",     "enumerate", "range",
                                                       "tuple", "list",       "super",   "str"};

template <std::size_t N>
bool among(const std::array<std::string_view, N>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// What kept_member names that is no attribute: what a method returns ("_kv_views()",
// "_views()[1]") or a method's parameter ("_forward(#1)"), resolved at the class's close.
bool is_pseudo_member(std::string_view member) {
  return member.find('(') != std::string_view::npos;
}
bool is_parameter_member(std::string_view member) {
  return member.find("(#") != std::string_view::npos;
}

// `_k_ring`, `kvBuffer`, `StreamingAudioKVCache` as lower-case tokens: split at `_` and where
// CamelCase starts a word (`KVCache` -> kv, cache).
std::vector<std::string> name_tokens(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) tokens.push_back(lower(current));
    current.clear();
  };
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '_' || c == '.' || c == '[' || c == ']' || c == '"' || c == '\'') {
      flush();
      continue;
    }
    const bool upper = c >= 'A' && c <= 'Z';
    const bool prev_lower =
        i > 0 && ((name[i - 1] >= 'a' && name[i - 1] <= 'z') || (name[i - 1] >= '0' && name[i - 1] <= '9'));
    const bool next_lower = i + 1 < name.size() && name[i + 1] >= 'a' && name[i + 1] <= 'z';
    const bool prev_upper = i > 0 && name[i - 1] >= 'A' && name[i - 1] <= 'Z';
    if (upper && (prev_lower || (prev_upper && next_lower))) flush();
    current.push_back(c);
  }
  flush();
  return tokens;
}

// A name that says keys or values: a token `k`, `v`, `kv`, `key(s)`, `value(s)`, `past`, or one
// that starts with `kv` (`kvcache`, `kvbuf`).
bool says_kv(std::string_view name) {
  for (const std::string& t : name_tokens(name))
    if (t == "k" || t == "v" || t == "key" || t == "keys" || t == "value" || t == "values" || t == "past" ||
        t == "kcache" || t == "vcache" || starts_with(t, "kv"))
      return true;
  return false;
}

// A name that says what the tensor is, and it is not K/V: rotary tables, masks, positions,
// convolution and hidden state, weights.
bool says_not_kv(std::string_view name) {
  static constexpr std::array<std::string_view, 40> kLookalikes = {
      "conv",   "cnn",    "cos",     "sin",     "rotary",   "rope",      "freq",    "freqs",
      "inv",    "mask",   "masks",   "pos",     "position", "positions", "pad",     "padding",
      "hidden", "parity", "hist",    "history", "prev",     "bias",      "weight",  "weights",
      "embed",  "ids",    "offset",  "offsets", "index",    "indices",   "idx",     "table",
      "tables", "lens",   "lengths", "count",   "counts",   "ptr",       "seqlens", "logits"};
  for (const std::string& t : name_tokens(name))
    if (among(kLookalikes, t)) return true;
  return false;
}

// A callee named for attention (`_cp_attention_kernel`, `attend`, `paged_attn`), not for
// something beside it (`_update_attention_mask`, `attn_bias`).
bool names_attention(std::string_view callee) {
  const std::size_t dot = callee.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? callee : callee.substr(dot + 1);
  // Each of the three tokens holds "att": a name without it (most callees) needs no tokens.
  constexpr std::string_view kAtt = "att";
  const auto att = std::search(last.begin(), last.end(), kAtt.begin(), kAtt.end(),
                               [](char a, char b) { return (a | 0x20) == b; });
  if (att == last.end()) return false;
  if (says_not_kv(last)) return false;
  for (const std::string& t : name_tokens(last))
    if (t == "attention" || t == "attn" || t == "attend") return true;
  return false;
}

// A shape with a heads dimension, a head_dim one and a positions one (`(2, slots, heads,
// capacity, head_dim)`).
bool attention_shaped(const std::vector<facts::Expression>& shape);

// Which dimension of a shape this is, by the names it reads.
template <typename Words>
bool reads_one_of(const facts::Expression& e, const Words& words) {
  auto has = [&](std::string_view s) {
    for (const std::string& t : name_tokens(s))
      for (std::string_view w : words)
        if (t == w) return true;
    return false;
  };
  if (has(e.text)) return true;
  return std::any_of(e.names.begin(), e.names.end(), [&](const std::string& n) { return has(n); });
}

// Words of a dimension that counts rows (slots, batch, requests).
constexpr std::array<std::string_view, 9> kRowWords = {"batch", "bsz",      "bs",       "slots", "slot",
                                                       "seqs",  "sessions", "requests", "rows"};
// Words of a dimension that counts positions (the length bound).
constexpr std::array<std::string_view, 14> kPositionWords = {
    "len", "length",   "seq",   "ring",  "window", "positions", "context",
    "ctx", "capacity", "cache", "total", "tokens", "frames",    "blocks"};

// Which attention dimensions a shape spells out: heads, head_dim and positions.
struct AttentionDims {
  bool heads = false, head_dim = false, positions = false;
};
AttentionDims attention_dims(const std::vector<facts::Expression>& shape) {
  AttentionDims d;
  for (const facts::Expression& e : shape) {
    const std::string t = lower(e.text);
    if (contains(t, "head_dim") || contains(t, "dim_per_head") || contains(t, "head_size"))
      d.head_dim = true;
    else if (contains(t, "heads"))
      d.heads = true;
    else if (reads_one_of(e, kPositionWords))
      d.positions = true;
  }
  return d;
}

bool attention_shaped(const std::vector<facts::Expression>& shape) {
  const AttentionDims d = attention_dims(shape);
  return d.heads && d.head_dim && d.positions;  // not a per-head scale or bias: it has positions
}

// A shape with a heads dimension and a head_dim one (`(batch, num_key_value_heads, n, head_dim)`).
bool heads_by_head_dim(const std::vector<facts::Expression>& shape) {
  const AttentionDims d = attention_dims(shape);
  return d.heads && d.head_dim;
}

// The simple name of a concatenation (`torch.cat`, `torch.concat`, `torch.concatenate`).
bool is_concatenation(std::string_view simple) {
  return simple == "cat" || simple == "concat" || simple == "concatenate";
}

}  // namespace

// The same readings of names and shapes, for raw_kv_views.cpp.
bool raw_kv_lookalike_name(std::string_view name) {
  return says_not_kv(name);
}
bool raw_kv_view_call(std::string_view simple) {
  return among(kViews, simple);
}
bool raw_kv_heads_and_positions(const std::vector<facts::Expression>& shape) {
  const AttentionDims d = attention_dims(shape);
  return d.heads && d.positions;
}
void set_raw_kv_axes(facts::RawKv& kv) {
  for (std::size_t d = 0; d < kv.shape.size(); ++d) {
    const auto& e = kv.shape[d];
    if (!kv.rows_axis && reads_one_of(e, kRowWords))
      kv.rows_axis = static_cast<uint32_t>(d);
    else if (!kv.positions_axis && reads_one_of(e, kPositionWords))
      kv.positions_axis = static_cast<uint32_t>(d);
  }
}

// `torch.zeros(...)`, `torch.empty_like(x)`, `x.new_zeros(...)`: a call that allocates a tensor.
bool FileWalker::is_tensor_allocation(TSNode fn, std::string_view simple) const {
  if (sym(fn) != Sym::Attribute && sym(fn) != Sym::Identifier) return false;
  if (sym(fn) == Sym::Attribute && among(kTensorAllocators, simple)) return true;
  if (!among(kTorchAllocators, simple)) return false;
  return starts_with(resolve(strip_view(fn)), "torch.");
}

// `zeros(...)` after `zeros = functools.partial(torch.zeros, dtype=..., device=...)`: an
// allocator under a local name.
bool FileWalker::is_partial_allocator(TSNode fn) {
  Frame* func = function_frame();
  if (!func || sym(fn) != Sym::Identifier) return false;
  const auto found = func->latest_binding.find(text(fn));
  if (found == func->latest_binding.end() || ts_node_start_byte(found->second) >= ts_node_start_byte(fn))
    return false;
  TSNode bound = unwrap_parens(found->second);
  if (sym(bound) != Sym::Call) return false;
  TSNode partial = field(bound, g_.f_function);
  if (resolve(strip_view(partial)) != "functools.partial") return false;
  TSNode allocator = first_positional(bound);
  if (ts_node_is_null(allocator) || sym(allocator) != Sym::Attribute) return false;
  return is_tensor_allocation(allocator, text(field(allocator, g_.f_attribute)));
}

// The attribute of self a value lives in: `self.k_cache[layer].narrow(2, pos, 1)` -> "k_cache",
// `layer["k_ring"]` after `layer = self.layers[i]` (or `for layer in self.layers`) -> "layers",
// `[(layer[0], layer[1]) for layer in self.buffer]` -> "buffer"; `self._kv_views(n)` -> the
// pseudo-attribute "_kv_views()", which finish_class_raw_kv reads as what that method returns;
// empty when it is not kept on self.
std::string FileWalker::kept_member(TSNode n, int depth, TSNode comprehension) {
  for (int steps = 0; steps < 32 && !ts_node_is_null(n); ++steps) {
    spend(1);
    n = unwrap_parens(n);
    switch (sym(n)) {
      case Sym::Subscript:
        n = field(n, g_.f_value);
        continue;
      case Sym::Call: {
        TSNode fn = field(n, g_.f_function);
        if (sym(fn) != Sym::Attribute) return {};
        const std::string_view simple = text(field(fn, g_.f_attribute));
        if (among(kViews, simple)) {
          n = field(fn, g_.f_object);
          continue;
        }
        // A method of this class that may return a view of what it keeps.
        if (is_self_attribute(fn) && !among(kInPlaceWrites, simple)) return std::string(simple) + "()";
        return {};
      }
      case Sym::ListComprehension:
      case Sym::GeneratorExpression:
        // The elements: `[(layer[0, :n], layer[1, :n]) for layer in self.buffer]`.
        if (!ts_node_is_null(comprehension)) return {};
        comprehension = n;
        n = field(n, g_.f_body);
        continue;
      case Sym::Tuple:
      case Sym::List: {
        // A pair of views built in a comprehension: the first element that is kept.
        if (ts_node_is_null(comprehension)) return {};
        // (by index: callers may be iterating with the walker's cursors)
        std::string found;
        for (uint32_t i = 0; found.empty() && i < ts_node_named_child_count(n); ++i)
          found = kept_member(named_child(n, i), depth, comprehension);
        return found;
      }
      case Sym::Attribute: {
        TSNode object = field(n, g_.f_object);
        if (sym(object) == Sym::Identifier && text(object) == "self")
          return std::string(text(field(n, g_.f_attribute)));
        n = object;
        continue;
      }
      case Sym::Identifier: {
        if (depth > 2) return {};
        const std::string_view name = text(n);
        if (name == "self") return {};
        if (TSNode source = comprehension_source(comprehension, name); !ts_node_is_null(source)) {
          comprehension = TSNode{};
          n = source;
          continue;
        }
        Frame* func = function_frame();
        if (!func) return {};
        // The walk is in source order: the latest binding seen is the one in force here.
        const auto found = func->latest_binding.find(name);
        const bool bound =
            found != func->latest_binding.end() && ts_node_start_byte(found->second) < ts_node_start_byte(n);
        // `mel, cache = self._views(b, n)`: "_views()[1]", unless bound again since.
        if (const auto unpacked = func->unpacked_from_self_call.find(name);
            unpacked != func->unpacked_from_self_call.end() &&
            ts_node_start_byte(unpacked->second.first) < ts_node_start_byte(n) &&
            (!bound || ts_node_start_byte(found->second) < ts_node_start_byte(unpacked->second.first))) {
          TSNode fn = field(unpacked->second.first, g_.f_function);
          return std::string(text(field(fn, g_.f_attribute))) + "()[" +
                 std::to_string(unpacked->second.second) + "]";
        }
        if (!bound) {
          // A parameter of the class's method (not of a function nested in it): "_forward(#1)",
          // what the class's own calls hand it (finish_class_raw_kv).
          const auto* params = current_params();
          if (!params || func->name != func->method) return {};
          const auto at = std::find(params->begin(), params->end(), name);
          if (at == params->end()) return {};
          return std::string(func->method) + "(#" + std::to_string(at - params->begin()) + ")";
        }
        return kept_member(found->second, depth + 1);
      }
      default:
        return {};
    }
  }
  return {};
}

// What a comprehension's loop variable `name` runs over (`layer` in `... for layer in
// self.buffer`, also `k` in `... for k, _ in caches`); null when it binds no such name.
TSNode FileWalker::comprehension_source(TSNode comprehension, std::string_view name) {
  if (ts_node_is_null(comprehension)) return {};
  // By index, not with the walker's cursors: kept_member runs inside their iterations.
  for (uint32_t i = 0; i < ts_node_named_child_count(comprehension); ++i) {
    TSNode clause = named_child(comprehension, i);
    if (sym(clause) != Sym::ForInClause) continue;
    TSNode left = field(clause, g_.f_left);
    bool binds = sym(left) == Sym::Identifier && text(left) == name;
    if (sym(left) == Sym::PatternList || sym(left) == Sym::TuplePattern)
      for (uint32_t j = 0; !binds && j < ts_node_named_child_count(left); ++j) {
        TSNode t = named_child(left, j);
        binds = sym(t) == Sym::Identifier && text(t) == name;
      }
    if (binds) return field(clause, g_.f_right);
  }
  return {};
}

// `return [(buf[i, 0], buf[i, 1]) for i in ...]` after `buf = self._kv_buf`: the method hands
// out views of what the class keeps.
void FileWalker::on_raw_kv_return(TSNode node) {
  ClassState* cls = owner_state();
  Frame* func = function_frame();
  if (!cls || !func || cls->is_cache_class || ts_node_named_child_count(node) == 0) return;
  // `return k, v` after `k = torch.zeros(shape)`: the locals are handed back, not dropped.
  if (!cls->raw_allocations.empty()) {
    TSNode value = unwrap_parens(named_child(node, 0));
    auto mark = [&](TSNode n) {
      n = unwrap_parens(n);
      if (sym(n) != Sym::Identifier) return;
      for (RawAllocation& a : cls->raw_allocations)
        if (a.function == func->node.id && a.member.empty() && a.local == text(n)) a.returned = true;
    };
    if (sym(value) == Sym::Tuple || sym(value) == Sym::List || sym(value) == Sym::ExpressionList)
      for (uint32_t i = 0; i < ts_node_named_child_count(value); ++i) mark(named_child(value, i));
    else
      mark(value);
  }
  TSNode value = unwrap_parens(named_child(node, 0));
  if (sym(value) == Sym::Tuple || sym(value) == Sym::ExpressionList) {
    // `return (self._mel[:b], self._cache[:, :, :b], ...)`: each element by its position.
    for (uint32_t i = 0; i < ts_node_named_child_count(value); ++i) {
      std::string e = kept_member(named_child(value, i));
      if (!e.empty() && !is_pseudo_member(e))
        cls->raw_kv_views.emplace(method_name() + "()[" + std::to_string(i) + "]", std::move(e));
    }
    return;
  }
  std::string m = kept_member(value);
  if (m.empty() || is_pseudo_member(m)) return;
  cls->raw_kv_views.emplace(method_name() + "()", std::move(m));
}

void FileWalker::note_raw_kv_use(ClassState& cls, std::string member, RawKvUse::Kind kind, TSNode at,
                                 std::string what) {
  auto& uses = cls.raw_kv_uses[std::move(member)];
  std::string method = method_name();
  // The first of each kind in a method is evidence enough; one inside a graph capture is kept
  // apart, as what the capture holds.
  const bool in_capture = !captures_open_.empty();
  for (const auto& u : uses)
    if (u.kind == kind && u.method == method && u.in_capture == in_capture) return;
  uses.push_back({kind, loc(at), std::move(what), std::move(method), in_capture});
}

// A call: an allocation that may be kept, or a use of a kept tensor.
void FileWalker::on_raw_kv_call(TSNode call, TSNode fn) {
  ClassState* cls = owner_state();
  Frame* func = function_frame();
  if (!cls || !func || cls->is_cache_class) return;
  // The method or function called, also on a receiver that is no dotted name
  // (`self.k_cache[layer].copy_(k)`); a subscripted callee (`kernel[grid](...)`) has none.
  const std::string_view simple = sym(fn) == Sym::Attribute    ? text(field(fn, g_.f_attribute))
                                  : sym(fn) == Sym::Identifier ? text(fn)
                                                               : std::string_view{};
  if (is_tensor_allocation(fn, simple) || is_partial_allocator(fn)) {
    on_tensor_allocation(*cls, call, fn);
    return;
  }
  if (is_concatenation(simple) && starts_with(resolve(strip_view(fn)), "torch.")) {
    if (std::string grown = grown_member(call); !grown.empty()) {
      on_tensor_allocation(*cls, call, fn, std::move(grown));
      return;
    }
  }
  TSNode args = field(call, g_.f_arguments);
  if (sym(fn) == Sym::Attribute && among(kInPlaceWrites, simple)) {
    if (std::string m = kept_member(field(fn, g_.f_object)); !m.empty())
      note_raw_kv_use(*cls, std::move(m), RawKvUse::Kind::Write, call, "`" + std::string(simple) + "`");
    return;
  }
  // A kernel or function named for attention (`_cp_attention_kernel[grid](q, k, v, ...)`,
  // `self._attend(q, self.k, self.v)`) reads its keys and values as attention does; a triton
  // launch is named by the kernel, not its grid.
  const TSNode named_fn = sym(fn) == Sym::Subscript ? field(fn, g_.f_value) : fn;
  // Spelled without spaces; a copy only where the source has some (`self . _attend`).
  const std::string_view callee_text = text(named_fn);
  std::string stripped;
  if (std::any_of(callee_text.begin(), callee_text.end(), is_space)) stripped = strip_spaces(callee_text);
  const std::string_view callee = stripped.empty() ? callee_text : stripped;
  const bool attention = among(kAttentionReads, simple) || names_attention(callee);
  const bool matmul = among(kMatmuls, simple) && starts_with(resolve(strip_view(fn)), "torch.");
  if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return;
  // A local allocation handed to a container on self: `self._rings.append(ring)`.
  const bool container_store = sym(fn) == Sym::Attribute &&
                               (simple == "append" || simple == "insert" || simple == "setdefault") &&
                               rooted_at_self(field(fn, g_.f_object));
  const bool not_a_use = among(kNotUses, simple);
  if (is_self_attribute(fn)) note_raw_kv_arguments(*cls, args, simple);
  uint32_t position = 0;
  for_each_named_child(sub_, args, [&](TSNode a, TSFieldId) {
    TSNode value = sym(a) == Sym::KeywordArgument ? field(a, g_.f_value) : a;
    if (container_store && sym(unwrap_parens(value)) == Sym::Identifier) {
      promote_raw_local(*func, *cls, text(unwrap_parens(value)), field(fn, g_.f_object), true);
      return true;
    }
    if (not_a_use) return true;
    if (attention && !attention_kv_argument(a, position)) {
      ++position;
      return true;
    }
    if (sym(a) != Sym::KeywordArgument) ++position;
    std::string m = kept_member(value);
    if (m.empty()) return true;
    const RawKvUse::Kind kind = attention || matmul ? RawKvUse::Kind::Read : RawKvUse::Kind::Pass;
    if (kind == RawKvUse::Kind::Pass && is_parameter_member(m)) return true;  // followed no further
    const std::string what =
        kind == RawKvUse::Kind::Read ? std::string(callee) : "handed to `" + std::string(callee) + "`";
    // `L["k_ring"]` out of a container of dicts: also under its key, so the dict's K/V is told
    // from the weights beside it (`L["ln1"]` handed to a norm kernel).
    std::string key;
    if (TSNode v = unwrap_parens(value); sym(v) == Sym::Subscript) {
      TSNode k = unwrap_parens(field(v, g_.f_subscript));
      if (!ts_node_is_null(k) && sym(k) == Sym::String && decode_string(k, key) && !key.empty())
        note_raw_kv_use(*cls, m + "[\"" + key + "\"]", kind, call, what);
    }
    note_raw_kv_use(*cls, std::move(m), kind, call, what);
    return true;
  });
}

// `self._forward(*views, n)`, `self._step(self.k_cache, x)`: what the call hands each parameter
// of the class's method, when it is kept (or returned by a method of the class).
void FileWalker::note_raw_kv_arguments(ClassState& cls, TSNode args, std::string_view method) {
  std::size_t index = 0;
  each_named_child(args, [&](TSNode a) {
    if (sym(a) == Sym::Comment) return true;
    if (sym(a) == Sym::KeywordArgument || sym(a) == Sym::DictionarySplat) return false;
    const bool splat = sym(a) == Sym::ListSplat;
    std::string m = kept_member(splat ? named_child(a, 0) : a);
    if (splat && !ends_with(m, "()")) return false;  // only a method's returned tuple spreads
    if (!m.empty() && !is_parameter_member(m))
      cls.raw_kv_arguments.push_back({std::string(method), index, std::move(m), splat});
    if (splat) return false;  // the positions after it are unknown
    ++index;
    return true;
  });
}

// The uses recorded under `from` (a pseudo-member) are uses of `into`.
void FileWalker::merge_raw_kv_uses(ClassState& cls, const std::string& from, const std::string& into) {
  auto found = cls.raw_kv_uses.find(from);
  if (found == cls.raw_kv_uses.end() || from == into) return;
  std::vector<RawKvUse> moved = std::move(found->second);
  cls.raw_kv_uses.erase(found);
  auto& uses = cls.raw_kv_uses[into];
  uses.insert(uses.end(), std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
}

// Whether argument `a` (the `position`-th positional, or a keyword) of an attention call is its
// keys or values: the second and third positionals (query first), or a K/V keyword; not the
// mask, scale or anything after.
bool FileWalker::attention_kv_argument(TSNode a, uint32_t position) const {
  if (sym(a) == Sym::KeywordArgument) {
    const std::string_view k = text(field(a, g_.f_name));
    return k == "key" || k == "value" || k == "k" || k == "v" || k == "k_cache" || k == "v_cache" ||
           k == "kv_cache" || k == "kv";
  }
  return position == 1 || position == 2;
}

// `q @ self.k_cache.transpose(-1, -2)`: a read as attention does.
void FileWalker::on_raw_kv_matmul(TSNode binary) {
  ClassState* cls = owner_state();
  if (!cls || !function_frame() || text(field(binary, g_.f_operator)) != "@") return;
  for (TSNode side : {field(binary, g_.f_left), field(binary, g_.f_right)})
    if (std::string m = kept_member(side); !m.empty())
      note_raw_kv_use(*cls, std::move(m), RawKvUse::Kind::Read, binary, "@");
}

// `self.keys[i, :n] = k` (a write), `self.k = torch.cat([self.k, k], 2)` (growth), and a local
// allocation stored on self: `self._buffer = buffer`, `self._kv, self._tables = caches, tables`.
void FileWalker::on_raw_kv_assignment(TSNode node) {
  ClassState* cls = owner_state();
  Frame* func = function_frame();
  if (!cls || !func || cls->is_cache_class) return;
  TSNode left = field(node, g_.f_left);
  TSNode right = unwrap_parens(field(node, g_.f_right));
  if (ts_node_is_null(left) || ts_node_is_null(right)) return;
  // `self.caches = model._allocate_cache(hidden)`: what another method returns is kept here; a
  // method of this class (`self._make_kv()`) is known at the class's close, another class's
  // when it closed before, else once the file is walked (finish_raw_kv_late_factories).
  if (is_self_attribute(left) && sym(right) == Sym::Call) {
    TSNode fn = field(right, g_.f_function);
    if (sym(fn) == Sym::Attribute) {
      const std::string_view called = text(field(fn, g_.f_attribute));
      TSNode receiver = field(fn, g_.f_object);
      const bool on_self = sym(receiver) == Sym::Identifier && text(receiver) == "self";
      ClassState::RawKvFromCall from{
          std::string(text(field(left, g_.f_attribute))), std::string(called), on_self, {}};
      from.site.cache_class = "Tensor";
      from.site.written = strip_spaces(text(fn));
      from.site.owner_class = cls->name;
      from.site.method = method_name();
      from.site.loc = loc(right);
      from.site.guards = current_guards();
      from.site.retention = Retention::SelfAttribute;
      from.site.retained_as = strip_spaces(text(left));
      from.site.inside_graph_capture = !captures_open_.empty();
      cls->raw_from_calls.push_back(std::move(from));
    }
  }
  // Storing a local allocation (`self._kv[rid] = (k, v)`, `self.rings[key] = ring`) keeps it
  // there (below); any other value assigned into a kept tensor is a write of K/V into it.
  if (sym(left) == Sym::Subscript && !stores_raw_local(*func, *cls, right)) {
    if (std::string m = kept_member(field(left, g_.f_value)); !m.empty()) {
      note_raw_kv_use(*cls, std::move(m), RawKvUse::Kind::Write, node, "slice assignment");
      return;
    }
  }
  if (is_self_attribute(left) && sym(right) == Sym::Call) {
    TSNode fn = field(right, g_.f_function);
    const std::string_view simple = sym(fn) == Sym::Attribute ? text(field(fn, g_.f_attribute)) : text(fn);
    const std::string_view member = text(field(left, g_.f_attribute));
    if (is_concatenation(simple) && contains(text(field(right, g_.f_arguments)), text(left)))
      note_raw_kv_use(*cls, std::string(member), RawKvUse::Kind::Write, node, "`torch.cat` growth");
  }
  // `layer.kv_cache = kv` (or `[kv]`) after `for layer, kv in zip(..., self._kv_caches)`: the
  // tensor is installed as another object's K/V (an attention layer's).
  if (sym(left) == Sym::Attribute && !rooted_at_self(left) && says_kv(text(field(left, g_.f_attribute)))) {
    TSNode value =
        sym(right) == Sym::List && ts_node_named_child_count(right) == 1 ? named_child(right, 0) : right;
    if (std::string m = kept_member(value); !m.empty())
      note_raw_kv_use(*cls, std::move(m), RawKvUse::Kind::Pass, node, "`" + strip_spaces(text(left)) + "`");
  }
  // `prev_key, prev_value = self.key_values[layer]`: each name reads what is kept there (only
  // an entry of an attribute, not `B, T = self.k.shape[:2]`, whose names are sizes).
  TSNode entry = right;
  while (sym(entry) == Sym::Subscript) entry = unwrap_parens(field(entry, g_.f_value));
  if ((sym(left) == Sym::PatternList || sym(left) == Sym::TuplePattern) && is_self_attribute(entry))
    for_each_named_child(sub_, left, [&](TSNode t, TSFieldId) {
      if (sym(t) == Sym::Identifier) func->latest_binding[text(t)] = right;
      return true;
    });
  // `mel, cache, mask = self._views(b, n)`: each name takes its element of what the method returns.
  if ((sym(left) == Sym::PatternList || sym(left) == Sym::TuplePattern) && sym(right) == Sym::Call &&
      is_self_attribute(field(right, g_.f_function))) {
    uint32_t index = 0;
    for_each_named_child(sub_, left, [&](TSNode t, TSFieldId) {
      if (sym(t) == Sym::Identifier) func->unpacked_from_self_call[text(t)] = {right, index};
      ++index;
      return true;
    });
  }
  if (cls->raw_allocations.empty()) return;
  if (sym(right) == Sym::Identifier && (sym(left) == Sym::Attribute || sym(left) == Sym::Subscript)) {
    promote_raw_local(*func, *cls, text(right), left, false);
    return;
  }
  // `self._kv[request_id] = (k, v)`: a pair of local tensors kept together.
  if ((sym(right) == Sym::Tuple || sym(right) == Sym::List) &&
      (sym(left) == Sym::Attribute || sym(left) == Sym::Subscript)) {
    for_each_named_child(sub_, right, [&](TSNode e, TSFieldId) {
      if (sym(unwrap_parens(e)) == Sym::Identifier)
        promote_raw_local(*func, *cls, text(unwrap_parens(e)), left, true);
      return true;
    });
    return;
  }
  // `self.a, self.b = x, y`: pair the two sides.
  if (ts_node_named_child_count(left) >= 2 &&
      ts_node_named_child_count(left) == ts_node_named_child_count(right) &&
      sym(right) == Sym::ExpressionList) {
    for (uint32_t i = 0; i < ts_node_named_child_count(left); ++i) {
      TSNode target = named_child(left, i), value = unwrap_parens(named_child(right, i));
      if (sym(value) == Sym::Identifier && (sym(target) == Sym::Attribute || sym(target) == Sym::Subscript))
        promote_raw_local(*func, *cls, text(value), target, false);
    }
  }
}

// Whether `value` is a local holding an allocation not yet kept, or a tuple or list of them.
bool FileWalker::stores_raw_local(const Frame& func, const ClassState& cls, TSNode value) {
  auto pending = [&](TSNode n) {
    n = unwrap_parens(n);
    if (sym(n) != Sym::Identifier) return false;
    return std::any_of(cls.raw_allocations.begin(), cls.raw_allocations.end(), [&](const RawAllocation& a) {
      return a.function == func.node.id && a.member.empty() && a.local == text(n);
    });
  };
  value = unwrap_parens(value);
  if (sym(value) != Sym::Tuple && sym(value) != Sym::List) return pending(value);
  for (uint32_t i = 0; i < ts_node_named_child_count(value); ++i)
    if (pending(named_child(value, i))) return true;
  return false;
}

// A local holding an allocation (`buffer = torch.empty(...)`) stored on self: it is kept there.
void FileWalker::promote_raw_local(Frame& func, ClassState& cls, std::string_view local, TSNode target,
                                   bool in_container) {
  TSNode holder = sym(target) == Sym::Subscript ? field(target, g_.f_value) : target;
  if (!rooted_at_self(holder)) return;
  std::string member = kept_member(holder);
  if (member.empty() || is_pseudo_member(member)) return;
  for (auto& pending : cls.raw_allocations) {
    if (pending.function != func.node.id || pending.local != local || !pending.member.empty()) continue;
    pending.member = member;
    const bool container = in_container || sym(target) == Sym::Subscript || pending.in_container;
    pending.site.retention = container ? Retention::SelfContainer : Retention::SelfAttribute;
    pending.site.retained_as = strip_spaces(text(holder));
    if (sym(target) == Sym::Subscript) {
      TSNode key = field(target, g_.f_subscript);
      if (!ts_node_is_null(key)) pending.site.container_key = make_expr(key);
    }
  }
}

// `for layer in self.layers:`, `for i, layer in enumerate(self.layers):`, `for k, v in
// zip(self.k_cache, self.v_cache):` bind names to what is kept on self (kept_member reads them).
void FileWalker::note_loop_binding(TSNode for_node) {
  Frame* func = function_frame();
  if (!func || !owner_state()) return;
  TSNode left = field(for_node, g_.f_left);
  TSNode right = unwrap_parens(field(for_node, g_.f_right));
  if (ts_node_is_null(left) || ts_node_is_null(right)) return;
  if (sym(left) == Sym::Identifier) {
    if (rooted_at_self(right)) func->latest_binding[text(left)] = right;
    return;
  }
  if (sym(right) != Sym::Call) return;
  const std::string_view callee = text(field(right, g_.f_function));
  TSNode args = field(right, g_.f_arguments);
  std::vector<TSNode> sources;
  for_each_named_child(sub_, args, [&](TSNode a, TSFieldId) {
    if (sym(a) != Sym::KeywordArgument) sources.push_back(a);  // `strict=True`
    return true;
  });
  std::vector<TSNode> targets;
  for_each_named_child(sub_, left, [&](TSNode t, TSFieldId) {
    targets.push_back(t);
    return true;
  });
  if (callee == "enumerate" && sources.size() == 1 && targets.size() == 2 &&
      sym(targets[1]) == Sym::Identifier && rooted_at_self(sources[0]))
    func->latest_binding[text(targets[1])] = sources[0];
  if (callee == "zip" && sources.size() == targets.size())
    for (std::size_t i = 0; i < targets.size(); ++i)
      if (sym(targets[i]) == Sym::Identifier && rooted_at_self(sources[i]))
        func->latest_binding[text(targets[i])] = sources[i];
}

// `torch.cat([self.k, k], 2)`, `torch.cat((prev_key, key), dim=2)` after `prev_key, prev_value
// = self.key_values[layer]`: the attribute whose tensor the concatenation extends; empty when
// no element is kept on self.
std::string FileWalker::grown_member(TSNode call) {
  TSNode list = unwrap_parens(first_positional(call));
  if (ts_node_is_null(list) || (sym(list) != Sym::List && sym(list) != Sym::Tuple)) return {};
  for (uint32_t i = 0; i < ts_node_named_child_count(list); ++i)
    if (std::string grown = kept_member(named_child(list, i)); !grown.empty() && !is_pseudo_member(grown))
      return grown;
  return {};
}

// An allocation: where it goes, climbing the open nodes (as retention_of does for a cache).
// `grows` names the attribute a `torch.cat` extends (the concatenation is the allocation).
void FileWalker::on_tensor_allocation(ClassState& cls, TSNode call, TSNode fn, std::string grows) {
  RawAllocation a;
  a.grows = std::move(grows);
  bool in_container = false;
  std::size_t index = open_.size() - 1;
  TSNode kept_in{};  // the self-rooted place it is stored in
  TSNode local{};    // or the local it is bound to
  bool done = false;
  while (index > 0 && !done) {
    const Open& parent = open_[index - 1];
    const Open& child = open_[index];
    switch (parent.sym) {
      case Sym::ParenthesizedExpression:
      case Sym::ConditionalExpression:
        break;
      case Sym::List:
      case Sym::Tuple:
      case Sym::ExpressionList:
      case Sym::ListComprehension:
      case Sym::GeneratorExpression:
      case Sym::Dictionary:
        in_container = true;
        break;
      case Sym::ReturnStatement:  // a factory's: kept where a caller stores what it returns
        a.returned = true;
        done = true;
        break;
      case Sym::Pair: {
        TSNode key = field(parent.node, g_.f_key);
        std::string decoded;
        if (sym(key) == Sym::String && decode_string(key, decoded)) a.key = decoded;
        in_container = true;
        break;
      }
      case Sym::KeywordArgument:
        if (a.key.empty()) a.key = std::string(text(field(parent.node, g_.f_name)));
        break;
      case Sym::ArgumentList: {
        if (index < 2 || open_[index - 2].sym != Sym::Call) return;
        TSNode outer = open_[index - 2].node;
        TSNode outer_fn = field(outer, g_.f_function);
        const std::string_view outer_simple =
            sym(outer_fn) == Sym::Attribute ? text(field(outer_fn, g_.f_attribute)) : text(outer_fn);
        if (outer_simple == "dict") {  // `dict(k_ring=torch.zeros(...))`
          in_container = true;
          --index;  // continue above the dict call
          break;
        }
        if (outer_simple == "register_buffer" && is_self_attribute(outer_fn)) {
          TSNode name = first_positional(outer);
          std::string decoded;
          if (ts_node_eq(name, child.node) || sym(name) != Sym::String || !decode_string(name, decoded))
            return;
          a.member = decoded;
          a.site.retention = Retention::SelfAttribute;
          a.site.retained_as = "self." + decoded;
          done = true;
          break;
        }
        if (sym(outer_fn) == Sym::Attribute &&
            (outer_simple == "append" || outer_simple == "insert" || outer_simple == "setdefault") &&
            rooted_at_self(field(outer_fn, g_.f_object))) {
          kept_in = field(outer_fn, g_.f_object);
          in_container = true;
          done = true;
          break;
        }
        return;  // an argument of anything else: `nn.Parameter(...)`, `torch.cat([...])`
      }
      case Sym::Assignment: {
        if (child.field != g_.f_right) return;
        TSNode left = field(parent.node, g_.f_left);
        if (sym(left) == Sym::Identifier) {
          local = left;
        } else if (sym(left) == Sym::Subscript && rooted_at_self(field(left, g_.f_value))) {
          kept_in = left;
        } else if (sym(left) == Sym::Attribute && rooted_at_self(left)) {
          kept_in = left;
        } else {
          return;
        }
        done = true;
        break;
      }
      default:
        return;
    }
    --index;
  }
  if (!done) return;
  a.site.cache_class = "Tensor";
  a.site.written = strip_spaces(text(fn));
  a.site.owner_class = cls.name;
  a.site.method = method_name();
  a.site.loc = loc(call);
  a.site.args = args_of(call);
  resolve_local_aliases(a.site.args, call);
  a.site.guards = current_guards();
  for (const auto& cap : captures_open_)
    if (out_.captures[cap].kind == CaptureSite::Kind::GraphContext) a.site.inside_graph_capture = true;
  a.in_container = in_container;
  if (a.grows.empty()) a.dims = shape_of(call, a.shape);  // a concatenation's shape is its inputs'
  for (const Argument& arg : a.site.args)
    if (arg.keyword == "dtype") {
      const std::string dtype = lower(arg.value.text);
      a.integer_dtype = contains(dtype, "int") || contains(dtype, "long") || contains(dtype, "bool");
    }
  if (!ts_node_is_null(kept_in)) {
    TSNode holder = sym(kept_in) == Sym::Subscript ? field(kept_in, g_.f_value) : kept_in;
    a.member = kept_member(holder);
    if (a.member.empty() || is_pseudo_member(a.member)) return;
    const bool container = in_container || sym(kept_in) == Sym::Subscript || holder.id != kept_in.id;
    a.site.retention = container ? Retention::SelfContainer : Retention::SelfAttribute;
    a.site.retained_as = strip_spaces(text(holder));
    if (sym(kept_in) == Sym::Subscript) {
      TSNode key = field(kept_in, g_.f_subscript);
      if (!ts_node_is_null(key)) a.site.container_key = make_expr(key);
    }
  } else if (!ts_node_is_null(local)) {
    a.local = text(local);
    a.function = function_frame()->node.id;
  }
  cls.raw_allocations.push_back(std::move(a));
}

// The dimensions an allocation's shape spells out (`torch.zeros(L, B, H, T, D)`,
// `torch.empty((L, B, H, T, D))`, `torch.empty(shape)` after `shape = (L, T, H, D)`), each as an
// expression in `out`; -1 when the shape is not written out (`empty_like`, a shape read elsewhere).
int32_t FileWalker::shape_of(TSNode call, std::vector<facts::Expression>& out) {
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return -1;
  std::vector<TSNode> dims;
  bool splat = false;
  for_each_named_child(sub_, args, [&](TSNode a, TSFieldId) {
    if (sym(a) == Sym::KeywordArgument) {
      if (text(field(a, g_.f_name)) == "size") dims.push_back(field(a, g_.f_value));
      return true;
    }
    if (sym(a) == Sym::ListSplat || sym(a) == Sym::DictionarySplat) splat = true;
    dims.push_back(a);
    return true;
  });
  if (splat) return -1;
  TSNode fn = field(call, g_.f_function);
  const std::string_view simple = sym(fn) == Sym::Attribute ? text(field(fn, g_.f_attribute)) : text(fn);
  if (ends_with(simple, "_like")) return -1;
  if (simple == "full" || simple == "new_full") {
    if (dims.size() < 2) return -1;
    dims.resize(1);  // the fill value follows the shape
  }
  if (dims.size() == 1) {
    TSNode only = unwrap_parens(dims.front());
    if (sym(only) == Sym::Identifier) {  // `torch.empty(shape)`: the local's tuple
      // A size named as a shape (`shape`, `cache_size`) may hold any number of dimensions; any
      // other name is one dimension (`torch.zeros(batch_size)`), unless a local tuple says more.
      const bool names_a_shape = contains(lower(text(only)), "shape") || contains(lower(text(only)), "size");
      Frame* func = function_frame();
      const auto found =
          func ? func->latest_binding.find(text(only)) : decltype(func->latest_binding.end()){};
      if (!func || found == func->latest_binding.end() ||
          ts_node_start_byte(found->second) >= ts_node_start_byte(only)) {
        if (names_a_shape) return -1;
        out.push_back(make_expr(dims.front()));
        return 1;
      }
      only = unwrap_parens(found->second);
    }
    if (sym(only) == Sym::Tuple || sym(only) == Sym::List) {
      dims.clear();
      for_each_named_child(sub_, only, [&](TSNode d, TSFieldId) {
        dims.push_back(d);
        return true;
      });
    } else if (sym(only) != Sym::Integer && sym(only) != Sym::Identifier) {
      return -1;  // `torch.empty(x.shape)`, `torch.empty(shape_of(x))`
    }
  }
  // A dimension that is a local (`total_blocks`) reads what the local was assigned from.
  Frame* func = function_frame();
  for (TSNode d : dims) {
    facts::Expression e = make_expr(d);
    TSNode dim = unwrap_parens(d);
    if (func && sym(dim) == Sym::Identifier) {
      const auto found = func->latest_binding.find(text(dim));
      if (found != func->latest_binding.end() &&
          ts_node_start_byte(found->second) < ts_node_start_byte(dim)) {
        const facts::Expression bound = make_expr(found->second);
        e.alias_of = bound.text;
        e.names.insert(e.names.end(), bound.names.begin(), bound.names.end());
      }
    }
    out.push_back(std::move(e));
  }
  return static_cast<int32_t>(dims.size());
}

// The class's kept allocations that its code treats as K/V become cache sites; K and V allocated
// in one method with the same shape are one store.
// The class's methods that return a fresh (K, V) pair: at least two allocations returned by one
// method with one shape, floating point, with attention heads and head_dim among the dimensions
// (`return [(h.new_zeros(shape), h.new_zeros(shape)) for _ in self.layers]`). The pair and its
// geometry are the evidence that they are keys and values; what keeps them is judged by the
// caller's class, which must also use them.
void FileWalker::register_raw_kv_factories(const ClassState& cls) {
  std::map<std::string_view, std::vector<const RawAllocation*>> returned;
  for (const RawAllocation& a : cls.raw_allocations)
    if (a.returned && a.member.empty() && a.grows.empty() && !a.integer_dtype && a.dims >= 3)
      returned[a.site.method].push_back(&a);
  for (const auto& [method, allocations] : returned) {
    if (says_not_kv(method)) continue;
    const RawAllocation* pair = nullptr;
    for (std::size_t i = 0; !pair && i < allocations.size(); ++i)
      for (std::size_t j = i + 1; !pair && j < allocations.size(); ++j) {
        const RawAllocation& a = *allocations[i];
        const RawAllocation& b = *allocations[j];
        const bool same_shape = a.shape.size() == b.shape.size() &&
                                std::equal(a.shape.begin(), a.shape.end(), b.shape.begin(),
                                           [](const facts::Expression& x, const facts::Expression& y) {
                                             return x.text == y.text;
                                           });
        if (a.dims == b.dims && same_shape && heads_by_head_dim(a.shape)) pair = &a;
      }
    if (!pair) continue;
    auto [it, fresh] = raw_kv_factories_.try_emplace(std::string(method));
    if (!fresh && it->second.owner_class != cls.name) it->second.ambiguous = true;
    if (!fresh) continue;
    it->second.owner_class = cls.name;
    it->second.shape = pair->shape;
    it->second.dims = pair->dims;
  }
}

// `self.caches = model._allocate_cache(hidden)` where `_allocate_cache` is a factory of (K, V)
// pairs: the class keeps them, as if it had allocated them at the call.
void FileWalker::keep_factory_returns(ClassState& cls) {
  std::vector<ClassState::RawKvFromCall> later;  // another class's method, maybe a factory below
  for (ClassState::RawKvFromCall& from : cls.raw_from_calls) {
    const auto found = raw_kv_factories_.find(from.called);
    if (found == raw_kv_factories_.end() && !from.on_self) later.push_back(std::move(from));
    if (found == raw_kv_factories_.end() || found->second.ambiguous) continue;
    if (from.on_self && found->second.owner_class != cls.name) continue;
    RawAllocation a;
    a.site = std::move(from.site);
    a.member = from.member;
    a.kv_pair = true;
    a.shape = found->second.shape;
    a.dims = found->second.dims;
    cls.raw_allocations.push_back(std::move(a));
  }
  cls.raw_from_calls = std::move(later);
}

void FileWalker::finish_class_raw_kv(ClassState& cls) {
  register_raw_kv_factories(cls);
  keep_factory_returns(cls);
  if (cls.raw_allocations.empty()) return;
  // What the class's calls hand a method's parameter: the parameter's uses are its uses (a
  // splat of "_views()" hands parameter index + k the element "_views()[k]").
  for (const auto& arg : cls.raw_kv_arguments) {
    if (!arg.splat) {
      merge_raw_kv_uses(cls, arg.method + "(#" + std::to_string(arg.index) + ")", arg.member);
      continue;
    }
    const std::string prefix = arg.method + "(#";
    std::vector<std::string> keys;
    for (const auto& [key, uses] : cls.raw_kv_uses)
      if (starts_with(key, prefix)) keys.push_back(key);
    for (const std::string& key : keys) {
      const std::size_t index = std::stoul(key.substr(prefix.size()));
      if (index >= arg.index)
        merge_raw_kv_uses(cls, key, arg.member + "[" + std::to_string(index - arg.index) + "]");
    }
  }
  // What a method hands out as a view of a kept attribute is that attribute: its uses join.
  for (const auto& [returned, member] : cls.raw_kv_views) merge_raw_kv_uses(cls, returned, member);
  const bool class_says_kv = says_kv(cls.name);
  struct Store {
    RawAllocation* first;
    std::vector<std::string> members;  // the attributes
    std::vector<std::string> shown;    // as a finding names them
  };
  std::vector<Store> stores;
  // A concatenation is kept K/V only where it extends the attribute it is stored back into,
  // and only where that attribute has no allocation of its own (which is the site then).
  auto allocated = [&](const std::string& member) {
    return std::any_of(cls.raw_allocations.begin(), cls.raw_allocations.end(),
                       [&](const RawAllocation& o) { return o.grows.empty() && o.member == member; });
  };
  for (RawAllocation& a : cls.raw_allocations) {
    if (a.grows.empty() || a.member != a.grows || allocated(a.member)) continue;
    auto& uses = cls.raw_kv_uses[a.member];
    const bool written = std::any_of(uses.begin(), uses.end(), [&](const RawKvUse& u) {
      return u.kind == RawKvUse::Kind::Write && u.method == a.site.method;
    });
    if (!written) uses.push_back({RawKvUse::Kind::Write, a.site.loc, "`torch.cat` growth", a.site.method});
  }
  for (RawAllocation& a : cls.raw_allocations) {
    if (a.member.empty()) continue;  // a local never stored on self
    if (!a.grows.empty() && (a.member != a.grows || allocated(a.member))) continue;
    if (a.dims >= 0 && a.dims < 2) continue;
    if (a.integer_dtype) continue;  // lengths, offsets, tables: K/V is floating point
    const std::string_view name = a.key.empty() ? std::string_view(a.member) : std::string_view(a.key);
    if (says_not_kv(name) || (!a.key.empty() && says_not_kv(a.member))) continue;
    // Kept under a key of dicts in a container (`layers["k_ring"]`): the uses under that key
    // when there are any, else those of the container.
    auto found = cls.raw_kv_uses.end();
    if (!a.key.empty()) found = cls.raw_kv_uses.find(a.member + "[\"" + a.key + "\"]");
    // The container's uses stand for an entry only when none is used by its key: beside
    // `L["k_ring"]` handed to attention, `L["norm"]` is not K/V.
    const std::string keyed = a.member + "[\"";
    const bool other_keys_used =
        !a.key.empty() && std::any_of(cls.raw_kv_uses.begin(), cls.raw_kv_uses.end(),
                                      [&](const auto& u) { return starts_with(u.first, keyed); });
    if (found == cls.raw_kv_uses.end() && !other_keys_used) found = cls.raw_kv_uses.find(a.member);
    static const std::vector<RawKvUse> kNoUses;
    const std::vector<RawKvUse>& uses = found == cls.raw_kv_uses.end() ? kNoUses : found->second;
    const RawKvUse* write = nullptr;
    const RawKvUse* read = nullptr;
    const RawKvUse* pass = nullptr;
    for (const RawKvUse& u : uses) {
      const RawKvUse*& first = u.kind == RawKvUse::Kind::Write  ? write
                               : u.kind == RawKvUse::Kind::Read ? read
                                                                : pass;
      if (!first) first = &u;
    }
    const bool named = says_kv(name) || says_kv(a.member) || class_says_kv;
    // No use in the class (a store whose methods hand the tensors out, `ring()`, `kv()`): a
    // name that says K/V and a shape of attention heads by head_dim is evidence enough.
    const bool shaped = (says_kv(name) || says_kv(a.member)) && attention_shaped(a.shape);
    // A (K, V) pair a factory returned, kept here and used here.
    const bool pair_used = a.kv_pair && (write || read || pass);
    if (!read && !(named && (write || pass)) && !shaped && !pair_used) continue;
    facts::RawKv evidence;
    evidence.named_as_kv = named;
    if (write) {
      evidence.written_at = write->loc;
      evidence.written_by = write->what;
    } else if (pass) {
      evidence.written_at = pass->loc;
      evidence.written_by = pass->what;  // "handed to `self.model.step`", "installed as `layer.kv_cache`"
    }
    if (read) {
      evidence.read_at = read->loc;
      evidence.read_by = read->what;
    }
    for (const RawKvUse& u : uses)
      evidence.accesses.push_back({u.kind == RawKvUse::Kind::Write  ? facts::RawKvAccess::Kind::Write
                                   : u.kind == RawKvUse::Kind::Read ? facts::RawKvAccess::Kind::Read
                                                                    : facts::RawKvAccess::Kind::Pass,
                                   u.method, u.loc, u.what});
    evidence.shape = a.shape;
    set_raw_kv_axes(evidence);
    a.site.raw_kv = std::move(evidence);
    // One store: allocated in the same method into the same attribute, or with the same shape
    // (`self.k_cache`, `self.v_cache`), or shaped like the other (`torch.empty_like(self.k_cache)`).
    const std::string shape_text = a.site.args.empty() ? std::string() : a.site.args.front().value.text;
    auto same = std::find_if(stores.begin(), stores.end(), [&](const Store& s) {
      if (s.first->site.method != a.site.method) return false;
      if (std::find(s.members.begin(), s.members.end(), a.member) != s.members.end()) return true;
      if (!a.grows.empty() && !s.first->grows.empty()) return true;  // K and V grown in one step
      if (ends_with(a.site.written, "_like"))
        return std::any_of(s.members.begin(), s.members.end(),
                           [&](const std::string& m) { return shape_text == "self." + m; });
      return s.first->dims == a.dims && !shape_text.empty() &&
             (s.first->site.args.empty() ? std::string() : s.first->site.args.front().value.text) ==
                 shape_text;
    });
    // Shown by the key it is stored under in a container of dicts: `layers["k_ring"]`.
    std::string shown = a.key.empty() ? a.member : a.member + "[\"" + a.key + "\"]";
    if (same == stores.end())
      stores.push_back({&a, {a.member}, {std::move(shown)}});
    else {
      if (std::find(same->members.begin(), same->members.end(), a.member) == same->members.end()) {
        same->members.push_back(a.member);
        auto& accesses = same->first->site.raw_kv->accesses;  // the other attribute's uses too
        accesses.insert(accesses.end(), a.site.raw_kv->accesses.begin(), a.site.raw_kv->accesses.end());
      }
      if (std::find(same->shown.begin(), same->shown.end(), shown) == same->shown.end())
        same->shown.push_back(std::move(shown));
    }
  }
  for (Store& s : stores) {
    CacheSite site = std::move(s.first->site);
    site.raw_kv->members = std::move(s.shown);
    cls.sites.push_back({ClassState::SiteRef::Kind::Cache, out_.cache_sites.size(), site.method});
    out_.cache_sites.push_back(std::move(site));
  }
}

}  // namespace kvlint::python::detail
