// Raw K/V whose evidence is in another class: a class keeps an attention-shaped tensor and hands
// out views of it from a method (an arena's `att_cache_view()`, a slot pool's `rows()`), and
// another class hands that method's return to a call as its attention K/V
// (`att_cache=arena.att_cache_view(b, n)`). Neither class alone says K/V: the owner never
// attends, the user never allocates. The front end records both halves as they are
// (facts::HeldTensorView, facts::KvHandoff); Project::join_raw_kv_handoffs joins them.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {
namespace {

// A keyword that names attention K/V: `att_cache`, `out_att_cache`, `kv_cache`, `k_cache`,
// `past_key_values`; not `cnn_cache`, `hidden_cache` or `mask`.
bool keyword_names_attention_kv(std::string_view keyword) {
  static constexpr std::array<std::string_view, 4> kWhole = {"past_key_values", "past_key_value",
                                                             "layer_past", "past_kv"};
  static constexpr std::array<std::string_view, 11> kKvTokens = {
      "att", "attn", "attention", "kv", "k", "v", "key", "keys", "value", "values", "past"};
  // Most keywords say neither: told apart without a lower-cased copy (this runs on every call).
  if (keyword.find("cache") == std::string_view::npos && keyword.find("past") == std::string_view::npos &&
      keyword.find("Cache") == std::string_view::npos)
    return false;
  const std::string kw = lower(keyword);
  if (std::find(kWhole.begin(), kWhole.end(), kw) != kWhole.end()) return true;
  if (raw_kv_lookalike_name(kw)) return false;
  bool cache = false, kv = false;
  for (std::size_t at = 0; at <= kw.size();) {
    const std::size_t end = std::min(kw.find('_', at), kw.size());
    const std::string_view token = std::string_view(kw).substr(at, end - at);
    if (token == "cache" || token == "caches") cache = true;
    if (std::find(kKvTokens.begin(), kKvTokens.end(), token) != kKvTokens.end()) kv = true;
    at = end + 1;
  }
  return cache && kv;
}

}  // namespace

// `return storage[:, :, :2 * b]` after `storage = torch.zeros(...)` and `self._att = storage`:
// the method hands out a view of what the class keeps, through the local it was allocated into
// (raw_kv.cpp's on_raw_kv_return follows attributes of self, not such a local).
void FileWalker::on_raw_kv_view_return(TSNode node) {
  ClassState* cls = owner_state();
  Frame* func = function_frame();
  if (!cls || !func || cls->is_cache_class || cls->raw_allocations.empty() || func->name != func->method ||
      ts_node_named_child_count(node) == 0)
    return;
  TSNode n = unwrap_parens(named_child(node, 0));
  for (int steps = 0; steps < 16; ++steps) {
    if (sym(n) == Sym::Subscript) {
      n = unwrap_parens(field(n, g_.f_value));
      continue;
    }
    if (sym(n) == Sym::Call) {
      TSNode fn = field(n, g_.f_function);
      if (sym(fn) != Sym::Attribute || !raw_kv_view_call(text(field(fn, g_.f_attribute)))) return;
      n = unwrap_parens(field(fn, g_.f_object));
      continue;
    }
    break;
  }
  if (sym(n) != Sym::Identifier) return;
  const std::string_view local = text(n);
  for (const RawAllocation& a : cls->raw_allocations)
    if (a.function == func->node.id && a.local == local && !a.member.empty()) {
      cls->raw_kv_views.emplace(method_name() + "()", a.member);
      return;
    }
}

// `att_cache=arena.att_cache_view(b, n)`, `att_cache=pool.rows()`: another object's method's
// return handed on as attention K/V.
void FileWalker::on_kv_handoff(TSNode call) {
  ClassState* cls = owner_state();
  Frame* func = function_frame();
  if (!cls || !func || cls->is_cache_class) return;
  if (!has_kv_keyword_text_)
    has_kv_keyword_text_ =
        src_.find("cache") != std::string_view::npos || src_.find("past_k") != std::string_view::npos;
  if (!*has_kv_keyword_text_) return;
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return;
  each_named_child(args, [&](TSNode a) {
    if (sym(a) != Sym::KeywordArgument) return true;
    const std::string_view keyword = text(field(a, g_.f_name));
    if (!keyword_names_attention_kv(keyword)) return true;
    TSNode value = unwrap_parens(field(a, g_.f_value));
    if (sym(value) != Sym::Call) return true;
    TSNode fn = field(value, g_.f_function);
    if (sym(fn) != Sym::Attribute) return true;
    TSNode receiver = unwrap_parens(field(fn, g_.f_object));
    facts::KvHandoff h;
    if (sym(receiver) == Sym::Identifier) {
      const std::string_view name = text(receiver);
      if (name == "self") return true;  // the class's own method: raw_kv.cpp follows it
      if (std::string attribute = self_attribute_alias(name, value); !attribute.empty()) {
        h.receiver = "self." + attribute;
      } else {
        h.receiver = std::string(name);
        // `pool = AttSlotPool(...)`: the class the local was last bound to, when it is built here.
        std::optional<TSNode> bound;
        for (const auto& [bound_name, bound_value] : func->local_values)
          if (bound_name == name && ts_node_start_byte(bound_value) < ts_node_start_byte(value))
            bound = bound_value;
        if (bound && sym(unwrap_parens(*bound)) == Sym::Call) {
          TSNode built = field(unwrap_parens(*bound), g_.f_function);
          if (is_dotted(built) && is_uppercase_name(last_component(built)))
            h.receiver_class = resolve(strip_spaces(text(built)));
        }
      }
    } else if (sym(receiver) == Sym::Attribute && rooted_at_self(receiver) && is_dotted(receiver)) {
      h.receiver = strip_spaces(text(receiver));
    } else {
      return true;
    }
    h.owner_class = cls->name;
    h.method = method_name();
    h.loc = loc(a);
    h.keyword = std::string(keyword);
    h.called = std::string(text(field(fn, g_.f_attribute)));
    out_.kv_handoffs.push_back(std::move(h));
    return true;
  });
}

// The class's kept tensors that finish_class_raw_kv did not judge K/V, handed out as views by a
// method and shaped as attention is (four dimensions or more, heads and positions among them):
// K/V where another class hands that method's return to attention (Project::join_raw_kv_handoffs).
void FileWalker::finish_class_raw_kv_views(ClassState& cls) {
  const std::size_t first = out_.held_tensor_views.size();
  for (const auto& view_of : cls.raw_kv_views) {
    // Not a structured binding: Clang 14 (the sanitizer builds) cannot capture one in a lambda.
    const std::string& returned = view_of.first;
    const std::string& member = view_of.second;
    if (!ends_with(returned, "()")) continue;  // one element of a returned tuple: not followed
    const std::string method = returned.substr(0, returned.size() - 2);
    if (raw_kv_lookalike_name(method) || raw_kv_lookalike_name(member)) continue;
    const auto held =
        std::find_if(cls.raw_allocations.begin(), cls.raw_allocations.end(), [&](const RawAllocation& a) {
          return a.member == member && a.key.empty() && !a.site.raw_kv && !a.integer_dtype &&
                 a.grows.empty() && a.dims >= 4 && raw_kv_heads_and_positions(a.shape);
        });
    if (held == cls.raw_allocations.end()) continue;
    facts::HeldTensorView view{method, held->site};
    facts::RawKv& kv = view.site.raw_kv.emplace();
    kv.members = {member};
    kv.shape = held->shape;
    set_raw_kv_axes(kv);
    out_.held_tensor_views.push_back(std::move(view));
  }
  // raw_kv_views is unordered: the facts come out in source order.
  std::sort(out_.held_tensor_views.begin() + static_cast<std::ptrdiff_t>(first), out_.held_tensor_views.end(),
            [](const facts::HeldTensorView& a, const facts::HeldTensorView& b) {
              return std::tie(a.site.loc.line, a.site.loc.column, a.method) <
                     std::tie(b.site.loc.line, b.site.loc.column, b.method);
            });
}

// A class that keeps what another class's method returns (`self.caches =
// model._allocate_cache(hidden)`) may come before the class whose method returns (K, V) pairs:
// its calls that named no factory when it closed are kept (keep_factory_returns) and judged
// again once the whole file is walked, against every factory the file registered.
void FileWalker::finish_raw_kv_late_factories() {
  for (const auto& owned : classes_) {
    ClassState& cls = *owned;
    const bool now_known =
        std::any_of(cls.raw_from_calls.begin(), cls.raw_from_calls.end(), [&](const auto& from) {
          const auto found = raw_kv_factories_.find(from.called);
          return found != raw_kv_factories_.end() && !found->second.ambiguous;
        });
    if (!now_known) continue;
    cls.raw_allocations.clear();  // judged at the class's close already
    finish_class_raw_kv(cls);
  }
}

}  // namespace kvlint::python::detail
