// CUDA graph captures: `with torch.cuda.graph(...)`, `capture_begin()`, `make_graphed_callables`,
// `cudaStreamBeginCapture`, and the calls made inside them.
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

CaptureSite FileWalker::make_capture(CaptureSite::Kind kind, TSNode call, TSNode fn) {
  CaptureSite site;
  site.kind = kind;
  site.owner_class = owner_name();
  site.method = method_name();
  site.loc = loc(call);
  site.written = strip_spaces(text(fn));
  site.guards = current_guards();
  return site;
}

std::size_t FileWalker::emit_capture(CaptureSite site) {
  const std::size_t index = out_.captures.size();
  if (ClassState* cls = owner_state())
    cls->sites.push_back({ClassState::SiteRef::Kind::Capture, index, site.method});
  out_.captures.push_back(std::move(site));
  return index;
}

void FileWalker::on_capture_begin(TSNode call, TSNode fn) {
  CaptureSite site = make_capture(CaptureSite::Kind::CaptureBegin, call, fn);
  // Calls in the statements after this one, up to capture_end, in the same block.
  const std::size_t n = open_.size();
  if (n >= 3 && open_[n - 2].sym == Sym::ExpressionStatement) {
    TSNode stmt = open_[n - 2].node;
    TSNode block = open_[n - 3].node;
    bool after = false;
    std::vector<TSNode> body;
    for_each_named_child(aux_, block, [&](TSNode s, TSFieldId) {
      if (ts_node_eq(s, stmt)) {
        after = true;
        return true;
      }
      if (!after) return true;
      if (contains(text(s), "capture_end")) {
        // `try: <captured> finally: g.capture_end()`: the statement that ends the capture holds
        // captured code too; a plain `g.capture_end()` holds none.
        if (sym(s) != Sym::ExpressionStatement) body.push_back(s);
        return false;
      }
      body.push_back(s);
      return true;
    });
    for (TSNode s : body) {
      std::vector<std::string> callees;
      collect_call_texts(s, callees);
      for (auto& c : callees)
        if (!ends_with(c, "capture_end") &&
            std::find(site.captured_calls.begin(), site.captured_calls.end(), c) == site.captured_calls.end())
          site.captured_calls.push_back(std::move(c));
    }
  }
  emit_capture(std::move(site));
}

void FileWalker::on_with(TSNode node) {
  TSNode clause{};
  for_each_named_child(aux_, node, [&](TSNode c, TSFieldId) {
    if (sym(c) != Sym::WithClause) return true;
    clause = c;
    return false;
  });
  if (ts_node_is_null(clause)) return;
  std::vector<TSNode> items;
  for_each_named_child(aux_, clause, [&](TSNode item, TSFieldId) {
    if (sym(item) == Sym::WithItem) items.push_back(item);
    return true;
  });
  for (TSNode item : items) {
    TSNode value = field(item, g_.f_value);
    if (!ts_node_is_null(value) && sym(value) == Sym::AsPattern) value = named_child(value, 0);
    value = unwrap_parens(value);
    if (ts_node_is_null(value) || sym(value) != Sym::Call) continue;
    TSNode fn = field(value, g_.f_function);
    if (!is_dotted(fn) || (last_component(fn) != "graph" && resolved_simple(strip_view(fn)) != "graph"))
      continue;
    const std::string resolved = resolve(text(fn));
    if (!ends_with(resolved, ".cuda.graph")) continue;
    open_.back().graph_capture =
        static_cast<int32_t>(emit_capture(make_capture(CaptureSite::Kind::GraphContext, value, fn)));
    return;
  }
}

// A call made inside an open `with torch.cuda.graph(...)` body: the capture records it.
void FileWalker::note_captured_call(TSNode fn, bool writes_kv) {
  auto& capture = out_.captures[captures_open_.back()];
  auto& calls = capture.captured_calls;
  std::string callee = strip_spaces(text(fn));
  if (std::find(calls.begin(), calls.end(), callee) == calls.end()) calls.push_back(std::move(callee));
  capture.captured_writes_kv = capture.captured_writes_kv || writes_kv;
}

// Calls that open a capture: `g.capture_begin()`, `make_graphed_callables(...)`,
// `cudaStreamBeginCapture(...)`. `resolved` is the callee's simple name after imports.
void FileWalker::on_capture_candidate(TSNode call, TSNode fn, bool is_capture_begin,
                                      std::string_view resolved) {
  if (is_capture_begin) on_capture_begin(call, fn);
  if (resolved == "make_graphed_callables") {
    CaptureSite site = make_capture(CaptureSite::Kind::MakeGraphedCallables, call, fn);
    TSNode first = first_positional(call);
    if (!ts_node_is_null(first)) site.captured_calls.push_back(fold_text(text(first)));
    emit_capture(std::move(site));
  }
  if (resolved == "cudaStreamBeginCapture")
    emit_capture(make_capture(CaptureSite::Kind::StreamBeginCapture, call, fn));
}

}  // namespace kvlint::python::detail
