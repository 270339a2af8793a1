// Syntax -> facts::Expression and facts::Argument: folded text, literal values, names read.
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

void FileWalker::collect_names(TSNode root, std::vector<std::string>& names, std::vector<std::string>* calls,
                               std::vector<std::string>* written_callees) {
  std::vector<TSNode> stack{root};
  std::size_t visited = 0;
  auto add = [](std::vector<std::string>& list, std::string value) {
    if (list.size() < kMaxNames && std::find(list.begin(), list.end(), value) == list.end())
      list.push_back(std::move(value));
  };
  while (!stack.empty() && ++visited < kMaxNameWalkNodes) {
    spend(1);
    TSNode n = stack.back();
    stack.pop_back();
    switch (sym(n)) {
      case Sym::Identifier:
        add(names, std::string(text(n)));
        continue;
      case Sym::Attribute: {
        // Every attribute inside a chain shares the chain's base, so one walk down
        // decides them all: `a.b.c` is one name; `f().b.c` reads only what `f()` reads.
        TSNode base = field(n, g_.f_object);
        while (!ts_node_is_null(base) && sym(base) == Sym::Attribute) {
          spend(1);
          base = field(base, g_.f_object);
        }
        if (!ts_node_is_null(base) && sym(base) == Sym::Identifier)
          add(names, strip_spaces(text(n)));
        else if (!ts_node_is_null(base))
          stack.push_back(base);
        continue;
      }
      case Sym::Call: {
        TSNode fn = field(n, g_.f_function);
        TSNode args = field(n, g_.f_arguments);
        if (!ts_node_is_null(args)) stack.push_back(args);
        if (!ts_node_is_null(fn)) {
          if ((calls || written_callees) && is_dotted(fn)) {
            if (calls) add(*calls, resolve(text(fn)));
            if (written_callees) written_callees->push_back(strip_spaces(text(fn)));
          }
          stack.push_back(fn);
        }
        // `getattr(self, "wrapper", None)` / `hasattr(cfg, "x")` read `self.wrapper` / `cfg.x`.
        if (std::string read = attribute_read_by_getattr(n); !read.empty()) add(names, std::move(read));
        continue;
      }
      case Sym::KeywordArgument: {
        TSNode v = field(n, g_.f_value);
        if (!ts_node_is_null(v)) stack.push_back(v);
        continue;
      }
      case Sym::String:
      case Sym::ConcatenatedString:
      case Sym::Comment:
        continue;
      default:
        break;
    }
    const std::size_t first = stack.size();
    for_each_named_child(sub_, n, [&](TSNode child, TSFieldId) {
      stack.push_back(child);
      return true;
    });
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
  }
}

std::string FileWalker::attribute_read_by_getattr(TSNode call) {
  TSNode fn = field(call, g_.f_function);
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(fn) || ts_node_is_null(args) || sym(fn) != Sym::Identifier) return {};
  const std::string_view name = text(fn);
  if (name != "getattr" && name != "hasattr") return {};
  if (ts_node_named_child_count(args) < 2) return {};
  TSNode object = unwrap_parens(ts_node_named_child(args, 0));
  TSNode attribute = ts_node_named_child(args, 1);
  if (!is_dotted(object) || sym(attribute) != Sym::String) return {};
  std::string_view quoted = text(attribute);
  if (quoted.size() < 3 || (quoted.front() != '"' && quoted.front() != '\'') ||
      quoted.back() != quoted.front())
    return {};
  quoted = quoted.substr(1, quoted.size() - 2);
  if (!std::all_of(quoted.begin(), quoted.end(), is_ident_char)) return {};
  return strip_spaces(text(object)) + "." + std::string(quoted);
}

void FileWalker::fill_literal(TSNode n, Expression& e) {
  n = unwrap_parens(n);
  if (ts_node_is_null(n)) return;
  switch (sym(n)) {
    case Sym::Integer:
    case Sym::Float:
      if (is_imaginary(n)) return;
      e.literal = sym(n) == Sym::Integer ? facts::LiteralKind::Int : facts::LiteralKind::Float;
      e.literal_value = std::string(text(n));
      return;
    case Sym::True:
      e.literal = facts::LiteralKind::Bool;
      e.literal_value = "True";
      return;
    case Sym::False:
      e.literal = facts::LiteralKind::Bool;
      e.literal_value = "False";
      return;
    case Sym::None:
      e.literal = facts::LiteralKind::NoneValue;
      e.literal_value = "None";
      return;
    case Sym::UnaryOperator: {
      TSNode arg = unwrap_parens(field(n, g_.f_argument));
      const std::string_view op = text(field(n, g_.f_operator));
      if (!ts_node_is_null(arg) && (op == "-" || op == "+") &&
          (sym(arg) == Sym::Integer || sym(arg) == Sym::Float) && !is_imaginary(arg)) {
        e.literal = sym(arg) == Sym::Integer ? facts::LiteralKind::Int : facts::LiteralKind::Float;
        // Sign and digits appended to a reserved string: GCC 12 at -O3 reads
        // `"-" + std::string(...)` as an overlapping memcpy (-Wrestrict, a false positive).
        const std::string_view digits = text(arg);
        e.literal_value.clear();
        e.literal_value.reserve(digits.size() + 1);
        if (op == "-") e.literal_value.push_back('-');
        e.literal_value.append(digits);
      }
      return;
    }
    case Sym::String: {
      std::string value;
      if (decode_string(n, value)) {
        e.literal = facts::LiteralKind::String;
        e.literal_value = std::move(value);
      }
      return;
    }
    case Sym::ConcatenatedString: {
      std::string all;
      bool ok = true;
      for_each_named_child(aux_, n, [&](TSNode part, TSFieldId) {
        std::string piece;
        if (sym(part) != Sym::String || !decode_string(part, piece)) {
          ok = false;
          return false;
        }
        all += piece;
        return true;
      });
      if (ok) {
        e.literal = facts::LiteralKind::String;
        e.literal_value = std::move(all);
      }
      return;
    }
    default:
      return;
  }
}

// tree-sitter-python folds the `j` suffix of imaginary numbers into integer/float tokens.
bool FileWalker::is_imaginary(TSNode number) const {
  const std::string_view t = text(number);
  return !t.empty() && (t.back() == 'j' || t.back() == 'J');
}

// The value of a plain string literal: not an f-string, not bytes.
bool FileWalker::decode_string(TSNode n, std::string& out) const {
  const uint32_t count = ts_node_child_count(n);
  if (count < 2) return false;
  TSNode start = ts_node_child(n, 0), end = ts_node_child(n, count - 1);
  const std::string_view prefix = text(start);
  bool raw = false;
  for (char c : prefix) {
    if (c == 'f' || c == 'F' || c == 'b' || c == 'B') return false;
    if (c == 'r' || c == 'R') raw = true;
  }
  const uint32_t body_start = ts_node_end_byte(start), body_end = ts_node_start_byte(end);
  if (body_end < body_start) return false;
  out = decode_string_body(src_.substr(body_start, body_end - body_start), raw);
  return true;
}

Expression FileWalker::make_expr(TSNode n, std::vector<std::string>* calls,
                                 std::vector<std::string>* written_callees) {
  Expression e;
  e.text = fold_text(text(n));
  e.loc = loc(n);
  fill_literal(n, e);
  collect_names(n, e.names, calls, written_callees);
  return e;
}

std::vector<Argument> FileWalker::args_of(TSNode call) {
  std::vector<Argument> out;
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(args)) return out;
  if (sym(args) == Sym::GeneratorExpression) {
    out.push_back({"", 0, make_expr(args)});
    return out;
  }
  std::vector<TSNode> children;
  for_each_named_child(aux_, args, [&](TSNode child, TSFieldId) {
    children.push_back(child);
    return true;
  });
  uint32_t position = 0;
  for (TSNode child : children) {
    switch (sym(child)) {
      case Sym::KeywordArgument:
        out.push_back({std::string(text(field(child, g_.f_name))), 0, make_expr(field(child, g_.f_value))});
        break;
      case Sym::ListSplat:
        out.push_back({"*", 0, make_expr(child)});
        break;
      case Sym::DictionarySplat:
        out.push_back({"**", 0, make_expr(child)});
        break;
      default:
        out.push_back({"", position++, make_expr(child)});
        break;
    }
  }
  return out;
}

TSNode FileWalker::first_positional(TSNode call) {
  TSNode found{};
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return found;
  for_each_named_child(aux_, args, [&](TSNode child, TSFieldId) {
    const Sym s = sym(child);
    if (s == Sym::KeywordArgument || s == Sym::ListSplat || s == Sym::DictionarySplat) return true;
    found = child;
    return false;
  });
  return found;
}

}  // namespace kvlint::python::detail
