// Project-wide resolution over the facts of every analysed file: classes by
// name, inheritance, module-ness, ownership hops and which declarations cover
// a class. Rules read facts only through this view.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"

namespace kvlint::facts {

struct ClassRef {
  const FileFacts* file = nullptr;
  const ClassFact* cls = nullptr;
  explicit operator bool() const { return cls != nullptr; }
  bool operator==(const ClassRef& o) const { return cls == o.cls; }
};

enum class Tristate { No, Yes, Unknown };

// How a declaration covers a class.
struct Cover {
  enum class How {
    Own,                // the class's own model_local_kv_specs
    Inherited,          // from a base class
    ForwardedByHolder,  // a holder forwards: return self.<attr>.model_local_kv_specs()
    DeclaredByHolder,   // a holder (transitively) declares specs itself
    // The class (or a holder of it) is built for a module that declares specs: the module is
    // handed to its constructor or factory (`StreamingAudioKVCache.for_encoder(encoder)`),
    // which sizes it from that module; no hop.
    DeclaredByBuiltFor,
  };
  How how = How::Own;
  const FileFacts* file = nullptr;
  const Declaration* declaration = nullptr;
  ClassRef declarer;                  // class whose method it is
  const OwnershipHop* hop = nullptr;  // for the holder cases: the hop from the holder
};

struct Holder {
  ClassRef holder;
  const OwnershipHop* hop = nullptr;
};

// A method of a project class, or a module-level function (`cls` empty).
struct CodeRef {
  const FileFacts* file = nullptr;
  ClassRef cls;  // the class that defines the method (the receiver's class or an ancestor)
  const MethodFact* method = nullptr;
  explicit operator bool() const { return method != nullptr; }
  bool operator==(const CodeRef& o) const { return method == o.method; }
};

// `Cls(...)` / `Cls.factory(...)` somewhere in the project, with the class that runs it.
struct Built {
  const FileFacts* file = nullptr;
  ClassRef by;  // empty for a module-level function
  const Construction* construction = nullptr;
};

// A call from another class into a method of a held object (`self.decoder.enable_graphs()`
// where `self.decoder` holds the class): who switches that object's behaviour on.
struct Invocation {
  CodeRef caller;
  const CallFact* call = nullptr;
};

// Code that writes attention KV, reached from some entry point.
struct KvWrite {
  enum class Kind {
    BuildsCache,    // constructs a cache object (not one built only when its caller asks)
    ImplicitCache,  // calls a model with `use_cache=True` and no cache: transformers builds one
    WritesCache,    // a call that passes `use_cache=True` or a cache the object keeps
    RawKv,          // writes, reads or hands on raw K/V its class keeps (cache_site's raw_kv)
  };
  Kind kind = Kind::BuildsCache;
  CodeRef where;    // the method it sits in (empty `method` for code directly in a capture body)
  ClassRef holder;  // the class whose code it is
  Location loc;
  const CacheSite* cache_site = nullptr;        // BuildsCache; RawKv: the kept tensors' allocation
  const ImplicitCacheSite* implicit = nullptr;  // ImplicitCache
  std::string callee;                       // ImplicitCache / WritesCache: the call as written; RawKv: how
  bool reads_only = false;                  // WritesCache / RawKv: the code only reads the K/V
  const RawKvAccess* raw_access = nullptr;  // RawKv: the use
  std::string entry;  // the captured call it was reached through ("model.step"); empty when direct
  // The entry call's receiver was a parameter of the capturing function (`model` in
  // `Graph.capture(cls, model, ...)`), resolved to this class.
  std::string through_parameter;
  ClassRef parameter_class;
};

// Whether a class of the Python module `module_name` may be the one an absolute dotted prefix
// names it by (`typing` in `typing.Protocol`): find_class takes no other, and the engine's
// base-class search parses no other file for it.
bool may_be_module(std::string_view module_name, std::string_view prefix);

// What questions put to a Project could be answered by files it was not given: the names
// looked up and the names whose uses were asked for. A project records them when given a
// Demand (thread-safe: the rules ask side by side); the engine then analyses the files whose
// text could answer them and asks again (engine.cpp). A question about a class also names the
// class: a class of the same simple name elsewhere could be the one its uses resolve to.
class Demand {
 public:
  // A class looked up by name (find_class): files defining a class of that simple name.
  void class_named(std::string_view simple);
  // A module-level function looked up by name: files defining a function of that name.
  void function_named(std::string_view name);
  // Places that build a class (`Name(...)`, `Name.factory(...)`): holders and constructions.
  void built(std::string_view simple);
  // Any other use of a name: annotations, bases, calls of a method or function, attributes.
  void mentioned(std::string_view name);
  // A module-level constant looked up by name: files assigning it at module level.
  void constant_named(std::string_view name);
  // Objects that hand themselves over into `attribute` (`decoder.<attribute> = self`).
  void handed_self(std::string_view attribute);
  // A question no text test narrows: every file.
  void everything();

  struct Wants {
    std::set<std::string> classes, functions, built, mentioned, constants, handed_self;
    bool everything = false;
    bool empty() const {
      return !everything && classes.empty() && functions.empty() && built.empty() && mentioned.empty() &&
             constants.empty() && handed_self.empty();
    }
  };
  Wants take();

 private:
  void add(std::set<std::string> Wants::*names, std::string_view name);
  std::mutex mutex_;
  Wants wants_;
};

class Project {
 public:
  // With `demand`, the project records there what it was asked (see Demand).
  Project(std::vector<FileFacts> files, Vocabulary vocabulary, Demand* demand = nullptr);
  Project(const Project&) = delete;
  Project& operator=(const Project&) = delete;
  ~Project();

  const std::vector<FileFacts>& files() const { return files_; }
  const Vocabulary& vocabulary() const { return vocabulary_; }
  // Hands the facts back, in the order given, and leaves the project empty: a caller that
  // builds a project only to ask it something keeps its facts without a copy.
  std::vector<FileFacts> release_files() &&;

  // Every class defined in the project, in file order.
  const std::vector<ClassRef>& classes() const { return classes_; }
  // A class by resolved (dotted) or simple name, seen from `from` (same file first,
  // then a file whose module name matches the dotted prefix, then any unique match).
  ClassRef find_class(std::string_view name, const FileFacts* from = nullptr) const;
  // The class `simple` names in `file`: one defined there, or a C++ class whose methods the file
  // defines out of line, which is the class its header defines (see parts()).
  ClassRef class_of(const FileFacts& file, std::string_view simple) const;
  // The entries one class has across files, itself first: a C++ class defined in a header and
  // the out-of-line entries of the .cpp files that define its methods (ClassFact::out_of_line),
  // joined by qualified name. classes() holds only the first; every lookup by class (sites,
  // hops, holders, methods) covers them all. A Python class has one entry.
  std::vector<ClassRef> parts(ClassRef cls) const;
  // The methods of the class itself (all its parts), each with the file that defines it.
  std::vector<CodeRef> methods_of(ClassRef cls) const;

  // Bases resolved within the project, breadth first, the class itself excluded.
  std::vector<ClassRef> ancestors(ClassRef cls) const;
  // The classes deriving from `cls`, directly or not, in project order.
  std::vector<ClassRef> descendants(ClassRef cls) const;

  // Rules start from the facts they check (sites, captures, declarations) and reach the rest
  // through the questions below; with a Demand, each question records what files not given to
  // the project could add to its answer. These three stand in for going over classes():
  // the classes that declare or inherit a declaration (inherited_declarations() is non-empty),
  // and those coverage() can be non-empty for (the former, and the classes they hold, through
  // their own hops or their bases', as deep as coverage() follows holders), in project order.
  std::vector<ClassRef> declaring_classes() const;
  std::vector<ClassRef> covered_classes() const;
  // Every method and module-level function of the project, in project order, for a scan for
  // calls of the `methods` of some class: a file not given to the project could add one only by
  // naming one of them (`.decode(`), or, for `forward` / `__call__`, by calling a held module
  // itself, which any file could (that records a demand for every file).
  std::vector<CodeRef> code_calling(const std::vector<std::string>& methods) const;
  // `obj.<attribute> = self` assignments anywhere, with their files.
  std::vector<std::pair<const FileFacts*, const ReverseAssignment*>> reverse_assignments_of(
      std::string_view attribute) const;
  // Module-level `NAME = <literal>` constants of every file, by name.
  std::vector<std::pair<const FileFacts*, const Constant*>> module_constants(std::string_view name) const;
  // Yes when the bases reach an nn.Module; No when every base is resolved and
  // none does; Unknown when some base is outside the project and not a known module.
  Tristate is_module(ClassRef cls) const;

  // The class's own model_local_kv_specs, or the nearest inherited one.
  const Declaration* own_declaration(ClassRef cls) const;
  std::vector<Cover> inherited_declarations(ClassRef cls) const;  // Own first, then Inherited
  // Classes that hold an instance of `cls` (self.x = Cls(...)) directly, then their
  // subclasses (which inherit the hop).
  std::vector<Holder> holders(ClassRef cls) const;
  // Classes that keep an instance of `cls` they were handed: `self.decoder = decoder`
  // with `decoder: Decoder` annotated, or that `cls` hands itself to
  // (`decoder._graph_wrapper = self`). The hop is synthesized from that assignment.
  // Not part of holders() or coverage(): the holder did not build it.
  std::vector<Holder> parameter_holders(ClassRef cls) const;
  // Every declaration covering `cls`: own, inherited, forwarded by a holder
  // through the hop's attribute, declared by a holder (transitively, bounded), or declared by a
  // module `cls` (or a holder) is built for (built_for).
  std::vector<Cover> coverage(ClassRef cls) const;
  // The project classes an instance of `cls` is built for: an argument of a construction of
  // `cls` (`Cls(...)`, `Cls.factory(...)`) that is a parameter or a `self.<attr>` whose class is
  // known (`StreamingAudioKVCache.for_encoder(encoder, ...)` in a function its callers hand
  // `self.apm`): the module whose K/V the object stores, built by code that is not that module.
  std::vector<ClassRef> built_for(ClassRef cls) const;

  // Classes reached from `cls` through ownership hops, or attributes set from a parameter
  // whose class is known (`self.decoder = decoder`), transitively, `cls` included.
  std::vector<ClassRef> owned_closure(ClassRef cls) const;
  // Sites whose owner class is `cls` or one of its ancestors.
  std::vector<const CacheSite*> cache_sites_of(ClassRef cls) const;
  std::vector<const ImplicitCacheSite*> implicit_caches_of(ClassRef cls) const;
  std::vector<const CaptureSite*> captures_of(ClassRef cls) const;
  std::vector<const BatchEvidence*> batch_evidence_of(ClassRef cls) const;
  // `self.<attribute> = ...` assignments in `cls` or its ancestors (source order per class).
  std::vector<const AttributeAssignment*> attribute_assignments_of(ClassRef cls,
                                                                   std::string_view attribute) const;

  // Value of a Constant by name, looked up in the class then the file.
  const Constant* constant(const FileFacts& file, std::string_view owner_class, std::string_view name) const;

  // ---- following code (calls, attributes and parameters resolved to project classes) ----
  // `name` on the class or its nearest ancestor that defines it.
  CodeRef find_method(ClassRef cls, std::string_view name) const;
  // The function or method a capture / cache site sits in (`owner_class` empty: a module-level function).
  CodeRef code_at(const FileFacts& file, std::string_view owner_class, std::string_view method) const;
  // The class an attribute holds: `self.x = Cls(...)` (a hop), `obj.x = self` in the class
  // handed over (`decoder._graph_wrapper = self`), or `self.x = param` where the parameter's
  // class is known (annotation, or what the callers pass). Bases included.
  ClassRef attribute_class(ClassRef cls, std::string_view attribute) const;
  // The class a parameter receives: its annotation, else what an in-project call site
  // passes (`Graph.capture(self, ...)` from class T gives T; `self.x` gives that attribute's class;
  // for a module-level function, `capture_decode_step(self, bs)`).
  ClassRef parameter_class(CodeRef code, std::string_view parameter) const;
  // The functions a call written in `from` may run: `self.m`, `self.a.b.m`, `param.m`,
  // `Cls.m`, a module-level function, or a held module called directly (its forward / __call__).
  std::vector<CodeRef> resolve_call(CodeRef from, std::string_view callee) const;
  // Every KV write reached from a capture: in its body, then through the captured calls,
  // followed into the project's methods and functions (bounded depth).
  std::vector<KvWrite> kv_reached_by(const FileFacts& file, const CaptureSite& capture) const;
  // Every place that constructs `cls` (or calls one of its class methods), in file order.
  std::vector<Built> constructions_of(ClassRef cls) const;
  // Calls from outside `cls` into its method `method` through an attribute that holds it.
  std::vector<Invocation> invocations_of(ClassRef cls, std::string_view method) const;
  // Calls of a module-level function by its name (`capture_step(self, bs)`), from anywhere
  // in the project.
  std::vector<Invocation> function_callers(CodeRef function) const;
  // Methods of `cls` (bases included) from which `method` is reached through `self.` calls,
  // `method` itself included.
  std::vector<std::string> self_callers(ClassRef cls, std::string_view method) const;

  // Whether the class is itself a cache class (a vocabulary cache class, or one
  // deriving from one or from transformers' `Cache`): caches that build caches
  // (EncoderDecoderCache's halves) are the library's structure, not a model's allocation.
  bool is_cache_class(ClassRef cls) const;

  // Project classes deriving (transitively) from a cache class: their simple names.
  std::vector<std::string> cache_subclasses() const;
  // The same of a project of `files`, borrowed and given back unchanged, with only the class
  // index built (the engine asks it after every widening round, of every file analysed so far).
  static std::vector<std::string> cache_subclasses(std::vector<FileFacts>& files,
                                                   const Vocabulary& vocabulary);

 private:
  struct Index;
  struct ClassesOnly {};
  Project(std::vector<FileFacts> files, Vocabulary vocabulary, ClassesOnly);
  void index_classes();
  ClassRef attribute_class_at(ClassRef cls, std::string_view attribute, int depth) const;
  ClassRef parameter_class_at(CodeRef code, std::string_view parameter, int depth) const;
  ClassRef function_parameter_class(CodeRef code, std::size_t index, std::string_view parameter,
                                    int depth) const;
  // The class of the object `parts[0..n-1)` names in `from` (`self.a.b`, `param`, `Cls`).
  ClassRef receiver_class(CodeRef from, const std::vector<std::string_view>& parts) const;
  CodeRef find_function(const FileFacts& from, std::string_view name) const;
  // Raw K/V one class keeps and another hands to attention (project_raw_kv_handoffs.cpp): cache
  // sites appended to the owners' files; joined_from_ is each file's site count before them.
  void join_raw_kv_handoffs();
  std::vector<std::size_t> joined_from_;
  std::vector<KvWrite> kv_writes_in(CodeRef code) const;
  std::vector<FileFacts> files_;
  Vocabulary vocabulary_;
  std::vector<ClassRef> classes_;
  std::unique_ptr<Index> index_;
  Demand* demand_ = nullptr;
};

}  // namespace kvlint::facts
