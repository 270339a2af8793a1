// C++ front end internals: the translation-unit walker and the extractors it
// dispatches to, one file per fact family (the same names as analyzers/python):
//   classes.cpp       classes, bases, members, ownership hops, constants, constructions
//   cache_sites.cpp   cache-class instances and K/V tensors (allocations, growth, per-request maps)
//   calls.cpp         methods and the calls they make (K/V writes included)
//   declarations.cpp  model_local_kv_specs() and the spec fields as written
//   guards.cpp        enclosing conditions, loops and early returns
//   captures.cpp      CUDA-graph captures (CUDAGraph::capture_begin, cudaStreamBeginCapture, ...)
// Everything reads Clang's AST of one translation unit; only declarations spelled in
// the main file produce facts (headers are analysed as files of their own).
// Names are rendered in the facts' dotted form: `this->x_`, `x_` and `x_->` all start
// with `self` ("self.decoder_.step"), `torch::cuda::is_available` is
// "torch.cuda.is_available", and a constructor is recorded as the method `__init__`.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>

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

struct Context {
  clang::ASTContext& ast;
  const facts::Vocabulary& vocabulary;
  facts::FileFacts& out;
  std::vector<CaptureRegion> captures;  // filled per function before its cache sites
  // kv_members.cpp, before the walk: members that hold K/V by what the code does with them,
  // and members that only hold what they were handed (never K/V of the class's own).
  std::set<std::string> kv_by_use;
  std::set<std::string> borrowed_members;
};

// ---- walker.cpp: source text, locations, names ----
bool in_main_file(const Context& cx, clang::SourceLocation at);
facts::Location location_of(const Context& cx, clang::SourceRange range);
std::string text_of(const Context& cx, clang::SourceRange range);  // as written, whitespace folded
unsigned offset_of(const Context& cx, clang::SourceLocation at);    // in the main file
facts::Expression expression_of(const Context& cx, const clang::Expr* expr);
// The dotted path an expression names: "self.decoder_", "cfg.max_model_len", "kMaxLen"; empty otherwise.
std::string dotted(const Context& cx, const clang::Expr* expr);
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
const clang::Expr* strip(const clang::Expr* expr);  // parens, implicit casts, temporaries, copies
// The class a method belongs to, when it is a method of a class (lambdas excluded).
const clang::CXXRecordDecl* owner_of(const clang::FunctionDecl* function);
std::string method_name(const clang::FunctionDecl* function);  // "__init__" for a constructor
// A record type's class, through pointers, references, smart pointers, optional and
// TORCH_MODULE holders (`Decoder` -> `DecoderImpl`); `in_container` when through a container.
const clang::CXXRecordDecl* held_class(clang::QualType type, bool* in_container = nullptr);
bool is_kv_name(const facts::Vocabulary& vocabulary, std::string_view name);
bool is_not_kv_name(const facts::Vocabulary& vocabulary,
                    std::string_view name);                 // rotary tables, conv states
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
void extract_constant(Context& cx, const clang::VarDecl& var);
void extract_constructions(Context& cx, const clang::FunctionDecl& function);
void extract_attribute_assignments(Context& cx, const clang::FunctionDecl& function);

// ---- kv_members.cpp ----
void find_kv_members(Context& cx, const std::vector<const clang::FunctionDecl*>& functions);
// A member of the class (`k_cache_`, without `self.`) that holds the class's own K/V.
bool is_kv_member(const Context& cx, std::string_view member);
// The member a value is stored into (`k_ = v`, `k_(v)`, `k_ = register_buffer("k", v)`); empty otherwise.
std::string stored_member(const Context& cx, const clang::Expr* value);

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

// ---- declarations.cpp ----
void extract_declaration(Context& cx, const clang::CXXMethodDecl& method);

// ---- guards.cpp ----
std::vector<facts::Guard> guards_of(const Context& cx, const clang::Stmt* node, const clang::FunctionDecl& function);

// ---- captures.cpp ----
void extract_captures(Context& cx, const clang::FunctionDecl& function);
bool inside_capture(const Context& cx, const clang::FunctionDecl& function, const clang::Stmt* node);

}  // namespace kvlint::cpp
