// C++ front end internals: the translation-unit walker and the extractors it
// dispatches to, one file per fact family (the same names as analyzers/python):
//   classes.cpp       classes, bases, members, ownership hops, constants, constructions
//   cache_sites.cpp   cache-class instances and K/V tensors (allocations, growth, per-request maps)
//   calls.cpp         methods and the calls they make (K/V writes included)
//   declarations.cpp  model_local_kv_specs() and the spec fields as written
//   guards.cpp        enclosing conditions, loops and early returns
//   captures.cpp      CUDA-graph captures (CUDAGraph::capture_begin, cudaStreamBeginCapture, ...)
// Everything reads Clang's AST of one translation unit; only declarations spelled in
// the main file produce facts (headers are analysed as files of their own). A method
// defined here for a class defined in a header gives an out-of-line class entry
// (ClassFact::out_of_line) that Project joins to the header's class.
// Names are rendered in the facts' dotted form: `this->x_`, `x_` and `x_->` all start
// with `self` ("self.decoder_.step"), `torch::cuda::is_available` is
// "torch.cuda.is_available", and a constructor is recorded as the method `__init__`.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"

namespace kvlint::cpp {

// A capture region in a function: between a begin call and its end call (byte offsets).
struct CaptureRegion {
  const clang::FunctionDecl* function = nullptr;
  unsigned begin = 0;
  unsigned end = 0;
};

// The work one file's walk may take, in steps (a node visited by a scan that renders names or
// text, a link of a dotted name), as the Python front end counts them. Linear extractors stay
// far below it; a file that reaches it is cut off (WorkBudgetExceeded, caught by the walk's
// caller) and keeps the facts found before that point.
struct WorkMeter {
  std::uint64_t steps = 0;
  std::uint64_t budget = UINT64_MAX;
  clang::SourceLocation last;  // where the walk stood when a step was last charged with a place
};
struct WorkBudgetExceeded {};
// Charges `steps`; throws WorkBudgetExceeded once the budget is spent.
void charge(WorkMeter& meter, std::uint64_t steps);

// K/V a forward call produced and the class keeps, fed back as a later forward's input
// (forward_kv.cpp): one store per producing call.
struct ForwardKv {
  const clang::FunctionDecl* function = nullptr;
  const clang::Expr* assignment = nullptr;  // the first member assigned from the output
  const clang::CallExpr* producer = nullptr;
  std::vector<std::string> members;
  facts::Location fed_back_at;
  std::string fed_back_by;
};

struct Context {
  clang::ASTContext& ast;
  const facts::Vocabulary& vocabulary;
  facts::FileFacts& out;
  std::vector<CaptureRegion> captures;  // filled per function before its cache sites
  // kv_members.cpp, before the walk: members that hold K/V by what the code does with them,
  // and members that only hold what they were handed (never K/V of the class's own).
  std::set<std::string> kv_by_use;
  std::set<std::string> borrowed_members;
  WorkMeter* work = nullptr;               // null: unbounded
  facts::FilePath file;                    // out.path, one copy shared by every location
  std::vector<ForwardKv> forward_kv = {};  // forward_kv.cpp, before the walk
  // cache_sites.cpp, per function: locals moved into a member container (`tiers_.push_back(
  // std::move(tier))`), so what is stored into them is kept there.
  std::map<const clang::VarDecl*, const clang::FieldDecl*> moved_into = {};
};

// ---- walker.cpp: source text, locations, names ----
bool in_main_file(const Context& cx, clang::SourceLocation at);
facts::Location location_of(const Context& cx, clang::SourceRange range);
std::string text_of(const Context& cx, clang::SourceRange range);  // as written, whitespace folded
unsigned offset_of(const Context& cx, clang::SourceLocation at);   // in the main file
facts::Expression expression_of(const Context& cx, const clang::Expr* expr);
// The dotted path an expression names: "self.decoder_", "cfg.max_model_len", "kMaxLen"; empty otherwise.
std::string dotted(const Context& cx, const clang::Expr* expr);
// The member of `self` a dotted path starts from ("self.tier_.buf_k" -> "tier_"); empty otherwise.
std::string member_in(const std::string& dotted_path);
// A call's callee in dotted form: "self.decoder_.step", "torch.cat", "helper"; empty when unnamed.
std::string callee_of(const Context& cx, const clang::CallExpr* call);
// The qualified name the callee is declared with ("torch::zeros"), else its spelling.
std::string qualified_callee(const Context& cx, const clang::CallExpr* call);
// A call Clang could not resolve (no viable overload: a compile error, say a `std::vector<int>`
// where the real headers take an `IntArrayRef`) survives as a RecoveryExpr holding the callee
// and the arguments; the facts of such a call come from these.
struct RecoveredCall {
  const clang::Expr* callee = nullptr;
  std::vector<const clang::Expr*> args;
};
std::optional<RecoveredCall> recovered_call(const clang::Stmt* s);
std::string callee_of(const Context& cx, const RecoveredCall& call);         // "self.k_cache_.index_copy_"
std::string qualified_callee(const Context& cx, const RecoveredCall& call);  // "at::zeros", "torch::zeros"
std::string last_component(std::string_view qualified);                      // "zeros" for "at::zeros"
const clang::Expr* strip(const clang::Expr* expr);  // parens, implicit casts, temporaries, copies
// `a op b` as a builtin operator, or as an overloaded or type-dependent one (a template's `T*`
// arithmetic, `tensor = ...` on a class type): its operands in `lhs` and `rhs`.
bool binary_operands(const clang::Expr* e, clang::BinaryOperatorKind builtin,
                     clang::OverloadedOperatorKind overloaded, const clang::Expr** lhs,
                     const clang::Expr** rhs);
// The class a method belongs to, when it is a method of a class (lambdas excluded).
const clang::CXXRecordDecl* owner_of(const clang::FunctionDecl* function);
std::string method_name(const clang::FunctionDecl* function);  // "__init__" for a constructor
// A record type's class, through pointers, references, smart pointers, optional and
// TORCH_MODULE holders (`Decoder` -> `DecoderImpl`); `in_container` when through a container.
const clang::CXXRecordDecl* held_class(clang::QualType type, bool* in_container = nullptr);
bool is_kv_name(const facts::Vocabulary& vocabulary, std::string_view name);
bool is_not_kv_name(const facts::Vocabulary& vocabulary,
                    std::string_view name);  // rotary tables, conv states
// The member of `this` an expression reaches through: `k_cache_` for `this->k_cache_`,
// `kv_->keys`, `graphs_[bs]`, `kv_cache_[id].key_cache`, `graphs_.back()`; null otherwise.
const clang::FieldDecl* self_member(const clang::Expr* expr);
// A local reference, pointer or range-for variable bound to another expression (followed by
// self_member: `Tier& tier = *tiers_.back(); tier.buf_k`, `for (auto& t : tiers_) t->graph`).
const clang::VarDecl* local_alias(const clang::Expr* expr);
// A K/V store: a class that is no torch::nn::Module and keeps K/V in its members, named as K/V
// (`k_cache`) or as a keys/values pair (`struct LayerKV { torch::Tensor keys, values; }`).
bool is_kv_store(const facts::Vocabulary& vocabulary, const clang::CXXRecordDecl* record);
// A member that holds K/V: named so, one of its store's keys/values pair, or holding a K/V store
// through an owning pointer, holder or container (`std::shared_ptr<LayerKV> kv_`).
bool holds_kv(const facts::Vocabulary& vocabulary, const clang::FieldDecl* field);
// The member `member` of `owner` holds K/V (by name alone when `owner` is unknown).
bool kv_member(const facts::Vocabulary& vocabulary, const clang::CXXRecordDecl* owner,
               std::string_view member);
// The class's qualified name in dotted form ("ns.Decoder"), the key that joins its entries.
std::string qualified_name(const clang::CXXRecordDecl& record);
bool is_library_class(const clang::CXXRecordDecl* record);  // std::, torch::, at::, c10::
// Every statement under `root` (pre-order), for extractors that scan a body.
template <typename Fn>
void for_each_stmt(const clang::Stmt* root, const Fn& fn) {
  if (!root) return;
  std::vector<const clang::Stmt*> stack{root};
  while (!stack.empty()) {
    const clang::Stmt* s = stack.back();
    stack.pop_back();
    if (!s) continue;
    fn(s);
    std::vector<const clang::Stmt*> children(s->child_begin(), s->child_end());
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
}
void walk_translation_unit(Context& cx);

// ---- classes.cpp ----
void extract_class(Context& cx, const clang::CXXRecordDecl& record);
// The entry of a class defined in another file whose method `first` this file defines.
facts::ClassFact out_of_line_class(Context& cx, const clang::CXXRecordDecl& definition,
                                   const clang::FunctionDecl& first);
void extract_constant(Context& cx, const clang::VarDecl& var);
void extract_constructions(Context& cx, const clang::FunctionDecl& function);
void extract_attribute_assignments(Context& cx, const clang::FunctionDecl& function);

// ---- kv_members.cpp ----
void find_kv_members(Context& cx, const std::vector<const clang::FunctionDecl*>& functions);
// A member of the class (`k_cache_`, without `self.`) that holds the class's own K/V: by name,
// by use, or holding a K/V store (kv_member, with `owner` when it is known); never a borrowed
// member (a reference or pointer, or only stored from a parameter: the engine's pool).
bool is_kv_member(const Context& cx, std::string_view member, const clang::CXXRecordDecl* owner = nullptr);
// holds_kv, by use too, and never for a borrowed member.
bool holds_kv(const Context& cx, const clang::FieldDecl* field);
// The member a value is stored into (`k_ = v`, `k_(v)`, `k_ = register_buffer("k", v)`); empty otherwise.
std::string stored_member(const Context& cx, const clang::Expr* value);

// ---- forward_kv.cpp ----
// A name that says keys or values (a `k`, `v`, `key(s)`, `value(s)`, `past` or `kv...` word, or a
// vocabulary K/V name), and one that says it is something else (masks, positions, recurrent and
// convolution state, rotary tables, logits).
bool name_says_kv(const facts::Vocabulary& vocabulary, std::string_view name);
bool name_says_not_kv(const facts::Vocabulary& vocabulary, std::string_view name);
// A name that says an attention cache (`attn_cache_`, `attention_cache`): keys and values, in
// runtimes that keep them in one tensor (WeNet's att_cache: K and V concatenated).
bool name_says_attention_cache(std::string_view name);
// Called by find_kv_members with the members the class allocates (most dimensions): adds to
// kv_by_use the members handed to a forward or produced by one and fed back, and fills forward_kv.
void find_forward_kv(Context& cx, const std::vector<const clang::FunctionDecl*>& functions,
                     const std::map<std::string, std::size_t>& allocated);
void extract_forward_kv_sites(Context& cx, const clang::FunctionDecl& function);

// ---- device_kv.cpp ----
// `e` without parentheses, implicit and explicit casts (`(T*)ctx.GetWorkSpace()`).
const clang::Expr* without_casts(const clang::Expr* e);
// `cudaMalloc(&k_cache_, size)` (and cudaMallocAsync / Managed / Host): the member of `this` it
// fills, with its size expression in `size`; empty otherwise.
std::string device_allocated_member(const Context& cx, const clang::CallExpr* call, const clang::Expr** size);
// A project allocator whose result a member keeps (`pool_->allocate(n)`, `device_alloc<half>(n)`).
bool is_allocating_wrapper(const Context& cx, const clang::CallExpr* call);
// The dimensions a size product multiplies (`layers * heads * len * head_dim * sizeof(half)`: 4).
std::size_t size_factors(const clang::Expr* size);
// A launch of device code: a `<<<...>>>` kernel call, or a host launcher named `launch...` /
// `...kernel...` (degraded mode reads `.cu` files as C++, where `<<<...>>>` does not parse); not
// the runtime's copies and frees (`cuda...`), LibTorch, nor another object's method.
bool is_kernel_launch(const Context& cx, const clang::CallExpr* call);
// Regions of a device buffer the class is handed and lays out itself (`init_buffer(void* buf)`:
// `k_cache_ = query_ + batch_dim_`, `self_k_.push_back(curp); curp += layer_size_;` per layer)
// that are K/V: spanning every layer (four or more factors), handed to a kernel launch outside
// the constructor (through a view member or a local too), named as K/V. Member -> factors.
std::map<std::string, std::size_t> carved_device_kv(const Context& cx,
                                                    const std::vector<const clang::FunctionDecl*>& functions);
// `k_cache_ = query_ + batch_dim_`: the carved K/V member (kv_by_use) the statement lays out; empty
// otherwise.
std::string carved_kv_member(const Context& cx, const clang::Stmt* s);
// `ggml_new_tensor_3d(...)`: 3; `ggml_new_tensor(...)`: many; not a ggml allocation: 0.
std::size_t ggml_dims(const Context& cx, const clang::CallExpr* call);

// ---- singleton_kv.cpp ----
// K/V in a member buffer of a process-wide singleton (`static Ctx& Instance() { static Ctx c;
// return c; }`) that the class allocates itself, reached in this file's functions through the
// accessor (`Ctx::Instance().GetWorkSpace()`) and used as K/V there: a region spanning every
// layer handed to a kernel launch or to attention. One cache site per member, at the class's
// allocation (in its header), with this file's uses as its raw K/V accesses.
void extract_singleton_kv(Context& cx, const std::vector<const clang::FunctionDecl*>& functions);

// ---- ggml_kv.cpp ----
// After the walk: each ggml K/V site a member keeps gets its evidence (CacheSite::evidence): the
// context its factory is handed (the member holding it, where it is created and sized, the backend
// buffer allocated for it) and copies into views of it from other classes' methods.
void find_ggml_kv_evidence(Context& cx, const std::vector<const clang::FunctionDecl*>& functions);

// ---- onnx_kv.cpp ----
bool is_ort_tensor_factory(std::string_view qualified);  // "Ort::Value::CreateTensor"
// `Ort::Value::CreateTensor<float>(allocator, shape.data(), shape.size())` with `std::array<int64_t,
// 4> shape`: 4 (many when the shape's length is not written); not such a call: 0.
std::size_t ort_dims(const Context& cx, const clang::CallExpr* call);
// ggml_dims, else ort_dims: an allocation of a tensor type that is not LibTorch's.
std::size_t foreign_tensor_dims(const Context& cx, const clang::CallExpr* call);
// `sess_->Run(run_options, input_names, inputs.data(), n, output_names, m)` on an `Ort::Session`,
// the form that returns the outputs: a forward call.
bool is_session_run(const Context& cx, const clang::CallExpr* call);
// The library of the tensor an allocation makes, by its qualified callee ("ggml_new_tensor_3d",
// "Ort::Value::CreateTensor"): LibTorch unless it is ggml's or ONNX Runtime's.
facts::TensorLibrary tensor_library_of(std::string_view written);

// ---- calls.cpp ----
facts::MethodFact method_fact(Context& cx, const clang::FunctionDecl& function);
// How a call touches a K/V member: not at all, reading it only, or writing it (or handing
// it to code that may write it).
enum class KvAccess { None, Reads, Writes };
KvAccess kv_access(const Context& cx, const clang::CallExpr* call);
KvAccess kv_access(const Context& cx, const RecoveredCall& call, const clang::Expr* node);
bool writes_kv(const Context& cx, const clang::CallExpr* call);  // any access

// ---- cache_sites.cpp ----
void extract_member_caches(Context& cx, const clang::CXXRecordDecl& record);
void extract_cache_sites(Context& cx, const clang::FunctionDecl& function);
// A tensor allocation kept as K/V: in a member holding K/V, or a local named as K/V (`past_k`).
bool allocates_kv(const Context& cx, const clang::CallExpr* call);

// ---- declarations.cpp ----
void extract_declaration(Context& cx, const clang::CXXMethodDecl& method);

// ---- guards.cpp ----
std::vector<facts::Guard> guards_of(const Context& cx, const clang::Stmt* node,
                                    const clang::FunctionDecl& function);

// ---- captures.cpp ----
void extract_captures(Context& cx, const clang::FunctionDecl& function);
bool inside_capture(const Context& cx, const clang::FunctionDecl& function, const clang::Stmt* node);

}  // namespace kvlint::cpp
