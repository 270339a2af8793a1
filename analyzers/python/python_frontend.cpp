// Python front end: one iterative walk over the tree-sitter-python syntax tree
// per file, emitting the facts IR (analyzers/facts/facts.hpp).
//
// The walk keeps an explicit stack of open nodes (never recursion), plus three
// context stacks driven by it: scope frames (class / function), guards (lazy
// references to condition nodes, materialized only when a fact is emitted) and
// open graph captures. Work that needs the whole class (caller guards,
// declaration helpers, `self.x = None` in __init__) is finished when the
// class's node closes. Strings are string_views into the source until a fact
// is emitted.
#include "analyzers/python/python_frontend.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

extern "C" const TSLanguage* tree_sitter_python();

namespace kvlint::python {
namespace {

using facts::Argument;
using facts::CacheSite;
using facts::CaptureSite;
using facts::Expression;
using facts::Guard;
using facts::Location;
using facts::Retention;

struct ParserDeleter {
  void operator()(TSParser* parser) const { ts_parser_delete(parser); }
};
struct TreeDeleter {
  void operator()(TSTree* tree) const { ts_tree_delete(tree); }
};
using ParserPtr = std::unique_ptr<TSParser, ParserDeleter>;
using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;

// RAII TSTreeCursor; reset() re-roots it, so one cursor serves many sub-walks.
class Cursor {
 public:
  explicit Cursor(TSNode node) : cursor_(ts_tree_cursor_new(node)) {}
  ~Cursor() { ts_tree_cursor_delete(&cursor_); }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  TSTreeCursor* get() { return &cursor_; }
  void reset(TSNode node) { ts_tree_cursor_reset(&cursor_, node); }
  TSNode node() const { return ts_tree_cursor_current_node(&cursor_); }

 private:
  TSTreeCursor cursor_;
};

// Node kinds the walk cares about; everything else is Other.
enum class Sym : uint8_t {
  Other,
  Error,
  Module,
  Block,
  ClassDef,
  FunctionDef,
  Call,
  Attribute,
  Identifier,
  Subscript,
  ArgumentList,
  KeywordArgument,
  ListSplat,
  DictionarySplat,
  Assignment,
  AugmentedAssignment,
  ExpressionStatement,
  ReturnStatement,
  Yield,
  IfStatement,
  ElifClause,
  ElseClause,
  ForStatement,
  WhileStatement,
  WithStatement,
  WithClause,
  WithItem,
  AsPattern,
  ConditionalExpression,
  ParenthesizedExpression,
  BooleanOperator,
  NotOperator,
  ComparisonOperator,
  BinaryOperator,
  UnaryOperator,
  Await,
  List,
  Tuple,
  Set,
  Dictionary,
  Pair,
  ExpressionList,
  ListComprehension,
  SetComprehension,
  DictComprehension,
  GeneratorExpression,
  AssertStatement,
  RaiseStatement,
  ImportStatement,
  ImportFromStatement,
  FutureImport,
  AliasedImport,
  DottedName,
  RelativeImport,
  WildcardImport,
  Comment,
  Integer,
  Float,
  String,
  ConcatenatedString,
  True,
  False,
  None,
  Parameters,
  DefaultParameter,
  TypedParameter,
  TypedDefaultParameter,
  ListSplatPattern,
  DictionarySplatPattern,
  MatchStatement,
  Lambda,
  Decorator,
};

// Symbol and field ids of the grammar, resolved once per analyzer.
struct Grammar {
  const TSLanguage* language = tree_sitter_python();
  std::vector<Sym> by_symbol;
  TSFieldId f_alias, f_alternative, f_arguments, f_attribute, f_body, f_condition, f_consequence,
      f_definition, f_function, f_left, f_module_name, f_name, f_object, f_operator, f_parameters, f_right,
      f_subject, f_subscript, f_superclasses, f_value, f_key, f_argument, f_type;

  Grammar() {
    static constexpr std::pair<const char*, Sym> kNames[] = {
        {"ERROR", Sym::Error},
        {"module", Sym::Module},
        {"block", Sym::Block},
        {"class_definition", Sym::ClassDef},
        {"function_definition", Sym::FunctionDef},
        {"call", Sym::Call},
        {"attribute", Sym::Attribute},
        {"identifier", Sym::Identifier},
        {"subscript", Sym::Subscript},
        {"argument_list", Sym::ArgumentList},
        {"keyword_argument", Sym::KeywordArgument},
        {"list_splat", Sym::ListSplat},
        {"dictionary_splat", Sym::DictionarySplat},
        {"assignment", Sym::Assignment},
        {"augmented_assignment", Sym::AugmentedAssignment},
        {"expression_statement", Sym::ExpressionStatement},
        {"return_statement", Sym::ReturnStatement},
        {"yield", Sym::Yield},
        {"if_statement", Sym::IfStatement},
        {"elif_clause", Sym::ElifClause},
        {"else_clause", Sym::ElseClause},
        {"for_statement", Sym::ForStatement},
        {"while_statement", Sym::WhileStatement},
        {"with_statement", Sym::WithStatement},
        {"with_clause", Sym::WithClause},
        {"with_item", Sym::WithItem},
        {"as_pattern", Sym::AsPattern},
        {"conditional_expression", Sym::ConditionalExpression},
        {"parenthesized_expression", Sym::ParenthesizedExpression},
        {"boolean_operator", Sym::BooleanOperator},
        {"not_operator", Sym::NotOperator},
        {"comparison_operator", Sym::ComparisonOperator},
        {"binary_operator", Sym::BinaryOperator},
        {"unary_operator", Sym::UnaryOperator},
        {"await", Sym::Await},
        {"list", Sym::List},
        {"tuple", Sym::Tuple},
        {"set", Sym::Set},
        {"dictionary", Sym::Dictionary},
        {"pair", Sym::Pair},
        {"expression_list", Sym::ExpressionList},
        {"list_comprehension", Sym::ListComprehension},
        {"set_comprehension", Sym::SetComprehension},
        {"dictionary_comprehension", Sym::DictComprehension},
        {"generator_expression", Sym::GeneratorExpression},
        {"assert_statement", Sym::AssertStatement},
        {"raise_statement", Sym::RaiseStatement},
        {"import_statement", Sym::ImportStatement},
        {"import_from_statement", Sym::ImportFromStatement},
        {"future_import_statement", Sym::FutureImport},
        {"aliased_import", Sym::AliasedImport},
        {"dotted_name", Sym::DottedName},
        {"relative_import", Sym::RelativeImport},
        {"wildcard_import", Sym::WildcardImport},
        {"comment", Sym::Comment},
        {"integer", Sym::Integer},
        {"float", Sym::Float},
        {"string", Sym::String},
        {"concatenated_string", Sym::ConcatenatedString},
        {"true", Sym::True},
        {"false", Sym::False},
        {"none", Sym::None},
        {"parameters", Sym::Parameters},
        {"default_parameter", Sym::DefaultParameter},
        {"typed_parameter", Sym::TypedParameter},
        {"typed_default_parameter", Sym::TypedDefaultParameter},
        {"list_splat_pattern", Sym::ListSplatPattern},
        {"dictionary_splat_pattern", Sym::DictionarySplatPattern},
        {"match_statement", Sym::MatchStatement},
        {"lambda", Sym::Lambda},
        {"decorator", Sym::Decorator},
    };
    // Aliases can give several symbol ids one name, so map every id by name.
    const uint32_t count = ts_language_symbol_count(language);
    by_symbol.assign(count, Sym::Other);
    for (uint32_t id = 0; id < count; ++id) {
      const auto symbol = static_cast<TSSymbol>(id);
      if (ts_language_symbol_type(language, symbol) != TSSymbolTypeRegular) continue;
      const char* name = ts_language_symbol_name(language, symbol);
      for (const auto& [n, s] : kNames)
        if (std::strcmp(n, name) == 0) by_symbol[id] = s;
    }
    auto field = [this](const char* name) {
      return ts_language_field_id_for_name(language, name, static_cast<uint32_t>(std::strlen(name)));
    };
    f_alias = field("alias");
    f_alternative = field("alternative");
    f_arguments = field("arguments");
    f_attribute = field("attribute");
    f_body = field("body");
    f_condition = field("condition");
    f_consequence = field("consequence");
    f_definition = field("definition");
    f_function = field("function");
    f_left = field("left");
    f_module_name = field("module_name");
    f_name = field("name");
    f_object = field("object");
    f_operator = field("operator");
    f_parameters = field("parameters");
    f_right = field("right");
    f_subject = field("subject");
    f_subscript = field("subscript");
    f_superclasses = field("superclasses");
    f_value = field("value");
    f_key = field("key");
    f_argument = field("argument");
    f_type = field("type");
  }
  Sym sym(TSNode node) const {
    if (ts_node_is_null(node)) return Sym::Other;
    const TSSymbol s = ts_node_symbol(node);
    if (s == static_cast<TSSymbol>(-1)) return Sym::Error;  // ts_builtin_sym_error
    return s < by_symbol.size() ? by_symbol[s] : Sym::Other;
  }
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}
// `word` occurs in `s` with identifier boundaries on both sides.
bool contains_word(std::string_view s, std::string_view word) {
  if (word.empty()) return false;
  for (auto pos = s.find(word); pos != std::string_view::npos; pos = s.find(word, pos + 1)) {
    const bool left_ok = pos == 0 || !is_ident_char(s[pos - 1]);
    const auto end = pos + word.size();
    if (left_ok && (end >= s.size() || !is_ident_char(s[end]))) return true;
  }
  return false;
}
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Source text with whitespace runs folded to one space, cut to kMaxTextBytes
// on a UTF-8 boundary. Stops reading once the limit is reached.
std::string fold_text(std::string_view s) {
  std::string out;
  out.reserve(std::min(s.size(), facts::kMaxTextBytes));
  bool pending_space = false;
  for (char c : s) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
    if (out.size() >= facts::kMaxTextBytes) break;
  }
  if (out.size() > facts::kMaxTextBytes) out.resize(facts::kMaxTextBytes);
  // Drop a multi-byte character cut in half.
  std::size_t lead = out.size();
  while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead > 0 && static_cast<unsigned char>(out[lead - 1]) >= 0xC0) {
    const auto b = static_cast<unsigned char>(out[lead - 1]);
    const std::size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    if (out.size() - (lead - 1) < need) out.resize(lead - 1);
  }
  return out;
}
// A dotted name without the whitespace Python allows inside it (`a . b`).
std::string strip_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (!is_space(c)) out.push_back(c);
  return out;
}

std::string decode_string_body(std::string_view body, bool raw) {
  if (raw) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out.push_back(body[i]);
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case '\n':
        break;  // line continuation
      default:
        out.push_back('\\');
        out.push_back(e);
    }
  }
  return out;
}

bool is_conditional_origin(Guard::Origin o) {
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
    std::vector<Guard> guards;
  };
  std::vector<HelperCall> helper_calls;
  std::unordered_map<std::string, std::vector<facts::SpecFact>> helper_specs;
  std::unordered_map<std::string, std::vector<facts::Forward>> helper_forwards;
  std::optional<std::size_t> active_declaration;
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
};

// One open node on the walk.
struct Open {
  TSNode node{};
  Sym sym = Sym::Other;
  TSFieldId field = 0;
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

// Everything about one file's walk.
class FileWalker {
 public:
  FileWalker(const Grammar& grammar, const facts::Vocabulary& vocabulary,
             const std::unordered_set<std::string_view>& cache_names, std::string_view path,
             std::string_view source, TSNode root, facts::FileFacts& out, uint64_t step_budget)
      : step_budget_(step_budget),
        g_(grammar),
        vocab_(vocabulary),
        cache_names_(cache_names),
        path_(path),
        src_(source),
        out_(out),
        aux_(root),
        sub_(root) {
    has_use_cache_ = contains(src_, "use_cache");
    has_past_key_values_ = contains(src_, "past_key_values");
    has_capacity_source_ = contains(src_, "capacity_source");
    has_scope_ = contains(src_, "scope");
  }

  // Steps spent so far: syntax nodes visited by any walk plus bytes scanned by text tests.
  uint64_t steps() const { return steps_; }

  void run(TSNode root) {
    has_errors_ = ts_node_has_error(root);
    Cursor cursor(root);
    enter(root, 0);
    for (;;) {
      if (steps_ > step_budget_) {
        stop_over_budget(cursor.node());
        return;
      }
      if (open_.back().descend && ts_tree_cursor_goto_first_child(cursor.get())) {
        enter(cursor.node(), ts_tree_cursor_current_field_id(cursor.get()));
        continue;
      }
      leave();
      for (;;) {
        if (ts_tree_cursor_goto_next_sibling(cursor.get())) {
          enter(cursor.node(), ts_tree_cursor_current_field_id(cursor.get()));
          break;
        }
        if (!ts_tree_cursor_goto_parent(cursor.get())) {
          finish();
          return;
        }
        leave();
      }
    }
  }

 private:
  // A file whose analysis would take more steps than its budget is cut off where the walk
  // stands: facts found so far are kept (as for a syntax error) and a problem says so.
  void stop_over_budget(TSNode at) {
    const Location where = loc(at);
    while (open_.size() > 1) leave();
    finish();
    out_.parse_problems.push_back(
        {where, "analysis stopped here: the file needs more than " + std::to_string(step_budget_) +
                    " analysis steps (the per-file budget for its size); facts from here on are missing"});
  }
  void spend(uint64_t steps) const { steps_ += steps; }

  // ---- small helpers -------------------------------------------------------
  std::string_view text(TSNode n) const {
    if (ts_node_is_null(n)) return {};
    const uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    if (start >= src_.size() || end <= start) return {};
    return src_.substr(start, std::min<std::size_t>(end, src_.size()) - start);
  }
  Sym sym(TSNode n) const { return g_.sym(n); }
  TSNode field(TSNode n, TSFieldId id) const {
    return ts_node_is_null(n) ? TSNode{} : ts_node_child_by_field_id(n, id);
  }
  TSNode named_child(TSNode n, uint32_t i) const {
    return ts_node_is_null(n) ? TSNode{} : ts_node_named_child(n, i);
  }
  Location loc(TSNode n) const {
    if (ts_node_is_null(n)) return Location{std::string(path_), 0, 0, 0, 0};
    const TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
    return Location{std::string(path_), s.row + 1, s.column + 1, e.row + 1, e.column + 1};
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

  // ---- name resolution -----------------------------------------------------
  // Simple name after import resolution. Aliases only rename a dotted name's
  // first component, so only an undotted name can change its last component.
  std::string_view resolved_simple(std::string_view written) const {
    if (written.find('.') != std::string_view::npos) return facts::simple_name(written);
    auto it = aliases_.find(written);
    if (it != aliases_.end()) return facts::simple_name(it->second);
    return written;
  }
  std::string resolve(std::string_view written_raw) const {
    const std::string written = strip_spaces(written_raw);
    const auto dot = written.find('.');
    const std::string_view head = std::string_view(written).substr(0, dot);
    auto it = aliases_.find(head);
    if (it != aliases_.end()) return dot == std::string::npos ? it->second : it->second + written.substr(dot);
    // Star imports make the vocabulary's cache names available bare.
    if (dot == std::string::npos && !star_targets_.empty() && cache_names_.count(head))
      return join_module(star_targets_.front(), written);
    return written;
  }
  static std::string join_module(std::string_view module, std::string_view name) {
    std::string out(module);
    if (!out.empty() && out.back() != '.') out.push_back('.');
    out += name;
    return out;
  }
  bool is_cache_simple(std::string_view s) const { return cache_names_.count(s) != 0; }
  // Canonical cache class a call constructs (`DC()`, `cu.DynamicCache()`,
  // `DynamicCache.from_legacy_cache(x)`), or empty.
  std::string_view cache_class_of_call(TSNode call) const {
    TSNode fn = field(call, g_.f_function);
    if (ts_node_is_null(fn) || !is_dotted(fn)) return {};
    const std::string_view simple = resolved_simple(strip_view(fn));
    if (is_cache_simple(simple)) return *cache_names_.find(simple);
    if (sym(fn) == Sym::Attribute) {
      const std::string_view method = text(field(fn, g_.f_attribute));
      if (starts_with(method, "__")) return {};
      const std::string_view object_simple = resolved_simple(strip_view(field(fn, g_.f_object)));
      if (is_cache_simple(object_simple)) return *cache_names_.find(object_simple);
    }
    return {};
  }
  // Dotted names rarely hold whitespace; keep a view when they do not.
  std::string_view strip_view(TSNode n) const {
    std::string_view t = text(n);
    spend(t.size());
    for (char c : t)
      if (is_space(c)) {
        scratch_.push_back(strip_spaces(t));
        return scratch_.back();
      }
    return t;
  }

  // ---- expressions -----------------------------------------------------------
  void collect_names(TSNode root, std::vector<std::string>& names, std::vector<std::string>* calls) {
    std::vector<TSNode> stack{root};
    std::size_t visited = 0;
    auto add = [](std::vector<std::string>& list, std::string value) {
      if (list.size() < kMaxNames && std::find(list.begin(), list.end(), value) == list.end())
        list.push_back(std::move(value));
    };
    while (!stack.empty() && ++visited < kMaxNameWalkNodes) {
      spend(1);
      TSNode n = stack.back();
      stack.pop_back();
      switch (sym(n)) {
        case Sym::Identifier:
          add(names, std::string(text(n)));
          continue;
        case Sym::Attribute: {
          // Every attribute inside a chain shares the chain's base, so one walk down
          // decides them all: `a.b.c` is one name; `f().b.c` reads only what `f()` reads.
          TSNode base = field(n, g_.f_object);
          while (!ts_node_is_null(base) && sym(base) == Sym::Attribute) {
            spend(1);
            base = field(base, g_.f_object);
          }
          if (!ts_node_is_null(base) && sym(base) == Sym::Identifier)
            add(names, strip_spaces(text(n)));
          else if (!ts_node_is_null(base))
            stack.push_back(base);
          continue;
        }
        case Sym::Call: {
          TSNode fn = field(n, g_.f_function);
          TSNode args = field(n, g_.f_arguments);
          if (!ts_node_is_null(args)) stack.push_back(args);
          if (!ts_node_is_null(fn)) {
            if (calls && is_dotted(fn)) add(*calls, resolve(text(fn)));
            stack.push_back(fn);
          }
          continue;
        }
        case Sym::KeywordArgument: {
          TSNode v = field(n, g_.f_value);
          if (!ts_node_is_null(v)) stack.push_back(v);
          continue;
        }
        case Sym::String:
        case Sym::ConcatenatedString:
        case Sym::Comment:
          continue;
        default:
          break;
      }
      const std::size_t first = stack.size();
      for_each_named_child(sub_, n, [&](TSNode child, TSFieldId) {
        stack.push_back(child);
        return true;
      });
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
    }
  }
  void fill_literal(TSNode n, Expression& e) {
    n = unwrap_parens(n);
    if (ts_node_is_null(n)) return;
    switch (sym(n)) {
      case Sym::Integer:
      case Sym::Float:
        if (is_imaginary(n)) return;
        e.literal = sym(n) == Sym::Integer ? facts::LiteralKind::Int : facts::LiteralKind::Float;
        e.literal_value = std::string(text(n));
        return;
      case Sym::True:
        e.literal = facts::LiteralKind::Bool;
        e.literal_value = "True";
        return;
      case Sym::False:
        e.literal = facts::LiteralKind::Bool;
        e.literal_value = "False";
        return;
      case Sym::None:
        e.literal = facts::LiteralKind::NoneValue;
        e.literal_value = "None";
        return;
      case Sym::UnaryOperator: {
        TSNode arg = unwrap_parens(field(n, g_.f_argument));
        const std::string_view op = text(field(n, g_.f_operator));
        if (!ts_node_is_null(arg) && (op == "-" || op == "+") &&
            (sym(arg) == Sym::Integer || sym(arg) == Sym::Float) && !is_imaginary(arg)) {
          e.literal = sym(arg) == Sym::Integer ? facts::LiteralKind::Int : facts::LiteralKind::Float;
          e.literal_value = (op == "-" ? "-" : "") + std::string(text(arg));
        }
        return;
      }
      case Sym::String: {
        std::string value;
        if (decode_string(n, value)) {
          e.literal = facts::LiteralKind::String;
          e.literal_value = std::move(value);
        }
        return;
      }
      case Sym::ConcatenatedString: {
        std::string all;
        bool ok = true;
        for_each_named_child(aux_, n, [&](TSNode part, TSFieldId) {
          std::string piece;
          if (sym(part) != Sym::String || !decode_string(part, piece)) {
            ok = false;
            return false;
          }
          all += piece;
          return true;
        });
        if (ok) {
          e.literal = facts::LiteralKind::String;
          e.literal_value = std::move(all);
        }
        return;
      }
      default:
        return;
    }
  }
  // tree-sitter-python folds the `j` suffix of imaginary numbers into integer/float tokens.
  bool is_imaginary(TSNode number) const {
    const std::string_view t = text(number);
    return !t.empty() && (t.back() == 'j' || t.back() == 'J');
  }
  // The value of a plain string literal: not an f-string, not bytes.
  bool decode_string(TSNode n, std::string& out) const {
    const uint32_t count = ts_node_child_count(n);
    if (count < 2) return false;
    TSNode start = ts_node_child(n, 0), end = ts_node_child(n, count - 1);
    const std::string_view prefix = text(start);
    bool raw = false;
    for (char c : prefix) {
      if (c == 'f' || c == 'F' || c == 'b' || c == 'B') return false;
      if (c == 'r' || c == 'R') raw = true;
    }
    const uint32_t body_start = ts_node_end_byte(start), body_end = ts_node_start_byte(end);
    if (body_end < body_start) return false;
    out = decode_string_body(src_.substr(body_start, body_end - body_start), raw);
    return true;
  }
  Expression make_expr(TSNode n, std::vector<std::string>* calls = nullptr) {
    Expression e;
    e.text = fold_text(text(n));
    e.loc = loc(n);
    fill_literal(n, e);
    collect_names(n, e.names, calls);
    return e;
  }
  std::vector<Argument> args_of(TSNode call) {
    std::vector<Argument> out;
    TSNode args = field(call, g_.f_arguments);
    if (ts_node_is_null(args)) return out;
    if (sym(args) == Sym::GeneratorExpression) {
      out.push_back({"", 0, make_expr(args)});
      return out;
    }
    std::vector<TSNode> children;
    for_each_named_child(aux_, args, [&](TSNode child, TSFieldId) {
      children.push_back(child);
      return true;
    });
    uint32_t position = 0;
    for (TSNode child : children) {
      switch (sym(child)) {
        case Sym::KeywordArgument:
          out.push_back({std::string(text(field(child, g_.f_name))), 0, make_expr(field(child, g_.f_value))});
          break;
        case Sym::ListSplat:
          out.push_back({"*", 0, make_expr(child)});
          break;
        case Sym::DictionarySplat:
          out.push_back({"**", 0, make_expr(child)});
          break;
        default:
          out.push_back({"", position++, make_expr(child)});
          break;
      }
    }
    return out;
  }
  TSNode first_positional(TSNode call) {
    TSNode found{};
    TSNode args = field(call, g_.f_arguments);
    if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return found;
    for_each_named_child(aux_, args, [&](TSNode child, TSFieldId) {
      const Sym s = sym(child);
      if (s == Sym::KeywordArgument || s == Sym::ListSplat || s == Sym::DictionarySplat) return true;
      found = child;
      return false;
    });
    return found;
  }

  // ---- scopes and guards -----------------------------------------------------
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
  std::string owner_name() {
    ClassState* c = owner_state();
    return c ? c->name : std::string();
  }
  std::string method_name() {
    Frame* f = innermost_frame();
    return f && !f->is_class ? std::string(f->method) : std::string();
  }
  const std::vector<std::string_view>* current_params() {
    Frame* f = function_frame();
    return f && f->params_index >= 0 ? &params_[static_cast<std::size_t>(f->params_index)] : nullptr;
  }
  bool is_param(std::string_view name) {
    const auto* p = current_params();
    return p && std::find(p->begin(), p->end(), name) != p->end();
  }

  void push_guard(Open& owner, Guard::Origin origin, bool negated, TSNode condition) {
    if (ts_node_is_null(condition)) return;
    Frame* f = function_frame();
    guards_.push_back({origin, negated, condition, f ? f->params_index : -1, function_depth_});
    ++owner.guards_pushed;
  }
  // Guards that apply here, innermost first: inside a function only the
  // function's own (and enclosing functions') guards count.
  std::vector<GuardRef> active_guard_refs(bool conditional_only = false) const {
    std::vector<GuardRef> refs;
    for (auto it = guards_.rbegin(); it != guards_.rend(); ++it) {
      if (function_depth_ > 0 && it->function_depth == 0) continue;
      if (conditional_only && !is_conditional_origin(it->origin)) continue;
      refs.push_back(*it);
    }
    return refs;
  }
  Guard materialize(const GuardRef& ref, std::optional<Guard::Origin> origin_override = std::nullopt) {
    Guard g;
    g.origin = origin_override.value_or(ref.origin);
    g.negated = ref.negated;
    g.condition = make_expr(ref.condition, &g.calls);
    const std::vector<std::string_view>* params =
        ref.params_index >= 0 ? &params_[static_cast<std::size_t>(ref.params_index)] : nullptr;
    std::vector<std::string> callees_written;
    {
      // Method calls on self name the method; the owner state they read is the
      // object before it (`self.cfg.get(...)` reads "cfg").
      std::vector<std::string> unresolved;
      collect_call_texts(ref.condition, unresolved);
      callees_written = std::move(unresolved);
    }
    for (const auto& name : g.condition.names) {
      if (starts_with(name, "self.")) {
        std::string attr = name.substr(5);
        const bool is_callee =
            std::find(callees_written.begin(), callees_written.end(), name) != callees_written.end();
        if (is_callee) {
          const auto dot = attr.rfind('.');
          if (dot != std::string::npos) attr.resize(dot);
        }
        if (!attr.empty() &&
            std::find(g.self_attributes.begin(), g.self_attributes.end(), attr) == g.self_attributes.end())
          g.self_attributes.push_back(std::move(attr));
        continue;
      }
      if (params) {
        const std::string_view head = std::string_view(name).substr(0, name.find('.'));
        if (std::find(params->begin(), params->end(), head) != params->end() &&
            std::find(g.parameters.begin(), g.parameters.end(), head) == g.parameters.end())
          g.parameters.emplace_back(head);
      }
    }
    return g;
  }
  void collect_call_texts(TSNode root, std::vector<std::string>& out) {
    std::vector<std::string> names;
    std::vector<TSNode> stack{root};
    std::size_t visited = 0;
    while (!stack.empty() && ++visited < kMaxNameWalkNodes) {
      spend(1);
      TSNode n = stack.back();
      stack.pop_back();
      if (sym(n) == Sym::Call) {
        TSNode fn = field(n, g_.f_function);
        if (!ts_node_is_null(fn) && is_dotted(fn)) out.push_back(strip_spaces(text(fn)));
      }
      if (sym(n) == Sym::String) continue;
      for_each_named_child(sub_, n, [&](TSNode child, TSFieldId) {
        stack.push_back(child);
        return true;
      });
    }
  }
  std::vector<Guard> current_guards() {
    std::vector<Guard> out;
    for (const auto& ref : active_guard_refs()) out.push_back(materialize(ref));
    return out;
  }

  // ---- walk events -----------------------------------------------------------
  void enter(TSNode node, TSFieldId field_id) {
    spend(1);
    Open o;
    o.node = node;
    if (!ts_node_is_named(node)) {
      o.descend = false;
      if (has_errors_ && ts_node_is_missing(node)) parse_problem(node, true);
      open_.push_back(o);
      return;
    }
    o.sym = sym(node);
    o.field = field_id;
    if (!open_.empty() && o.sym != Sym::Comment) {
      Open& parent = open_.back();
      o.named_index = parent.named_seen++;
    }
    open_.push_back(o);
    if (open_.size() >= 2) apply_context_guards();
    Open& self = open_.back();
    if (has_errors_ && (self.sym == Sym::Error || ts_node_is_missing(node)))
      parse_problem(node, ts_node_is_missing(node));

    switch (self.sym) {
      case Sym::Comment:
        on_comment(node);
        self.descend = false;
        break;
      case Sym::String:
      case Sym::ConcatenatedString:
        self.descend = false;
        break;
      case Sym::ImportStatement:
      case Sym::ImportFromStatement:
        on_import(node);
        self.descend = false;
        break;
      case Sym::FutureImport:
        self.descend = false;
        break;
      case Sym::ClassDef:
        on_class(node);
        break;
      case Sym::FunctionDef:
        on_function(node);
        break;
      case Sym::Call:
        on_call(node);
        break;
      case Sym::Assignment:
      case Sym::AugmentedAssignment:
        on_assignment(node);
        break;
      case Sym::Attribute:
        if (has_capacity_source_) on_attribute(node);
        break;
      case Sym::Subscript:
        on_subscript(node);
        break;
      case Sym::AssertStatement:
        on_assert(node);
        break;
      case Sym::IfStatement:
        on_if(node);
        break;
      case Sym::ForStatement:
        on_for(node);
        break;
      case Sym::WithStatement:
        on_with(node);
        break;
      case Sym::ReturnStatement:
        on_return(node);
        break;
      case Sym::ConditionalExpression:
        if (has_scope_) on_scope_candidate(node);
        break;
      case Sym::BinaryOperator:
      case Sym::GeneratorExpression:
      case Sym::ListComprehension:
        if (has_scope_) on_scope_candidate(node);
        break;
      default:
        break;
    }
  }

  // Guards that a child opens by its position in the parent.
  void apply_context_guards() {
    Open& child = open_.back();
    Open& parent = open_[open_.size() - 2];
    switch (parent.sym) {
      case Sym::IfStatement:
        if (child.field == g_.f_consequence) {
          push_guard(child, Guard::Origin::If, false, field(parent.node, g_.f_condition));
        } else if (child.sym == Sym::ElifClause || child.sym == Sym::ElseClause) {
          const bool is_else = child.sym == Sym::ElseClause;
          std::vector<TSNode> earlier;
          for_each_named_child(aux_, parent.node, [&](TSNode arm, TSFieldId fid) {
            if (ts_node_eq(arm, child.node)) return false;
            if (fid == g_.f_condition)
              earlier.push_back(arm);
            else if (sym(arm) == Sym::ElifClause)
              earlier.push_back(field(arm, g_.f_condition));
            return true;
          });
          for (TSNode cond : earlier)
            push_guard(child, is_else ? Guard::Origin::Else : Guard::Origin::If, true, cond);
        }
        break;
      case Sym::ElifClause:
        if (child.field == g_.f_consequence)
          push_guard(child, Guard::Origin::If, false, field(parent.node, g_.f_condition));
        break;
      case Sym::ForStatement:
        if (child.field == g_.f_body)
          push_guard(child, Guard::Origin::Loop, false, field(parent.node, g_.f_right));
        break;
      case Sym::WhileStatement:
        if (child.field == g_.f_body)
          push_guard(child, Guard::Origin::Loop, false, field(parent.node, g_.f_condition));
        break;
      case Sym::WithStatement:
        if (child.field == g_.f_body) {
          if (parent.graph_capture >= 0) {
            captures_open_.push_back(static_cast<std::size_t>(parent.graph_capture));
            child.pops_capture = true;
          } else {
            TSNode clause{};
            for_each_named_child(aux_, parent.node, [&](TSNode c, TSFieldId) {
              if (sym(c) != Sym::WithClause) return true;
              clause = c;
              return false;
            });
            push_guard(child, Guard::Origin::With, false, clause);
          }
        }
        break;
      case Sym::ConditionalExpression:
        if (child.sym != Sym::Comment && (child.named_index == 0 || child.named_index == 2)) {
          TSNode cond = named_child(parent.node, 1);
          push_guard(child, Guard::Origin::Ternary, child.named_index == 2, cond);
        }
        break;
      default:
        break;
    }
  }

  void leave() {
    Open o = open_.back();
    open_.pop_back();
    guards_.resize(guards_.size() - o.guards_pushed);
    if (o.pops_capture) captures_open_.pop_back();
    if (o.pops_frame) close_frame();
    if (o.sym == Sym::IfStatement && !open_.empty() && function_depth_ > 0) {
      Open& parent = open_.back();
      if ((parent.sym == Sym::Block || parent.sym == Sym::Module) && is_early_return(o.node))
        push_guard(parent, Guard::Origin::EarlyReturn, true, field(o.node, g_.f_condition));
    }
  }
  bool is_early_return(TSNode if_node) {
    if (!ts_node_is_null(field(if_node, g_.f_alternative))) return false;
    TSNode body = field(if_node, g_.f_consequence);
    if (ts_node_is_null(body)) return false;
    bool found = false;
    for_each_named_child(aux_, body, [&](TSNode stmt, TSFieldId) {
      found = found || sym(stmt) == Sym::ReturnStatement;
      return !found;
    });
    return found;
  }

  void parse_problem(TSNode node, bool missing) {
    ++problem_count_;
    if (out_.parse_problems.size() < kMaxParseProblems) {
      std::string message = missing ? "missing '" + std::string(ts_node_type(node)) + "'" : "syntax error";
      out_.parse_problems.push_back({loc(node), std::move(message)});
    } else if (!more_problems_loc_) {
      more_problems_loc_ = loc(node);
    }
  }

  // ---- imports ---------------------------------------------------------------
  void add_import(std::string local, std::string target, TSNode at) {
    if (local == "*") {
      star_targets_.push_back(target);
    } else {
      aliases_[local] = target;
    }
    out_.imports.push_back({std::move(local), std::move(target), loc(at)});
  }
  void on_import(TSNode node) {
    std::vector<std::pair<TSNode, TSFieldId>> children;
    for_each_named_child(aux_, node, [&](TSNode c, TSFieldId fid) {
      children.emplace_back(c, fid);
      return true;
    });
    if (sym(node) == Sym::ImportStatement) {
      for (auto [c, fid] : children) {
        if (sym(c) == Sym::DottedName) {
          const std::string full = strip_spaces(text(c));
          const std::string head = full.substr(0, full.find('.'));
          add_import(head, head, c);
        } else if (sym(c) == Sym::AliasedImport) {
          add_import(std::string(text(field(c, g_.f_alias))), strip_spaces(text(field(c, g_.f_name))), c);
        }
      }
      return;
    }
    std::string module;
    for (auto [c, fid] : children)
      if (fid == g_.f_module_name) module = strip_spaces(text(c));
    for (auto [c, fid] : children) {
      if (fid == g_.f_module_name) continue;
      if (sym(c) == Sym::WildcardImport) {
        add_import("*", module, c);
      } else if (sym(c) == Sym::DottedName) {
        const std::string name = strip_spaces(text(c));
        add_import(std::string(facts::simple_name(name)), join_module(module, name), c);
      } else if (sym(c) == Sym::AliasedImport) {
        add_import(std::string(text(field(c, g_.f_alias))),
                   join_module(module, strip_spaces(text(field(c, g_.f_name)))), c);
      }
    }
  }

  // ---- classes and functions ---------------------------------------------------
  void on_class(TSNode node) {
    facts::ClassFact cls;
    cls.name = std::string(text(field(node, g_.f_name)));
    cls.loc = loc(node);
    TSNode supers = field(node, g_.f_superclasses);
    if (!ts_node_is_null(supers)) {
      for_each_named_child(aux_, supers, [&](TSNode base, TSFieldId) {
        if (sym(base) == Sym::KeywordArgument || sym(base) == Sym::DictionarySplat ||
            sym(base) == Sym::ListSplat)
          return true;
        std::string written = is_dotted(base) ? strip_spaces(text(base)) : fold_text(text(base));
        std::string resolved = is_dotted(base) ? resolve(written) : written;
        cls.bases.push_back({std::move(written), std::move(resolved)});
        return true;
      });
    }
    auto state = std::make_unique<ClassState>();
    state->name = cls.name;
    state->is_cache_class = std::any_of(cls.bases.begin(), cls.bases.end(), [&](const facts::BaseClass& b) {
      const std::string_view simple = facts::simple_name(b.resolved);
      return simple == "Cache" || is_cache_simple(simple);
    });
    Frame f;
    f.is_class = true;
    f.node = node;
    f.name = text(field(node, g_.f_name));
    f.class_state = static_cast<int32_t>(classes_.size());
    class_fact_index_.push_back(out_.classes.size());
    out_.classes.push_back(std::move(cls));
    classes_.push_back(std::move(state));
    frames_.push_back(std::move(f));
    open_.back().pops_frame = true;
  }

  void on_function(TSNode node) {
    Frame f;
    f.node = node;
    f.name = text(field(node, g_.f_name));
    Frame* parent = innermost_frame();
    const bool is_method = parent && parent->is_class;
    if (parent) {
      f.class_state = parent->class_state;
      f.method = is_method ? f.name : parent->method;
      f.is_declaration = is_method ? f.name == vocab_.declaration_method : parent->is_declaration;
    } else {
      f.method = f.name;
    }
    // Parameters, without a method's leading self / cls.
    std::vector<std::string_view> params;
    std::vector<std::string> param_types;
    TSNode plist = field(node, g_.f_parameters);
    if (!ts_node_is_null(plist)) {
      for_each_named_child(aux_, plist, [&](TSNode p, TSFieldId) {
        std::string_view name;
        std::string type;
        if (sym(p) == Sym::TypedParameter || sym(p) == Sym::TypedDefaultParameter)
          type = annotated_class(field(p, g_.f_type));
        switch (sym(p)) {
          case Sym::Identifier:
            name = text(p);
            break;
          case Sym::DefaultParameter:
          case Sym::TypedDefaultParameter:
            name = text(field(p, g_.f_name));
            break;
          case Sym::TypedParameter:
          case Sym::ListSplatPattern:
          case Sym::DictionarySplatPattern: {
            TSNode inner = named_child(p, 0);
            while (!ts_node_is_null(inner) &&
                   (sym(inner) == Sym::ListSplatPattern || sym(inner) == Sym::DictionarySplatPattern))
              inner = named_child(inner, 0);
            if (!ts_node_is_null(inner) && sym(inner) == Sym::Identifier) name = text(inner);
            break;
          }
          default:
            break;
        }
        if (!name.empty()) {
          params.push_back(name);
          param_types.push_back(std::move(type));
        }
        return true;
      });
    }
    if (is_method && !params.empty() && (params.front() == "self" || params.front() == "cls")) {
      params.erase(params.begin());
      param_types.erase(param_types.begin());
    }
    f.params_index = static_cast<int32_t>(params_.size());
    params_.push_back(params);
    if (is_method)
      classes_[static_cast<std::size_t>(parent->class_state)]->method_nodes.emplace(f.name, node);
    if (parent && !is_method) {  // a nested function: its calls belong to the enclosing method
      f.method_fact = parent->method_fact;
      f.method_in_class = parent->method_in_class;
    }
    if (is_method || !parent) {
      facts::MethodFact m;
      m.name = std::string(f.name);
      m.loc = loc(node);
      for (auto p : params) m.parameters.emplace_back(p);
      m.parameter_types = std::move(param_types);
      std::vector<facts::MethodFact>& list =
          is_method ? out_.classes[class_fact_index_[static_cast<std::size_t>(parent->class_state)]].methods
                    : out_.functions;
      f.method_fact = static_cast<int32_t>(list.size());
      f.method_in_class = is_method;
      list.push_back(std::move(m));
    }
    if (is_method) {
      if (f.is_declaration) {
        ClassState& cls = *classes_[static_cast<std::size_t>(parent->class_state)];
        facts::Declaration d;
        d.owner_class = cls.name;
        d.loc = loc(node);
        cls.active_declaration = cls.declarations.size();
        cls.declarations.push_back(std::move(d));
      }
    }
    frames_.push_back(std::move(f));
    ++function_depth_;
    open_.back().pops_frame = true;
  }

  void close_frame() {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    if (f.is_class) {
      close_class(*classes_[static_cast<std::size_t>(f.class_state)]);
      return;
    }
    --function_depth_;
    if (f.has_module_walk) finish_collector(f);
  }

  void finish_collector(const Frame& f) {
    const std::string_view body = text(f.node);
    bool mentions = contains(body, vocab_.declaration_method) || contains(body, vocab_.collector);
    for (const auto& ctor : vocab_.spec_constructors) mentions = mentions || contains(body, ctor);
    if (!mentions) return;
    facts::ProtocolUse use;
    use.kind = facts::ProtocolUse::Kind::Collector;
    use.owner_class = f.class_state >= 0 ? classes_[static_cast<std::size_t>(f.class_state)]->name : "";
    use.function = std::string(f.name);
    use.loc = loc(f.node);
    use.expression = make_expr(f.module_walk_call);
    use.calls_unwrap = contains_word(body, vocab_.unwrap) && contains(body, vocab_.unwrap + "(");
    use.reads_runnable = contains(body, "." + vocab_.runnable) ||
                         contains(body, "\"" + vocab_.runnable + "\"") ||
                         contains(body, "'" + vocab_.runnable + "'");
    use.walks_named_modules = f.walks_named_modules;
    out_.protocol_uses.push_back(std::move(use));
  }

  void close_class(ClassState& cls) {
    // `past_key_values=self.x` where self.x starts as None in __init__ and is
    // never given a cache constructor, nor assigned a value before every call that passes it.
    for (auto& pending : cls.pending_implicit) {
      auto none = cls.none_attributes.find(pending.attribute);
      if (none == cls.none_attributes.end() || cls.cache_attributes.count(pending.attribute)) continue;
      if (assigned_before(cls, pending.call, pending.attribute, 2)) continue;
      pending.site.none_origin = none->second;
      cls.sites.push_back(
          {ClassState::SiteRef::Kind::Implicit, out_.implicit_caches.size(), pending.site.method});
      out_.implicit_caches.push_back(std::move(pending.site));
    }
    // A helper that hands its cache back to a method of its own class (`_init_kv_cache`
    // called by the class's decode loop) builds it for the class, not for an outside caller.
    // A conversion (`EncoderDecoderCache.from_legacy_cache(past)`) only re-wraps KV the caller
    // already holds, and stays the caller's.
    for (const auto& ref : cls.sites) {
      if (ref.kind != ClassState::SiteRef::Kind::Cache || ref.method == "forward" || ref.method == "__call__")
        continue;
      CacheSite& site = out_.cache_sites[ref.index];
      if (site.caller_requested && cls.self_calls.count(ref.method) &&
          !ends_with(site.written, ".from_legacy_cache"))
        site.caller_requested = false;
    }
    // Caller guards: a method called within its class only from guarded places.
    for (const auto& ref : cls.sites) {
      if (ref.method.empty()) continue;
      auto it = cls.self_calls.find(ref.method);
      if (it == cls.self_calls.end() || it->second.any_unguarded || it->second.guard_sets.empty()) continue;
      std::vector<Guard> extra;
      for (const auto& set : it->second.guard_sets)
        for (const auto& gref : set) {
          Guard g = materialize(gref, Guard::Origin::CallerGuard);
          const bool dup = std::any_of(extra.begin(), extra.end(), [&](const Guard& e) {
            return e.negated == g.negated && e.condition.text == g.condition.text;
          });
          if (!dup) extra.push_back(std::move(g));
        }
      std::vector<Guard>* target = nullptr;
      switch (ref.kind) {
        case ClassState::SiteRef::Kind::Cache:
          target = &out_.cache_sites[ref.index].guards;
          break;
        case ClassState::SiteRef::Kind::Implicit:
          target = &out_.implicit_caches[ref.index].guards;
          break;
        case ClassState::SiteRef::Kind::Capture:
          target = &out_.captures[ref.index].guards;
          break;
        case ClassState::SiteRef::Kind::Construction:
          target = &out_.constructions[ref.index].guards;
          break;
      }
      target->insert(target->end(), extra.begin(), extra.end());
    }
    // Declarations gather specs built by helpers they call (one level).
    for (const auto& call : cls.helper_calls) {
      facts::Declaration& d = cls.declarations[call.declaration];
      if (auto it = cls.helper_specs.find(call.helper); it != cls.helper_specs.end())
        for (auto spec : it->second) {
          spec.guards.insert(spec.guards.end(), call.guards.begin(), call.guards.end());
          d.specs.push_back(std::move(spec));
        }
      if (auto it = cls.helper_forwards.find(call.helper); it != cls.helper_forwards.end())
        for (auto fw : it->second) {
          fw.guards.insert(fw.guards.end(), call.guards.begin(), call.guards.end());
          d.forwards.push_back(std::move(fw));
        }
    }
    for (auto& d : cls.declarations) out_.declarations.push_back(std::move(d));
  }

  void finish() {
    if (more_problems_loc_)
      out_.parse_problems.push_back(
          {*more_problems_loc_, std::to_string(problem_count_ - kMaxParseProblems) + " more syntax errors"});
  }

  // ---- calls ---------------------------------------------------------------
  void on_call(TSNode call) {
    TSNode fn = field(call, g_.f_function);
    if (ts_node_is_null(fn)) return;
    const Sym fs = sym(fn);
    const bool dotted = is_dotted(fn);
    const std::string_view simple = dotted ? last_component(fn) : std::string_view{};

    const bool writes_kv = (has_use_cache_ || has_past_key_values_) && writes_kv_call(call);
    if (!captures_open_.empty() && dotted) {
      auto& capture = out_.captures[captures_open_.back()];
      auto& calls = capture.captured_calls;
      std::string callee = strip_spaces(text(fn));
      if (std::find(calls.begin(), calls.end(), callee) == calls.end()) calls.push_back(std::move(callee));
      capture.captured_writes_kv = capture.captured_writes_kv || writes_kv;
    }
    if (!dotted) return;
    record_call(call, fn, writes_kv);

    Frame* func = function_frame();
    if (fs == Sym::Attribute && func && (simple == "named_modules" || simple == "modules")) {
      if (!func->has_module_walk) func->module_walk_call = call;
      func->has_module_walk = true;
      func->walks_named_modules = func->walks_named_modules || simple == "named_modules";
    }
    if (fs == Sym::Attribute && is_self_attribute(fn)) on_self_call(call, simple);

    const std::string_view cache_class = cache_class_of_call(call);
    if (!cache_class.empty()) on_cache_call(call, fn, cache_class);

    const std::string_view resolved = resolved_simple(strip_view(fn));
    for (const auto& ctor : vocab_.spec_constructors)
      if (resolved == ctor) on_spec_call(call, ctor);
    on_forward_candidate(call, fn, simple);

    if (fs == Sym::Attribute && simple == "capture_begin") on_capture_begin(call, fn);
    if (resolved == "make_graphed_callables") {
      CaptureSite site = make_capture(CaptureSite::Kind::MakeGraphedCallables, call, fn);
      TSNode first = first_positional(call);
      if (!ts_node_is_null(first)) site.captured_calls.push_back(fold_text(text(first)));
      emit_capture(std::move(site));
    }
    if (resolved == "cudaStreamBeginCapture")
      emit_capture(make_capture(CaptureSite::Kind::StreamBeginCapture, call, fn));

    if (has_use_cache_) on_implicit_candidate(call, fn);
    if (func) on_construction(call);
  }

  // The MethodFact of the function whose body is being walked, or nullptr.
  facts::MethodFact* current_method_fact() {
    Frame* f = function_frame();
    if (!f || f->method_fact < 0) return nullptr;
    const auto index = static_cast<std::size_t>(f->method_fact);
    if (!f->method_in_class) return index < out_.functions.size() ? &out_.functions[index] : nullptr;
    if (f->class_state < 0) return nullptr;
    auto& methods = out_.classes[class_fact_index_[static_cast<std::size_t>(f->class_state)]].methods;
    return index < methods.size() ? &methods[index] : nullptr;
  }
  static bool is_builtin_function(std::string_view name) {
    static constexpr std::array<std::string_view, 40> kBuiltins{
        "abs",        "all",        "any",    "bool",    "callable", "dict",  "divmod",   "enumerate",
        "filter",     "float",      "format", "getattr", "hasattr",  "hash",  "id",       "int",
        "isinstance", "issubclass", "iter",   "len",     "list",     "map",   "max",      "min",
        "next",       "object",     "open",   "print",   "range",    "repr",  "reversed", "round",
        "set",        "setattr",    "sorted", "str",     "sum",      "super", "tuple",    "zip"};
    return std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end();
  }
  // The call writes attention KV: it passes `use_cache=True` (transformers builds or
  // extends a cache), or hands over a cache the object keeps (`past_key_values=self._cache`).
  bool writes_kv_call(TSNode call) {
    TSNode args = field(call, g_.f_arguments);
    if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return false;
    bool found = false;
    for_each_named_child(aux_, args, [&](TSNode a, TSFieldId) {
      if (sym(a) != Sym::KeywordArgument) return true;
      const std::string_view name = text(field(a, g_.f_name));
      TSNode value = unwrap_parens(field(a, g_.f_value));
      if (name == "use_cache") found = sym(value) == Sym::True;
      if (name == "past_key_values") found = sym(value) != Sym::Identifier && rooted_at_self(value);
      return !found;
    });
    return found;
  }
  // A call in a function body, kept when rules could follow it: rooted at self, cls or a
  // parameter, a bare function name, `Class.method`; or any call that writes KV.
  void record_call(TSNode call, TSNode fn, bool writes_kv) {
    facts::MethodFact* method = current_method_fact();
    if (!method) return;
    const std::string callee = strip_spaces(text(fn));
    const std::string_view root = std::string_view(callee).substr(0, callee.find('.'));
    const bool bare = root.size() == callee.size();
    const bool followable = root == "self" || root == "cls" || is_param(root) ||
                            (bare && !is_uppercase_name(root) && !is_builtin_function(root)) ||
                            (!bare && is_uppercase_name(root));
    if (!followable && !writes_kv) return;
    // Calls into another object keep their conditions: a holder may switch a held
    // object's behaviour on only under a gate (`self.decoder.enable_graphs()`).
    const bool into_object =
        (root == "self" && std::count(callee.begin(), callee.end(), '.') >= 2) || (!bare && is_param(root));
    for (auto& existing : method->calls) {
      if (existing.callee != callee) continue;
      if (writes_kv && !existing.writes_kv) {
        existing.writes_kv = true;
        existing.loc = loc(call);
      }
      if (into_object && !existing.guards.empty() && active_guard_refs(true).empty()) existing.guards.clear();
      return;
    }
    if (method->calls.size() >= kMaxCallsPerFunction) return;
    facts::CallFact fact{callee, loc(call), writes_kv, {}};
    if (into_object)
      for (const auto& ref : active_guard_refs(true)) fact.guards.push_back(materialize(ref));
    method->calls.push_back(std::move(fact));
  }
  // The class a parameter annotation names: `Decoder`, `"Talker"`, `Decoder | None`,
  // `Optional[mod.Decoder]`; empty when it names none (builtins, containers, `Any`).
  std::string annotated_class(TSNode type) {
    std::vector<TSNode> stack{type};
    std::size_t visited = 0;
    while (!stack.empty() && ++visited < 64) {
      TSNode n = stack.back();
      stack.pop_back();
      if (ts_node_is_null(n)) continue;
      switch (sym(n)) {
        case Sym::Identifier:
        case Sym::Attribute: {
          if (!is_dotted(n)) continue;
          const std::string name = strip_spaces(text(n));
          const std::string_view simple = facts::simple_name(name);
          if (is_uppercase_name(simple) && simple != "Optional" && simple != "Union" && simple != "Any" &&
              simple != "None")
            return resolve(name);
          continue;
        }
        case Sym::String: {
          // A forward reference: `"Talker"`, `"Decoder | None"`, `"Optional[mod.Decoder]"`.
          std::string value;
          if (!decode_string(n, value)) continue;
          std::string_view rest = value;
          while (!rest.empty()) {
            std::size_t begin = 0;
            while (begin < rest.size() && !is_ident_char(rest[begin])) ++begin;
            std::size_t end = begin;
            while (end < rest.size() && (is_ident_char(rest[end]) || rest[end] == '.')) ++end;
            const std::string_view name = rest.substr(begin, end - begin);
            const std::string_view simple = facts::simple_name(name);
            if (simple == "list" || simple == "dict" || simple == "tuple" || simple == "set" ||
                simple == "List" || simple == "Dict" || simple == "Tuple" || simple == "Set" ||
                simple == "Sequence" || simple == "Iterable")
              break;  // a container of them is not one
            if (is_uppercase_name(simple) && simple != "Optional" && simple != "Union" && simple != "Any" &&
                simple != "None")
              return resolve(name);
            rest.remove_prefix(end);
          }
          continue;
        }
        case Sym::Subscript: {
          // `Optional[X]` / `Union[X, None]` name X; any other generic names a container.
          const std::string_view head = facts::simple_name(strip_spaces(text(field(n, g_.f_value))));
          if (head != "Optional" && head != "Union") continue;
          break;
        }
        default:
          // `list[Decoder]` in an annotation is a generic_type: a container of them.
          if (std::string_view(ts_node_type(n)) == "generic_type") {
            const std::string head = strip_spaces(text(named_child(n, 0)));
            if (facts::simple_name(head) != "Optional" && facts::simple_name(head) != "Union") continue;
          }
          break;
      }
      const std::size_t first = stack.size();
      const bool generic = std::string_view(ts_node_type(n)) == "generic_type";
      for_each_named_child(sub_, n, [&](TSNode child, TSFieldId fid) {
        const bool head =
            generic ? ts_node_eq(child, named_child(n, 0)) : (sym(n) == Sym::Subscript && fid == g_.f_value);
        if (!head) stack.push_back(child);
        return true;
      });
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
    }
    return {};
  }

  void on_construction(TSNode call) {
    std::string target = constructed_class(call);
    if (target.empty()) return;
    facts::Construction c;
    c.owner_class = owner_name();
    c.method = method_name();
    c.target_class = std::move(target);
    c.loc = loc(call);
    c.guards = current_guards();
    if (TSNode fn = field(call, g_.f_function);
        sym(fn) == Sym::Attribute && !is_uppercase_name(last_component(fn)))
      c.factory = std::string(last_component(fn));
    for (auto& a : args_of(call))
      if (a.value.literal != facts::LiteralKind::String) c.args.push_back(std::move(a));
    if (ClassState* cls = owner_state())
      cls->sites.push_back({ClassState::SiteRef::Kind::Construction, out_.constructions.size(), c.method});
    out_.constructions.push_back(std::move(c));
  }

  // ---- `self.x` assigned before a call -------------------------------------------
  // `self.<attribute> = <not None>` as the statement itself, or inside a `with` / `try`
  // body that runs before what follows it.
  bool assigns_attribute(TSNode stmt, std::string_view attribute, int depth = 0) {
    if (ts_node_is_null(stmt) || depth > 4) return false;
    const Sym s = sym(stmt);
    if (s == Sym::ExpressionStatement) {
      TSNode a = named_child(stmt, 0);
      if (sym(a) != Sym::Assignment) return false;
      TSNode left = field(a, g_.f_left);
      TSNode right = unwrap_parens(field(a, g_.f_right));
      return is_self_attribute(left) && text(field(left, g_.f_attribute)) == attribute &&
             !ts_node_is_null(right) && sym(right) != Sym::None;
    }
    if (s == Sym::WithStatement || s == Sym::Block ||
        ts_node_type(stmt) == std::string_view("try_statement")) {
      bool found = false;
      for (uint32_t i = 0, n = ts_node_named_child_count(stmt); i < n && !found; ++i) {
        TSNode c = ts_node_named_child(stmt, i);
        const Sym cs = sym(c);
        if (cs == Sym::Block || cs == Sym::ExpressionStatement || cs == Sym::WithStatement)
          found = assigns_attribute(c, attribute, depth + 1);
        if (cs == Sym::Block && s != Sym::Block) break;  // a try's first block only
      }
      return found;
    }
    return false;
  }
  // An earlier statement of a block around `node`, in its function, assigns self.<attribute>.
  bool dominated_by_assignment(TSNode node, std::string_view attribute) {
    TSNode child = node;
    for (TSNode parent = ts_node_parent(node); !ts_node_is_null(parent); parent = ts_node_parent(parent)) {
      const Sym ps = sym(parent);
      if (ps == Sym::FunctionDef || ps == Sym::ClassDef || ps == Sym::Module) return false;
      if (ps == Sym::Block) {
        for (uint32_t i = 0, n = ts_node_named_child_count(parent); i < n; ++i) {
          TSNode stmt = ts_node_named_child(parent, i);
          if (ts_node_start_byte(stmt) >= ts_node_start_byte(child)) break;
          if (assigns_attribute(stmt, attribute)) return true;
        }
      }
      child = parent;
    }
    return false;
  }
  TSNode enclosing_function(TSNode node) const {
    for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p))
      if (sym(p) == Sym::FunctionDef) return p;
    return TSNode{};
  }
  // self.<attribute> is assigned before `call` runs: earlier in its method, or before
  // every call of that method within the class (following callers `depth` levels).
  bool assigned_before(const ClassState& cls, TSNode call, std::string_view attribute, int depth) {
    if (ts_node_is_null(call)) return false;
    if (dominated_by_assignment(call, attribute)) return true;
    if (depth == 0) return false;
    TSNode fn = enclosing_function(call);
    if (ts_node_is_null(fn)) return false;
    const std::string_view method = text(field(fn, g_.f_name));
    auto it = cls.method_nodes.find(method);
    if (it == cls.method_nodes.end() || !ts_node_eq(it->second, fn)) return false;
    bool any = false;
    for (const auto& [callee, caller_call] : cls.self_call_nodes) {
      if (callee != method) continue;
      if (!assigned_before(cls, caller_call, attribute, depth - 1)) return false;
      any = true;
    }
    return any;
  }

  void on_self_call(TSNode call, std::string_view method) {
    Frame* f = innermost_frame();
    if (!f || f->is_class || f->class_state < 0) return;
    ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
    cls.self_call_nodes.emplace_back(method, call);
    if (method != f->method) {
      auto& info = cls.self_calls[method];
      if (!info.any_unguarded) {
        auto refs = active_guard_refs(true);
        if (refs.empty()) {
          info.any_unguarded = true;
          info.guard_sets.clear();
        } else {
          info.guard_sets.push_back(std::move(refs));
        }
      }
    }
    if (f->is_declaration && cls.active_declaration)
      cls.helper_calls.push_back({*cls.active_declaration, std::string(method), current_guards()});
    (void)call;
  }

  // How the object built by the call at open_[index] is kept.
  struct RetentionInfo {
    Retention kind = Retention::Local;
    std::string retained_as;
    std::optional<Expression> key;
    bool nested_in_cache = false;
    bool assigned_to_param = false;
  };
  static bool is_transparent(Sym s) {
    return s == Sym::ParenthesizedExpression || s == Sym::ConditionalExpression ||
           s == Sym::BooleanOperator || s == Sym::Await;
  }
  static bool is_container(Sym s) {
    return s == Sym::List || s == Sym::Tuple || s == Sym::Set || s == Sym::Dictionary || s == Sym::Pair ||
           s == Sym::ExpressionList || s == Sym::ListComprehension || s == Sym::SetComprehension ||
           s == Sym::DictComprehension || s == Sym::GeneratorExpression;
  }
  static bool is_container_method(std::string_view m) {
    return m == "append" || m == "setdefault" || m == "add" || m == "insert" || m == "extend" ||
           m == "update" || m == "__setitem__";
  }
  // The call at open_[index] ends up in a return / yield (through calls, tuples, ...).
  bool returned_from(std::size_t index) const {
    while (index > 0) {
      const Sym s = open_[index - 1].sym;
      if (s == Sym::ReturnStatement || s == Sym::Yield) return true;
      if (!(is_transparent(s) || is_container(s) || s == Sym::ArgumentList || s == Sym::KeywordArgument ||
            s == Sym::Call))
        return false;
      --index;
    }
    return false;
  }
  RetentionInfo retention_of(std::size_t index) {
    RetentionInfo r;
    bool in_container = false;
    while (index > 0) {
      const Open& parent = open_[index - 1];
      const Open& child = open_[index];
      if (is_transparent(parent.sym)) {
        --index;
        continue;
      }
      if (is_container(parent.sym)) {
        in_container = true;
        --index;
        continue;
      }
      switch (parent.sym) {
        case Sym::ArgumentList:
        case Sym::KeywordArgument: {
          const bool keyword = parent.sym == Sym::KeywordArgument;
          const std::size_t outer = keyword ? index - 1 : index;  // index of argument_list + 1
          if (outer < 2 || open_[outer - 2].sym != Sym::Call) return r;
          TSNode call2 = open_[outer - 2].node;
          if (!in_container && !cache_class_of_call(call2).empty()) {
            r.nested_in_cache = true;
            return r;
          }
          TSNode fn2 = field(call2, g_.f_function);
          if (sym(fn2) == Sym::Attribute && is_container_method(text(field(fn2, g_.f_attribute))) &&
              rooted_at_self(field(fn2, g_.f_object))) {
            r.kind = Retention::SelfContainer;
            r.retained_as = strip_spaces(text(field(fn2, g_.f_object)));
            if (text(field(fn2, g_.f_attribute)) == "setdefault") {
              TSNode first = first_positional(call2);
              if (!ts_node_is_null(first) && !ts_node_eq(first, child.node)) r.key = make_expr(first);
            }
            return r;
          }
          if (returned_from(outer - 2)) {
            r.kind = Retention::Returned;
            r.retained_as = "return";
          } else {
            r.kind = Retention::PassedToCall;
            r.retained_as =
                keyword ? std::string(text(field(parent.node, g_.f_name))) : strip_spaces(text(fn2));
          }
          return r;
        }
        case Sym::Assignment:
        case Sym::AugmentedAssignment:
          if (child.field == g_.f_right) assignment_retention(parent.node, in_container, r);
          return r;
        case Sym::ReturnStatement:
        case Sym::Yield:
          r.kind = Retention::Returned;
          r.retained_as = "return";
          return r;
        default:
          return r;
      }
    }
    return r;
  }
  void assignment_retention(TSNode assignment, bool in_container, RetentionInfo& r) {
    TSNode left = field(assignment, g_.f_left);
    if (ts_node_is_null(left)) return;
    switch (sym(left)) {
      case Sym::Attribute:
      case Sym::Subscript: {
        TSNode holder = sym(left) == Sym::Subscript ? field(left, g_.f_value) : left;
        if (rooted_at_self(holder)) {
          const bool container = sym(left) == Sym::Subscript || in_container;
          r.kind = container ? Retention::SelfContainer : Retention::SelfAttribute;
          r.retained_as = strip_spaces(text(holder));
          TSNode key = field(left, g_.f_subscript);
          if (sym(left) == Sym::Subscript && !ts_node_is_null(key)) r.key = make_expr(key);
          return;
        }
        // Stored on another object (`session.cache = C()`): it goes where that
        // object goes, one step (returned, stored on self, passed on).
        r.retained_as = strip_spaces(text(left));
        TSNode root = holder;
        while (sym(root) == Sym::Attribute || sym(root) == Sym::Subscript)
          root = field(root, sym(root) == Sym::Attribute ? g_.f_object : g_.f_value);
        Frame* func = function_frame();
        // Stored into an object the caller passed in (`model_kwargs["past_key_values"] =
        // DynamicCache()`): the caller gets it back, as with a returned cache.
        if (func && sym(root) == Sym::Identifier && is_param(text(root))) r.assigned_to_param = true;
        if (func && sym(root) == Sym::Identifier) {
          RetentionInfo via_root;
          follow_local(func->node, text(root), ts_node_end_byte(assignment), via_root);
          if (via_root.kind != Retention::Local) {
            r.kind = via_root.kind;
            r.key = std::move(via_root.key);
            if (via_root.kind != Retention::Returned) r.retained_as = std::move(via_root.retained_as);
          }
        }
        return;
      }
      case Sym::Identifier: {
        const std::string_view name = text(left);
        r.retained_as = std::string(name);
        Frame* func = function_frame();
        if (!func) {
          r.kind = Retention::ModuleGlobal;
          if (Frame* f = innermost_frame(); f && f->is_class)
            r.retained_as = std::string(f->name) + "." + r.retained_as;
          return;
        }
        r.assigned_to_param = is_param(name);
        follow_local(func->node, name, ts_node_end_byte(assignment), r);
        return;
      }
      default:
        return;
    }
  }
  // Where a local holding the object goes next (one step): stored on self,
  // returned, or passed on.
  void follow_local(TSNode function, std::string_view name, uint32_t after, RetentionInfo& r) {
    int best = 0;  // 3 self, 2 returned, 1 passed
    Cursor c(function);
    std::vector<TSNode> stack{function};
    auto is_name = [&](TSNode n) {
      n = unwrap_parens(n);
      return !ts_node_is_null(n) && sym(n) == Sym::Identifier && text(n) == name;
    };
    while (!stack.empty()) {
      TSNode n = stack.back();
      stack.pop_back();
      if (ts_node_end_byte(n) <= after) continue;
      const Sym s = sym(n);
      if (ts_node_start_byte(n) >= after) {
        if (s == Sym::Assignment && is_name(field(n, g_.f_right))) {
          TSNode left = field(n, g_.f_left);
          if (sym(left) == Sym::Attribute && rooted_at_self(left) && best < 3) {
            best = 3;
            r.kind = Retention::SelfAttribute;
            r.retained_as = strip_spaces(text(left));
            r.key.reset();
          } else if (sym(left) == Sym::Subscript && rooted_at_self(field(left, g_.f_value)) && best < 3) {
            best = 3;
            r.kind = Retention::SelfContainer;
            r.retained_as = strip_spaces(text(field(left, g_.f_value)));
            TSNode key = field(left, g_.f_subscript);
            if (!ts_node_is_null(key)) r.key = make_expr(key);
          }
        } else if ((s == Sym::ReturnStatement || s == Sym::Yield) && contains_word(text(n), name) &&
                   best < 2) {
          best = 2;
          r.kind = Retention::Returned;
          r.retained_as = std::string(name);
        } else if (s == Sym::Call && best < 3) {
          TSNode args = field(n, g_.f_arguments);
          bool passes = false;
          TSNode key{};
          if (!ts_node_is_null(args) && sym(args) == Sym::ArgumentList) {
            bool first = true;
            for_each_named_child(sub_, args, [&](TSNode a, TSFieldId) {
              TSNode v = sym(a) == Sym::KeywordArgument ? field(a, g_.f_value) : a;
              if (is_name(v))
                passes = true;
              else if (first && sym(a) != Sym::KeywordArgument)
                key = a;
              first = false;
              return !passes;
            });
          }
          if (passes) {
            TSNode fn = field(n, g_.f_function);
            if (sym(fn) == Sym::Attribute && is_container_method(text(field(fn, g_.f_attribute))) &&
                rooted_at_self(field(fn, g_.f_object))) {
              best = 3;
              r.kind = Retention::SelfContainer;
              r.retained_as = strip_spaces(text(field(fn, g_.f_object)));
              r.key.reset();
              if (text(field(fn, g_.f_attribute)) == "setdefault" && !ts_node_is_null(key))
                r.key = make_expr(key);
            } else if (best < 1) {
              best = 1;
              r.kind = Retention::PassedToCall;
              r.retained_as = strip_spaces(text(fn));
            }
          }
        }
      }
      const std::size_t first = stack.size();
      for_each_named_child(c, n, [&](TSNode child, TSFieldId) {
        stack.push_back(child);
        return true;
      });
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
    }
  }

  void on_cache_call(TSNode call, TSNode fn, std::string_view cache_class) {
    if (ClassState* owner = owner_state(); owner && owner->is_cache_class) return;
    RetentionInfo r = retention_of(open_.size() - 1);
    if (r.nested_in_cache) return;
    CacheSite site;
    site.cache_class = std::string(cache_class);
    site.written = strip_spaces(text(fn));
    site.owner_class = owner_name();
    site.method = method_name();
    site.loc = loc(call);
    site.args = args_of(call);
    resolve_local_aliases(site.args, call);
    site.retention = r.kind;
    site.retained_as = std::move(r.retained_as);
    site.container_key = std::move(r.key);
    site.guards = current_guards();
    for (const auto& cap : captures_open_)
      if (out_.captures[cap].kind == CaptureSite::Kind::GraphContext) site.inside_graph_capture = true;
    const bool handed_back = site.retention == Retention::Returned || r.assigned_to_param;
    // A branch on a cache parameter (`use_cache`, `past_key_values`: an `if`, its `else`,
    // an earlier `if ...: return`), or on the type of an argument the caller handed in
    // (`isinstance(values, EncoderDecoderCache)`: a conversion of the caller's cache), means
    // the caller asked for the cache; a branch on any other argument (`if bsz == 0: return
    // None`) does not.
    const bool asked = std::any_of(site.guards.begin(), site.guards.end(), [&](const Guard& g) {
      if (!is_conditional_origin(g.origin)) return false;
      if (std::any_of(g.parameters.begin(), g.parameters.end(),
                      [](const std::string& p) { return names_cache(p); }))
        return true;
      const bool type_test = std::find(g.calls.begin(), g.calls.end(), "isinstance") != g.calls.end();
      return type_test && !g.parameters.empty() &&
             std::any_of(g.condition.names.begin(), g.condition.names.end(),
                         [&](const std::string& n) { return is_cache_simple(resolved_simple(n)); });
    });
    site.caller_requested = handed_back && asked;
    if (ClassState* cls = owner_state()) {
      if (site.retention == Retention::SelfAttribute && starts_with(site.retained_as, "self."))
        cls->cache_attributes.insert(site.retained_as.substr(5));
      cls->sites.push_back({ClassState::SiteRef::Kind::Cache, out_.cache_sites.size(), site.method});
    }
    out_.cache_sites.push_back(std::move(site));
  }

  CaptureSite make_capture(CaptureSite::Kind kind, TSNode call, TSNode fn) {
    CaptureSite site;
    site.kind = kind;
    site.owner_class = owner_name();
    site.method = method_name();
    site.loc = loc(call);
    site.written = strip_spaces(text(fn));
    site.guards = current_guards();
    return site;
  }
  std::size_t emit_capture(CaptureSite site) {
    const std::size_t index = out_.captures.size();
    if (ClassState* cls = owner_state())
      cls->sites.push_back({ClassState::SiteRef::Kind::Capture, index, site.method});
    out_.captures.push_back(std::move(site));
    return index;
  }
  void on_capture_begin(TSNode call, TSNode fn) {
    CaptureSite site = make_capture(CaptureSite::Kind::CaptureBegin, call, fn);
    // Calls in the statements after this one, up to capture_end, in the same block.
    const std::size_t n = open_.size();
    if (n >= 3 && open_[n - 2].sym == Sym::ExpressionStatement) {
      TSNode stmt = open_[n - 2].node;
      TSNode block = open_[n - 3].node;
      bool after = false;
      std::vector<TSNode> body;
      for_each_named_child(aux_, block, [&](TSNode s, TSFieldId) {
        if (ts_node_eq(s, stmt)) {
          after = true;
          return true;
        }
        if (!after) return true;
        if (contains(text(s), "capture_end")) return false;
        body.push_back(s);
        return true;
      });
      for (TSNode s : body) {
        std::vector<std::string> callees;
        collect_call_texts(s, callees);
        for (auto& c : callees)
          if (std::find(site.captured_calls.begin(), site.captured_calls.end(), c) ==
              site.captured_calls.end())
            site.captured_calls.push_back(std::move(c));
      }
    }
    emit_capture(std::move(site));
  }

  void on_with(TSNode node) {
    TSNode clause{};
    for_each_named_child(aux_, node, [&](TSNode c, TSFieldId) {
      if (sym(c) != Sym::WithClause) return true;
      clause = c;
      return false;
    });
    if (ts_node_is_null(clause)) return;
    std::vector<TSNode> items;
    for_each_named_child(aux_, clause, [&](TSNode item, TSFieldId) {
      if (sym(item) == Sym::WithItem) items.push_back(item);
      return true;
    });
    for (TSNode item : items) {
      TSNode value = field(item, g_.f_value);
      if (!ts_node_is_null(value) && sym(value) == Sym::AsPattern) value = named_child(value, 0);
      value = unwrap_parens(value);
      if (ts_node_is_null(value) || sym(value) != Sym::Call) continue;
      TSNode fn = field(value, g_.f_function);
      if (!is_dotted(fn) || (last_component(fn) != "graph" && resolved_simple(strip_view(fn)) != "graph"))
        continue;
      const std::string resolved = resolve(text(fn));
      if (!ends_with(resolved, ".cuda.graph")) continue;
      open_.back().graph_capture =
          static_cast<int32_t>(emit_capture(make_capture(CaptureSite::Kind::GraphContext, value, fn)));
      return;
    }
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
  // The keywords a call receives for `use_cache` and `past_key_values`: written in the
  // call, or through a `**` splat of a dict the walk can read.
  struct CacheKeywords {
    std::optional<TSNode> use_cache;
    std::optional<TSNode> past_key_values;
    bool through_dict = false;
    bool unread_splat = false;  // a splat whose keys are not all known
  };
  void note_cache_keyword(CacheKeywords& k, std::string_view name, TSNode value, bool from_dict) {
    if (name == "use_cache") {
      k.use_cache = unwrap_parens(value);
      k.through_dict = from_dict;
    } else if (name == "past_key_values") {
      k.past_key_values = unwrap_parens(value);
    }
  }
  // Keys of a dict literal or `dict(k=v)` call; false when `value` is neither.
  bool read_dict_keys(TSNode value, CacheKeywords& k) {
    value = unwrap_parens(value);
    std::vector<std::pair<std::string, TSNode>> pairs;
    if (sym(value) == Sym::Dictionary) {
      for (uint32_t i = 0, n = ts_node_named_child_count(value); i < n; ++i) {
        TSNode pair = ts_node_named_child(value, i);
        if (sym(pair) != Sym::Pair) {
          if (sym(pair) == Sym::DictionarySplat) k.unread_splat = true;
          continue;
        }
        std::string key;
        TSNode key_node = unwrap_parens(field(pair, g_.f_key));
        if (sym(key_node) == Sym::String && decode_string(key_node, key))
          pairs.emplace_back(std::move(key), field(pair, g_.f_value));
      }
    } else if (sym(value) == Sym::Call && text(field(value, g_.f_function)) == "dict") {
      TSNode args = field(value, g_.f_arguments);
      for (uint32_t i = 0, n = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args); i < n; ++i) {
        TSNode a = ts_node_named_child(args, i);
        if (sym(a) == Sym::KeywordArgument)
          pairs.emplace_back(std::string(text(field(a, g_.f_name))), field(a, g_.f_value));
        else
          k.unread_splat = true;  // dict(base, ...) or dict(**base)
      }
    } else {
      return false;
    }
    for (const auto& [key, v] : pairs) note_cache_keyword(k, key, v, true);
    return true;
  }
  // `**name` where `name` is a local dict: what the function put in it before `before`
  // (`name = {...}`, `name = dict(...)`, `name.update({...})`, `name["use_cache"] = True`).
  void read_local_dict(std::string_view name, uint32_t before, CacheKeywords& k) {
    Frame* func = function_frame();
    if (!func) {
      k.unread_splat = true;
      return;
    }
    bool base_known = false;
    CacheKeywords local;
    auto is_name = [&](TSNode n) { return sym(n) == Sym::Identifier && text(n) == name; };
    walk_function_body(func->node, [&](TSNode n) {
      if (ts_node_start_byte(n) >= before) return false;
      const Sym s = sym(n);
      if (s == Sym::Assignment) {
        TSNode left = field(n, g_.f_left);
        TSNode right = field(n, g_.f_right);
        if (is_name(left)) {
          local = CacheKeywords{};
          base_known = read_dict_keys(right, local);
        } else if (sym(left) == Sym::Subscript && is_name(field(left, g_.f_value))) {
          std::string key;
          TSNode key_node = unwrap_parens(field(left, g_.f_subscript));
          if (sym(key_node) == Sym::String && decode_string(key_node, key))
            note_cache_keyword(local, key, right, true);
        }
      } else if (s == Sym::Call) {
        TSNode fn = field(n, g_.f_function);
        if (sym(fn) == Sym::Attribute && is_name(field(fn, g_.f_object)) &&
            text(field(fn, g_.f_attribute)) == "update") {
          TSNode args = field(n, g_.f_arguments);
          for (uint32_t i = 0, m = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args); i < m; ++i) {
            TSNode a = ts_node_named_child(args, i);
            if (sym(a) == Sym::KeywordArgument)
              note_cache_keyword(local, text(field(a, g_.f_name)), field(a, g_.f_value), true);
            else if (!read_dict_keys(a, local))
              local.unread_splat = true;
          }
        }
      }
      return true;
    });
    if (local.use_cache) {
      k.use_cache = local.use_cache;
      k.through_dict = true;
    }
    if (local.past_key_values) k.past_key_values = local.past_key_values;
    if (!base_known || local.unread_splat) k.unread_splat = true;
  }
  CacheKeywords cache_keywords(TSNode call) {
    CacheKeywords k;
    TSNode args = field(call, g_.f_arguments);
    std::vector<TSNode> children;
    for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i)
      children.push_back(ts_node_named_child(args, i));
    for (TSNode a : children) {
      if (sym(a) == Sym::KeywordArgument) {
        note_cache_keyword(k, text(field(a, g_.f_name)), field(a, g_.f_value), false);
      } else if (sym(a) == Sym::DictionarySplat) {
        TSNode value = unwrap_parens(named_child(a, 0));
        if (sym(value) == Sym::Identifier)
          read_local_dict(text(value), ts_node_start_byte(call), k);
        else if (!read_dict_keys(value, k))
          k.unread_splat = true;
      }
    }
    return k;
  }

  // What the call's callee is rooted at (see ImplicitCacheSite::CalleeRoot).
  void describe_callee(TSNode call, TSNode fn, facts::ImplicitCacheSite& site) {
    std::vector<std::string> path;
    TSNode n = fn;
    while (sym(n) == Sym::Attribute) {
      path.emplace_back(text(field(n, g_.f_attribute)));
      n = field(n, g_.f_object);
    }
    std::reverse(path.begin(), path.end());
    const std::string_view root = text(n);
    site.callee_path = path;
    if (root == "self") {
      site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Self;
      return;
    }
    if (is_param(root)) {
      site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Parameter;
      return;
    }
    Frame* func = function_frame();
    if (!func) return;
    std::optional<TSNode> bound;
    for (const auto& [local, value] : func->local_values)
      if (local == root && ts_node_start_byte(value) < ts_node_start_byte(call)) bound = value;
    if (!bound) return;
    TSNode value = unwrap_parens(*bound);
    // `lm = self.language_model`: the callee is that attribute of self.
    std::vector<std::string> prefix;
    TSNode v = value;
    while (sym(v) == Sym::Attribute) {
      prefix.emplace_back(text(field(v, g_.f_attribute)));
      v = field(v, g_.f_object);
    }
    if (sym(v) == Sym::Identifier && text(v) == "self" && !prefix.empty()) {
      std::reverse(prefix.begin(), prefix.end());
      prefix.insert(prefix.end(), path.begin(), path.end());
      site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Self;
      site.callee_path = std::move(prefix);
      return;
    }
    site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Local;
    site.callee_origin = make_expr(value);
    if (sym(value) == Sym::Call) site.callee_origin_class = constructed_class(value);
  }

  // ---- how a call's cache is kept ---------------------------------------------------
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
  bool inside_loop(TSNode node) const {
    for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p)) {
      const Sym s = sym(p);
      if (s == Sym::ForStatement || s == Sym::WhileStatement) return true;
      if (s == Sym::FunctionDef || s == Sym::ClassDef || s == Sym::Module) return false;
    }
    return false;
  }
  static bool names_cache(std::string_view name) {
    const std::string l = lower(name);
    return contains(l, "past") || contains(l, "cache") || contains(l, "kv");
  }
  // Where the value of `node` goes. `is_cache`: the value is the cache itself (an
  // output's `.past_key_values`), not the whole output.
  KeptResult follow_value(TSNode node, bool is_cache, int depth) {
    KeptResult r;
    if (depth > 4) {
      r.kept = Kept::Unknown;
      return r;
    }
    TSNode child = node;
    for (TSNode parent = ts_node_parent(node); !ts_node_is_null(parent);
         child = parent, parent = ts_node_parent(parent)) {
      const Sym ps = sym(parent);
      if (ps == Sym::ParenthesizedExpression || ps == Sym::ConditionalExpression ||
          ps == Sym::BooleanOperator || ps == Sym::Await)
        continue;
      if (ps == Sym::Attribute) {
        if (!ts_node_eq(field(parent, g_.f_object), child)) break;
        if (!is_cache && text(field(parent, g_.f_attribute)) == "past_key_values") {
          is_cache = true;
          continue;
        }
        return r;  // `.logits`, `.last_hidden_state`, `cache.get_seq_length()`: read, not kept
      }
      if (ps == Sym::Subscript) {
        if (!ts_node_eq(field(parent, g_.f_value), child)) break;
        TSNode index = unwrap_parens(field(parent, g_.f_subscript));
        std::string key;
        const bool cache_key =
            (sym(index) == Sym::String && decode_string(index, key) && key == "past_key_values") ||
            (sym(index) == Sym::Integer && text(index) != "0") || sym(index) == Sym::UnaryOperator;
        if (!is_cache && cache_key) {
          is_cache = true;
          continue;
        }
        return r;
      }
      if (ps == Sym::ExpressionStatement) return r;  // discarded
      if (ps == Sym::ReturnStatement || ps == Sym::Yield) {
        r.merge(Kept::Returned, parent, *this);
        return r;
      }
      if (ps == Sym::Pair || is_container(ps)) {
        // {"past_key_values": out.past_key_values}, (hidden, past): where the container goes.
        if (ps == Sym::Pair && !ts_node_eq(field(parent, g_.f_value), child)) return r;
        continue;
      }
      if (ps == Sym::Assignment) {
        if (!ts_node_eq(field(parent, g_.f_right), child)) return r;
        follow_targets(field(parent, g_.f_left), parent, is_cache, depth, r);
        return r;
      }
      if (ps == Sym::KeywordArgument || ps == Sym::ArgumentList) {
        TSNode arg_list = ps == Sym::KeywordArgument ? ts_node_parent(parent) : parent;
        TSNode call = ts_node_parent(arg_list);
        TSNode fn = field(call, g_.f_function);
        const std::string_view keyword = ps == Sym::KeywordArgument ? text(field(parent, g_.f_name)) : "";
        if (sym(fn) == Sym::Attribute && is_container_method(text(field(fn, g_.f_attribute)))) {
          // self._d.update(...), session.update({...}), caches.append(out.past_key_values)
          TSNode object = field(fn, g_.f_object);
          if (rooted_at_self(object)) {
            r.merge(Kept::Stored, call, *this);
          } else if (sym(object) == Sym::Identifier) {
            r.merge(follow_name(text(object), ts_node_end_byte(call), false, depth + 1));
          } else {
            r.merge(Kept::Unknown, call, *this);
          }
          return r;
        }
        if (is_cache && keyword == "past_key_values") {
          r.merge(inside_loop(call) ? Kept::Reused : Kept::UsedOnce, call, *this);
          return r;
        }
        r.merge(Kept::Unknown, call, *this);
        return r;
      }
      break;
    }
    r.merge(Kept::Unknown, node, *this);
    return r;
  }
  void follow_targets(TSNode left, TSNode assignment, bool is_cache, int depth, KeptResult& r) {
    const Sym ls = sym(left);
    if (ls == Sym::Attribute || ls == Sym::Subscript) {
      TSNode holder = ls == Sym::Subscript ? field(left, g_.f_value) : left;
      if (rooted_at_self(holder)) {
        r.merge(Kept::Stored, assignment, *this);
      } else {
        TSNode root = holder;
        while (sym(root) == Sym::Attribute || sym(root) == Sym::Subscript)
          root = field(root, sym(root) == Sym::Attribute ? g_.f_object : g_.f_value);
        if (sym(root) == Sym::Identifier)
          r.merge(follow_name(text(root), ts_node_end_byte(assignment), false, depth + 1));
        else
          r.merge(Kept::Unknown, assignment, *this);
      }
      return;
    }
    if (ls == Sym::Identifier) {
      r.merge(follow_name(text(left), ts_node_end_byte(assignment), is_cache, depth + 1));
      return;
    }
    // `hidden, past = model(...)`: the elements after the first, or any named like a cache.
    uint32_t index = 0;
    for (uint32_t i = 0, n = ts_node_named_child_count(left); i < n; ++i) {
      TSNode element = ts_node_named_child(left, i);
      if (sym(element) != Sym::Identifier) {
        ++index;
        continue;
      }
      if (is_cache || index > 0 || names_cache(text(element)))
        r.merge(follow_name(text(element), ts_node_end_byte(assignment), true, depth + 1));
      ++index;
    }
  }
  // Reads of a local bound at `after`: later ones, and any in a loop (the next step reads it).
  KeptResult follow_name(std::string_view name, uint32_t after, bool is_cache, int depth) {
    KeptResult r;
    Frame* func = function_frame();
    if (!func || depth > 4) {
      r.kept = Kept::Unknown;
      return r;
    }
    std::vector<TSNode> reads;
    walk_function_body(func->node, [&](TSNode n) {
      if (sym(n) == Sym::Identifier && text(n) == name) {
        TSNode parent = ts_node_parent(n);
        const bool is_target = sym(parent) == Sym::Assignment && ts_node_eq(field(parent, g_.f_left), n);
        const bool is_keyword_name =
            sym(parent) == Sym::KeywordArgument && ts_node_eq(field(parent, g_.f_name), n);
        const bool is_attribute_name =
            sym(parent) == Sym::Attribute && ts_node_eq(field(parent, g_.f_attribute), n);
        if (!is_target && !is_keyword_name && !is_attribute_name &&
            (ts_node_start_byte(n) >= after || inside_loop(n)))
          reads.push_back(n);
        return false;
      }
      return true;
    });
    for (TSNode read : reads) r.merge(follow_value(read, is_cache, depth));
    return r;
  }

  void on_implicit_candidate(TSNode call, TSNode fn) {
    // Constructing an object (`GenerationConfig(use_cache=True)`) or building
    // keyword sets takes use_cache as a setting; no forward pass runs.
    const std::string_view callee_simple = resolved_simple(strip_view(fn));
    if (is_uppercase_name(callee_simple) || callee_simple == "dict" || callee_simple == "update" ||
        callee_simple == "partial")
      return;
    TSNode args = field(call, g_.f_arguments);
    if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return;
    const CacheKeywords k = cache_keywords(call);
    if (!k.use_cache || sym(*k.use_cache) != Sym::True) return;
    facts::ImplicitCacheSite site;
    site.owner_class = owner_name();
    site.method = method_name();
    site.loc = loc(call);
    site.callee = strip_spaces(text(fn));
    site.through_kwargs_dict = k.through_dict;
    describe_callee(call, fn, site);
    {
      const KeptResult kept = follow_value(call, false, 0);
      site.kept = kept.kept;
      site.kept_at = kept.at;
    }
    if (!k.past_key_values) {
      if (k.unread_splat) return;
      site.reason = facts::ImplicitCacheSite::Reason::NoPastKeyValues;
      site.guards = current_guards();
      emit_implicit(std::move(site));
      return;
    }
    TSNode pkv = *k.past_key_values;
    site.reason = facts::ImplicitCacheSite::Reason::PastKeyValuesStartsNone;
    if (sym(pkv) == Sym::None) {
      site.none_origin = loc(pkv);
      site.guards = current_guards();
      emit_implicit(std::move(site));
      return;
    }
    if (sym(pkv) == Sym::Identifier) {
      Frame* func = function_frame();
      if (!func) return;
      const std::string_view name = text(pkv);
      for (const auto& [local, at] : func->none_locals)
        if (local == name) {
          site.none_origin = loc(at);
          site.guards = current_guards();
          emit_implicit(std::move(site));
          return;
        }
      return;
    }
    if (is_self_attribute(pkv)) {
      ClassState* cls = owner_state();
      if (!cls) return;
      site.guards = current_guards();
      cls->pending_implicit.push_back({std::move(site), std::string(text(field(pkv, g_.f_attribute))), call});
    }
  }
  void emit_implicit(facts::ImplicitCacheSite site) {
    if (ClassState* cls = owner_state())
      cls->sites.push_back({ClassState::SiteRef::Kind::Implicit, out_.implicit_caches.size(), site.method});
    out_.implicit_caches.push_back(std::move(site));
  }

  // ---- declarations ----------------------------------------------------------
  void on_spec_call(TSNode call, const std::string& ctor) {
    Frame* f = innermost_frame();
    if (!f || f->is_class || f->class_state < 0) return;
    ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
    facts::SpecFact spec;
    spec.loc = loc(call);
    spec.constructor = ctor;
    const bool takes_config = !vocab_.spec_constructors.empty() && ctor == vocab_.spec_constructors.front();
    for (auto& arg : args_of(call)) {
      if (arg.keyword.empty()) {
        if (takes_config && arg.position == 0) spec.config = std::move(arg.value);
        continue;
      }
      if (arg.keyword == "*" || arg.keyword == "**") {
        spec.unpacked.push_back(std::move(arg.value));
        continue;
      }
      for (const auto& [written, canonical] : vocab_.field_aliases)
        if (arg.keyword == written) arg.keyword = canonical;
      spec.fields.push_back(std::move(arg));
    }
    spec.rows = rows_driver_of(call, spec);
    spec.guards = current_guards();
    if (f->is_declaration && cls.active_declaration) {
      cls.declarations[*cls.active_declaration].specs.push_back(std::move(spec));
    } else {
      cls.helper_specs[std::string(f->method)].push_back(std::move(spec));
    }
  }
  facts::RowsDriver rows_driver_of(TSNode call, facts::SpecFact& spec) {
    TSNode args = field(call, g_.f_arguments);
    TSNode rows{};
    if (!ts_node_is_null(args) && sym(args) == Sym::ArgumentList)
      for_each_named_child(aux_, args, [&](TSNode a, TSFieldId) {
        if (sym(a) == Sym::KeywordArgument && text(field(a, g_.f_name)) == "rows")
          rows = field(a, g_.f_value);
        return ts_node_is_null(rows);
      });
    rows = unwrap_parens(rows);
    if (ts_node_is_null(rows)) return facts::RowsDriver::Absent;
    if (sym(rows) == Sym::Attribute && is_dotted(rows)) {
      const std::string_view member = text(field(rows, g_.f_attribute));
      const std::string_view owner = resolved_simple(strip_view(field(rows, g_.f_object)));
      if (owner == vocab_.row_driver && member == vocab_.row_fixed) return facts::RowsDriver::Fixed;
      if (owner == vocab_.row_driver && member == vocab_.row_max_num_seqs)
        return facts::RowsDriver::MaxNumSeqs;
      return facts::RowsDriver::Other;
    }
    if (sym(rows) == Sym::Call && is_dotted(field(rows, g_.f_function))) {
      const std::string_view callee = resolved_simple(strip_view(field(rows, g_.f_function)));
      if (callee == vocab_.max_num_seqs_call) return facts::RowsDriver::MaxNumSeqs;
      if (callee == vocab_.fixed_call) {
        // Earlier revision: Fixed(n, because="...") carries rows_fixed and rows_reason.
        for (auto& arg : args_of(rows)) {
          std::string canonical;
          if (arg.keyword.empty() && arg.position == 0)
            canonical = "rows_fixed";
          else if (arg.keyword == vocab_.fixed_reason_keyword || (arg.keyword.empty() && arg.position == 1))
            canonical = "rows_reason";
          if (canonical.empty() || spec.field(canonical)) continue;
          arg.keyword = canonical;
          spec.fields.push_back(std::move(arg));
        }
        return facts::RowsDriver::Fixed;
      }
    }
    return facts::RowsDriver::Other;
  }
  void on_forward_candidate(TSNode call, TSNode fn, std::string_view simple) {
    Frame* f = innermost_frame();
    if (!f || f->is_class || f->class_state < 0) return;
    std::string via;
    if (sym(fn) == Sym::Attribute && simple == vocab_.declaration_method) {
      // self.X.<...>.model_local_kv_specs(): the first attribute after self.
      TSNode n = field(fn, g_.f_object);
      TSNode first_attr{};
      while (sym(n) == Sym::Attribute) {
        first_attr = n;
        n = field(n, g_.f_object);
      }
      if (sym(n) == Sym::Identifier && text(n) == "self" && !ts_node_is_null(first_attr))
        via = std::string(text(field(first_attr, g_.f_attribute)));
      else if (sym(n) == Sym::Identifier && ts_node_is_null(first_attr))
        via = local_self_attribute(text(n), ts_node_start_byte(call));
    } else if (resolved_simple(strip_view(fn)) == vocab_.collector) {
      TSNode arg = unwrap_parens(first_positional(call));
      if (!ts_node_is_null(arg) && sym(arg) == Sym::Attribute) {
        TSNode n = arg, first_attr{};
        while (sym(n) == Sym::Attribute) {
          first_attr = n;
          n = field(n, g_.f_object);
        }
        if (sym(n) == Sym::Identifier && text(n) == "self")
          via = std::string(text(field(first_attr, g_.f_attribute)));
      } else if (!ts_node_is_null(arg) && sym(arg) == Sym::Identifier) {
        via = local_self_attribute(text(arg), ts_node_start_byte(call));
      }
    }
    if (via.empty()) return;
    ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
    facts::Forward fw{via, loc(call), current_guards()};
    if (f->is_declaration && cls.active_declaration) {
      cls.declarations[*cls.active_declaration].forwards.push_back(std::move(fw));
    } else {
      cls.helper_forwards[std::string(f->method)].push_back(std::move(fw));
    }
  }
  // The attribute a local was last bound to before `before` in the enclosing
  // function: `gen = self.audio_generator` or `gen = getattr(self, "audio_generator", None)`
  // gives "audio_generator"; empty when the local holds anything else.
  std::string local_self_attribute(std::string_view name, uint32_t before) {
    Frame* func = function_frame();
    if (!func || name == "self") return {};
    std::string found;
    uint32_t found_at = 0;
    Cursor c(func->node);
    std::vector<TSNode> stack{func->node};
    while (!stack.empty()) {
      TSNode n = stack.back();
      stack.pop_back();
      if (ts_node_start_byte(n) >= before) continue;
      if (sym(n) == Sym::Assignment) {
        TSNode left = field(n, g_.f_left);
        TSNode right = unwrap_parens(field(n, g_.f_right));
        if (sym(left) == Sym::Identifier && text(left) == name && ts_node_start_byte(n) >= found_at) {
          found_at = ts_node_start_byte(n);
          found = self_attribute_of(right);
        }
      }
      const std::size_t first = stack.size();
      for_each_named_child(c, n, [&](TSNode child, TSFieldId) {
        if (sym(child) != Sym::FunctionDef && sym(child) != Sym::ClassDef) stack.push_back(child);
        return true;
      });
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
    }
    return found;
  }
  // "x" for `self.x`, `self.x.y`, `getattr(self, "x")`, `getattr(self, "x", None)`; else empty.
  std::string self_attribute_of(TSNode value) {
    if (ts_node_is_null(value)) return {};
    if (sym(value) == Sym::Attribute) {
      TSNode n = value, first_attr{};
      while (sym(n) == Sym::Attribute) {
        first_attr = n;
        n = field(n, g_.f_object);
      }
      if (sym(n) == Sym::Identifier && text(n) == "self")
        return std::string(text(field(first_attr, g_.f_attribute)));
      return {};
    }
    if (sym(value) == Sym::Call && text(field(value, g_.f_function)) == "getattr") {
      TSNode args = field(value, g_.f_arguments);
      if (ts_node_is_null(args) || ts_node_named_child_count(args) < 2) return {};
      TSNode object = unwrap_parens(named_child(args, 0));
      TSNode attribute = unwrap_parens(named_child(args, 1));
      if (sym(object) != Sym::Identifier || text(object) != "self") return {};
      const Expression e = make_expr(attribute);
      if (e.literal == facts::LiteralKind::String) return e.literal_value;
    }
    return {};
  }
  void on_return(TSNode node) {
    Frame* f = innermost_frame();
    if (!f || f->is_class || !f->is_declaration || f->method != f->name || f->class_state < 0) return;
    ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
    if (!cls.active_declaration) return;
    TSNode value = unwrap_parens(named_child(node, 0));
    if (ts_node_is_null(value)) return;
    bool empty = false;
    const Sym s = sym(value);
    if ((s == Sym::List || s == Sym::Tuple) && ts_node_named_child_count(value) == 0) empty = true;
    if (s == Sym::Call) {
      const std::string_view callee = text(field(value, g_.f_function));
      TSNode args = field(value, g_.f_arguments);
      empty = (callee == "list" || callee == "tuple") && !ts_node_is_null(args) &&
              ts_node_named_child_count(args) == 0;
    }
    if (text(value) == "()") empty = true;
    if (empty) cls.declarations[*cls.active_declaration].returns_empty_somewhere = true;
  }

  // `cfg = self._llm_config; StaticCache(config=cfg, ...)`: record what the bare local
  // holds when it was assigned exactly once before the call in the same function.
  void resolve_local_aliases(std::vector<Argument>& args, TSNode call) {
    Frame* func = function_frame();
    if (!func) return;
    const uint32_t call_start = ts_node_start_byte(call);
    for (auto& arg : args) {
      const std::string_view name = arg.value.text;
      if (name.empty() ||
          name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
              std::string_view::npos)
        continue;
      std::optional<TSNode> only;
      bool ambiguous = false;
      for (const auto& [local, value] : func->local_values) {
        if (local != name) continue;
        if (only || ts_node_start_byte(value) >= call_start) ambiguous = true;
        only = value;
      }
      if (!only || ambiguous) continue;
      arg.value.alias_of = fold_text(text(*only));
      collect_names(*only, arg.value.names, nullptr);
    }
  }

  // A lookup that yields None when the key is missing: `d.get(k)`, `d.get(k, None)`,
  // `getattr(o, "x", None)`. A past_key_values read this way starts as None on the
  // first call, so transformers builds the cache behind `use_cache=True`.
  bool may_be_none(TSNode value) {
    if (sym(value) != Sym::Call) return false;
    TSNode fn = field(value, g_.f_function);
    TSNode args = field(value, g_.f_arguments);
    if (ts_node_is_null(fn) || ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return false;
    std::vector<TSNode> positional;  // argument lists are short: no cursor needed
    for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i)
      positional.push_back(ts_node_named_child(args, i));
    auto is_none_or_absent = [&](std::size_t index) {
      return positional.size() <= index || sym(unwrap_parens(positional[index])) == Sym::None;
    };
    if (sym(fn) == Sym::Attribute && text(field(fn, g_.f_attribute)) == "get")
      return !positional.empty() && positional.size() <= 2 && is_none_or_absent(1);
    if (sym(fn) == Sym::Identifier && text(fn) == "getattr")
      return positional.size() == 3 && is_none_or_absent(2);
    return false;
  }

  // ---- assignments: hops, constants, None origins ------------------------------
  void on_assignment(TSNode node) {
    TSNode left = field(node, g_.f_left);
    TSNode right = field(node, g_.f_right);
    if (ts_node_is_null(left) || ts_node_is_null(right)) return;
    const bool plain = sym(node) == Sym::Assignment;
    const Sym ls = sym(left);
    Frame* f = innermost_frame();
    Frame* func = function_frame();
    const bool right_is_none = sym(unwrap_parens(right)) == Sym::None;
    if (plain && func && ls == Sym::Identifier && sym(right) != Sym::Assignment)
      func->local_values.emplace_back(text(left), right);
    if (plain && func && ls == Sym::Identifier && !right_is_none && may_be_none(unwrap_parens(right)))
      func->none_locals.emplace_back(text(left), node);  // `past = self.requests.get(rid)`
    if (plain && func && right_is_none) {
      if (ls == Sym::Identifier) func->none_locals.emplace_back(text(left), node);
      if (is_self_attribute(left) && f->method == "__init__" && f->class_state >= 0) {
        auto& attrs = classes_[static_cast<std::size_t>(f->class_state)]->none_attributes;
        attrs.emplace(text(field(left, g_.f_attribute)), loc(node));
      }
    }
    if (plain && ls == Sym::Identifier && func && func->is_declaration && func->method == func->name &&
        func->class_state >= 0 && sym(right) != Sym::Assignment) {
      ClassState& cls = *classes_[static_cast<std::size_t>(func->class_state)];
      if (cls.active_declaration)
        cls.declarations[*cls.active_declaration].local_assignments.push_back(
            {std::string(text(left)), make_expr(right), loc(node)});
    }
    if (plain && ls == Sym::Identifier && !func && sym(right) != Sym::Assignment) {
      facts::Constant c;
      c.owner_class = f && f->is_class ? classes_[static_cast<std::size_t>(f->class_state)]->name : "";
      c.name = std::string(text(left));
      c.value = make_expr(right);
      out_.constants.push_back(std::move(c));
    }
    if (plain && is_self_attribute(left) && f && f->class_state >= 0) {
      on_hop_candidate(left, right);
      if (func && sym(right) != Sym::Assignment) {
        facts::AttributeAssignment a;
        a.owner_class = owner_name();
        a.method = method_name();
        a.attribute = std::string(text(field(left, g_.f_attribute)));
        a.value = make_expr(right);
        a.loc = loc(node);
        out_.attribute_assignments.push_back(std::move(a));
      }
    }
  }
  static bool is_uppercase_name(std::string_view s) { return !s.empty() && s[0] >= 'A' && s[0] <= 'Z'; }
  static bool is_module_container(std::string_view s) {
    return s == "ModuleList" || s == "ModuleDict" || s == "Sequential" || s == "ParameterList" ||
           s == "ParameterDict";
  }
  // The class a call instantiates (`Foo(...)`, `pkg.Foo(...)`, `Foo.from_config(...)`), or empty.
  std::string constructed_class(TSNode call) {
    TSNode fn = field(call, g_.f_function);
    if (ts_node_is_null(fn) || !is_dotted(fn)) return {};
    const std::string_view simple = resolved_simple(strip_view(fn));
    if (is_uppercase_name(simple)) return is_cache_simple(simple) ? std::string() : resolve(text(fn));
    if (sym(fn) == Sym::Attribute && !starts_with(simple, "__")) {
      TSNode obj = field(fn, g_.f_object);
      const std::string_view owner = resolved_simple(strip_view(obj));
      if (is_uppercase_name(owner) && !is_cache_simple(owner)) return resolve(text(obj));
    }
    return {};
  }
  void on_hop_candidate(TSNode left, TSNode right) {
    const std::string owner = owner_name();
    const std::string attribute(text(field(left, g_.f_attribute)));
    // (expression, reached through a container): the value, container elements
    // one level down, ternary branches.
    std::vector<std::pair<TSNode, bool>> todo{{right, false}};
    std::vector<std::pair<TSNode, bool>> calls;
    for (std::size_t i = 0; i < todo.size() && i < 64; ++i) {
      const auto [n, in_container] = std::pair{unwrap_parens(todo[i].first), todo[i].second};
      const Sym s = sym(n);
      auto add_elements = [&](TSNode container) {
        const Sym cs = sym(container);
        if (cs == Sym::List || cs == Sym::Tuple || cs == Sym::Set || cs == Sym::Dictionary) {
          for_each_named_child(aux_, container, [&](TSNode e, TSFieldId) {
            todo.emplace_back(sym(e) == Sym::Pair ? field(e, g_.f_value) : e, true);
            return todo.size() < 64;
          });
        } else if (cs == Sym::ListComprehension || cs == Sym::SetComprehension ||
                   cs == Sym::GeneratorExpression || cs == Sym::DictComprehension) {
          TSNode body = field(container, g_.f_body);
          if (!ts_node_is_null(body))
            todo.emplace_back(sym(body) == Sym::Pair ? field(body, g_.f_value) : body, true);
        }
      };
      if (s == Sym::Call) {
        TSNode fn = field(n, g_.f_function);
        if (!in_container && is_dotted(fn) && is_module_container(resolved_simple(strip_view(fn)))) {
          add_elements(unwrap_parens(first_positional(n)));
          continue;
        }
        calls.emplace_back(n, in_container);
      } else if (s == Sym::ConditionalExpression) {
        todo.emplace_back(named_child(n, 0), in_container);
        todo.emplace_back(named_child(n, 2), in_container);
      } else if (!in_container) {
        add_elements(n);
      }
    }
    std::vector<std::string> seen;
    for (auto [call, in_container] : calls) {
      std::string target = constructed_class(call);
      if (target.empty() || std::find(seen.begin(), seen.end(), target) != seen.end()) continue;
      seen.push_back(target);
      out_.hops.push_back({owner, attribute, std::move(target), loc(call), in_container});
    }
  }

  // ---- batch evidence ----------------------------------------------------------
  void add_evidence(facts::BatchEvidence::Kind kind, TSNode node) {
    facts::BatchEvidence e;
    e.kind = kind;
    e.owner_class = owner_name();
    e.method = method_name();
    e.loc = loc(node);
    e.expression = make_expr(node);
    out_.batch_evidence.push_back(std::move(e));
  }
  void on_subscript(TSNode node) {
    if (has_scope_) on_scope_candidate(node);
    if (!function_frame()) return;
    TSNode value = field(node, g_.f_value);
    TSNode index = field(node, g_.f_subscript);
    if (ts_node_is_null(value) || ts_node_is_null(index) || sym(value) != Sym::Identifier) return;
    if (sym(index) != Sym::Integer || text(index) != "0") return;
    if (ts_node_named_child_count(node) != 2) return;  // x[0, 1] is not a first element
    if (is_param(text(value))) add_evidence(facts::BatchEvidence::Kind::TakesFirstElement, node);
  }
  // `x == 1` / `x != 1` where x looks like a batch size.
  bool is_batch_one_comparison(TSNode cond, std::string_view op_wanted) {
    cond = unwrap_parens(cond);
    if (ts_node_is_null(cond) || sym(cond) != Sym::ComparisonOperator || ts_node_named_child_count(cond) != 2)
      return false;
    TSNode a = named_child(cond, 0), b = named_child(cond, 1);
    // The operator token sits between the operands.
    const uint32_t op_start = ts_node_end_byte(a), op_end = ts_node_start_byte(b);
    if (op_end <= op_start || trim(src_.substr(op_start, op_end - op_start)) != op_wanted) return false;
    TSNode other;
    if (sym(b) == Sym::Integer && text(b) == "1")
      other = a;
    else if (sym(a) == Sym::Integer && text(a) == "1")
      other = b;
    else
      return false;
    const std::string t = lower(strip_spaces(text(other)));
    return contains(t, "shape[0]") || contains(t, "size(0)") || contains(t, "batch") || contains(t, "bsz") ||
           contains(t, "len(");
  }
  void on_assert(TSNode node) {
    if (!function_frame()) return;
    TSNode cond = named_child(node, 0);
    if (is_batch_one_comparison(cond, "==")) add_evidence(facts::BatchEvidence::Kind::AssertsBatchOne, node);
  }
  void on_if(TSNode node) {
    if (has_scope_) on_scope_candidate(node);
    if (!function_frame()) return;
    TSNode cond = field(node, g_.f_condition);
    if (!is_batch_one_comparison(cond, "!=")) return;
    TSNode body = field(node, g_.f_consequence);
    bool raises = false;
    if (!ts_node_is_null(body))
      for_each_named_child(aux_, body, [&](TSNode s, TSFieldId) {
        raises = raises || sym(s) == Sym::RaiseStatement;
        return !raises;
      });
    if (raises) add_evidence(facts::BatchEvidence::Kind::AssertsBatchOne, node);
  }
  void on_for(TSNode node) {
    if (!function_frame()) return;
    TSNode iter = unwrap_parens(field(node, g_.f_right));
    if (ts_node_is_null(iter)) return;
    std::string_view name;
    if (sym(iter) == Sym::Identifier && is_param(text(iter)))
      name = text(iter);
    else if (is_self_attribute(iter))
      name = text(field(iter, g_.f_attribute));
    if (name.empty()) return;
    const std::string l = lower(name);
    if (contains(l, "req") || contains(l, "batch") || contains(l, "seq") || contains(l, "session"))
      add_evidence(facts::BatchEvidence::Kind::IteratesRequests, iter);
  }

  // ---- protocol uses -----------------------------------------------------------
  void add_protocol_use(facts::ProtocolUse::Kind kind, TSNode at, TSNode expression) {
    facts::ProtocolUse use;
    use.kind = kind;
    use.owner_class = owner_name();
    if (Frame* f = function_frame()) use.function = std::string(f->name);
    use.loc = loc(at);
    use.expression = make_expr(expression);
    out_.protocol_uses.push_back(std::move(use));
  }
  void on_attribute(TSNode node) {
    if (text(field(node, g_.f_attribute)) != "capacity_source") return;
    for (std::size_t i = open_.size() - 1; i > 0; --i) {
      const Open& parent = open_[i - 1];
      const Open& child = open_[i];
      switch (parent.sym) {
        case Sym::ComparisonOperator:
        case Sym::AssertStatement:
          add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, parent.node);
          return;
        case Sym::IfStatement:
        case Sym::ElifClause:
        case Sym::WhileStatement:
          if (child.field == g_.f_condition)
            add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, child.node);
          return;
        case Sym::MatchStatement:
          if (child.field == g_.f_subject)
            add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, child.node);
          return;
        case Sym::ConditionalExpression:
          if (child.named_index == 1) {
            add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, child.node);
            return;
          }
          break;
        case Sym::KeywordArgument:
        case Sym::ExpressionStatement:
        case Sym::Block:
        case Sym::Module:
        case Sym::Assignment:
        case Sym::ReturnStatement:
        case Sym::FunctionDef:
        case Sym::ClassDef:
        case Sym::Lambda:
        case Sym::Pair:
        case Sym::ListComprehension:
          return;
        default:
          break;
      }
    }
  }
  bool reads_scope(TSNode n) const {
    const std::string_view t = text(n);
    spend(t.size());
    for (auto pos = t.find(".scope"); pos != std::string_view::npos; pos = t.find(".scope", pos + 1))
      if (pos + 6 >= t.size() || !is_ident_char(t[pos + 6])) return true;
    return contains_word(t, vocab_.scope_enum) || compares_scope(n);
  }
  // A comparison of a name that says scope (`scope`, `spec_scope`, `kv.scope`) with an enum
  // member (`Lifetime.REQUEST`) or a string (`"model"`), outside the protocol's own names.
  bool compares_scope(TSNode n) const {
    std::vector<TSNode> stack{n};
    for (std::size_t visited = 0; !stack.empty() && ++visited < 256;) {
      TSNode c = stack.back();
      stack.pop_back();
      if (sym(c) == Sym::ComparisonOperator) {
        bool scope_side = false, value_side = false;
        for (uint32_t i = 0, k = ts_node_named_child_count(c); i < k; ++i) {
          TSNode side = unwrap_parens(ts_node_named_child(c, i));
          const Sym ss = sym(side);
          const std::string_view last = is_dotted(side) ? last_component(side) : std::string_view{};
          if (!last.empty() && ends_with(lower(last), "scope")) scope_side = true;
          const bool enum_member = ss == Sym::Attribute && is_dotted(side) && !last.empty() &&
                                   std::all_of(last.begin(), last.end(), [](char ch) {
                                     return (ch >= 'A' && ch <= 'Z') || ch == '_' || (ch >= '0' && ch <= '9');
                                   });
          if (ss == Sym::String || enum_member || ss == Sym::Tuple) value_side = true;
        }
        if (scope_side && value_side) return true;
      }
      for (uint32_t i = 0, k = ts_node_named_child_count(c); i < k; ++i)
        stack.push_back(ts_node_named_child(c, i));
    }
    return false;
  }
  bool mentions_multiplicity(TSNode n) const {
    if (ts_node_is_null(n)) return false;
    spend(text(n).size());
    const std::string t = lower(text(n));
    if (contains(t, "rows") || contains(t, "num_seqs") || contains(t, lower(vocab_.row_driver))) return true;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i] == '*' && (i == 0 || t[i - 1] != '*') && (i + 1 == t.size() || t[i + 1] != '*')) return true;
    return false;
  }
  // The expression at open_.back() is the value of `rows=` / `rows_fixed=` / `rows = ...`.
  bool in_rows_context() const {
    for (std::size_t i = open_.size() - 1; i > 0; --i) {
      const Open& parent = open_[i - 1];
      if (parent.sym == Sym::ParenthesizedExpression) continue;
      if (parent.sym == Sym::KeywordArgument || parent.sym == Sym::Assignment) {
        TSNode name = field(parent.node, parent.sym == Sym::KeywordArgument ? g_.f_name : g_.f_left);
        const std::string t = lower(text(name));
        if (contains(t, "rows") || contains(t, "num_seqs")) return true;
        for (const auto& [written, canonical] : vocab_.field_aliases)
          if (text(name) == written) return true;
      }
      return false;
    }
    return false;
  }
  void on_scope_candidate(TSNode node) {
    if (ts_node_start_byte(node) < last_scope_use_end_) return;  // inside one already reported
    bool hit = false;
    switch (sym(node)) {
      case Sym::ConditionalExpression: {
        TSNode cond = named_child(node, 1);
        hit = !ts_node_is_null(cond) && reads_scope(cond) &&
              (mentions_multiplicity(named_child(node, 0)) || mentions_multiplicity(named_child(node, 2)) ||
               in_rows_context());
        break;
      }
      case Sym::IfStatement: {
        TSNode cond = field(node, g_.f_condition);
        hit = !ts_node_is_null(cond) && reads_scope(cond) &&
              mentions_multiplicity(field(node, g_.f_consequence));
        break;
      }
      case Sym::Subscript: {
        TSNode index = field(node, g_.f_subscript);
        hit = !ts_node_is_null(index) && reads_scope(index) &&
              (mentions_multiplicity(field(node, g_.f_value)) || in_rows_context());
        break;
      }
      case Sym::BinaryOperator: {
        const std::string_view op = text(field(node, g_.f_operator));
        hit = (op == "*" || op == "//" || op == "/") &&
              (reads_scope(field(node, g_.f_left)) || reads_scope(field(node, g_.f_right)));
        break;
      }
      case Sym::GeneratorExpression:
      case Sym::ListComprehension: {
        // `sum(s.bytes_per_row * max_num_seqs for s in specs if s.scope != "model")`
        bool filters_on_scope = false;
        for (uint32_t i = 0, k = ts_node_named_child_count(node); i < k; ++i) {
          TSNode c = ts_node_named_child(node, i);
          if (ts_node_type(c) == std::string_view("if_clause") && reads_scope(c)) filters_on_scope = true;
        }
        hit = filters_on_scope && mentions_multiplicity(field(node, g_.f_body));
        break;
      }
      default:
        break;
    }
    if (!hit) return;
    TSNode shown = sym(node) == Sym::IfStatement ? field(node, g_.f_condition) : node;
    add_protocol_use(facts::ProtocolUse::Kind::ScopeDerivedRows, node, shown);
    last_scope_use_end_ = ts_node_end_byte(node);
  }

  // ---- suppressions --------------------------------------------------------------
  // `# kvlint: ignore[CODES] reason` / `# kvlint: ignore-file[CODES] reason`. Any other
  // `# kvlint:` comment is kept as a malformed suppression (it suppresses nothing and the
  // engine reports it), so a mistyped one never silences more, or less, than it says.
  void on_comment(TSNode node) {
    const std::string_view t = text(node);
    if (!contains(t, "kvlint")) return;
    std::string_view rest = trim(t.substr(1));  // after '#'
    if (!starts_with(rest, "kvlint:")) return;
    rest = trim(rest.substr(7));
    facts::Suppression s;
    s.loc = loc(node);
    s.applies_to_line = applies_to_line(node);
    std::string_view directive = rest.substr(0, std::min(rest.find('['), rest.size()));
    directive = directive.substr(0, std::min(directive.find_first_of(" \t:="), directive.size()));
    if (directive == "ignore-file") {
      s.file_level = true;
    } else if (directive != "ignore") {
      s.malformed = directive.empty() ? "`# kvlint:` names no directive"
                                      : "unknown directive `" + std::string(directive) + "`";
      s.malformed += "; write `# kvlint: ignore[KV101] reason` or `# kvlint: ignore-file[KV101] reason`";
      out_.suppressions.push_back(std::move(s));
      return;
    }
    rest = trim(rest.substr(directive.size()));
    const auto close = rest.find(']');
    if (rest.empty() || rest.front() != '[') {
      s.malformed = "`" + std::string(directive) + "` without `[CODES]` names no code; write `" +
                    std::string(directive) + "[KV101] reason`";
    } else if (close == std::string_view::npos) {
      s.malformed = "`[` is never closed; write `" + std::string(directive) + "[KV101] reason`";
    } else {
      const std::string_view inside = rest.substr(1, close - 1);
      std::size_t start = 0;
      for (std::size_t i = 0; i <= inside.size(); ++i) {
        if (i == inside.size() || inside[i] == ',' || is_space(inside[i])) {
          const std::string_view code = trim(inside.substr(start, i - start));
          if (!code.empty()) s.codes.emplace_back(code);
          start = i + 1;
        }
      }
      if (s.codes.empty()) s.malformed = "`[]` names no code";
      s.reason = std::string(trim(rest.substr(close + 1)));
    }
    if (!s.malformed.empty()) s.codes.clear();
    out_.suppressions.push_back(std::move(s));
  }
  uint32_t applies_to_line(TSNode comment) const {
    const uint32_t start = ts_node_start_byte(comment);
    const uint32_t line = ts_node_start_point(comment).row + 1;
    std::size_t line_start = src_.rfind('\n', start == 0 ? 0 : start - 1);
    line_start = (line_start == std::string_view::npos || start == 0) ? 0 : line_start + 1;
    if (!trim(src_.substr(line_start, start - line_start)).empty()) return line;  // trails code
    std::size_t pos = src_.find('\n', start);
    uint32_t current = line;
    while (pos != std::string_view::npos) {
      ++current;
      const std::size_t begin = pos + 1;
      const std::size_t end = src_.find('\n', begin);
      const std::string_view l =
          trim(src_.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
      if (!l.empty() && l.front() != '#') return current;
      pos = end;
    }
    return 0;  // nothing after it
  }

  mutable uint64_t steps_ = 0;
  const uint64_t step_budget_;
  const Grammar& g_;
  const facts::Vocabulary& vocab_;
  const std::unordered_set<std::string_view>& cache_names_;
  std::string_view path_;
  std::string_view src_;
  facts::FileFacts& out_;
  Cursor aux_;                               // child enumeration for one node at a time
  Cursor sub_;                               // child enumeration inside expression sub-walks
  mutable std::deque<std::string> scratch_;  // owned storage for whitespace-stripped names

  bool has_errors_ = false;
  bool has_use_cache_ = false;
  bool has_past_key_values_ = false;
  bool has_capacity_source_ = false;
  bool has_scope_ = false;
  std::size_t problem_count_ = 0;
  std::optional<Location> more_problems_loc_;

  std::vector<Open> open_;
  std::vector<Frame> frames_;
  std::vector<GuardRef> guards_;
  std::vector<std::size_t> captures_open_;
  std::vector<std::unique_ptr<ClassState>> classes_;
  std::vector<std::size_t> class_fact_index_;
  std::vector<std::vector<std::string_view>> params_;
  uint32_t function_depth_ = 0;
  std::unordered_map<std::string, std::string, SvHash, std::equal_to<>> aliases_;
  std::vector<std::string> star_targets_;
  uint32_t last_scope_use_end_ = 0;
};

}  // namespace

struct PythonAnalyzer::Impl {
  facts::Vocabulary vocabulary;
  AnalysisBudget budget;
  Grammar grammar;
  ParserPtr parser;
  std::unordered_set<std::string_view> cache_names;
  uint64_t last_steps = 0;

  Impl(const facts::Vocabulary& v, AnalysisBudget b) : vocabulary(v), budget(b), parser(ts_parser_new()) {
    ts_parser_set_language(parser.get(), grammar.language);
    for (const auto& name : vocabulary.cache_classes) cache_names.insert(name);
  }
};

uint64_t AnalysisBudget::for_source(std::size_t bytes) const {
  return std::max(minimum_steps, steps_per_byte * static_cast<uint64_t>(bytes));
}

PythonAnalyzer::PythonAnalyzer(const facts::Vocabulary& vocabulary, AnalysisBudget budget)
    : impl_(std::make_unique<Impl>(vocabulary, budget)) {}
PythonAnalyzer::~PythonAnalyzer() = default;
PythonAnalyzer::PythonAnalyzer(PythonAnalyzer&&) noexcept = default;
PythonAnalyzer& PythonAnalyzer::operator=(PythonAnalyzer&&) noexcept = default;

uint64_t PythonAnalyzer::last_steps() const {
  return impl_->last_steps;
}

facts::FileFacts PythonAnalyzer::analyze(std::string_view path, std::string_view source,
                                         std::string module_name) {
  impl_->last_steps = 0;
  facts::FileFacts out;
  out.path = std::string(path);
  out.module_name = std::move(module_name);
  if (source.size() > UINT32_MAX) {
    out.parse_problems.push_back({facts::Location{out.path, 1, 1, 1, 1}, "file too large to parse"});
    return out;
  }
  TreePtr tree(ts_parser_parse_string(impl_->parser.get(), nullptr, source.data(),
                                      static_cast<uint32_t>(source.size())));
  if (!tree) {
    out.parse_problems.push_back({facts::Location{out.path, 1, 1, 1, 1}, "parser gave up"});
    return out;
  }
  const TSNode root = ts_tree_root_node(tree.get());
  FileWalker walker(impl_->grammar, impl_->vocabulary, impl_->cache_names, out.path, source, root, out,
                    impl_->budget.for_source(source.size()));
  walker.run(root);
  impl_->last_steps = walker.steps();
  return out;
}

facts::FileFacts analyze(std::string_view path, std::string_view source, const facts::Vocabulary& vocabulary,
                         std::string module_name) {
  PythonAnalyzer analyzer(vocabulary);
  return analyzer.analyze(path, source, std::move(module_name));
}

}  // namespace kvlint::python
