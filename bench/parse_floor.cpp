// bench/run's parser floor: parse exactly the Python files a kvlint run parsed, with the same
// tree-sitter core and grammar build kvlint links, and do nothing else (no walk, no facts, no
// rules). kvlint's cold time over this one's is its overhead over the parser.
//
//   kvlint check --no-cache --list-parsed LISTING PATHS...
//   kvlint_parse_floor [-j N] LISTING
//
// LISTING is `--list-parsed` output (language, parses, bytes, path; tab-separated). Each Python
// file is read and parsed as many times as kvlint parsed it (a widening round can parse a file
// again), the tree built and freed, on N threads (default: all cores, as kvlint's -j 0), one
// parser per thread. C++ lines are skipped (Clang parses those). Prints files and bytes parsed;
// exit 1 when a file cannot be read or its size differs from the listing (the tree changed).
#include <tree_sitter/api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
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
  int arg = 1;
  if (argc >= 3 && std::string(argv[1]) == "-j") {
    jobs = static_cast<unsigned>(std::stoul(argv[2]));
    arg = 3;
  } else if (argc >= 2 && std::string(argv[1]).starts_with("-j") && std::string(argv[1]).size() > 2) {
    jobs = static_cast<unsigned>(std::stoul(std::string(argv[1]).substr(2)));
    arg = 2;
  }
  if (argc - arg != 1) {
    std::fprintf(stderr, "usage: kvlint_parse_floor [-j N] LISTING\n");
    return 2;
  }
  const std::vector<Work> work = read_listing(argv[arg]);
  if (jobs == 0) jobs = 1;
  std::atomic<std::size_t> next{0}, bytes{0}, failures{0};
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
      TSTree* tree =
          ts_parser_parse_string(parser.get(), nullptr, source.data(), static_cast<uint32_t>(source.size()));
      if (tree) ts_tree_delete(tree);
      bytes += source.size();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  std::printf("parse_floor: %zu parses, %zu bytes, %u threads\n", work.size(), bytes.load(), jobs);
  return failures.load() == 0 ? 0 : 1;
}
