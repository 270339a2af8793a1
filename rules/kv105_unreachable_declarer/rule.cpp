// KV105 unreachable-declarer: a class that is not a submodule declares, and no module
// that holds it forwards its specs.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "rules/common/rule_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV105", "unreachable-declarer", Severity::Error,
    "A class that is not an nn.Module declares specs, and no module that holds it forwards them: "
    "the collector never sees them.",
    R"doc(## What it does
Reports a class that has a `model_local_kv_specs()` (its own or inherited) while it is
not an `nn.Module` -- every base resolves inside the project and none reaches
`nn.Module` -- when no class that holds it (`self.gen = MingAudioGenerator(...)`, or
`self.gen = gen` from a parameter annotated with the class) has a
declaration that forwards to it through that attribute
(`specs += self.gen.model_local_kv_specs()`) and is itself reached: a module, or a
class reached the same way (chains of explicit hops are followed).

A pure forwarder that is not a module (a `CUDAGraphWrapper` whose declaration only
returns `self.runnable.model_local_kv_specs()`) declares nothing of its own and is not
reported; the collector calls `unwrap()` and reaches the runnable directly.

Classes whose bases leave the project (unknown whether they are modules) are not reported.

## Why it matters
`collect_model_local_kv_specs()` walks `named_modules()`. An owner that is not a
submodule -- the reference document names Qwen3-TTS's graph wrapper and ming's
`MingAudioGenerator` -- is only found "by one explicit hop from the module that holds it".
Without that hop its declaration is dead code: the runner logs nothing for ming's 24 MiB
talker `StaticCache`, and every other rule is satisfied by a declaration nobody calls.

## Example
```python
class MingAudioGenerator:                      # plain object, not a submodule
    def model_local_kv_specs(self):            # KV105
        return [spec_from_hf_config(self._llm_config, name="talker", ...)]

class MingTalker(nn.Module):
    def __init__(self, cfg):
        self.gen = MingAudioGenerator(cfg)
```
Fixed:
```python
    def model_local_kv_specs(self):            # on MingTalker
        return self.gen.model_local_kv_specs()
```

In C++, a plain class is not a `torch::nn::Module` either:
```cpp
class KvPool {  // not a module
  std::vector<mlkv::Spec> model_local_kv_specs() const;  // KV105 unless the holder forwards:
};
struct Talker : torch::nn::Module {
  std::vector<mlkv::Spec> model_local_kv_specs() const { return pool_->model_local_kv_specs(); }
  std::shared_ptr<KvPool> pool_;
};
```

## How to fix
Forward from the module that holds the object, through the attribute it is held in. Or
make the holder declare the specs itself and delete the unreachable declaration. In C++ the
holding `torch::nn::Module`'s `model_local_kv_specs()` returns `pool_->model_local_kv_specs()`
(or appends it to its own specs).
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    const std::vector<facts::ClassRef> declaring = project.declaring_classes();
    std::set<const facts::ClassFact*> reached = reached_classes(project, declaring);
    for (facts::ClassRef cls : declaring) {
      if (reached.count(cls.cls)) continue;
      auto covers = project.inherited_declarations(cls);
      if (covers.empty()) continue;
      const facts::Cover& cover = covers.front();
      // A pure forwarder declares nothing of its own; what it forwards to is judged there.
      if (cover.declaration->specs.empty()) continue;
      auto holders = all_holders(project, cls);
      if (holders.empty()) {
        // Nobody holds it: report the declaring class once, unless a subclass is held
        // (that subclass is judged on its own holders).
        if (cover.how != facts::Cover::How::Own || has_held_descendant(project, cls)) continue;
      }
      out.push_back(make_finding(project, cls, cover, holders));
    }
  }

 private:
  // Holders that built it, and holders handed it through an annotated parameter
  // (`def __init__(self, decoder: Decoder): self.decoder = decoder`).
  static std::vector<facts::Holder> all_holders(const facts::Project& project, facts::ClassRef cls) {
    std::vector<facts::Holder> out = project.holders(cls);
    for (const facts::Holder& h : project.parameter_holders(cls)) out.push_back(h);
    return out;
  }

  static bool forwards(const facts::Project& project, const facts::Holder& h) {
    for (const auto& c : project.inherited_declarations(h.holder))
      for (const auto& fwd : c.declaration->forwards)
        if (fwd.via_attribute == h.hop->attribute) return true;
    return false;
  }

  // Which of the `declaring` classes and the classes holding them (transitively) the collector
  // reaches: modules (or possibly modules), then, to a fixpoint, classes held by a reached class
  // whose declaration forwards through the hop. Whether a class is reached depends only on its
  // holders, so the classes holding the declaring ones are all it takes.
  static std::set<const facts::ClassFact*> reached_classes(const facts::Project& project,
                                                           const std::vector<facts::ClassRef>& declaring) {
    std::vector<facts::ClassRef> relevant;
    std::map<const facts::ClassFact*, std::vector<facts::Holder>> holders_of;
    std::deque<facts::ClassRef> queue(declaring.begin(), declaring.end());
    while (!queue.empty()) {
      const facts::ClassRef c = queue.front();
      queue.pop_front();
      if (holders_of.count(c.cls)) continue;
      relevant.push_back(c);
      const std::vector<facts::Holder>& holders = holders_of[c.cls] = all_holders(project, c);
      for (const facts::Holder& h : holders)
        if (!holders_of.count(h.holder.cls)) queue.push_back(h.holder);
    }
    std::set<const facts::ClassFact*> reached;
    for (facts::ClassRef c : relevant)
      if (project.is_module(c) != facts::Tristate::No) reached.insert(c.cls);
    for (bool grew = true; grew;) {
      grew = false;
      for (facts::ClassRef c : relevant) {
        if (reached.count(c.cls)) continue;
        for (const facts::Holder& h : holders_of[c.cls]) {
          if (reached.count(h.holder.cls) && forwards(project, h)) {
            reached.insert(c.cls);
            grew = true;
            break;
          }
        }
      }
    }
    return reached;
  }

  static bool has_held_descendant(const facts::Project& project, facts::ClassRef cls) {
    for (facts::ClassRef c : project.descendants(cls))
      if (!all_holders(project, c).empty()) return true;
    return false;
  }

  static Finding make_finding(const facts::Project& project, facts::ClassRef cls, const facts::Cover& cover,
                              const std::vector<facts::Holder>& holders) {
    const std::string method = rules::declaration_name(project);
    Finding f = kvlint::make_finding(
        kInfo, cover.how == facts::Cover::How::Own ? cover.declaration->loc : cls.cls->loc, cls.cls->name);
    const rules::Spelling spelling = rules::Spelling::of(cls);
    std::string declares =
        cover.how == facts::Cover::How::Own
            ? fmt::format("`{}` declares `{}` (line {})", cls.cls->name, method, cover.declaration->loc.line)
            : fmt::format("`{}` inherits `{}` from `{}` (line {})", cls.cls->name, method,
                          cover.declarer.cls->name, cover.declaration->loc.line);
    if (cover.how != facts::Cover::How::Own)
      f.related.push_back(rules::related(cover.declaration->loc, "the inherited declaration"));
    std::string reach;
    if (holders.empty()) {
      reach = "no module holds it";
    } else {
      for (std::size_t i = 0; i < holders.size(); ++i) {
        const auto& h = holders[i];
        auto holder_covers = project.inherited_declarations(h.holder);
        std::string what;
        if (forwards(project, h))
          what = fmt::format("forwards to it, and `{}` is itself not reached by the collector",
                             h.holder.cls->name);
        else if (holder_covers.empty())
          what = "declares nothing";
        else
          what = fmt::format("its `{}` does not forward to it", method);
        reach += fmt::format("{}`{}` holds it as `{}` (line {}) but {}", i ? "; " : "", h.holder.cls->name,
                             spelling.member(h.hop->attribute), h.hop->loc.line, what);
        f.related.push_back(
            rules::related(h.hop->loc, fmt::format("`{}` holds it here", h.holder.cls->name)));
        if (!holder_covers.empty() && !forwards(project, h))
          f.related.push_back(
              rules::related(holder_covers.front().declaration->loc,
                             fmt::format("add `{}` here", spelling.member_call(h.hop->attribute, method))));
      }
    }
    f.message = fmt::format(
        "{} but is not {}, so `{}` (which walks `named_modules()`) never reaches it: {}; forward "
        "from the module that holds it with `{}`",
        declares, spelling.a_module(), project.vocabulary().collector, reach,
        spelling.member_call("<attr>", method));
    return f;
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv105_unreachable_declarer() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
