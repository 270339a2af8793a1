// Stage 4, widen. Takes the analysed files; analyses the skipped and deferred files that
// resolution needs: holders of CUDA-graph capturing classes, holders of C++ K/V store classes,
// base classes defined elsewhere, files naming the project's own cache subclasses (which join
// the vocabulary), and the deferred files a rule's question (facts::Demand) could need.
// Invariant: the findings are those of analysing every file the prefilter passed up front;
// widening only adds files, and each search is a text test that may say yes wrongly, never no.
#include <string.h>

#include <algorithm>
#include <stdexcept>

#include "analyzers/python/python_frontend.hpp"
#include "analyzers/python/text_scan.hpp"
#include "tools/kvlint/engine/project_run.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/engine/token_summary.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

namespace {

// Appends the names written after the word `keyword` and a space or tab in the bytes; with
// `line_start`, only where the keyword is the first word of its line (after spaces, tabs or
// form feeds).
void scan_names_after(std::string_view content, std::string_view keyword, bool line_start,
                      std::vector<std::string>& names) {
  // memmem, not string_view::find: find scans for 'c' and compares at each, slow on source text.
  auto next = [&](std::size_t from) -> std::size_t {
    if (from >= content.size()) return std::string_view::npos;
    const void* hit = ::memmem(content.data() + from, content.size() - from, keyword.data(), keyword.size());
    return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - content.data())
               : std::string_view::npos;
  };
  auto starts_line = [&](std::size_t at) {
    while (at > 0 && (content[at - 1] == ' ' || content[at - 1] == '\t' || content[at - 1] == '\f')) --at;
    return at == 0 || content[at - 1] == '\n' || content[at - 1] == '\r' ||
           (at == 3 && content.substr(0, 3) == "\xEF\xBB\xBF");  // after a UTF-8 byte order mark
  };
  for (std::size_t at = next(0); at != std::string_view::npos; at = next(at + 1)) {
    if (line_start ? !starts_line(at) : at > 0 && is_identifier_byte(content[at - 1])) continue;
    std::size_t begin = at + keyword.size();
    if (begin >= content.size() || (content[begin] != ' ' && content[begin] != '\t')) continue;
    while (begin < content.size() && (content[begin] == ' ' || content[begin] == '\t')) ++begin;
    std::size_t end = begin;
    while (end < content.size() && is_identifier_byte(content[end])) ++end;
    if (end > begin) names.emplace_back(content.substr(begin, end - begin));
  }
}

}  // namespace

// Names a file may define as classes: a superset, which only costs a parse. C++: the names
// after `class` or `struct` anywhere (`template <class T>`, elaborated types). Python: after
// `class` where it begins a line, as every class statement does (a compound statement follows
// no `;` or `:` on its line); prose in docstrings and comments ("the class object", "a struct
// module") named bases like `object` and sent whole files to the parser. Strings and comments
// may still add a few.
std::vector<std::string> scan_class_names(std::string_view content, bool is_cpp) {
  std::vector<std::string> names;
  if (is_cpp) {
    for (std::string_view keyword : {std::string_view("class"), std::string_view("struct")})
      scan_names_after(content, keyword, false, names);
  } else {
    scan_names_after(content, "class", true, names);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Classes that capture CUDA graphs are often built by another class only when not
// eager (`self.wrapper = GraphWrapper(...) if not enforce_eager else None`); that
// holder names no anchor, so analyse the skipped files that construct a capturing class
// (`Wrapper(` or `Wrapper.factory(`), then, up to two levels up, the files that construct
// those holders: the gate may sit there (`if enforce_eager: return` before
// `self.decoder.enable_cudagraph()`).
bool ProjectRun::analyse_capture_holders() {
  bool analysed = false;
  std::set<std::string> built;
  for (const auto& f : files_)
    if (f.facts)
      for (const auto& capture : f.facts->captures)
        if (!capture.owner_class.empty()) built.insert(capture.owner_class);
  for (int level = 0; level < kCaptureHolderLevels && !built.empty(); ++level) {
    // C++ files are searched for every spelling. Python files only for what the Python
    // front end can record as a construction of the class: a capitalised name, as a word
    // (`Graph(` in `nx.Graph(`, not in `CUDAGraph(`, which constructs another class); the
    // looser search parsed most of torch and networkx on an installed tree for `graph(`.
    std::vector<std::string> cpp_needles, python_needles;
    for (const auto& name : built) {
      for (std::string needle : {name + "(", name + "."}) {
        if (python::records_constructions_of(name)) python_needles.push_back(needle);
        cpp_needles.push_back(std::move(needle));
      }
      cpp_needles.push_back("<" + name + ">");  // held as `std::unique_ptr<GraphRunner> graphs_`
    }
    std::vector<std::size_t> found = containing_any(
        readable_matching([](const FileState& f) { return !f.facts && f.is_cpp; }), cpp_needles);
    if (!python_needles.empty()) {
      const std::vector<std::size_t> python_found =
          containing_any(readable_matching([](const FileState& f) { return !f.facts && !f.is_cpp; }),
                         python_needles, NeedleSearch::Start::WordStart);
      found.insert(found.end(), python_found.begin(), python_found.end());
      std::sort(found.begin(), found.end());
    }
    analysed = analysed || !found.empty();
    analyse(found, vocabulary_);
    // The classes that build the ones just searched for are the next level's targets.
    std::set<std::string> builders;
    for (const auto& f : files_)
      if (f.facts)
        for (const auto& c : f.facts->constructions)
          if (!c.owner_class.empty() && built.count(std::string(facts::simple_name(c.target_class))))
            builders.insert(c.owner_class);
    for (const auto& name : built) builders.erase(name);
    built = std::move(builders);
  }
  return analysed;
}

// The project cache subclasses among the facts analysed so far, which the project borrows
// (no copy of every file's facts per widening round) and gives back.
std::vector<std::string> ProjectRun::project_cache_subclasses() {
  std::vector<facts::FileFacts> lent;
  const std::vector<std::size_t> owners = lend_facts(lent);
  std::vector<std::string> names = facts::Project::cache_subclasses(lent, vocabulary_);
  give_back(owners, std::move(lent));
  return names;
}

// The analysed files' facts moved into `lent` for a project to borrow (no copy), in file
// order; returns the files they belong to, for give_back.
std::vector<std::size_t> ProjectRun::lend_facts(std::vector<facts::FileFacts>& lent) {
  std::vector<std::size_t> owners;
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (files_[i].facts) {
      owners.push_back(i);
      lent.push_back(std::move(*files_[i].facts));
    }
  return owners;
}

void ProjectRun::give_back(const std::vector<std::size_t>& owners, std::vector<facts::FileFacts>&& lent) {
  for (std::size_t k = 0; k < owners.size(); ++k) *files_[owners[k]].facts = std::move(lent[k]);
}

// The holders of C++ classes that keep K/V and are no module: `std::shared_ptr<LayerKV> kv_`
// names no anchor. The files naming `<LayerKV>` (an owning pointer, a container, make_shared),
// once per class. True when some were analysed.
bool ProjectRun::analyse_kv_store_holders() {
  std::vector<std::string> needles;
  // A nested class (a pimpl's `Outer::Impl`) is held under its simple name, which many unrelated
  // classes share (sherpa-onnx has a hundred `std::unique_ptr<Impl>`): its holders are the files
  // that also name its enclosing class.
  std::vector<std::pair<std::string, std::string>> nested;  // needle, enclosing class's name
  for (const auto& f : files_) {
    if (!f.facts || f.facts->language != facts::Language::Cpp) continue;
    // A module keeping K/V names an anchor or is held by one that does.
    auto is_module = [&](const std::string& name) {
      for (const auto& c : f.facts->classes)
        if (c.name == name)
          for (const auto& b : c.bases)
            if (b.resolved.find("nn.Module") != std::string::npos ||
                b.resolved.find("nn.Cloneable") != std::string::npos)
              return true;
      return false;
    };
    auto enclosing = [&](const std::string& name) -> std::string {
      for (const auto& c : f.facts->classes) {
        if (c.name != name) continue;
        const std::string outer = c.qualified_name.substr(0, c.qualified_name.rfind('.') + 1);
        for (const auto& d : f.facts->classes)
          if (!outer.empty() && d.qualified_name + "." == outer) return d.name;
      }
      return {};
    };
    for (const auto& site : f.facts->cache_sites)
      if (!site.owner_class.empty() && !is_module(site.owner_class) &&
          kv_store_searched_.insert(site.owner_class).second) {
        if (std::string outer = enclosing(site.owner_class); !outer.empty())
          nested.emplace_back("<" + site.owner_class + ">", std::move(outer));
        else
          needles.push_back("<" + site.owner_class + ">");
      }
  }
  if (needles.empty() && nested.empty()) return false;
  const std::vector<std::size_t> candidates =
      readable_matching([](const FileState& f) { return !f.facts && f.is_cpp; });
  std::vector<std::size_t> found =
      needles.empty() ? std::vector<std::size_t>{} : containing_any(candidates, needles);
  for (const auto& [needle, outer] : nested)
    for (std::size_t i : containing_any(containing_any(candidates, {needle}), {outer})) found.push_back(i);
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  if (found.empty()) return false;
  analyse(found, vocabulary_);
  return true;
}

// Bases defined in files the prefilter skipped: parse those so inheritance resolves, up to
// kMaxBaseRounds levels from the files analysed for what they hold (FileState::base_level).
// A deferred file stands for one analysed from the start: a class it defines is looked for
// there first, and only a class no deferred file defines in the skipped files. True when
// some were analysed.
bool ProjectRun::analyse_bases() {
  for (bool analysed = false;;) {
    std::set<std::string> defined;
    // By simple name, where a class that is wanted may be defined: in any file, or in a
    // Python module that one of the absolute dotted prefixes it was named by may name.
    // find_class takes a class named `typing.Protocol` only from such a module, so the
    // typing_extensions copies and any other `class Protocol` need no parse.
    struct Wanted {
      bool anywhere = false;
      std::set<std::string> module_prefixes;
      int level = kMaxBaseRounds;  // the lowest base_level of the files that want it
    };
    std::map<std::string, Wanted> wanted;
    for (const auto& f : files_)
      if (f.facts)
        for (const auto& c : f.facts->classes)
          if (!c.out_of_line) defined.insert(c.name);
    for (const auto& f : files_) {
      if (!f.facts || f.base_level >= kMaxBaseRounds) continue;
      for (const auto& c : f.facts->classes) {
        // A .cpp defining methods of a class whose header the prefilter skipped: the
        // header holds its members (K/V buffers, held modules).
        if (c.out_of_line && !defined.count(c.name)) {
          Wanted& w = wanted[c.name];
          w.anywhere = true;
          w.level = std::min(w.level, f.base_level);
        }
        for (const auto& b : c.bases) {
          const std::string_view name = b.resolved.empty() ? b.written : b.resolved;
          const std::string_view simple = facts::simple_name(name);
          if (simple.empty() || defined.count(std::string(simple))) continue;
          Wanted& w = wanted[std::string(simple)];
          w.level = std::min(w.level, f.base_level);
          const std::string_view prefix = facts::dotted_prefix(name);
          // Unresolved, relative or bare (a builtin, a star import): find_class looks anywhere.
          if (b.resolved.empty() || prefix.empty() || name.starts_with('.'))
            w.anywhere = true;
          else
            w.module_prefixes.emplace(prefix);
        }
      }
    }
    if (wanted.empty()) return analysed;
    // The class-name scan runs only here, for files not analysed, and at most once each.
    std::vector<std::size_t> unanalysed = readable_matching([](const FileState& f) { return !f.facts; });
    parallel_over(unanalysed, [&](std::size_t i) {
      if (files_[i].defined_classes) return;
      const FileBytes content = reread(files_[i]);
      files_[i].defined_classes =
          content ? scan_class_names(*content, files_[i].is_cpp) : std::vector<std::string>();
    });
    // The level a candidate is found at: one below the lowest file that wants a class it defines.
    auto found_at = [&](const FileState& f) -> std::optional<int> {
      std::optional<int> level;
      for (const std::string& name : *f.defined_classes) {
        const auto it = wanted.find(name);
        if (it == wanted.end()) continue;
        const Wanted& w = it->second;
        const bool may_define =
            w.anywhere || f.is_cpp ||
            std::any_of(w.module_prefixes.begin(), w.module_prefixes.end(), [&](const std::string& prefix) {
              return facts::may_be_module(f.module_name, prefix);
            });
        if (may_define) level = std::min(level.value_or(w.level + 1), w.level + 1);
      }
      return level;
    };
    std::vector<std::size_t> deferred, skipped;
    for (std::size_t i : unanalysed)
      if (const auto level = found_at(files_[i])) {
        files_[i].base_level = files_[i].deferred ? 0 : *level;
        (files_[i].deferred ? deferred : skipped).push_back(i);
      }
    if (!deferred.empty()) {
      analyse(deferred, vocabulary_);
      analysed = true;
      continue;
    }
    if (skipped.empty()) return analysed;
    analyse(skipped, vocabulary_);
    return true;
  }
}

// Project cache subclasses join the vocabulary; the files naming them (any file, analysed or
// not) are analysed again under it. True when some class joined.
bool ProjectRun::analyse_cache_subclass_users() {
  std::vector<std::string> added;
  for (auto& name : project_cache_subclasses())
    if (std::find(vocabulary_.cache_classes.begin(), vocabulary_.cache_classes.end(), name) ==
        vocabulary_.cache_classes.end())
      added.push_back(std::move(name));
  if (added.empty()) return false;
  for (const auto& name : added) vocabulary_.cache_classes.push_back(name);
  analyse(containing_any(readable_matching([](const FileState&) { return true; }), added), vocabulary_);
  return true;
}

const std::vector<WideningStep>& ProjectRun::widening_steps() {
  static const std::vector<WideningStep> steps{
      {"capture-holders", WideningStep::When::First,
       "which classes build a class that captures CUDA graphs, up to three levels up (where enforce_eager "
       "gates sit)?",
       "`Name(` and `Name.` for each capturing (then building) class; Python only where the front end "
       "records "
       "a construction (a capitalised name, at a word start), C++ also `<Name>`",
       "the files not analysed that contain one", &ProjectRun::analyse_capture_holders},
      {"kv-store-holders", WideningStep::When::EachRound,
       "which C++ classes hold a class that keeps K/V and is no module (`std::shared_ptr<LayerKV> kv_`)?",
       "`<Name>` for each such class, once per class", "the C++ files not analysed that contain one",
       &ProjectRun::analyse_kv_store_holders},
      {"bases", WideningStep::When::EachRound,
       "where are the base classes (and a .cpp's out-of-line classes) defined that no analysed file defines?",
       "the class names a file defines (after `class` at a line start; C++ `class` or `struct` anywhere)",
       "the deferred files defining one first, else the skipped ones, up to two levels from the files "
       "analysed for what they hold",
       &ProjectRun::analyse_bases},
      {"cache-subclasses", WideningStep::When::EachRound,
       "which files name a cache class the project itself defines (a subclass of a vocabulary cache class)?",
       "each new subclass's name, anywhere in the bytes",
       "every file that contains one, under the widened vocabulary",
       &ProjectRun::analyse_cache_subclass_users},
      {"demand", WideningStep::When::RulesAsk,
       "which deferred files could answer a question the rules asked (facts::Demand)?",
       "the classes a file defines, `def name`, `NAME =`, `self` handed to a callable, a mentioned name, "
       "`Name(` or `Name.` at a word start",
       "the deferred files that contain one (every one in the last round, or when a question names no text)",
       nullptr},
  };
  return steps;
}

const WideningStep& ProjectRun::widening_step(std::string_view name) {
  for (const WideningStep& step : widening_steps())
    if (step.name == name) return step;
  throw std::logic_error("no widening step named " + std::string(name));
}

bool ProjectRun::pull_in(const WideningStep& step, const std::function<bool()>& analyse_files) {
  std::vector<char> had(files_.size());
  for (std::size_t i = 0; i < files_.size(); ++i) had[i] = files_[i].facts.has_value();
  const bool analysed = analyse_files();
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (!had[i] && files_[i].facts && files_[i].widened_by.empty()) files_[i].widened_by = step.name;
  return analysed;
}

void ProjectRun::widen() {
  auto run = [&](const WideningStep& step) { return pull_in(step, [&] { return (this->*step.run)(); }); };
  for (const WideningStep& step : widening_steps())
    if (step.when == WideningStep::When::First) run(step);
  for (int round = 0; round < kMaxWideningRounds; ++round) {
    bool changed = false;
    for (const WideningStep& step : widening_steps())
      if (step.when == WideningStep::When::EachRound) changed = run(step) || changed;
    if (!changed) break;
  }
}

// The deferred files whose text could add to what the rules asked (facts::Demand), or every
// one of them when a question names no text to look for.
std::vector<std::size_t> ProjectRun::demanded(const facts::Demand::Wants& wants) {
  const std::vector<std::size_t> deferred =
      readable_matching([](const FileState& f) { return f.deferred && !f.facts; });
  if (wants.everything) return deferred;
  std::vector<std::string> built_needles;  // `Name(` / `Name.`: a construction or a class method call
  for (const auto& name : wants.built)
    for (const char* after : {"(", "."}) built_needles.push_back(name + after);
  const NeedleSearch built(built_needles, NeedleSearch::Start::WordStart);
  // Whether `f` may hand self to a wanted attribute: exactly from the names its bytes hand self
  // to, where read_all found them all and each wanted attribute is a plain name; else as its
  // token summary allows (most deferred files name such an attribute and `self` apart).
  const bool plain_attributes = std::all_of(
      wants.handed_self.begin(), wants.handed_self.end(),
      [](const std::string& a) { return !a.empty() && std::all_of(a.begin(), a.end(), is_identifier_byte); });
  auto handed_self_maybe = [&](const FileState& f, std::string_view tokens) {
    if (f.handed_self && plain_attributes)
      return std::any_of(wants.handed_self.begin(), wants.handed_self.end(), [&](const std::string& a) {
        return std::binary_search(f.handed_self->begin(), f.handed_self->end(), a);
      });
    return std::any_of(wants.handed_self.begin(), wants.handed_self.end(),
                       [&](const std::string& a) { return summary_may_contain(tokens, a); });
  };
  std::vector<char> hit(files_.size(), 0);
  parallel_over(deferred, [&](std::size_t i) {
    FileState& f = files_[i];
    // A class it defines answers without the bytes; else, for a file whose bytes are not kept,
    // the token summary says whether any wanted name may be there before they are read.
    if (f.defined_classes &&
        std::any_of(f.defined_classes->begin(), f.defined_classes->end(),
                    [&](const std::string& name) { return wants.classes.count(name) != 0; })) {
      hit[i] = 1;
      return;
    }
    if (!f.kept && f.tokens) {
      std::string scratch;
      const std::string_view tokens = f.tokens->text(scratch);
      auto named = [&](const std::set<std::string>& names) {
        return std::any_of(names.begin(), names.end(),
                           [&](const std::string& n) { return summary_may_contain(tokens, n); });
      };
      const bool maybe = named(wants.functions) || named(wants.constants) || handed_self_maybe(f, tokens) ||
                         named(wants.mentioned) ||
                         std::any_of(built_needles.begin(), built_needles.end(), [&](const std::string& n) {
                           return summary_may_contain(tokens, n, NeedleSearch::Start::WordStart);
                         });
      if (!maybe) return;
    }
    const FileBytes content = reread(f);
    if (!content) return;
    if (!f.defined_classes) f.defined_classes = scan_class_names(*content, false);
    auto any = [&](const std::set<std::string>& names, auto&& found) {
      return std::any_of(names.begin(), names.end(),
                         [&](const std::string& n) { return found(*content, n); });
    };
    hit[i] = std::any_of(f.defined_classes->begin(), f.defined_classes->end(),
                         [&](const std::string& name) { return wants.classes.count(name) != 0; }) ||
             any(wants.functions, python::defines_function) || any(wants.constants, python::assigns) ||
             any(wants.handed_self, python::hands_self_to) || any(wants.mentioned, python::mentions) ||
             (!built_needles.empty() && built.found_in(*content));
  });
  std::vector<std::size_t> out;
  for (std::size_t i : deferred)
    if (hit[i]) out.push_back(i);
  return out;
}

}  // namespace kvlint::pipeline
