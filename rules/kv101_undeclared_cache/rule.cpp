// KV101 undeclared-cache: a class constructs a cache object and no declaration covers it.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "rules/common/declaration_skeleton.hpp"
#include "rules/common/rule_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV101", "undeclared-cache", Severity::Error,
    "A class constructs a transformers cache object and no model_local_kv_specs declaration covers it.",
    R"doc(## What it does
Reports every place a class constructs a `transformers` cache object (`DynamicCache`,
`StaticCache`, `EncoderDecoderCache`, ... or a project subclass of one, through any
import alias) when no `model_local_kv_specs()` declaration covers that class: not its
own, not one inherited from a base class (in any file), and not one reached from a
module that holds it (a holder that forwards with `self.<attr>.model_local_kv_specs()`
or declares specs itself), and not one of a module it is built for: a module handed to its
constructor or factory (`SessionKVCache.for_encoder(encoder)` in a function the model calls
with `self.apm`), whose K/V the object stores for sessions or requests the module does not keep. A forward to a class that has no `model_local_kv_specs()` of
its own (and no base outside the project that could supply one) covers nothing.

A cache that lives only for one call still counts: it is per-invocation memory that
the engine's KV budget never saw. Caches the class builds only when its caller asks
(a branch on a cache argument -- the transformers `if use_cache and past_key_values is
None:` pattern -- handed back to the caller) belong to the caller and are reported by
KV102 at the call that asks. That holds only for callers outside the class: a helper
(`_init_kv_cache(use_cache=True)`) that returns its cache to a method of its own class,
which runs the decode loop with it, builds it for that class, and is reported here. A
branch on any other argument (`if batch_size == 0: return None`) is not a caller asking.
Module-level code has no owner class to declare on and is not reported, and neither
are cache classes that build caches (`EncoderDecoderCache` building its two halves): that
is the library's structure, and the outer cache's constructor is the site that counts.

Raw K/V counts the same: plain tensors a class allocates (`torch.empty/zeros/full/ones`, their
`_like` and `new_` forms) and keeps (on `self`, in a container or a dict kept there, through
`register_buffer`, or through a local stored there later) that its code treats as keys and
values -- read by attention (`scaled_dot_product_attention`, flash-attn, `q @ k`, a kernel or
function named for attention such as `_cp_attention_kernel[grid](q, k, v)`), or, when a name
says K/V (`k_cache`, `keys`, `_kv_buf`, a `...KVCache` class), written in a step (slice
assignment, `copy_`, `index_copy_`, `scatter_`, growth by `torch.cat`) or handed on as K/V,
also through views a list comprehension builds over it or a method of the class returns (also
as a tuple, unpacked into locals or splatted into a method's parameters: `self._forward(*views)`
after `views = self._views(b, n)`), and through an allocator under a local name (`zeros =
functools.partial(torch.zeros, ...)`). K/V
grown by `torch.cat` with no allocation of its own (`self.k = torch.cat([self.k, k], 2)`,
`self.kv[layer] = (key, value)` after `key = torch.cat([prev_key, key], 2)`) is a site too, and
a store its class only hands out counts when its name says K/V and its shape has heads,
positions and head_dim. K/V a method returns is kept by the class that stores what it returns
(`self.caches = model._allocate_cache(hidden)`) when the method returns (K, V) pairs -- two
allocations of one shape with heads and head_dim -- and that class uses them (writes, reads or
hands them on); the method must be the class's own or one of another class in the same file.
A tensor whose K/V use is in another class counts too: a class keeps a tensor shaped as
attention is (four dimensions or more, heads and positions among them) and a method of it
returns a view of it (an arena's `att_cache_view()`, a slot pool's `rows()`), and another class
hands that method's return on under a keyword that names attention K/V (`att_cache=`,
`kv_cache=`, `past_key_values=`), on an object whose class the code states (built into the
attribute, annotated, or passed in). The message names the hand-off ("handed to attention as
`att_cache` by `Wrapper._capture` at line 1500"). Handed on as `cnn_cache=`, a mask or hidden
states, or stored from a parameter rather than allocated, it is not K/V.
The message says what was seen ("allocates raw K/V tensors
`keys`/`values` with `torch.empty` ... written as K/V by slice assignment at line 597", "grows
raw K/V tensor `key_values` by `torch.cat`"). Parameters, tensors under two
dimensions or of an integer dtype, and rotary tables, masks, positions, offsets, convolution or
hidden state are not K/V whatever their use. Raw K/V is the model's when its class is a module,
or a module holds or builds it (directly or through classes that are the model's): a class that
only library or engine code builds (transformers' cache layers, a continuous-batching engine's
paged pool), or that a model builds only when its caller asks for a cache and passes none (`if
use_cache and past_key_values is None:`), keeps the library's or the caller's K/V, and is not
reported.

## Why it matters
The engine charges graph-resident memory at profiling time, but the per-request portion
is allocated after profiling and nobody predicted it. The reference document's Qwen3-TTS
codec decoder keeps 4.44 MiB per request: at `max_num_seqs=256` that is about 1.1 GiB
that no per-stage number accounted for. `model_local_kv_specs()` is how the runner learns
about it; a cache with no declaration is invisible.

## Example
```python
class StreamingCodecDecoder(nn.Module):
    def decode_chunk(self, request_id, codes):
        cache = self._caches.setdefault(request_id, DynamicCache())  # KV101
        ...
```
Fixed:
```python
    def model_local_kv_specs(self):
        return [spec_from_hf_config(
            self.config, name="codec_decoder",
            physical_capacity_positions=self.config.sliding_window - 1,
            capacity_source="sliding_window - 1", scope=ModelLocalKVScope.REQUEST,
            dtype=self.dtype, rows=RowDriver.MAX_NUM_SEQS)]
```

In C++ (LibTorch), K/V buffers allocated as members count the same way:
```cpp
struct TalkerDecoderImpl : torch::nn::Module {
  TalkerDecoderImpl() {
    k_cache_ = register_buffer("k_cache", torch::zeros({layers, kMaxCacheLen, heads, dim}));  // KV101
  }
  torch::Tensor k_cache_;
};
```
A ggml K/V finding's related locations are where its memory lives and who else writes it: the
context member its factory is handed (`mctx->ctx_kv.get()`), where that context is created and
sized and its backend buffer allocated, and copies into views of it from other classes
(`ggml_cpy(ctx, prefix, ggml_view_3d(ctx, layers[i].attention.k_cache, ...))`).

## How to fix
Declare the cache on the class that builds it (or a base class), one spec per distinct
allocation. When the class is not an `nn.Module` the collector cannot find it: declare
on the module that holds it, or forward from there with
`self.<attr>.model_local_kv_specs()` (KV105 checks that hop). In C++ the class gets a
`std::vector<mlkv::Spec> model_local_kv_specs() const` member, or the holding
`torch::nn::Module` forwards with `member_->model_local_kv_specs()`; `--fix --unsafe-fixes`
writes a skeleton into Python classes only.

## Runtime verdict
`kvlint confirm` boots the owner's entry and drives its paths. Confirmed when a cache
created at the finding's file:line is observed; refuted when a path of the owner's entry
ran to completion and none was; not-exercised when no entry boots the owner.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    rules::SkeletonFixes skeletons;
    // A site in another file than its facts' (a singleton's allocation in its header, found by
    // each file that uses the buffer as K/V): one finding, with every such file's uses.
    std::map<std::tuple<std::string, uint32_t, uint32_t, std::string>, std::size_t> reported_elsewhere;
    for (const auto& file : project.files()) {
      for (const auto& site : file.cache_sites) {
        if (site.owner_class.empty() || site.caller_requested) continue;
        facts::ClassRef owner = project.class_of(file, site.owner_class);
        if (!owner || project.is_cache_class(owner)) continue;
        // K/V an ONNX Runtime session's outputs feed back is kept by the class that runs the
        // session: the model itself, whoever holds it (often a pimpl facade nothing else holds).
        if (site.raw_kv && site.tensor_library != facts::TensorLibrary::OnnxRuntime &&
            !rules::kept_by_the_model(project, owner))
          continue;
        auto covers = project.coverage(owner);
        if (!covers.empty() && !forwards_to_nothing(project, owner, covers)) continue;
        Finding f = make_finding(project, file, owner, site);
        if (site.loc.file != file.path) {
          const auto key =
              std::make_tuple(site.loc.file.str(), site.loc.line, site.loc.column, site.retained_as);
          if (auto it = reported_elsewhere.find(key); it != reported_elsewhere.end()) {
            for (auto& r : f.related)
              if (r.loc.file != site.loc.file) out[it->second].related.push_back(std::move(r));
            continue;
          }
          reported_elsewhere.emplace(key, out.size());
        }
        rules::relate_holder_declarations(project, owner, f);
        out.push_back(std::move(f));
        // A class that is not an nn.Module is declared on its holder: no skeleton on it.
        if (project.is_module(owner) != facts::Tristate::No)
          skeletons.add(owner, out.size() - 1, rules::skeleton_spec(project, owner, site));
      }
    }
    skeletons.attach(project, out);
  }

 private:
  // Holders forward to the class, but it has no declaration to forward to, and every
  // base is known (an outside base could supply the method).
  static bool forwards_to_nothing(const facts::Project& project, facts::ClassRef owner,
                                  const std::vector<facts::Cover>& covers) {
    for (const auto& c : covers)
      if (c.how != facts::Cover::How::ForwardedByHolder) return false;
    return project.is_module(owner) != facts::Tristate::Unknown;
  }

  static Finding make_finding(const facts::Project& project, const facts::FileFacts& file,
                              facts::ClassRef owner, const facts::CacheSite& site) {
    Finding f = kvlint::make_finding(kInfo, site.loc, site.owner_class);
    f.member = rules::retained_attribute(site);
    const rules::Spelling spelling = rules::Spelling::of(owner);
    const std::string method =
        site.method.empty() ? std::string() : " in " + spelling.method_phrase(site.method);
    std::string fix;
    if (rules::foreign_tensor(site)) {
      // ggml or ONNX Runtime code has no module to declare on: the class itself declares
      // (the header needs no LibTorch), or a class that holds it forwards.
      fix = fmt::format(
          "declare it in `{}()` (`kvlint/model_local_kv.h` needs no LibTorch), or on a class that holds "
          "`{}` and forwards with `{}`",
          spelling.method(site.owner_class, rules::declaration_name(project)), site.owner_class,
          spelling.member_call("<attr>", rules::declaration_name(project)));
    } else if (project.is_module(owner) == facts::Tristate::No) {
      fix = fmt::format(
          "`{}` is not {}, so declare it on a module that holds it or forward "
          "from there with `{}`",
          site.owner_class, spelling.a_module(),
          spelling.member_call("<attr>", rules::declaration_name(project)));
    } else {
      fix = fmt::format("declare it in `{}()`, or forward to it from a module that holds it",
                        spelling.method(site.owner_class, rules::declaration_name(project)));
    }
    std::vector<std::string> holder_notes;
    for (const auto& h : project.holders(owner)) {
      bool forwards = false;
      for (const auto& c : project.inherited_declarations(h.holder))
        for (const auto& fwd : c.declaration->forwards)
          forwards = forwards || fwd.via_attribute == h.hop->attribute;
      holder_notes.push_back(
          fmt::format("`{}` holds it as `{}` (line {}){}", h.holder.cls->name,
                      rules::Spelling::of(h.holder).member(h.hop->attribute), h.hop->loc.line,
                      forwards ? fmt::format(" and forwards to a `{}` that `{}` does not have",
                                             rules::declaration_name(project), site.owner_class)
                               : std::string()));
      f.related.push_back(
          rules::related(h.hop->loc, fmt::format("`{}` holds `{}` here and declares nothing that covers it",
                                                 h.holder.cls->name, site.owner_class)));
    }
    std::string holders;
    for (std::size_t i = 0; i < holder_notes.size(); ++i) holders += "; " + holder_notes[i];
    f.message = fmt::format("`{}` {}{} (line {}) and {}, but no `{}` declaration covers `{}`: {}{}",
                            site.owner_class, rules::describe_construction(site, "constructs"), method,
                            site.loc.line, rules::describe_retention(site, spelling),
                            rules::declaration_name(project), site.owner_class, fix, holders);
    // K/V a class keeps and other files use as K/V (a singleton's buffer reached through its
    // accessor): those uses are where the finding's evidence is.
    if (site.raw_kv)
      for (const auto& access : site.raw_kv->accesses)
        if (access.loc.file != site.loc.file)
          f.related.push_back(rules::related(
              access.loc,
              fmt::format("`{}` {}", access.method, rules::describe_raw_kv_access(*site.raw_kv, access))));
    if (const facts::Guard* g = rules::owner_state_guard(site.guards, rules::retained_attribute(site)))
      f.related.push_back(
          rules::related(g->condition.loc, fmt::format("built only under {}", rules::describe_guard(*g))));
    relate_evidence(project, file, site, spelling, f);
    return f;
  }

  // The same K/V seen elsewhere: the ggml context its memory lives in, and writes from other
  // classes. One cache stays one finding; these lines are where a reviewer checks it.
  static void relate_evidence(const facts::Project& project, const facts::FileFacts& file,
                              const facts::CacheSite& site, const rules::Spelling& spelling, Finding& f) {
    using Kind = facts::KvEvidence::Kind;
    std::vector<facts::KvEvidence> evidence = site.evidence;
    // The context member's class may create it in another file (`ModelContext::ModelContext()` in
    // the .cpp, `ctx_kv(make_unique_ggml_context(...))`): its assignments there, made by a call.
    for (const facts::KvEvidence& e : site.evidence) {
      if (e.kind != Kind::ArenaMember) continue;
      for (const facts::AttributeAssignment* a :
           project.attribute_assignments_of(project.class_of(file, e.owner_class), e.member)) {
        const bool known = std::any_of(evidence.begin(), evidence.end(), [&](const facts::KvEvidence& k) {
          return k.loc.file == a->loc.file && k.loc.line == a->loc.line;
        });
        const std::string& value = a->value.text;
        if (known || value.find('(') == std::string::npos || value.starts_with("std::move")) continue;
        facts::KvEvidence created;
        created.kind = Kind::ArenaCreated;
        created.loc = a->loc;
        created.owner_class = a->owner_class;
        created.member = e.member;
        created.method = a->method;
        created.by = value.substr(0, value.find('('));
        evidence.push_back(std::move(created));
      }
    }
    for (const facts::KvEvidence& e : evidence) {
      const std::string where = e.owner_class.empty()
                                    ? fmt::format("`{}`", e.method)
                                    : fmt::format("`{}`", spelling.method(e.owner_class, e.method));
      std::string note;
      switch (e.kind) {
        case Kind::ArenaMember:
          note = fmt::format("its memory is the ggml context `{}` of `{}`", e.member, e.owner_class);
          break;
        case Kind::ArenaCreated:
          note = fmt::format("its memory is the ggml context `{}` created here in {} with `{}`{}", e.member,
                             where, e.by, e.detail.empty() ? "" : fmt::format(" (sized `{}`)", e.detail));
          break;
        case Kind::ArenaSized:
          note = fmt::format("the size of its ggml context: `{} = {}`", e.member, e.detail);
          break;
        case Kind::ArenaBuffer:
          note = fmt::format("the backend buffer `{}` for its ggml context is allocated here in {} with `{}`",
                             e.member, where, e.by);
          break;
        case Kind::WrittenByOther:
          note = fmt::format("also written by {} ({} of `{}`)", where, e.by, e.member);
          break;
      }
      f.related.push_back(rules::related(e.loc, std::move(note)));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv101_undeclared_cache() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
