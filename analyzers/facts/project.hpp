// Project-wide resolution over the facts of every analysed file: classes by
// name, inheritance, module-ness, ownership hops and which declarations cover
// a class. Rules read facts only through this view.
#pragma once

#include <map>
#include <memory>
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
    Own,             // the class's own model_local_kv_specs
    Inherited,       // from a base class
    ForwardedByHolder,  // a holder forwards: return self.<attr>.model_local_kv_specs()
    DeclaredByHolder,   // a holder (transitively) declares specs itself
  };
  How how = How::Own;
  const FileFacts* file = nullptr;
  const Declaration* declaration = nullptr;
  ClassRef declarer;              // class whose method it is
  const OwnershipHop* hop = nullptr;  // for the holder cases: the hop from the holder
};

struct Holder {
  ClassRef holder;
  const OwnershipHop* hop = nullptr;
};

class Project {
 public:
  Project(std::vector<FileFacts> files, Vocabulary vocabulary);
  Project(const Project&) = delete;
  Project& operator=(const Project&) = delete;
  ~Project();

  const std::vector<FileFacts>& files() const { return files_; }
  const Vocabulary& vocabulary() const { return vocabulary_; }

  // Every class defined in the project, in file order.
  const std::vector<ClassRef>& classes() const { return classes_; }
  // A class by resolved (dotted) or simple name, seen from `from` (same file first,
  // then a file whose module name matches the dotted prefix, then any unique match).
  ClassRef find_class(std::string_view name, const FileFacts* from = nullptr) const;
  ClassRef class_of(const FileFacts& file, std::string_view simple) const;

  // Bases resolved within the project, breadth first, the class itself excluded.
  std::vector<ClassRef> ancestors(ClassRef cls) const;
  // Yes when the bases reach an nn.Module; No when every base is resolved and
  // none does; Unknown when some base is outside the project and not a known module.
  Tristate is_module(ClassRef cls) const;

  // The class's own model_local_kv_specs, or the nearest inherited one.
  const Declaration* own_declaration(ClassRef cls) const;
  std::vector<Cover> inherited_declarations(ClassRef cls) const;  // Own first, then Inherited
  // Classes that hold an instance of `cls` (self.x = Cls(...)) directly, then their
  // subclasses (which inherit the hop).
  std::vector<Holder> holders(ClassRef cls) const;
  // Every declaration covering `cls`: own, inherited, forwarded by a holder
  // through the hop's attribute, or declared by a holder (transitively, bounded).
  std::vector<Cover> coverage(ClassRef cls) const;

  // Classes reached from `cls` through ownership hops, transitively, `cls` included.
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
  const Constant* constant(const FileFacts& file, std::string_view owner_class,
                           std::string_view name) const;

  // Whether the class is itself a cache class (a vocabulary cache class, or one
  // deriving from one or from transformers' `Cache`): caches that build caches
  // (EncoderDecoderCache's halves) are the library's structure, not a model's allocation.
  bool is_cache_class(ClassRef cls) const;

  // Project classes deriving (transitively) from a cache class: their simple names.
  std::vector<std::string> cache_subclasses() const;

 private:
  struct Index;
  std::vector<FileFacts> files_;
  Vocabulary vocabulary_;
  std::vector<ClassRef> classes_;
  std::unique_ptr<Index> index_;
};

}  // namespace kvlint::facts
