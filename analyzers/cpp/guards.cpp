// Guards: the conditions a statement runs under inside its function: enclosing
// if / else arms, ternaries, loops, and earlier `if (cond) return ...;` in an
// enclosing block (an early return guards what follows it, negated).
#include <clang/AST/ParentMapContext.h>

#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

bool contains(const Stmt* outer, const Stmt* inner) {
  bool found = false;
  for_each_stmt(outer, [&](const Stmt* s) { found = found || s == inner; });
  return found;
}

bool only_returns(const Stmt* s) {
  if (!s) return false;
  if (isa<ReturnStmt>(s)) return true;
  if (const auto* block = dyn_cast<CompoundStmt>(s))
    return !block->body_empty() && isa<ReturnStmt>(block->body_back());
  return false;
}

facts::Guard make_guard(const Context& cx, facts::Guard::Origin origin, bool negated, const Expr* condition,
                        const FunctionDecl& function) {
  facts::Guard g;
  g.origin = origin;
  g.negated = negated;
  g.condition = expression_of(cx, condition);
  for_each_stmt(condition, [&](const Stmt* s) {
    if (const auto* call = dyn_cast<CallExpr>(s)) {
      std::string callee = callee_of(cx, call);
      if (!callee.empty() && std::find(g.calls.begin(), g.calls.end(), callee) == g.calls.end())
        g.calls.push_back(std::move(callee));
    }
  });
  for (const auto& name : g.condition.names) {
    if (name.starts_with("self.")) {
      std::string attribute = name.substr(5);
      if (std::find(g.self_attributes.begin(), g.self_attributes.end(), attribute) == g.self_attributes.end())
        g.self_attributes.push_back(std::move(attribute));
      continue;
    }
    const std::string root = name.substr(0, name.find('.'));
    for (const ParmVarDecl* p : function.parameters())
      if (p->getNameAsString() == root &&
          std::find(g.parameters.begin(), g.parameters.end(), root) == g.parameters.end())
        g.parameters.push_back(root);
  }
  return g;
}

}  // namespace

std::vector<facts::Guard> guards_of(const Context& cx, const Stmt* node, const FunctionDecl& function) {
  std::vector<facts::Guard> out;
  const Stmt* body = function.getBody();
  DynTypedNodeList parents = cx.ast.getParents(*node);
  const Stmt* child = node;
  for (int depth = 0; depth < 256 && !parents.empty(); ++depth) {
    if (cx.work) charge(*cx.work, 1);
    const Stmt* parent = parents[0].get<Stmt>();
    if (!parent) break;
    if (const auto* if_stmt = dyn_cast<IfStmt>(parent)) {
      if (child == if_stmt->getThen())
        out.push_back(make_guard(cx, facts::Guard::Origin::If, false, if_stmt->getCond(), function));
      else if (child == if_stmt->getElse())
        out.push_back(make_guard(cx, facts::Guard::Origin::Else, true, if_stmt->getCond(), function));
    } else if (const auto* ternary = dyn_cast<ConditionalOperator>(parent)) {
      if (child == ternary->getTrueExpr())
        out.push_back(make_guard(cx, facts::Guard::Origin::Ternary, false, ternary->getCond(), function));
      else if (child == ternary->getFalseExpr())
        out.push_back(make_guard(cx, facts::Guard::Origin::Ternary, true, ternary->getCond(), function));
    } else if (const auto* loop = dyn_cast<ForStmt>(parent)) {
      if (child == loop->getBody() && loop->getCond())
        out.push_back(make_guard(cx, facts::Guard::Origin::Loop, false, loop->getCond(), function));
    } else if (const auto* range = dyn_cast<CXXForRangeStmt>(parent)) {
      if (child == range->getBody())
        out.push_back(make_guard(cx, facts::Guard::Origin::Loop, false, range->getRangeInit(), function));
    } else if (const auto* loop_while = dyn_cast<WhileStmt>(parent)) {
      if (child == loop_while->getBody())
        out.push_back(make_guard(cx, facts::Guard::Origin::Loop, false, loop_while->getCond(), function));
    } else if (const auto* block = dyn_cast<CompoundStmt>(parent)) {
      // Earlier `if (cond) return;` in this block: what follows runs only when cond is false.
      std::vector<facts::Guard> early;
      for (const Stmt* s : block->body()) {
        if (s == child) break;
        if (const auto* guard_if = dyn_cast<IfStmt>(s); guard_if && !guard_if->getElse() &&
                                                        only_returns(guard_if->getThen()) &&
                                                        !contains(guard_if, node))
          early.push_back(
              make_guard(cx, facts::Guard::Origin::EarlyReturn, true, guard_if->getCond(), function));
      }
      std::reverse(early.begin(), early.end());
      for (auto& g : early) out.push_back(std::move(g));
    }
    if (parent == body) break;
    child = parent;
    parents = cx.ast.getParents(*parent);
  }
  return out;
}

}  // namespace kvlint::cpp
