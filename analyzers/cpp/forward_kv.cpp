// K/V that a forward call produces or consumes, the C++ side of the raw-K/V fact (facts::RawKv,
// as analyzers/python/raw_kv.cpp fills it): a member is K/V when the class keeps it across calls,
// it is written or produced as K/V and read as K/V, with its name as supporting evidence only.
//   - produced by a forward and fed back: `auto out = module_.forward(inputs).toTuple();
//     past_k_ = out->elements()[1].toTensor();` with `past_k_` among a later forward's inputs
//     (directly, or pushed into the inputs vector): K/V by use, and a cache site of its own where
//     the class allocates none, K and V assigned from one forward's outputs being one store;
//   - allocated by the class with three or more dimensions and handed to a forward as an input
//     (`module_.forward({ids, pos, mask, self_k_, self_v_})`): K/V by use, so its allocation is a
//     site and a graph captured over that forward keeps it (KV103).
// Neither a recurrent state (`hidden_`, `cell_`), a convolution cache, a mask nor positions is
// K/V: the name must say keys or values (a `k`/`v`/`key`/`value`/`past`/`kv...` word, or the
// vocabulary's K/V names) and must not say what else it is.
#include <clang/AST/ParentMapContext.h>

#include <algorithm>
#include <array>
#include <map>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

// `past_k_`, `selfKeys`, `att_cache` as lower-case words: split at `_` and where CamelCase
// starts a word.
std::vector<std::string> name_words(std::string_view name) {
  std::vector<std::string> words;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) words.push_back(current);
    current.clear();
  };
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '_') {
      flush();
      continue;
    }
    const bool upper = c >= 'A' && c <= 'Z';
    const bool prev_lower =
        i > 0 && ((name[i - 1] >= 'a' && name[i - 1] <= 'z') || (name[i - 1] >= '0' && name[i - 1] <= '9'));
    if (upper && prev_lower) flush();
    current.push_back(upper ? static_cast<char>(c - 'A' + 'a') : c);
  }
  flush();
  return words;
}

template <std::size_t N>
bool among(const std::array<std::string_view, N>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// The forward's inputs and outputs pass on the way to or from a member.
bool is_output_view(std::string_view method) {
  static constexpr std::array<std::string_view, 14> kViews = {
      "toTensor",       "clone",  "contiguous", "detach", "to", "toTuple", "elements",
      "toTensorVector", "toList", "toListRef",  "get",    "at", "value",   "front"};
  return among(kViews, method);
}

bool is_insert(std::string_view method) {
  return method == "push_back" || method == "emplace_back" || method == "insert" || method == "emplace";
}

const VarDecl* local_var(const Expr* e) {
  const auto* ref = dyn_cast_or_null<DeclRefExpr>(e ? strip(e) : nullptr);
  const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  return var && var->hasLocalStorage() && !isa<ParmVarDecl>(var) ? var : nullptr;
}

// A call that runs a model: `module_.forward(...)`, `module_.run_method("step", ...)`,
// `model_.get_method("forward_chunk")(inputs)`, a held module called (`decoder_(x)`).
bool is_forward_call(const Context& cx, const CallExpr* call) {
  if (is_session_run(cx, call)) return true;
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    if (op->getOperator() != OO_Call || op->getNumArgs() < 1) return false;
    const Expr* object = strip(op->getArg(0));
    if (const auto* inner = dyn_cast<CallExpr>(object))
      return callee_of(cx, inner).ends_with("get_method") ||
             qualified_callee(cx, inner).ends_with("get_method");
    return callee_of(cx, call).starts_with("self.");
  }
  const std::string callee = callee_of(cx, call);
  const std::string method = callee.substr(callee.rfind('.') + 1);
  return callee.find('.') != std::string::npos && (method == "forward" || method == "run_method");
}

// The forward call whose output `value` is: through the views an output is taken with
// (`out->elements()[1].toTensor().clone()`, `std::get<1>(outputs)`) and the locals it was bound to.
const CallExpr* producing_forward(const Context& cx, const Expr* value) {
  for (int depth = 0; depth < 24 && value; ++depth) {
    value = strip(value);
    if (const auto* call = dyn_cast<CallExpr>(value); call && is_forward_call(cx, call)) return call;
    if (const auto* member_call = dyn_cast<CXXMemberCallExpr>(value)) {
      const CXXMethodDecl* method = member_call->getMethodDecl();
      if (!method || !method->getIdentifier() || !is_output_view(method->getName())) return nullptr;
      value = member_call->getImplicitObjectArgument();
      continue;
    }
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(value)) {
      if ((op->getOperator() != OO_Subscript && op->getOperator() != OO_Arrow &&
           op->getOperator() != OO_Star) ||
          op->getNumArgs() < 1)
        return nullptr;
      value = op->getArg(0);
      continue;
    }
    if (const auto* sub = dyn_cast<ArraySubscriptExpr>(value)) {
      value = sub->getBase();
      continue;
    }
    if (const auto* call = dyn_cast<CallExpr>(value)) {
      const FunctionDecl* f = call->getDirectCallee();
      const std::string name = f ? f->getQualifiedNameAsString() : std::string();
      if ((name != "std::get" && name != "std::move") || call->getNumArgs() != 1) return nullptr;
      value = call->getArg(0);
      continue;
    }
    if (const VarDecl* var = local_var(value)) {
      value = var->getInit();
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

// The members of `this` an expression reads (`keys_`, `caches_[layer]`), by name.
void members_read(const Context& cx, const Expr* root,
                  std::vector<std::pair<std::string, const Expr*>>& out) {
  for_each_stmt(root, [&](const Stmt* s) {
    const auto* e = dyn_cast<Expr>(s);
    if (!e || !isa<MemberExpr, CXXDependentScopeMemberExpr>(e)) return;
    const std::string member = member_in(dotted(cx, e));
    if (!member.empty()) out.emplace_back(member, e);
  });
}

struct Produced {
  const FunctionDecl* function;
  const Expr* assignment;  // `past_k_ = ...`
  const CallExpr* producer;
  std::string member;
};

struct FedBack {
  facts::Location at;
  std::string by;  // the forward as written: "module_.forward"
};

std::string written_callee(const Context& cx, const CallExpr* call) {
  const Expr* callee =
      isa<CXXOperatorCallExpr>(call) ? cast<CXXOperatorCallExpr>(call)->getArg(0) : strip(call->getCallee());
  std::string text = text_of(cx, callee->getSourceRange());
  if (text.empty() || text.size() > 80) text = callee_of(cx, call);
  return text;
}

}  // namespace

bool name_says_kv(const facts::Vocabulary& vocabulary, std::string_view name) {
  if (name_says_not_kv(vocabulary, name)) return false;
  if (is_kv_name(vocabulary, name)) return true;
  for (const std::string& w : name_words(name))
    if (w == "k" || w == "v" || w == "key" || w == "keys" || w == "value" || w == "values" || w == "past" ||
        w == "kcache" || w == "vcache" || w.starts_with("kv"))
      return true;
  return false;
}

bool name_says_not_kv(const facts::Vocabulary& vocabulary, std::string_view name) {
  static constexpr std::array<std::string_view, 28> kLookalikes = {
      "conv",    "cnn",   "cos",     "sin",     "rotary",   "rope",      "freq",
      "freqs",   "mask",  "masks",   "pos",     "position", "positions", "hidden",
      "cell",    "bias",  "weight",  "weights", "embed",    "ids",       "offset",
      "offsets", "index", "indices", "lens",    "lengths",  "logits",    "scores"};
  if (is_not_kv_name(vocabulary, name)) return true;
  for (const std::string& w : name_words(name))
    if (among(kLookalikes, w)) return true;
  return false;
}

bool name_says_attention_cache(std::string_view name) {
  bool attention = false;
  bool cache = false;
  for (const std::string& w : name_words(name)) {
    attention = attention || w == "attn" || w == "att" || w == "attention";
    cache = cache || w == "cache" || w == "caches";
  }
  return attention && cache;
}

void find_forward_kv(Context& cx, const std::vector<const FunctionDecl*>& functions,
                     const std::map<std::string, std::size_t>& allocated) {
  std::vector<Produced> produced;
  std::map<std::string, FedBack> fed_back;
  for (const FunctionDecl* function : functions) {
    const bool constructor = isa<CXXConstructorDecl>(function);
    std::vector<const CallExpr*> forwards;
    std::vector<const CallExpr*> inserts;  // `inputs.push_back(past_k_)`
    for_each_stmt(function->getBody(), [&](const Stmt* s) {
      const auto* call = dyn_cast<CallExpr>(s);
      if (!call) return;
      if (is_forward_call(cx, call)) {
        forwards.push_back(call);
        return;
      }
      if (const auto* assign = dyn_cast<CXXOperatorCallExpr>(call);
          assign && assign->getOperator() == OO_Equal && assign->getNumArgs() == 2) {
        const std::string member = member_in(dotted(cx, assign->getArg(0)));
        if (constructor || member.empty()) return;
        if (const CallExpr* producer = producing_forward(cx, assign->getArg(1)))
          produced.push_back({function, assign, producer, member});
        return;
      }
      if (const auto* m = dyn_cast<CXXMemberCallExpr>(call); m && m->getMethodDecl() &&
                                                             m->getMethodDecl()->getIdentifier() &&
                                                             is_insert(m->getMethodDecl()->getName()))
        inserts.push_back(call);
    });
    for (const CallExpr* forward : forwards) {
      std::vector<std::pair<std::string, const Expr*>> inputs;
      // The model's own object is no input: `decoder_(x)` calls `decoder_`.
      const unsigned first = isa<CXXOperatorCallExpr>(forward) ? 1 : 0;
      for (unsigned i = first; i < forward->getNumArgs(); ++i) {
        members_read(cx, forward->getArg(i), inputs);
        // An inputs vector built before the call: its initializer and what is pushed into it.
        for_each_stmt(forward->getArg(i), [&](const Stmt* s) {
          const VarDecl* var = dyn_cast<Expr>(s) ? local_var(cast<Expr>(s)) : nullptr;
          if (!var) return;
          if (var->getInit()) members_read(cx, var->getInit(), inputs);
          for (const CallExpr* insert : inserts)
            if (local_var(cast<CXXMemberCallExpr>(insert)->getImplicitObjectArgument()) == var)
              for (const Expr* arg : insert->arguments()) members_read(cx, arg, inputs);
        });
      }
      for (const auto& [member, at] : inputs)
        fed_back.try_emplace(
            member, FedBack{location_of(cx, forward->getSourceRange()), written_callee(cx, forward)});
    }
  }
  auto is_kv = [&](const std::string& member) {
    return !cx.borrowed_members.count(member) && name_says_kv(cx.vocabulary, member);
  };
  // Allocated with three or more dimensions and handed to a forward: K/V by use.
  for (const auto& [member, where] : fed_back)
    if (auto it = allocated.find(member); it != allocated.end() && it->second >= 3 && is_kv(member))
      cx.kv_by_use.insert(member);
  // Produced by a forward and fed back: K/V by use, and a site where it is kept.
  for (const Produced& p : produced) {
    const auto fed = fed_back.find(p.member);
    if (fed == fed_back.end() || !is_kv(p.member)) continue;
    cx.kv_by_use.insert(p.member);
    // A member the class also allocates (`att_cache_ = torch::zeros(...)` in Reset) is that
    // allocation's site already.
    if (allocated.count(p.member)) continue;
    auto same = std::find_if(cx.forward_kv.begin(), cx.forward_kv.end(), [&](const ForwardKv& f) {
      return f.function == p.function && f.producer == p.producer;
    });
    if (same != cx.forward_kv.end()) {
      if (std::find(same->members.begin(), same->members.end(), p.member) == same->members.end())
        same->members.push_back(p.member);
      continue;
    }
    ForwardKv kv;
    kv.function = p.function;
    kv.assignment = p.assignment;
    kv.producer = p.producer;
    kv.members = {p.member};
    kv.fed_back_at = fed->second.at;
    kv.fed_back_by = fed->second.by;
    cx.forward_kv.push_back(std::move(kv));
  }
}

void extract_forward_kv_sites(Context& cx, const FunctionDecl& function) {
  for (const ForwardKv& kv : cx.forward_kv) {
    if (kv.function != &function) continue;
    facts::CacheSite site;
    site.cache_class = "Tensor";
    site.written = written_callee(cx, kv.producer);
    site.tensor_library =
        is_session_run(cx, kv.producer) ? facts::TensorLibrary::OnnxRuntime : facts::TensorLibrary::LibTorch;
    const CXXRecordDecl* owner = owner_of(&function);
    site.owner_class = owner ? owner->getNameAsString() : std::string();
    site.method = method_name(&function);
    site.loc = location_of(cx, kv.assignment->getSourceRange());
    site.retention = facts::Retention::SelfAttribute;
    site.retained_as = "self." + kv.members.front();
    site.guards = guards_of(cx, kv.assignment, function);
    site.inside_graph_capture = inside_capture(cx, function, kv.assignment);
    facts::RawKv raw;
    raw.members = kv.members;
    raw.written_at = location_of(cx, kv.producer->getSourceRange());
    raw.written_by = "`" + site.written + "`'s output";
    raw.read_at = kv.fed_back_at;
    raw.read_by = kv.fed_back_by;
    raw.named_as_kv = true;
    site.raw_kv = std::move(raw);
    cx.out.cache_sites.push_back(std::move(site));
  }
}

}  // namespace kvlint::cpp
