// CUDA-graph captures: `at::cuda::CUDAGraph::capture_begin()` ... `capture_end()`,
// `cudaStreamBeginCapture` ... `cudaStreamEndCapture`, and `cudaGraphInstantiate`
// without a capture in the same function. The capture body is what runs between
// the begin call and its end call in source order; its calls are the captured calls,
// and it writes KV when one of them touches a K/V member.
#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

enum class Mark { None, GraphBegin, GraphEnd, StreamBegin, StreamEnd, Instantiate };

Mark mark_of(const Context& cx, const CallExpr* call) {
  const std::string qualified = qualified_callee(cx, call);
  const std::string callee = callee_of(cx, call);
  auto ends_with = [](std::string_view text, std::string_view tail) { return text.ends_with(tail); };
  if (ends_with(qualified, "cudaStreamBeginCapture") || ends_with(callee, "cudaStreamBeginCapture"))
    return Mark::StreamBegin;
  if (ends_with(qualified, "cudaStreamEndCapture") || ends_with(callee, "cudaStreamEndCapture")) return Mark::StreamEnd;
  if (ends_with(qualified, "cudaGraphInstantiate") || ends_with(callee, "cudaGraphInstantiate"))
    return Mark::Instantiate;
  if (ends_with(callee, ".capture_begin") || ends_with(qualified, "CUDAGraph::capture_begin")) return Mark::GraphBegin;
  if (ends_with(callee, ".capture_end") || ends_with(qualified, "CUDAGraph::capture_end")) return Mark::GraphEnd;
  return Mark::None;
}

struct Marked {
  Mark mark;
  const CallExpr* call;
  unsigned offset;
};

}  // namespace

void extract_captures(Context& cx, const FunctionDecl& function) {
  std::vector<Marked> marks;
  std::vector<const CallExpr*> calls;
  std::vector<std::pair<const Expr*, RecoveredCall>> recovered;  // calls that did not compile
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    if (std::optional<RecoveredCall> r = recovered_call(s))
      recovered.emplace_back(cast<Expr>(s), std::move(*r));
    const auto* call = dyn_cast<CallExpr>(s);
    if (!call) return;
    calls.push_back(call);
    if (Mark m = mark_of(cx, call); m != Mark::None)
      marks.push_back({m, call, offset_of(cx, call->getBeginLoc())});
  });
  if (marks.empty()) return;
  std::sort(marks.begin(), marks.end(), [](const Marked& a, const Marked& b) { return a.offset < b.offset; });
  const CXXRecordDecl* owner = owner_of(&function);
  const unsigned function_end = offset_of(cx, function.getBody()->getEndLoc());
  const bool has_stream_capture =
      std::any_of(marks.begin(), marks.end(), [](const Marked& m) { return m.mark == Mark::StreamBegin; });
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const Marked& begin = marks[i];
    facts::CaptureSite site;
    Mark closing = Mark::None;
    if (begin.mark == Mark::GraphBegin) {
      site.kind = facts::CaptureSite::Kind::CaptureBegin;
      closing = Mark::GraphEnd;
    } else if (begin.mark == Mark::StreamBegin) {
      site.kind = facts::CaptureSite::Kind::StreamBeginCapture;
      closing = Mark::StreamEnd;
    } else if (begin.mark == Mark::Instantiate && !has_stream_capture) {
      site.kind = facts::CaptureSite::Kind::StreamBeginCapture;
    } else {
      continue;
    }
    unsigned end = function_end;
    if (closing != Mark::None)
      for (std::size_t j = i + 1; j < marks.size(); ++j)
        if (marks[j].mark == closing) {
          end = marks[j].offset;
          break;
        }
    if (closing == Mark::None) end = begin.offset;  // an instantiation alone captures nothing we can see
    site.owner_class = owner ? owner->getNameAsString() : std::string();
    site.method = method_name(&function);
    site.loc = location_of(cx, begin.call->getSourceRange());
    // As written: `graphs_[bs].capture_begin`, `by_size_[n]->capture_begin`, `tier.graph.capture_begin`.
    site.written = text_of(cx, strip(begin.call->getCallee())->getSourceRange());
    if (site.written.empty() || site.written.size() > 80) site.written = callee_of(cx, begin.call);
    if (site.written.empty()) site.written = qualified_callee(cx, begin.call);
    site.guards = guards_of(cx, begin.call, function);
    for (const CallExpr* call : calls) {
      const unsigned at = offset_of(cx, call->getBeginLoc());
      if (at <= begin.offset || at >= end || mark_of(cx, call) != Mark::None) continue;
      std::string callee = callee_of(cx, call);
      if (!callee.empty() && std::find(site.captured_calls.begin(), site.captured_calls.end(), callee) ==
                                 site.captured_calls.end())
        site.captured_calls.push_back(callee);
      if (writes_kv(cx, call)) site.captured_writes_kv = true;
    }
    for (const auto& [node, call] : recovered) {
      const unsigned at = offset_of(cx, node->getBeginLoc());
      if (at <= begin.offset || at >= end) continue;
      std::string callee = callee_of(cx, call);
      if (!callee.empty() && std::find(site.captured_calls.begin(), site.captured_calls.end(), callee) ==
                                 site.captured_calls.end())
        site.captured_calls.push_back(std::move(callee));
      if (kv_access(cx, call, node) != KvAccess::None) site.captured_writes_kv = true;
    }
    cx.captures.push_back({&function, begin.offset, end});
    cx.out.captures.push_back(std::move(site));
  }
}

bool inside_capture(const Context& cx, const FunctionDecl& function, const Stmt* node) {
  const unsigned at = offset_of(cx, node->getBeginLoc());
  return std::any_of(cx.captures.begin(), cx.captures.end(), [&](const CaptureRegion& r) {
    return r.function == &function && at > r.begin && at < r.end;
  });
}

}  // namespace kvlint::cpp
