// The facts IR: the one language-neutral model that every front end fills and
// every rule reads. Front ends know syntax and never rules; rules read only
// these structs (through Project, project.hpp) and never syntax trees.
//
// Conventions: lines and columns are 1-based; columns count bytes. Every
// `text` field is the source text as written (whitespace runs folded to one
// space, truncated to kMaxTextBytes). Names resolved through imports are
// dotted (`transformers.DynamicCache`, `torch.nn.Module`, `.base.Base` for a
// relative import); `simple_name()` gives the last component.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint::facts {

inline constexpr std::size_t kMaxTextBytes = 240;

// A file's path as the user named it, shared: the locations of one file's facts point at one
// immutable copy (a large tree has over a million locations; one string each was a third of
// the facts). Reads as a `const std::string&`; compares and orders by the text.
class FilePath {
 public:
  FilePath() = default;
  FilePath(std::string path)  // NOLINT(google-explicit-constructor): reads as a string
      : text_(path.empty() ? nullptr : std::make_shared<const std::string>(std::move(path))) {}
  FilePath(const char* path) : FilePath(std::string(path)) {}  // NOLINT(google-explicit-constructor)
  explicit FilePath(std::string_view path) : FilePath(std::string(path)) {}
  FilePath& operator=(std::string path) { return *this = FilePath(std::move(path)); }
  FilePath& operator=(const char* path) { return *this = FilePath(std::string(path)); }

  const std::string& str() const { return text_ ? *text_ : empty_text(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return str(); }    // NOLINT(google-explicit-constructor)
  bool empty() const { return !text_; }
  std::size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }

  friend bool operator==(const FilePath& a, const FilePath& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend std::strong_ordering operator<=>(const FilePath& a, const FilePath& b) {
    return a.text_ == b.text_ ? std::strong_ordering::equal : a.str().compare(b.str()) <=> 0;
  }
  friend bool operator==(const FilePath& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const FilePath& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const FilePath& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const FilePath& a, const std::string& b) {
    return a.str().compare(b) <=> 0;
  }

 private:
  static const std::string& empty_text() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const std::string> text_;
};

struct Location {
  FilePath file;  // path as the user named it (relative paths stay relative)
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t end_line = 0;
  uint32_t end_column = 0;
  bool operator==(const Location&) const = default;
};

// A half-open byte range [begin, end) in the file's content, for fixes that rewrite text.
struct ByteSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const ByteSpan&) const = default;
};

// A literal's value when the expression is a plain literal. Exactly these are literals
// (anything else is LiteralKind::None, literal_value empty):
//   - Int / Float: a number token as written (`2048`, `0x800`, `1_024`, `1e-3`, `.5`),
//     optionally with one unary `-` or `+` in front (`-1`, `- 1`, `+2.5`); the value is the
//     token with `-` kept and `+` dropped ("-1", "2.5"). Not: `--1`, `-x`, `1 + 1`, imaginary
//     numbers (`2j`).
//   - String: one string (`"a"`, `'a'`, `r"\d"`, `u"a"`, triple-quoted) or an implicit
//     concatenation of such strings (`"a" "b"` -> "ab"); the value is decoded unless raw:
//     `\n`, `\t`, `\r`, `\\`, `\'`, `\"` and line continuations are applied, other escapes
//     (`\x41`, `\u00e9`) kept as written. Not: f-strings, nor a concatenation with any f-string
//     part; not bytes (`b"a"`).
//   - Bool: `True` / `False` (value "True" / "False"); NoneValue: `None` (value "None").
// Parentheses around a literal, or around the number of a signed one, are transparent:
// `(2048)`, `((-1))`, `-(1)`, `("a" "b")`. Tuples, lists, `...` and names are never literals.
enum class LiteralKind { None, Int, Float, String, Bool, NoneValue };

struct Expression {
  std::string text;                         // as written
  LiteralKind literal = LiteralKind::None;  // kind when the whole expression is a literal (see above)
  std::string literal_value;                // the literal's value (see LiteralKind)
  // Dotted names read in it: "self.config.sliding_window", "max_model_len"; `getattr(obj, "x", ...)`
  // and `hasattr(obj, "x")` on a dotted object also read "obj.x".
  std::vector<std::string> names;
  Location loc;
  // A cache constructor's argument that is a bare local assigned exactly once before it in
  // the same function (`cfg = self._llm_config`): that assignment's text. `names` then
  // includes the names the assignment reads.
  std::string alias_of;

  bool operator==(const Expression&) const = default;
};

struct Argument {
  std::string keyword;    // empty for a positional argument
  uint32_t position = 0;  // 0-based index among positionals (ignored for keywords)
  Expression value;
};

// A condition that must hold (or must not, when `negated`) for a site to run.
struct Guard {
  enum class Origin {
    If,           // enclosing if / elif (elif carries the negations of earlier arms too)
    Else,         // else arm: `negated` is true
    EarlyReturn,  // `if cond: return ...` earlier in the same function
    Ternary,      // `a if cond else b`
    Loop,         // enclosing `for` / `while` (text is the loop header)
    CallerGuard,  // the enclosing method is called, within its class, only under this guard
    With,         // enclosing `with` other than a graph capture (text is the header)
  };
  Origin origin = Origin::If;
  bool negated = false;
  Expression condition;  // for Loop: the iterable / while condition
  // What the condition reads, so rules can tell owner state from call arguments.
  // "async_chunk" for `self.async_chunk`, "cfg.streaming" for `self.cfg.streaming`
  std::vector<std::string> self_attributes;
  std::vector<std::string> parameters;  // parameters of the enclosing function that it reads
  std::vector<std::string> calls;       // dotted callees: "torch.cuda.is_available"
  // Parameters and `self.` attributes (dotted as read: "caches", "self.decoder._graph_wrapper")
  // that the condition, where the guard holds, needs to be set (not None): `caches is not None`,
  // `caches` or `"k" in caches` as the condition; `caches is None` when negated (else arm, early
  // return); through `and` / `or` / `not`, and `getattr(obj, "x", None)` for `obj.x`.
  std::vector<std::string> given;

  bool operator==(const Guard&) const = default;
};

// A fact's guards, innermost first, read as a sequence of `const Guard&`. Each guard is held
// shared and immutable, so facts under the same conditions can hold one copy of each (facts::compact
// makes a file's equal guards one: every call of a method under one `if` copied that guard, the
// largest part of a large tree's facts). Built like a vector; a guard is never changed in place.
class Guards {
  using Shared = std::shared_ptr<const Guard>;
  using List = std::vector<Shared>;

 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Guard;
    using difference_type = std::ptrdiff_t;
    using pointer = const Guard*;
    using reference = const Guard&;
    const_iterator() = default;
    explicit const_iterator(List::const_iterator at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return at_->get(); }
    const_iterator& operator++() {
      ++at_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++at_;
      return before;
    }
    bool operator==(const const_iterator&) const = default;

   private:
    List::const_iterator at_;
  };

  Guards() = default;
  Guards(std::vector<Guard> guards) {  // NOLINT(google-explicit-constructor): built like a vector
    list_.reserve(guards.size());
    for (auto& g : guards) push_back(std::move(g));
  }
  Guards(std::initializer_list<Guard> guards) : Guards(std::vector<Guard>(guards)) {}

  void push_back(Guard g) { list_.push_back(std::make_shared<const Guard>(std::move(g))); }
  void push_back(std::shared_ptr<const Guard> g) { list_.push_back(std::move(g)); }
  // Appends `more`'s guards, shared.
  void append(const Guards& more) { list_.insert(list_.end(), more.list_.begin(), more.list_.end()); }
  void clear() { list_.clear(); }

  bool empty() const { return list_.empty(); }
  std::size_t size() const { return list_.size(); }
  const Guard& operator[](std::size_t i) const { return *list_[i]; }
  const Guard& front() const { return *list_.front(); }
  const Guard& back() const { return *list_.back(); }
  const_iterator begin() const { return const_iterator(list_.begin()); }
  const_iterator end() const { return const_iterator(list_.end()); }

  // For facts::compact: the shared guards themselves, to make equal ones one.
  List& shared() { return list_; }

  friend bool operator==(const Guards& a, const Guards& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  List list_;
};

// The library whose tensor type a K/V allocation makes: LibTorch's (and Python's torch, the
// default), ggml's (`ggml_new_tensor_3d`) or ONNX Runtime's (`Ort::Value::CreateTensor`, a
// session's outputs), so that a finding says what was seen and advises for that code.
enum class TensorLibrary { LibTorch, Ggml, OnnxRuntime };

// How a constructed object is kept.
enum class Retention {
  SelfAttribute,  // self.x = Cache(...)
  SelfContainer,  // self._d[key] = Cache(...), self._l.append(Cache(...)), setdefault(key, Cache(...))
  Returned,       // returned (or yielded) from the function, directly or through a local
  PassedToCall,   // handed to another call as an argument (e.g. past_key_values=Cache(...))
  Local,          // only bound to a local or not bound at all
  ModuleGlobal,   // assigned at module level
};

// A use of raw K/V in one method of the class that keeps it: the first write, read and hand-on
// in each method, so rules can tell which code (a captured call, say) writes or holds it.
struct RawKvAccess {
  enum class Kind { Write, Read, Pass };
  Kind kind = Kind::Write;
  std::string method;  // the owner class's method the use sits in
  Location loc;
  std::string by;  // "slice assignment", "`copy_`", "F.scaled_dot_product_attention", "handed to `kernel`"
};

// Why a kept tensor is read as attention K/V although no cache class built it (a raw pool, a
// ring, per-request prefix K/V): what the code does with it. K and V kept apart in one method
// with the same shape (`self.k_cache`, `self.v_cache`) are one store.
struct RawKv {
  std::vector<std::string>
      members;  // what keeps it: "k_cache", "v_cache", `layers["k_ring"]` (a key in dicts kept there)
  // Written as K/V in a step (slice assignment, copy_, cat growth), else handed on as K/V (to a
  // call, or installed as another object's `kv_cache`).
  std::optional<Location> written_at;
  std::string written_by;           // "slice assignment", "`index_copy_`", "handed to `self.model.step`"
  std::optional<Location> read_at;  // read as K/V by attention
  std::string read_by;              // "F.scaled_dot_product_attention", "q @ k.transpose"
  bool named_as_kv = false;         // its name says K/V (supporting evidence only)
  // The allocation's shape as written, one expression per dimension (empty when it is not
  // spelled out), and which dimensions are the positions (a length bound) and the rows (slots,
  // batch, requests), by the names they read; none when no dimension says so.
  std::vector<Expression> shape;
  std::optional<uint32_t> positions_axis;
  std::optional<uint32_t> rows_axis;
  // Every method's first write, read and hand-on of it (written_at / read_at are the first).
  std::vector<RawKvAccess> accesses;
};

// More of one K/V seen elsewhere than at its allocation, so a finding can point at it: where its
// memory lives (the ggml context a tensor factory is handed, the member holding that context, where
// the context is created and sized and its backend buffer allocated) and writes into it from
// another class's methods (`ggml_cpy(ctx, x, ggml_view_3d(ctx, layers[i].attention.k_cache, ...))`).
struct KvEvidence {
  enum class Kind {
    ArenaMember,    // the member that holds the context: `unique_ggml_context_t ctx_kv;`
    ArenaCreated,   // `ctx_kv(make_unique_ggml_context(size, ...))`, `ctx_.ctx_kv = ggml_init(...)`
    ArenaSized,     // the local the creation's size reads: `const size_t ctx_kv_size = 2 * layers * ...`
    ArenaBuffer,    // `buf_kv = ggml_backend_alloc_ctx_tensors(ctx_kv.get(), backend)`
    WrittenByOther  // a write through a view in a method of another class
  };
  Kind kind = Kind::ArenaMember;
  Location loc;
  std::string owner_class;  // the class holding the member / whose method writes
  std::string member;       // "ctx_kv", "buf_kv"; the written member for WrittenByOther
  std::string method;       // the function it is in ("__init__", "load_prefix_cache"); none for ArenaMember
  std::string by;           // the call: "make_unique_ggml_context", "`ggml_cpy` into a view"
  std::string detail;       // the size as written: "ctx_kv_size + 1 * MB"
};

struct CacheSite {
  std::string cache_class;  // canonical simple name of the class constructed: "DynamicCache"
  std::string written;      // callee as written: "DC", "cu.DynamicCache"
  std::string owner_class;  // enclosing class; empty for module-level code
  std::string method;       // enclosing function; empty at class/module level
  Location loc;             // the constructor call
  std::vector<Argument> args;
  Retention retention = Retention::Local;
  std::string retained_as;                  // "self.cache", "self._caches", "past_key_values"
  std::optional<Expression> container_key;  // key for SelfContainer via subscript: `request_id`
  Guards guards;                            // innermost first
  // Built only when the caller asks for one: the site sits under a guard on a
  // parameter (`use_cache`, `past_key_values is None`) and the object is handed
  // back (returned, stored into a returned output, or stored into an object the
  // caller passed in: `model_kwargs["past_key_values"] = ...`). The finding belongs to
  // the callers that ask (KV102), not to this class.
  bool caller_requested = false;
  bool inside_graph_capture = false;  // lexically inside `with torch.cuda.graph(...)`
  // Nothing is constructed here: a value made elsewhere is stored into the container
  // (C++ `caches_.push_back(slice)`, `caches_[id] = std::move(state)`), and cache_class is the
  // stored element's type as declared (`Tensor`, `int8_t*`).
  bool stores_existing = false;
  // Set for raw K/V: a tensor allocation (`torch.zeros(...)`, cache_class "Tensor") that the
  // class keeps and treats as keys or values; what was seen.
  std::optional<RawKv> raw_kv;
  TensorLibrary tensor_library = TensorLibrary::LibTorch;  // of a tensor allocation (cache_class "Tensor")
  std::vector<KvEvidence> evidence;  // C++ ggml K/V: its context and writes from other classes
};

// A tensor a class allocates and keeps, shaped as attention is (four dimensions or more, one of
// them heads), that the class hands out as a view from a method (`def att_cache_view(self, ...):
// return storage[:, :, :2 * b]` after `self._att = storage`) and does not itself use as K/V. Not
// a cache site: it is K/V only where another class hands that method's return to attention as
// its K/V (KvHandoff), which the project joins (Project::join_raw_kv_handoffs).
struct HeldTensorView {
  std::string method;  // the class's method whose return is a view of it: "att_cache_view"
  // The allocation as a cache site would be (cache_class "Tensor", owner_class, retention), with
  // raw_kv holding its members, shape and axes and no uses yet.
  CacheSite site;
};

// `att_cache=arena.att_cache_view(b, n)`: the return of another object's method handed to a call
// under a keyword that names attention K/V (`att_cache`, `kv_cache`, `past_key_values`).
struct KvHandoff {
  std::string owner_class;  // the class whose method makes the call
  std::string method;       // the method it sits in
  Location loc;             // the keyword argument
  std::string keyword;      // "att_cache"
  // The object whose method is called, as written, except that a local bound to a plain
  // `self.<attr>` reads as that attribute ("self.arena" for `arena = self.arena`).
  std::string receiver;
  std::string called;  // the method: "att_cache_view"
  // The receiver's class where the method says it: a local bound to `Cls(...)`, resolved through
  // imports. Empty otherwise (Project reads the class of `self.<attr>` from the owner's facts).
  std::string receiver_class;
};

// A call that makes transformers build a cache behind it.
struct ImplicitCacheSite {
  std::string owner_class;
  std::string method;
  Location loc;        // the call
  std::string callee;  // as written: "self.lm", "self.model.generate"
  enum class Reason { NoPastKeyValues, PastKeyValuesStartsNone };
  Reason reason = Reason::NoPastKeyValues;
  std::optional<Location> none_origin;  // where the past_key_values variable was set to None
  Guards guards;
  // What is called, so rules can tell something that can be a transformers model from
  // any function that takes a `use_cache` keyword.
  enum class CalleeRoot {
    Self,       // `self.lm(...)`, `self.lm.generate(...)`, `self.memcache_get(...)`, `self(...)`;
                // also a local bound to an attribute of self (`lm = self.language_model`)
    Local,      // a local bound to something else: `model = AutoModel.from_pretrained(p)`
    Parameter,  // a parameter of the enclosing function: `def run(model): model.generate(...)`
    Other,      // a module-level name or function: `generate_text(...)`
  };
  CalleeRoot callee_root = CalleeRoot::Other;
  // Components after the root: ["lm", "generate"] for `self.lm.generate`, ["memcache_get"] for
  // `self.memcache_get`, [] for `self(...)` and `model(...)`, ["generate"] for `model.generate`.
  std::vector<std::string> callee_path;
  // Local: the value it was last bound to before the call, and the resolved class that value
  // constructs or loads (`transformers.AutoModel` for `AutoModel.from_pretrained(p)`), when any.
  std::optional<Expression> callee_origin;
  std::string callee_origin_class;
  // `use_cache=True` (and `past_key_values`, when given) came through a `**` splat of a dict
  // literal, `dict(...)`, or a local dict built or updated before the call.
  bool through_kwargs_dict = false;
  // How the cache that comes back with the result is kept.
  enum class Kept {
    Stored,    // stored on self, directly or through a local dict that is stored on self
    Reused,    // passed back as `past_key_values` by a call in a loop around it (a decode loop)
    Returned,  // handed back to the caller (the result, or its `past_key_values`)
    UsedOnce,  // read by one later call outside any loop, then dropped (a prefill + one step)
    Dropped,   // never read: the result is discarded or only its logits / hidden states are used
    Unknown,   // passed on in a way the front end does not follow
  };
  Kept kept = Kept::Unknown;
  std::optional<Location> kept_at;  // the store, the reusing call, the return
};

struct CaptureSite {
  enum class Kind { GraphContext, CaptureBegin, MakeGraphedCallables, StreamBeginCapture };
  Kind kind = Kind::GraphContext;
  std::string owner_class;
  std::string method;
  Location loc;
  std::string written;  // "torch.cuda.graph", "self.graph.capture_begin"
  Guards guards;
  std::vector<std::string>
      captured_calls;  // callees inside the capture body (`self.model`, `self.forward_step`)
  // A call in the capture body passes `use_cache=True`: the captured code itself
  // builds or extends a transformers cache.
  bool captured_writes_kv = false;
};

// Rows driver of a spec as written, normalized from any configured spelling
// (`RowDriver.FIXED`, `Fixed(n, because=...)`, `MaxNumSeqs()`).
enum class RowsDriver { Absent, Fixed, MaxNumSeqs, Other };

// One spec as written: `spec_from_hf_config(cfg, name=..., ...)` or `ModelLocalKVSpec(...)`.
struct SpecFact {
  Location loc;
  std::string constructor;           // canonical: "spec_from_hf_config" or "ModelLocalKVSpec"
  std::optional<Expression> config;  // first positional of spec_from_hf_config
  // Canonical field names (renamed protocol spellings already mapped):
  // name, layers, kv_heads, head_dim, dtype, physical_capacity_positions,
  // capacity_source, scope, rows, rows_fixed, rows_reason, allocation_note.
  std::vector<Argument> fields;
  // `**common` / `*args` in the call, as written: any field may be set through them, so a
  // field missing from `fields` is unknown rather than absent (see may_set).
  std::vector<Expression> unpacked;
  RowsDriver rows = RowsDriver::Absent;  // Absent also when `rows` may come from `unpacked`
  Guards guards;                         // guards inside the declaring method, early returns included
  const Argument* field(std::string_view canonical_name) const {
    for (const auto& f : fields)
      if (f.keyword == canonical_name) return &f;
    return nullptr;
  }
  // The field is written, or may be, through an unpacked argument the front end cannot see into.
  bool may_set(std::string_view canonical_name) const { return field(canonical_name) || !unpacked.empty(); }
};

// `return self.gen.model_local_kv_specs()`, `specs += self.x.model_local_kv_specs()`,
// `collect_model_local_kv_specs(self.x)` inside a declaration.
struct Forward {
  std::string via_attribute;  // "gen" (the first attribute after self)
  Location loc;
  Guards guards;
};

// `name = value` inside a declaration method, so a spec field written as a local
// (`physical_capacity_positions=physical`) can be read through it.
struct LocalAssignment {
  std::string name;
  Expression value;
  Location loc;
};

// A `model_local_kv_specs` method (or its configured name).
struct Declaration {
  std::string owner_class;
  Location loc;  // the def
  std::vector<SpecFact> specs;
  std::vector<Forward> forwards;
  bool returns_empty_somewhere = false;            // `return []` / `return ()` on some path
  std::vector<LocalAssignment> local_assignments;  // in source order (the method itself, not helpers)
};

// self.<attribute> = <Class>(...) anywhere in a class: the class holds one.
struct OwnershipHop {
  std::string owner_class;
  std::string attribute;     // "gen"
  std::string target_class;  // resolved dotted name of the constructed class
  Location loc;
  bool in_container = false;  // nn.ModuleList([...]) / list / dict of them
};

// Facts about how a method treats its batch: evidence that the owner serves
// one request at a time, or per request.
struct BatchEvidence {
  enum class Kind {
    TakesFirstElement,  // `runtime_additional_information[0]` on a parameter
    AssertsBatchOne,    // `assert x.shape[0] == 1`, `assert batch_size == 1`, raise unless 1
    IteratesRequests,   // `for req in requests:` / over a batch parameter
  };
  Kind kind = Kind::TakesFirstElement;
  std::string owner_class;
  std::string method;
  Location loc;
  Expression expression;
};

struct ProtocolUse {
  enum class Kind {
    CapacitySourceBranch,  // capacity_source read in a condition or comparison
    ScopeDerivedRows,      // rows / multiplicity computed from scope
    Collector,             // a function walking named_modules() for declarations
  };
  Kind kind = Kind::CapacitySourceBranch;
  std::string owner_class;
  std::string function;
  Location loc;
  Expression expression;
  // Collector only.
  bool calls_unwrap = false;
  bool reads_runnable = false;  // `.runnable` / getattr(x, "runnable")
  bool walks_named_modules = false;
};

// `self.<attribute> = <value>` inside a class's methods (every plain assignment,
// in source order), so rules can see what a guard on `self.x` reads through
// `x`: `self.use_cuda_graph = not config.enforce_eager`.
struct AttributeAssignment {
  std::string owner_class;
  std::string method;     // the method it sits in ("__init__")
  std::string attribute;  // "use_cuda_graph" (first component after self)
  Expression value;       // the right-hand side as written, with the names it reads
  Location loc;           // the assignment statement
  // The class its annotation names (`self.stream: DACStreamState | None = None`), resolved as
  // written; empty without one.
  std::string annotated_class;
};

// `<object>.<attribute> = self` inside a class's method: the class hands itself to another
// object, which then holds it (`decoder._graph_wrapper = self` in a graph wrapper's
// `__init__`, where `decoder` is a parameter; `self.decoder._runner = self`).
struct ReverseAssignment {
  std::string owner_class;  // the class that hands itself over
  std::string method;
  std::string object;     // the receiving object as written: "decoder", "self.decoder"
  std::string attribute;  // "_graph_wrapper"
  Location loc;           // the assignment statement
};

// `Cls(...)` / `Cls.factory(...)` called inside a function (a class's method or a
// module-level function), with the guards it runs under (caller guards within the
// class included), so rules can see a gate the holder puts around building a class:
// `if enforce_eager: return` before `self.wrapper = GraphWrapper(...)`.
struct Construction {
  std::string owner_class;  // empty in a module-level function
  std::string method;
  std::string target_class;  // resolved dotted name, as OwnershipHop::target_class
  Location loc;              // the call
  Guards guards;             // innermost first
  // The class method called (`capture` for `Graph.capture(self, buf)`); empty for `Cls(...)`.
  std::string factory;
  // The arguments, so rules can see what the constructor is told (`enabled=not enforce_eager`)
  // and what a parameter receives (`self` for `model`). String literals are left out.
  std::vector<Argument> args;
};

struct Constant {           // NAME = <literal> at module or class level
  std::string owner_class;  // empty at module level
  std::string name;
  Expression value;
};

struct BaseClass {
  std::string written;   // "nn.Module"
  std::string resolved;  // "torch.nn.Module" (through imports); equal to written when not imported
};

// One call of another object's method as written (`self.decoder.decode(x, caches=states)`):
// what it passes and the conditions it runs under, so rules can tell which keywords a holder
// passes under which gates.
struct CallPass {
  Location loc;
  uint32_t positionals = 0;           // positional arguments before any `*` splat
  std::vector<std::string> keywords;  // keywords passed, those given a literal `None` left out
  bool unpacked = false;              // a `*args` / `**kwargs` splat: it may pass any parameter
  Guards guards;                      // if / else / early return / ternary, innermost first
};
inline constexpr std::size_t kMaxCallPasses = 8;

// A call made in a function's body (nested functions included), so rules can
// follow captured code into what it runs. Recorded for callees rooted at `self`,
// `cls` or a parameter, bare names, and `Class.method`; any callee when the call
// passes `use_cache=True`.
struct CallFact {
  // As written ("self.decoder._decode_suffix", "model.step", "helper"), except that a local
  // bound to a plain `self.<attr>` reads as that attribute: `decoder = self.decoder` then
  // `decoder.decode(...)` is "self.decoder.decode".
  std::string callee;
  Location loc;            // the first such call (the first that writes KV, when one does)
  bool writes_kv = false;  // some call to it passes `use_cache=True` or `past_key_values=self...`
  // For a call into another object (`self.decoder.enable_graphs()`, `model.step()`): the
  // conditions the first call runs under (if / else / early return / ternary, innermost
  // first); empty when some call to it runs unconditionally. The same for a bare function
  // name (`capture_decode_step(self, bs)`, a module-level function).
  Guards guards;
  // For a bare function name: the first call's arguments (string literals left out), so a
  // parameter's class can come from what the caller passes (`self` for `model`).
  std::vector<Argument> args;
  // C++: every call to it that touches a K/V member only reads it (`k_cache_.sum()`,
  // `torch::matmul(q, k_cache_)`); a read in captured code still keeps the cache resident.
  bool kv_read_only = false;
  // For a call into another object (`self.decoder.decode`, `model.step`, `self.decoder(...)`,
  // `decoder.decode` after `decoder = self.decoder`; Python): each call of it in the function,
  // in source order, at most kMaxCallPasses.
  std::vector<CallPass> passes;
};

struct MethodFact {
  std::string name;
  Location loc;
  std::vector<std::string> parameters;  // without self
  // Parallel to `parameters`: the class an annotation names, resolved through imports
  // (`model: "Talker"`, `decoder: Decoder | None` -> "Decoder"); empty when none.
  std::vector<std::string> parameter_types;
  std::vector<CallFact> calls;
};

struct ClassFact {
  std::string name;
  Location loc;
  std::vector<BaseClass> bases;
  std::vector<MethodFact> methods;
  // Where a fix adds a method: the indentation of the class body as written ("    "), and
  // the byte just after the body's last statement line (its newline included).
  std::string body_indent;
  uint32_t body_end_byte = 0;
  // C++: the qualified name in dotted form ("ns.Decoder"); empty for Python. One C++ class is
  // one class across translation units: Project joins the entries with equal qualified names.
  std::string qualified_name;
  // C++: the class is defined in another file (a header) and this file defines methods of it
  // out of line (`Decoder::Decoder(int64_t layers) { ... }`). This entry carries those methods
  // and the bases as the definition spells them; the file's sites, hops and assignments name it
  // as their owner_class. Project joins it to the definition (see Project::parts).
  bool out_of_line = false;
};

struct ImportFact {
  std::string local_name;  // "DC", "cu", "*" for a star import
  std::string target;      // "transformers.DynamicCache", "transformers.cache_utils"
  Location loc;
};

// A `# kvlint: ignore[CODES] reason` / `# kvlint: ignore-file[CODES] reason` comment. Any
// other `# kvlint:` comment (no brackets, `[]`, an unclosed `[`, an unknown directive) is
// kept with `malformed` set: it suppresses nothing, and the engine reports it (KV904).
struct Suppression {
  Location loc;                    // the comment
  bool file_level = false;         // ignore-file[...]
  std::vector<std::string> codes;  // codes or prefixes as written; empty exactly when malformed
  std::string reason;              // trimmed text after the bracket; empty when none
  uint32_t applies_to_line =
      0;  // the line it covers: its own line when the comment trails code, else the next code line
  std::string malformed;  // why it is not a valid suppression; empty when it is one
  // For fixes: the comment; each code as written (parallel to `codes`); and what removing the
  // whole comment removes: its line, newline included, when the comment is alone on it, else
  // the comment and the blanks before it.
  ByteSpan span;
  std::vector<ByteSpan> code_spans;
  ByteSpan removal;
};

struct ParseProblem {
  Location loc;
  std::string message;  // "syntax error", "missing ')'"
};

// The language a file is written in, set by its front end. The facts' own spelling is
// Python's (`self.x`, `__init__`, dotted names); rules word findings in the file's language
// through rules/common/spelling.hpp.
enum class Language { Python, Cpp };

struct FileFacts {
  std::string path;
  Language language = Language::Python;
  std::string
      module_name;  // dotted module path relative to the project root when known ("pkg.models.decoder")
  std::vector<ImportFact> imports;
  std::vector<ClassFact> classes;
  std::vector<MethodFact> functions;  // module-level functions
  std::vector<CacheSite> cache_sites;
  std::vector<HeldTensorView> held_tensor_views;
  std::vector<KvHandoff> kv_handoffs;
  std::vector<ImplicitCacheSite> implicit_caches;
  std::vector<CaptureSite> captures;
  std::vector<Declaration> declarations;
  std::vector<OwnershipHop> hops;
  std::vector<BatchEvidence> batch_evidence;
  std::vector<ProtocolUse> protocol_uses;
  std::vector<Constant> constants;
  std::vector<Suppression> suppressions;
  std::vector<AttributeAssignment> attribute_assignments;
  std::vector<ReverseAssignment> reverse_assignments;
  std::vector<Construction> constructions;
  std::vector<ParseProblem> parse_problems;
  // Where a fix adds an import: the byte after the line of the last module-level import,
  // else 0 (the top of the file).
  uint32_t import_insert_byte = 0;
};

inline std::string_view simple_name(std::string_view dotted) {
  auto dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

// What comes before the simple name, without its dot: "pkg.mod" for "pkg.mod.Cls", "" for "Cls".
inline std::string_view dotted_prefix(std::string_view dotted) {
  std::string_view prefix = dotted.substr(0, dotted.size() - simple_name(dotted).size());
  if (prefix.ends_with('.')) prefix.remove_suffix(1);
  return prefix;
}

}  // namespace kvlint::facts
