// The Python front end's walk over one file, and the per-file state its extractors share.
// Private to analyzers/python/.
//
// One iterative walk (walker.cpp) visits every node once, never by recursion, and dispatches
// by node kind to the extractors of each fact family. The extractors are member functions of
// FileWalker, grouped by family, one file per family (the C++ front end, analyzers/cpp/, follows
// the same file names):
//   classes.cpp       classes, bases, methods, imports and name resolution, members and
//                     constants, constructions, ownership hops, declaration forwards
//   cache_sites.cpp   cache constructions, how each is kept (retention), where a call's cache
//                     goes (kept)
//   calls.cpp         call facts, `use_cache=True` calls that build an implicit cache, cache
//                     keywords, what a callee is rooted at
//   declarations.cpp  model_local_kv_specs() declarations, spec fields, rows drivers, batch
//                     evidence, protocol uses (collectors, scope-derived rows)
//   guards.cpp        the guard stack, conditions, early returns, caller guards
//   captures.cpp      CUDA graph captures
//   expressions.cpp   syntax -> facts::Expression / facts::Argument
//   suppressions.cpp  `# kvlint:` comments
// They are members rather than separate classes because they lean on each other at every
// step: a cache site needs the guards, the retention walk, the call's arguments and the
// enclosing class; a declaration needs the same. One class keeps those calls direct and the
// behaviour exactly that of the single walk it was split from; the shared state is in one
// place below.
//
// Besides the explicit stack of open nodes, three context stacks are driven by the walk:
// scope frames (class / function), guards (lazy references to condition nodes, materialized
// only when a fact is emitted) and open graph captures. Work that needs the whole class
// (caller guards, declaration helpers, `self.x = None` in __init__) is finished when the
// class's node closes. Strings are string_views into the source until a fact is emitted.
#pragma once

#include <tree_sitter/api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"
#include "analyzers/python/syntax.hpp"
#include "analyzers/python/text.hpp"
#include "analyzers/python/text_scan.hpp"

namespace kvlint::python::detail {

using facts::Argument;
using facts::CacheSite;
using facts::CaptureSite;
using facts::Expression;
using facts::Guard;
using facts::Location;
using facts::Retention;

inline bool is_conditional_origin(Guard::Origin o) {
  return o == Guard::Origin::If || o == Guard::Origin::Else || o == Guard::Origin::EarlyReturn ||
         o == Guard::Origin::Ternary;
}

// A guard on the stack: the condition node, materialized into a Guard only
// when a fact that needs it is emitted.
struct GuardRef {
  Guard::Origin origin = Guard::Origin::If;
  bool negated = false;
  TSNode condition{};
  int32_t params_index = -1;    // parameters of the function the guard sits in
  uint32_t function_depth = 0;  // function frames open when it was pushed
};

// raw_kv.cpp's readings of names and shapes, shared with raw_kv_views.cpp: a name of a look-alike
// (mask, conv, rotary, hidden state), a call that takes a view, a shape with heads and positions
// dimensions, and the rows and positions axes of a raw K/V's shape.
bool raw_kv_lookalike_name(std::string_view name);
bool raw_kv_view_call(std::string_view simple);
bool raw_kv_heads_and_positions(const std::vector<facts::Expression>& shape);
void set_raw_kv_axes(facts::RawKv& kv);

struct ClassState {
  std::string name;
  // The class is itself a cache (`class PairedCache(Cache)`): the caches it
  // builds are its own structure, and the site that counts is its constructor.
  bool is_cache_class = false;
  struct SiteRef {
    enum class Kind { Cache, Implicit, Capture, Construction } kind;
    std::size_t index;
    std::string method;
  };
  std::vector<SiteRef> sites;
  // `self.m(...)` calls made inside the class, by callee method name.
  struct CallerInfo {
    bool any_unguarded = false;
    std::vector<std::vector<GuardRef>> guard_sets;
  };
  std::unordered_map<std::string_view, CallerInfo> self_calls;
  std::unordered_map<std::string_view, Location> none_attributes;  // self.x = None in __init__
  std::unordered_set<std::string> cache_attributes;                // self.x = <cache>(...)
  struct PendingImplicit {
    facts::ImplicitCacheSite site;
    std::string attribute;
    TSNode call{};
  };
  std::vector<PendingImplicit> pending_implicit;
  // Method definitions and `self.m(...)` call nodes, to see whether an attribute is
  // assigned before every call that passes it.
  std::unordered_map<std::string_view, TSNode> method_nodes;
  std::vector<std::pair<std::string_view, TSNode>> self_call_nodes;
  // Declarations and what their helpers build.
  std::vector<facts::Declaration> declarations;
  struct HelperCall {
    std::size_t declaration;
    std::string helper;
    facts::Guards guards;
  };
  std::vector<HelperCall> helper_calls;
  std::unordered_map<std::string, std::vector<facts::SpecFact>> helper_specs;
  std::unordered_map<std::string, std::vector<facts::Forward>> helper_forwards;
  std::optional<std::size_t> active_declaration;
  // Raw K/V (raw_kv.cpp): the class's tensor allocations kept on self, or bound to a local that
  // may be stored there later, and the uses of its attributes, by attribute.
  struct RawAllocation {
    CacheSite site;                  // cache_class "Tensor"; retention once kept
    std::string member;              // the attribute of self keeping it; empty while only a local
    std::string key;                 // the dict key or keyword it is stored under (`k_ring=`)
    std::string_view local;          // the local it is bound to, until stored
    const void* function = nullptr;  // that local's function node
    bool in_container = false;
    bool integer_dtype = false;  // `dtype=torch.long`, `torch.int32`, `torch.bool`
    int32_t dims = -1;           // dimensions its shape spells out; -1 unknown
    std::vector<Expression> shape;
    // No allocation of its own: `torch.cat` of what this attribute keeps and the step's K/V
    // (`key = torch.cat([prev_key, key], 2)` after `prev_key, _ = self.key_values[i]`).
    std::string grows;
    bool returned = false;  // handed back by its method (`return [(k, v) for ...]`): a factory's
    // Kept from another method's return (`self.caches = model._allocate_cache(h)`) where that
    // method returns a (K, V) pair: two allocations of one attention shape (heads by head_dim).
    bool kv_pair = false;
  };
  std::vector<RawAllocation> raw_allocations;
  // `self.caches = model._allocate_cache(hidden)`: what a call returns is kept on self; judged at
  // the class's close against the factories known then (this class's, and earlier classes').
  struct RawKvFromCall {
    std::string member;    // "caches"
    std::string called;    // the method's simple name: "_allocate_cache"
    bool on_self = false;  // `self._allocate_cache(...)`: this class's method
    CacheSite site;        // cache_class "Tensor", written as the call, at the assignment
  };
  std::vector<RawKvFromCall> raw_from_calls;
  struct RawKvUse {
    enum class Kind { Write, Read, Pass } kind;
    Location loc;
    std::string what;
    std::string method;       // the class's method it sits in
    bool in_capture = false;  // inside `with torch.cuda.graph(...)`
  };
  std::unordered_map<std::string, std::vector<RawKvUse>> raw_kv_uses;
  // Methods that return a view of a kept attribute (`def _kv_views(self): return [(buf[i, 0],
  // buf[i, 1]) for i in ...]`), by what kept_member calls the return: "_kv_views()", or
  // "_views()[1]" for the second element of a returned tuple. The uses of what they return are
  // uses of it.
  std::unordered_map<std::string, std::string> raw_kv_views;
  // What the class's own calls hand its methods' parameters (`self._forward(*views, n)` after
  // `views = self._views(b, n)`): the uses of parameter `index` of `method` (kept_member's
  // "_forward(#1)") are uses of `member`; a splat of a returned tuple spreads its elements over
  // the parameters from `index` on.
  struct RawKvArgument {
    std::string method;
    std::size_t index = 0;
    std::string member;
    bool splat = false;
  };
  std::vector<RawKvArgument> raw_kv_arguments;
};

struct Frame {
  bool is_class = false;
  TSNode node{};
  std::string_view name;
  int32_t class_state = -1;  // owner class (for a function: the class of its method)
  std::string_view method;   // the class's method this frame sits in; the function itself at module level
  int32_t params_index = -1;
  // The MethodFact this frame's calls go to: an index into its class's methods, or
  // into FileFacts::functions when `method_in_class` is false; -1 for a class frame.
  int32_t method_fact = -1;
  bool method_in_class = false;
  bool is_declaration = false;  // inside the declaration method
  TSNode module_walk_call{};    // a .named_modules() / .modules() call in this function
  bool has_module_walk = false;
  bool walks_named_modules = false;
  std::vector<std::pair<std::string_view, TSNode>> none_locals;  // `x = None`
  // `x = <expr>` in source order, for reading a cache argument through one local.
  std::vector<std::pair<std::string_view, TSNode>> local_values;
  // The function's assignments and `x.update(...)` calls walked so far, in source order
  // (nested defs and classes left out: they have frames of their own), recorded by the walk
  // itself (note_dict_write) so a `**name` splat reads them without walking the body again.
  std::vector<TSNode> dict_writes;
  // The latest value bound to each local (`x = <expr>`, a loop over something kept on self), as
  // the walk passes it: raw_kv.cpp reads a local back to the attribute it came from.
  std::unordered_map<std::string_view, TSNode> latest_binding;
  // `mel, cache = self._views(b, n)`: the local, the call and the element it takes.
  std::unordered_map<std::string_view, std::pair<TSNode, uint32_t>> unpacked_from_self_call;
};

// One open node on the walk.
struct Open {
  TSNode node{};
  Sym sym = Sym::Other;
  TSFieldId field = 0;       // read only below the parents of children_fields_read (walker.cpp)
  uint16_t named_index = 0;  // index among the parent's named children
  uint16_t named_seen = 0;
  uint32_t guards_pushed = 0;
  bool pops_frame = false;
  bool pops_capture = false;
  bool descend = true;
  int32_t graph_capture = -1;  // with_statement that opens a graph capture: index in captures
};

constexpr std::size_t kMaxParseProblems = 20;
constexpr std::size_t kMaxNames = 64;
constexpr std::size_t kMaxNameWalkNodes = 4096;
constexpr std::size_t kMaxCallsPerFunction = 256;

struct SvHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// ts_node_child_by_field_id walks a node's children (hundreds of instructions a call), and the
// families ask the same node for the same field again and again (a call's function: on_call,
// record_call, cache_class_of_call, on_construction, ...). A direct-mapped memo of the last
// answer per slot, keyed by the whole node (its subtree, tree and position), so a hit is the
// answer the tree-sitter call gives: the tree does not change while a file is walked.
class FieldMemo {
 public:
  TSNode child(TSNode n, TSFieldId id) {
    const auto hash = (reinterpret_cast<std::uintptr_t>(n.id) >> 4) ^ (std::uintptr_t{id} * 0x9E3779B1u);
    Entry& e = entries_[hash & (kSlots - 1)];
    if (e.field != id || e.node.id != n.id || e.node.tree != n.tree || e.node.context[0] != n.context[0] ||
        e.node.context[1] != n.context[1] || e.node.context[2] != n.context[2] ||
        e.node.context[3] != n.context[3])
      e = {n, id, ts_node_child_by_field_id(n, id)};
    return e.child;
  }

 private:
  struct Entry {
    TSNode node{};
    TSFieldId field = 0;  // no field has id 0: an empty slot matches nothing
    TSNode child{};
  };
  static constexpr std::size_t kSlots = 1024;
  std::vector<Entry> entries_ = std::vector<Entry>(kSlots);
};

// Everything about one file's walk.
class FileWalker {
 public:
  FileWalker(const Grammar& grammar, const facts::Vocabulary& vocabulary,
             const std::unordered_set<std::string_view>& cache_names, std::string_view path,
             std::string_view source, TSNode root, facts::FileFacts& out, uint64_t step_budget,
             bool has_raw_kv_text)
      : step_budget_(step_budget),
        g_(grammar),
        vocab_(vocabulary),
        cache_names_(cache_names),
        path_(path),
        src_(source),
        out_(out),
        aux_(root),
        sub_(root),
        has_raw_kv_text_(has_raw_kv_text) {
    use_cache_at_ = find_all(src_, kUseCache);
    past_key_values_at_ = find_all(src_, kPastKeyValues);
    has_capacity_source_ = contains(src_, "capacity_source");
    has_scope_ = contains(src_, "scope");
  }

  // Steps spent so far: syntax nodes visited by any walk plus bytes scanned by text tests.
  uint64_t steps() const { return steps_; }
  void run(TSNode root);

 private:
  // ---- shared helpers (syntax, scopes) -------------------------------------------
  void spend(uint64_t steps) const { steps_ += steps; }

  std::string_view text(TSNode n) const {
    if (ts_node_is_null(n)) return {};
    const uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    if (start >= src_.size() || end <= start) return {};
    return src_.substr(start, std::min<std::size_t>(end, src_.size()) - start);
  }
  Sym sym(TSNode n) const { return g_.sym(n); }
  TSNode field(TSNode n, TSFieldId id) const {
    return ts_node_is_null(n) ? TSNode{} : field_memo_.child(n, id);
  }
  TSNode named_child(TSNode n, uint32_t i) const {
    return ts_node_is_null(n) ? TSNode{} : ts_node_named_child(n, i);
  }
  Location loc(TSNode n) const {
    if (ts_node_is_null(n)) return Location{path_, 0, 0, 0, 0};
    const TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
    return Location{path_, s.row + 1, s.column + 1, e.row + 1, e.column + 1};
  }
  template <typename F>
  void for_each_named_child(Cursor& c, TSNode n, F&& f) {
    if (ts_node_is_null(n)) return;
    c.reset(n);
    if (!ts_tree_cursor_goto_first_child(c.get())) return;
    do {
      spend(1);
      TSNode child = c.node();
      if (ts_node_is_named(child) && sym(child) != Sym::Comment)
        if (!f(child, ts_tree_cursor_current_field_id(c.get()))) return;
    } while (ts_tree_cursor_goto_next_sibling(c.get()));
  }
  // The named children of `n` in order, comments included (as ts_node_named_child counts
  // them), in one cursor pass: ts_node_named_child(n, i) walks i siblings, so a loop over
  // indices is quadratic in the child count. `f` returns false to stop. Spends no steps.
  template <typename F>
  void each_named_child(TSNode n, F&& f) const {
    if (ts_node_is_null(n)) return;
    Cursor c(n);
    if (!ts_tree_cursor_goto_first_child(c.get())) return;
    do {
      const TSNode child = c.node();
      if (ts_node_is_named(child) && !f(child)) return;
    } while (ts_tree_cursor_goto_next_sibling(c.get()));
  }
  TSNode unwrap_parens(TSNode n) const {
    while (!ts_node_is_null(n) && sym(n) == Sym::ParenthesizedExpression && ts_node_named_child_count(n) == 1)
      n = named_child(n, 0);
    return n;
  }
  // identifier or attribute chain of identifiers (`a.b.c`).
  bool is_dotted(TSNode n) const {
    while (!ts_node_is_null(n) && sym(n) == Sym::Attribute) {
      spend(1);
      n = field(n, g_.f_object);
    }
    return !ts_node_is_null(n) && sym(n) == Sym::Identifier;
  }
  std::string_view last_component(TSNode n) const {
    if (sym(n) == Sym::Attribute) return text(field(n, g_.f_attribute));
    return text(n);
  }
  bool is_self_attribute(TSNode n) const {  // self.x (exactly)
    if (sym(n) != Sym::Attribute) return false;
    TSNode obj = field(n, g_.f_object);
    return sym(obj) == Sym::Identifier && text(obj) == "self";
  }
  // `self.a.b` / `self.a[k]`: the expression is rooted at self.
  bool rooted_at_self(TSNode n) const {
    for (;;) {
      spend(1);
      const Sym s = sym(n);
      if (s == Sym::Identifier) return text(n) == "self";
      if (s == Sym::Attribute)
        n = field(n, g_.f_object);
      else if (s == Sym::Subscript)
        n = field(n, g_.f_value);
      else
        return false;
      if (ts_node_is_null(n)) return false;
    }
  }

  bool is_cache_simple(std::string_view s) const { return cache_names_.count(s) != 0; }

  Frame* function_frame() {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      if (!it->is_class) return &*it;
    return nullptr;
  }
  Frame* innermost_frame() { return frames_.empty() ? nullptr : &frames_.back(); }
  ClassState* owner_state() {
    Frame* f = innermost_frame();
    return f && f->class_state >= 0 ? classes_[static_cast<std::size_t>(f->class_state)].get() : nullptr;
  }

  // Every node of `function` in source order, nested defs and classes left out; `visit`
  // returns false to skip a node's children.
  template <typename F>
  void walk_function_body(TSNode function, F&& visit) {
    Cursor c(function);
    std::vector<TSNode> stack{function};
    while (!stack.empty()) {
      TSNode n = stack.back();
      stack.pop_back();
      if (!visit(n)) continue;
      const std::size_t first = stack.size();
      for_each_named_child(c, n, [&](TSNode child, TSFieldId) {
        if (sym(child) != Sym::FunctionDef && sym(child) != Sym::ClassDef) stack.push_back(child);
        return true;
      });
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
    }
  }

  // ---- walker.cpp: traversal, frames, dispatch -------------------------------------
  void stop_over_budget(TSNode at);
  std::string owner_name();
  std::string method_name();
  const std::vector<std::string_view>* current_params();
  bool is_param(std::string_view name);
  bool enter_at(Cursor& cursor);
  bool over_budget(const Cursor& cursor);
  void enter(TSNode node, TSFieldId field_id);
  void leave();
  void parse_problem(TSNode node, bool missing);
  void close_frame();
  void close_class(ClassState& cls);
  void finish();
  void on_call(TSNode call);
  void note_dict_write(TSNode node);

  // ---- expressions.cpp -------------------------------------------------------------
  // `written_callees`, when given, gets every dotted callee as written (spaces stripped,
  // unresolved, not deduplicated) from the same walk, so a guard needs no second walk for them.
  void collect_names(TSNode root, std::vector<std::string>& names, std::vector<std::string>* calls,
                     std::vector<std::string>* written_callees = nullptr);
  // `getattr(obj, "name", ...)` / `hasattr(obj, "name")` on a dotted object: "obj.name"; else empty.
  std::string attribute_read_by_getattr(TSNode call);
  void fill_literal(TSNode n, Expression& e);
  bool is_imaginary(TSNode number) const;
  bool decode_string(TSNode n, std::string& out) const;
  Expression make_expr(TSNode n, std::vector<std::string>* calls = nullptr,
                       std::vector<std::string>* written_callees = nullptr);
  std::vector<Argument> args_of(TSNode call);
  TSNode first_positional(TSNode call);

  // ---- guards.cpp ------------------------------------------------------------------
  void push_guard(Open& owner, Guard::Origin origin, bool negated, TSNode condition);
  std::vector<GuardRef> active_guard_refs(bool conditional_only = false) const;
  Guard materialize(const GuardRef& ref, std::optional<Guard::Origin> origin_override = std::nullopt);
  // The same, made once per guard and shared by every fact under it (a method's calls under one
  // `if`): materializing depends only on the ref and the imports seen so far.
  std::shared_ptr<const Guard> shared_guard(const GuardRef& ref,
                                            std::optional<Guard::Origin> origin_override = std::nullopt);
  void collect_call_texts(TSNode root, std::vector<std::string>& out);
  // Guard::given: what `condition` evaluating to `holds` needs set.
  using Params = std::vector<std::string_view>;
  std::vector<std::string> given_when(TSNode condition, bool holds, const Params* params, int depth);
  std::string given_operand(TSNode n, const Params* params);
  std::string dereferenced_parameter(TSNode n, const Params* params);
  facts::Guards current_guards();
  void apply_context_guards();
  bool is_early_return(TSNode if_node);
  void on_self_call(TSNode call, std::string_view method);
  void apply_caller_guards(const ClassState& cls);

  // ---- classes.cpp -----------------------------------------------------------------
  std::string_view resolved_simple(std::string_view written) const;
  std::string resolve(std::string_view written_raw) const;
  std::string_view strip_view(TSNode n) const;
  void add_import(std::string local, std::string target, TSNode at);
  void on_import(TSNode node);
  void on_class(TSNode node);
  void fill_body_position(TSNode class_node, facts::ClassFact& cls) const;
  uint32_t after_line_end(uint32_t byte) const;
  uint32_t module_header_end(TSNode root) const;
  void fill_suppression_spans(TSNode comment, facts::Suppression& s) const;
  void on_function(TSNode node);
  std::string annotated_class(TSNode type);
  void on_construction(TSNode call);
  void on_forward_candidate(TSNode call, TSNode fn, std::string_view simple);
  std::string local_self_attribute(std::string_view name, uint32_t before);
  std::string self_attribute_of(TSNode value);
  void on_assignment(TSNode node);
  std::string constructed_class(TSNode call);
  void on_hop_candidate(TSNode left, TSNode right);

  // ---- cache_sites.cpp -------------------------------------------------------------
  // How the object built by the call at open_[index] is kept.
  struct RetentionInfo {
    Retention kind = Retention::Local;
    std::string retained_as;
    std::optional<Expression> key;
    bool nested_in_cache = false;
    bool assigned_to_param = false;
  };
  using Kept = facts::ImplicitCacheSite::Kept;
  static int kept_rank(Kept k) {  // the strongest way wins when a cache goes several ways
    switch (k) {
      case Kept::Stored:
        return 5;
      case Kept::Reused:
        return 4;
      case Kept::Returned:
        return 3;
      case Kept::Unknown:
        return 2;
      case Kept::UsedOnce:
        return 1;
      case Kept::Dropped:
        return 0;
    }
    return 0;
  }
  struct KeptResult {
    Kept kept = Kept::Dropped;
    std::optional<Location> at;
    void merge(Kept k, TSNode where, const FileWalker& w) {
      if (kept_rank(k) <= kept_rank(kept)) return;
      kept = k;
      at = w.loc(where);
    }
    void merge(const KeptResult& other) {
      if (kept_rank(other.kept) > kept_rank(kept)) *this = other;
    }
  };
  std::string_view cache_class_of_call(TSNode call) const;
  bool returned_from(std::size_t index) const;
  RetentionInfo retention_of(std::size_t index);
  void assignment_retention(TSNode assignment, bool in_container, RetentionInfo& r);
  void follow_local(TSNode function, std::string_view name, uint32_t after, RetentionInfo& r);
  void on_cache_call(TSNode call, TSNode fn, std::string_view cache_class);
  bool inside_loop(TSNode node) const;
  KeptResult follow_value(TSNode node, bool is_cache, int depth);
  void follow_targets(TSNode left, TSNode assignment, bool is_cache, int depth, KeptResult& r);
  KeptResult follow_name(std::string_view name, uint32_t after, bool is_cache, int depth);
  void resolve_local_aliases(std::vector<Argument>& args, TSNode call);
  void finish_class_cache_sites(const ClassState& cls);

  // ---- calls.cpp -------------------------------------------------------------------
  // The keywords a call receives for `use_cache` and `past_key_values`: written in the
  // call, or through a `**` splat of a dict the walk can read.
  struct CacheKeywords {
    std::optional<TSNode> use_cache;
    std::optional<TSNode> past_key_values;
    bool through_dict = false;
    bool unread_splat = false;  // a splat whose keys are not all known
  };
  facts::MethodFact* current_method_fact();
  bool writes_kv_call(TSNode call);
  void record_call(TSNode call, TSNode fn, bool writes_kv);
  facts::CallPass call_pass(TSNode call);
  std::string self_attribute_alias(std::string_view local, TSNode at);
  bool assigns_attribute(TSNode stmt, std::string_view attribute, int depth = 0);
  bool dominated_by_assignment(TSNode node, std::string_view attribute);
  TSNode enclosing_function(TSNode node) const;
  bool assigned_before(const ClassState& cls, TSNode call, std::string_view attribute, int depth);
  void note_cache_keyword(CacheKeywords& k, std::string_view name, TSNode value, bool from_dict);
  bool read_dict_keys(TSNode value, CacheKeywords& k);
  void read_local_dict(std::string_view name, uint32_t before, CacheKeywords& k);
  CacheKeywords cache_keywords(TSNode call);
  void describe_callee(TSNode call, TSNode fn, facts::ImplicitCacheSite& site);
  void on_implicit_candidate(TSNode call, TSNode fn);
  void emit_implicit(facts::ImplicitCacheSite site);
  bool may_be_none(TSNode value);
  void finish_pending_implicit_sites(ClassState& cls);

  // ---- declarations.cpp ------------------------------------------------------------
  void finish_collector(const Frame& f);
  void on_spec_call(TSNode call, const std::string& ctor);
  facts::RowsDriver rows_driver_of(TSNode call, facts::SpecFact& spec);
  void on_return(TSNode node);
  void add_evidence(facts::BatchEvidence::Kind kind, TSNode node);
  void on_subscript(TSNode node);
  bool is_batch_one_comparison(TSNode cond, std::string_view op_wanted);
  void on_assert(TSNode node);
  void on_if(TSNode node);
  void on_for(TSNode node);
  void add_protocol_use(facts::ProtocolUse::Kind kind, TSNode at, TSNode expression);
  void on_attribute(TSNode node);
  bool reads_scope(TSNode n) const;
  bool compares_scope(TSNode n) const;
  bool mentions_multiplicity(TSNode n) const;
  bool in_rows_context() const;
  void on_scope_candidate(TSNode node);
  void finish_class_declarations(ClassState& cls);
  void note_module_walk(Frame& func, TSNode call, std::string_view simple);

  // ---- captures.cpp ----------------------------------------------------------------
  CaptureSite make_capture(CaptureSite::Kind kind, TSNode call, TSNode fn);
  std::size_t emit_capture(CaptureSite site);
  void on_capture_begin(TSNode call, TSNode fn);
  void on_with(TSNode node);
  void note_captured_call(TSNode fn, bool writes_kv);
  void on_capture_candidate(TSNode call, TSNode fn, bool is_capture_begin, std::string_view resolved);

  // ---- raw_kv.cpp ------------------------------------------------------------------
  using RawAllocation = ClassState::RawAllocation;
  using RawKvUse = ClassState::RawKvUse;
  bool is_tensor_allocation(TSNode fn, std::string_view simple) const;
  bool is_partial_allocator(TSNode fn);
  void note_raw_kv_arguments(ClassState& cls, TSNode args, std::string_view method);
  void merge_raw_kv_uses(ClassState& cls, const std::string& from, const std::string& into);
  std::string kept_member(TSNode n, int depth = 0, TSNode comprehension = {});
  TSNode comprehension_source(TSNode comprehension, std::string_view name);
  void on_raw_kv_return(TSNode node);
  void note_raw_kv_use(ClassState& cls, std::string member, RawKvUse::Kind kind, TSNode at, std::string what);
  void on_raw_kv_call(TSNode call, TSNode fn);
  bool attention_kv_argument(TSNode a, uint32_t position) const;
  void on_raw_kv_matmul(TSNode binary);
  void on_raw_kv_assignment(TSNode node);
  void promote_raw_local(Frame& func, ClassState& cls, std::string_view local, TSNode target,
                         bool in_container);
  bool stores_raw_local(const Frame& func, const ClassState& cls, TSNode value);
  void note_loop_binding(TSNode for_node);
  void on_tensor_allocation(ClassState& cls, TSNode call, TSNode fn, std::string grows = {});
  std::string grown_member(TSNode call);
  int32_t shape_of(TSNode call, std::vector<facts::Expression>& out);
  void register_raw_kv_factories(const ClassState& cls);
  void keep_factory_returns(ClassState& cls);
  void finish_class_raw_kv(ClassState& cls);

  // ---- raw_kv_views.cpp ------------------------------------------------------------
  void on_raw_kv_view_return(TSNode node);
  void on_kv_handoff(TSNode call);
  void finish_class_raw_kv_views(ClassState& cls);
  void finish_raw_kv_late_factories();

  // ---- suppressions.cpp ------------------------------------------------------------
  void on_comment(TSNode node);
  uint32_t applies_to_line(TSNode comment);

  // ---- per-file state ----------------------------------------------------------------
  mutable uint64_t steps_ = 0;
  const uint64_t step_budget_;
  const Grammar& g_;
  const facts::Vocabulary& vocab_;
  const std::unordered_set<std::string_view>& cache_names_;
  facts::FilePath path_;  // shared by every location of the file
  std::string_view src_;
  facts::FileFacts& out_;
  Cursor aux_;                               // child enumeration for one node at a time
  Cursor sub_;                               // child enumeration inside expression sub-walks
  mutable FieldMemo field_memo_;             // field()'s answers (a cache: no observable state)
  mutable std::deque<std::string> scratch_;  // owned storage for whitespace-stripped names

  bool has_errors_ = false;
  // The last scan of applies_to_line: from the comment at byte `from`, the next code line
  // (`line`, 0 for none) starts at byte `found_at`. Every comment in between is on a line that
  // scan passed over, so it has the same answer: a run of comment lines is scanned once, not
  // once per comment (10,000 stacked `# kvlint: ignore-file[...]` lines were quadratic).
  struct NextCodeLine {
    std::size_t from = 0, found_at = 0;
    uint32_t line = 0;
  } next_code_line_;
  // Where the file's text has `use_cache` and `past_key_values`, in order: a call whose
  // argument list spans neither passes neither keyword, so the keyword readers skip it without
  // walking its arguments; a file with none skips them all.
  static constexpr std::string_view kUseCache = "use_cache";
  static constexpr std::string_view kPastKeyValues = "past_key_values";
  std::vector<uint32_t> use_cache_at_, past_key_values_at_;
  // Some occurrence in `at` (of a needle `length` bytes long) lies wholly within `node`.
  static bool occurs_within(const std::vector<uint32_t>& at, std::size_t length, TSNode node) {
    const uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    const auto it = std::lower_bound(at.begin(), at.end(), start);
    return it != at.end() && *it + length <= end;
  }
  bool has_capacity_source_ = false;
  bool has_raw_kv_text_ = false;  // python::may_hold_raw_kv: raw K/V is recorded only then
  std::optional<bool> has_kv_keyword_text_;  // raw_kv_views.cpp: `..._cache=` somewhere in the file
  bool has_scope_ = false;
  std::size_t problem_count_ = 0;
  std::optional<Location> more_problems_loc_;

  std::vector<Open> open_;
  std::vector<Frame> frames_;
  std::vector<GuardRef> guards_;
  // shared_guard's guards: condition node, origin, negated, parameters, imports seen.
  std::map<std::tuple<const void*, Guard::Origin, bool, int32_t, std::size_t>, std::shared_ptr<const Guard>>
      shared_guards_;
  std::vector<std::size_t> captures_open_;
  std::vector<std::unique_ptr<ClassState>> classes_;
  std::vector<std::size_t> class_fact_index_;
  std::vector<std::vector<std::string_view>> params_;
  uint32_t function_depth_ = 0;
  std::unordered_map<std::string, std::string, SvHash, std::equal_to<>> aliases_;
  std::vector<std::string> star_targets_;
  uint32_t last_scope_use_end_ = 0;
  // Methods that return freshly allocated (K, V) pairs, by simple name, from the classes closed
  // so far (raw_kv.cpp): `BreezeDepthDecoder._allocate_cache`. A name two classes return
  // different shapes under is left out (`ambiguous`).
  struct RawKvFactory {
    std::string owner_class;
    std::vector<Expression> shape;
    int32_t dims = -1;
    bool ambiguous = false;
  };
  std::unordered_map<std::string, RawKvFactory> raw_kv_factories_;
};

}  // namespace kvlint::python::detail
