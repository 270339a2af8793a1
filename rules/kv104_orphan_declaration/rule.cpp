// KV104 orphan-declaration: a declaration whose owner neither builds a cache nor captures one.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rules/common/rule_support.hpp"
#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV104", "orphan-declaration", Severity::Warning,
    "A model_local_kv_specs declaration whose class neither builds a cache nor captures one, "
    "directly or through what it holds.",
    R"doc(## What it does
Reports a `model_local_kv_specs()` that returns at least one spec while its class -- with
its base classes, its subclasses in the project, and every class it holds through
`self.<attr> = Cls(...)`, or through `self.<attr> = param` where the parameter's class is
known (an annotation such as `decoder: Decoder`, or what its callers pass), transitively --
neither constructs a cache object, nor calls a model with `use_cache=True`, nor captures a
CUDA graph.

A pure forwarder (only `return self.<attr>.model_local_kv_specs()`, no specs of its own)
is not an orphan: it is how a non-module declarer is reached.

## Why it matters
A declaration with nothing behind it is either stale (the cache was removed, the number
stayed) or on the wrong class (the cache moved to a sibling, which is now undeclared).
Either way the runner logs memory that no deployment allocates -- the same failure as the
reference document's revision that "declared unconditionally and invented roughly a
gigabyte for stateless deployments".

## Example
```python
class SpeakerEncoder(nn.Module):          # builds no cache, holds nothing that does
    def model_local_kv_specs(self):        # KV104
        return [spec_from_hf_config(self.config, name="speaker_cache", ...)]
```

In C++:
```cpp
struct ProjectorImpl : torch::nn::Module {           // allocates no K/V, holds nothing that does
  std::vector<mlkv::Spec> model_local_kv_specs() const { return {...}; }  // KV104
};
```

## How to fix
Move the declaration to the class that builds the cache (or a module that holds it), or
delete it if the cache is gone. If the cache is built through an object the analyzer
cannot see (a model loaded with `from_pretrained` and driven elsewhere), suppress with a
reason: `# kvlint: ignore[KV104] cache built by the HF model in self.lm` (in C++,
`// kvlint: ignore[KV104] reason` on the line of `model_local_kv_specs()`).
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& file : project.files()) {
      for (const auto& decl : file.declarations) {
        if (decl.specs.empty()) continue;  // a pure forwarder
        facts::ClassRef owner = project.class_of(file, decl.owner_class);
        if (!owner || backs_a_cache(project, owner)) continue;
        out.push_back(make_finding(project, file, decl));
      }
    }
  }

 private:
  static bool closure_has_cache(const facts::Project& project, facts::ClassRef cls) {
    for (facts::ClassRef k : project.owned_closure(cls))
      if (!project.cache_sites_of(k).empty() || !project.implicit_caches_of(k).empty() ||
          !project.captures_of(k).empty())
        return true;
    return false;
  }

  // The class, or a subclass that inherits the declaration, holds a cache somewhere, or a class
  // with a cache is built for it (`StreamingAudioKVCache.for_encoder(encoder)`: the encoder's
  // declaration covers the session buffers other code keeps).
  static bool backs_a_cache(const facts::Project& project, facts::ClassRef owner) {
    if (closure_has_cache(project, owner)) return true;
    std::vector<facts::ClassRef> lineage = project.descendants(owner);
    for (facts::ClassRef c : lineage)
      if (closure_has_cache(project, c)) return true;
    lineage.push_back(owner);
    for (const auto& file : project.files())
      for (const auto& site : file.cache_sites)
        if (facts::ClassRef cls = project.class_of(file, site.owner_class))
          for (facts::ClassRef module : project.built_for(cls))
            if (std::find(lineage.begin(), lineage.end(), module) != lineage.end()) return true;
    return false;
  }

  static Finding make_finding(const facts::Project& project, const facts::FileFacts& file,
                              const facts::Declaration& decl) {
    Finding f = kvlint::make_finding(kInfo, decl.loc, decl.owner_class);
    const rules::Spelling spelling = rules::Spelling::of(file);
    // C++ has no `use_cache` keyword: a C++ model's caches are the tensors and cache objects it builds.
    const std::string_view builds =
        spelling.is_cpp() ? "builds a cache" : "builds a cache, calls a model with `use_cache=True`";
    std::vector<std::string> labels;
    for (const auto& spec : decl.specs) {
      labels.push_back(spec_support::spec_label(spec));
      f.related.push_back(
          rules::related(spec.loc, fmt::format("declares {} here", spec_support::spec_label(spec))));
    }
    std::string list;
    for (std::size_t i = 0; i < labels.size(); ++i) list += (i ? ", " : "") + labels[i];
    f.message = fmt::format(
        "`{}` (line {}) declares {} but neither `{}` nor any class it holds {} or captures a CUDA graph: the "
        "declaration is stale or on the wrong class; move it to the class that builds the cache or remove it",
        spelling.method(decl.owner_class, rules::declaration_name(project)), decl.loc.line, list,
        decl.owner_class, builds);
    return f;
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv104_orphan_declaration() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
