// The unsafe fix for KV101 / KV102: a `model_local_kv_specs` skeleton on the owner class,
// filled from what the facts say about each cache (its config, its capacity bound, the
// scope and row driver its retention and batch evidence suggest), with an empty
// `rows_reason` that KV201 keeps flagging until a person writes the reason.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "rules/finding.hpp"

namespace kvlint::rules {

// One spec of the skeleton, derived from one cache site.
struct SkeletonSpec {
  std::string name;             // "prompt_encoder_prompt_cache_kv"
  std::string config;           // "self.config"
  std::string capacity;         // "self.config.max_position_embeddings"
  std::string capacity_source;  // "max_position_embeddings"
  std::string scope;            // "SESSION"
  bool per_sequence = false;    // RowDriver.MAX_NUM_SEQS; else FIXED with a placeholder reason
};

SkeletonSpec skeleton_spec(const facts::Project& project, facts::ClassRef owner,
                           const facts::CacheSite& site);
SkeletonSpec skeleton_spec(const facts::Project& project, facts::ClassRef owner,
                           const facts::ImplicitCacheSite& site);

// The fix that adds the declaration (and the protocol import when the file lacks it);
// nullopt when the facts lack the class body's position, and for a class outside Python
// (a C++ skeleton would not compile from what the facts know; see the .cpp).
std::optional<Fix> declaration_skeleton_fix(const facts::Project& project, facts::ClassRef owner,
                                            std::vector<SkeletonSpec> specs);

// An owner with more findings than this gives its skeleton to its first finding only.
inline constexpr std::size_t kMaxFindingsSharingASkeleton = 16;

// Collects the specs of every finding's owner, then gives each finding its owner's one
// skeleton (all its caches), so applying several findings' fixes adds one method.
class SkeletonFixes {
 public:
  void add(facts::ClassRef owner, std::size_t finding_index, SkeletonSpec spec);
  void attach(const facts::Project& project, std::vector<Finding>& findings) const;

 private:
  struct Owner {
    facts::ClassRef cls;
    std::vector<SkeletonSpec> specs;
    std::vector<std::size_t> findings;
  };
  std::vector<Owner> owners_;
};

}  // namespace kvlint::rules
