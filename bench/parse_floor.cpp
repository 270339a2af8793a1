// bench/run's parser floor: parse exactly the Python files a kvlint run parsed, with the same
// tree-sitter core and grammar build kvlint links, and do nothing else (no walk, no facts, no
// rules). kvlint's cold time over this one's is its overhead over the parser.
//
//   kvlint check --no-cache --list-parsed LISTING PATHS...
//   kvlint_parse_floor [-j N] [--walk] LISTING
//
// --walk also walks each tree once with a cursor as kvlint's walker does (first child, next
// sibling, parent; each node's symbol read; strings, comments and imports not descended into),
// and nothing else: the floor of any analysis that visits every node the way kvlint does.
//
// LISTING is `--list-parsed` output (language, parses, bytes, path; tab-separated). Each Python
// file is read and parsed as many times as kvlint parsed it (a widening round can parse a file
// again), the tree built and freed, on N threads (default: all cores, as kvlint's -j 0), one
// parser per thread. C++ lines are skipped (Clang parses those). Prints files and bytes parsed;
// exit 1 when a file cannot be read or its size differs from the listing (the tree changed).
#include <tree_sitter/api.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" const TSLanguage* tree_sitter_python();

namespace {

struct Work {
  std::string path;
  std::size_t bytes = 0;
};

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};

struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};

// The node kinds kvlint's walker does not descend into (analyzers/python/walker.cpp).
class LeafKinds {
 public:
  explicit LeafKinds(const TSLanguage* language) {
    for (const char* name : {"string", "concatenated_string", "comment", "import_statement",
                             "import_from_statement", "future_import_statement"}) {
      const TSSymbol symbol =
          ts_language_symbol_for_name(language, name, static_cast<uint32_t>(std::strlen(name)), true);
      if (symbol != 0) symbols_.push_back(symbol);
    }
  }
  bool contains(TSSymbol symbol) const {
    return std::find(symbols_.begin(), symbols_.end(), symbol) != symbols_.end();
  }

 private:
  std::vector<TSSymbol> symbols_;
};

// One pass over the tree in kvlint's order; returns the nodes visited (a sum the
// optimiser cannot drop).
class TreeCursor {
 public:
  explicit TreeCursor(TSNode node) : cursor_(ts_tree_cursor_new(node)) {}
  ~TreeCursor() { ts_tree_cursor_delete(&cursor_); }
  TreeCursor(const TreeCursor&) = delete;
  TreeCursor& operator=(const TreeCursor&) = delete;
  TSTreeCursor* get() { return &cursor_; }

 private:
  TSTreeCursor cursor_;
};

std::size_t walk(TSNode root, const LeafKinds& leaves) {
  TreeCursor owned(root);
  TSTreeCursor* cursor = owned.get();
  std::size_t visited = 1;
  bool descend = true;
  auto visit = [&] {
    const TSNode node = ts_tree_cursor_current_node(cursor);
    ++visited;
    descend = ts_node_is_named(node) && !leaves.contains(ts_node_symbol(node));
  };
  for (;;) {
    if (descend && ts_tree_cursor_goto_first_child(cursor)) {
      visit();
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(cursor))
      if (!ts_tree_cursor_goto_parent(cursor)) return visited;
    visit();
  }
}

std::vector<Work> read_listing(const char* listing_path) {
  std::ifstream in(listing_path);
  if (!in) {
    std::fprintf(stderr, "parse_floor: cannot read %s\n", listing_path);
    std::exit(2);
  }
  std::vector<Work> work;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string language, parses, bytes, path;
    if (!std::getline(fields, language, '\t') || !std::getline(fields, parses, '\t') ||
        !std::getline(fields, bytes, '\t') || !std::getline(fields, path))
      continue;
    if (language != "python") continue;
    const unsigned long times = std::stoul(parses);
    for (unsigned long k = 0; k < times; ++k) work.push_back({path, std::stoull(bytes)});
  }
  return work;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned jobs = std::thread::hardware_concurrency();
  bool walk_trees = false;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-j" && i + 1 < argc)
      jobs = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a.starts_with("-j") && a.size() > 2)
      jobs = static_cast<unsigned>(std::stoul(a.substr(2)));
    else if (a == "--walk")
      walk_trees = true;
    else
      positional.push_back(a);
  }
  if (positional.size() != 1) {
    std::fprintf(stderr, "usage: kvlint_parse_floor [-j N] [--walk] LISTING\n");
    return 2;
  }
  const std::vector<Work> work = read_listing(positional.front().c_str());
  if (jobs == 0) jobs = 1;
  const LeafKinds leaves(tree_sitter_python());
  std::atomic<std::size_t> next{0}, bytes{0}, failures{0}, nodes{0};
  auto worker = [&] {
    std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
    ts_parser_set_language(parser.get(), tree_sitter_python());
    for (std::size_t i = next++; i < work.size(); i = next++) {
      std::ifstream in(work[i].path, std::ios::binary);
      std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) source.clear();
      if (source.size() != work[i].bytes) {
        std::fprintf(stderr, "parse_floor: %s: %zu bytes, the listing says %zu\n", work[i].path.c_str(),
                     source.size(), work[i].bytes);
        ++failures;
        continue;
      }
      const std::unique_ptr<TSTree, TreeDeleter> tree(
          ts_parser_parse_string(parser.get(), nullptr, source.data(), static_cast<uint32_t>(source.size())));
      if (tree && walk_trees) nodes += walk(ts_tree_root_node(tree.get()), leaves);
      bytes += source.size();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  std::printf("parse_floor: %zu parses, %zu bytes, %u threads", work.size(), bytes.load(), jobs);
  if (walk_trees) std::printf(", %zu nodes walked", nodes.load());
  std::printf("\n");
  return failures.load() == 0 ? 0 : 1;
}
