// The C++ front end's entry: compile commands (compile_commands.json, headers
// inferred from their translation units, or fallback flags), one Clang syntax-only
// run per file with the source the engine read, degraded mode for missing headers
// (degraded_headers.cpp), the compiler's errors, suppression comments, and the walk
// over the AST (walker.cpp) that fills the facts.
#include "analyzers/cpp/cpp_frontend.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticLex.h>
#include <clang/Basic/DiagnosticParse.h>
#include <clang/Basic/FileManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/HeaderSearch.h>
#include <clang/Lex/Lexer.h>
#include <clang/Lex/MacroArgs.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/JSONCompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/thread.h>
#include <signal.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "analyzers/cpp/compile_flags.hpp"
#include "analyzers/cpp/degraded_headers.hpp"
#include "analyzers/cpp/project_headers.hpp"
#include "analyzers/cpp/walker.hpp"
#include "analyzers/facts/line_ends.hpp"
#include "analyzers/facts/suppression_comment.hpp"

namespace kvlint::cpp {

namespace fs = std::filesystem;
using namespace clang;

namespace {

// Where missing headers are served from (an in-memory directory per header, so the
// file manager never sees a cached miss for a path that appears later).
constexpr std::string_view kMissingHeaderRoot = "/__kvlint_missing_headers__";
constexpr std::size_t kMaxMissingListed = 5;
// Where missing headers were looked for, at most (more: the result is not cached).
constexpr std::size_t kMaxAbsentPaths = 1024;

// Clang's parser recurses once per prefix operator (`~~~~1`, `!!!!x`, `- - -x`): some thousands
// in a row overflow an ordinary thread's stack and kill the process (stock `clang++ -fsyntax-only`
// too). Each compile runs under crash recovery on a compile thread with this much stack
// (reserved, touched only as used; CompileThreads); a deeper one (through macros, say) overflows
// it, and the recovery handler, run on an alternate signal stack, fails that file alone. A main
// file with a longer run of prefix operators than kMaxPrefixOperatorRun is not parsed at all.
constexpr unsigned kCompileStackBytes = 256u << 20;
constexpr std::size_t kAlternateSignalStackBytes = 256u << 10;
constexpr std::size_t kMaxPrefixOperatorRun = 50'000;

// What one compile may cost beyond its files (issue 39: 117 bytes of nested macros, `A(A(A(x)))`
// with `x` ten times in A's body, expanded to 2e8 tokens: > 60 s and 12.6 GB). CompileBudget
// enforces them: the tokens macro expansion produces, at every level (argument pre-expansion
// included), in all; the tokens one function-like expansion can copy at once (its parameter uses
// times its arguments' tokens: copied in one step no callback sees, so it is bounded before); and
// the bytes of the AST, source manager and preprocessor tables. Headers larger than
// kMaxHeaderBytes are not read (RegularFilesOnly; the engine skips a checked file over 16 MiB).
constexpr std::uint64_t kMacroTokensMinimum = 8u << 20;
constexpr std::uint64_t kMacroTokensPerSourceByte = 16;
constexpr std::uint64_t kMaxExpansionCopies = 4u << 20;
constexpr std::size_t kMaxCompileBytes = std::size_t{2} << 30;
constexpr std::uint64_t kMaxHeaderBytes = 64u << 20;

// The crash recovery handlers (llvm::CrashRecoveryContext::Enable) run on the alternate signal
// stack of the thread that faults, where it has one: only the compile threads do. Without that,
// a stack overflow re-faults in its own handler and kills the process.
void run_crash_handlers_on_alternate_stacks() {
  for (const int signal : {SIGSEGV, SIGBUS}) {
    struct sigaction action {};
    if (::sigaction(signal, nullptr, &action) != 0 || (action.sa_flags & SA_ONSTACK)) continue;
    action.sa_flags |= SA_ONSTACK;
    ::sigaction(signal, &action, nullptr);
  }
}

// This thread's alternate signal stack while this object lives (the memory is the caller's).
class AlternateSignalStack {
 public:
  explicit AlternateSignalStack(std::vector<char>& memory) {
    stack_t stack{};
    stack.ss_sp = memory.data();
    stack.ss_size = memory.size();
    installed_ = ::sigaltstack(&stack, &previous_) == 0;
  }
  ~AlternateSignalStack() {
    if (installed_) ::sigaltstack(&previous_, nullptr);
  }
  AlternateSignalStack(const AlternateSignalStack&) = delete;
  AlternateSignalStack& operator=(const AlternateSignalStack&) = delete;

 private:
  stack_t previous_{};
  bool installed_ = false;
};

// The compile threads: long-lived, one per worker compiling at once, each with kCompileStackBytes
// of stack and an alternate signal stack. A new thread per file gave every compile a cold
// allocator arena and cold stack pages (with jemalloc, two to six times glibc's page faults on
// torch's headers and the tf5 site-packages). A thread whose compile crashed is retired, not
// reused: the recovery longjmped over its frames and leaked what they held.
class CompileThreads {
 public:
  CompileThreads() = default;
  CompileThreads(const CompileThreads&) = delete;
  CompileThreads& operator=(const CompileThreads&) = delete;
  ~CompileThreads() = default;  // each idle Thread stops and joins

  // Runs `compile` under crash recovery on an idle thread (a new one when none is idle) and
  // waits for it: whether it completed rather than crashed.
  bool run(const std::function<void()>& compile) {
    std::unique_ptr<Thread> thread;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        thread = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!thread) thread = std::make_unique<Thread>();
    const bool completed = thread->run(compile);
    if (completed) {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(std::move(thread));
    }
    return completed;
  }

 private:
  class Thread {
   public:
    Thread()
        : signal_stack_(kAlternateSignalStackBytes),
          thread_(llvm::Optional<unsigned>(kCompileStackBytes), [this] { serve(); }) {}
    Thread(const Thread&) = delete;
    Thread& operator=(const Thread&) = delete;
    ~Thread() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
      }
      wake_.notify_all();
      thread_.join();
    }

    bool run(const std::function<void()>& compile) {
      std::unique_lock<std::mutex> lock(mutex_);
      task_ = &compile;
      done_ = false;
      wake_.notify_all();
      wake_.wait(lock, [&] { return done_; });
      return completed_;
    }

   private:
    void serve() {
      // This frame, not the recovered one, owns the alternate stack: a crash longjmps out of
      // RunSafely only, and the previous stack is back before the thread ends (a sanitizer's
      // runtime unmaps whatever stack a thread ends with).
      const AlternateSignalStack alternate(signal_stack_);
      std::unique_lock<std::mutex> lock(mutex_);
      for (;;) {
        wake_.wait(lock, [&] { return stopping_ || task_ != nullptr; });
        if (task_ == nullptr) return;
        const std::function<void()>* compile = std::exchange(task_, nullptr);
        lock.unlock();
        llvm::CrashRecoveryContext recovery;
        const bool completed = recovery.RunSafely([&] { (*compile)(); });
        lock.lock();
        completed_ = completed;
        done_ = true;
        wake_.notify_all();
        if (!completed) return;  // retired: run()'s caller drops this Thread
      }
    }

    std::vector<char> signal_stack_;
    std::mutex mutex_;
    std::condition_variable wake_;
    const std::function<void()>* task_ = nullptr;
    bool done_ = false;
    bool completed_ = false;
    bool stopping_ = false;
    llvm::thread thread_;  // last: it starts serving once the members above exist
  };

  std::mutex mutex_;
  std::vector<std::unique_ptr<Thread>> idle_;
};

class ReadableFiles;

struct RunState {
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory;
  ReadableFiles* disk = nullptr;  // the compile's physical files: which roots it may read
  // The project root's real path: a diagnostic located outside it is not quoted (ErrorCollector).
  std::string project_root;
  // Without a compile database: the project root as named (absolute, normal), where a quoted
  // header the include path lacks is looked for (find_project_header); empty with one.
  fs::path project_headers_root;
  std::vector<std::string> missing;
  // Why a missing header was not taken from the project (two candidates), by name.
  std::map<std::string, std::string> missing_why;
  // The project-header candidates looked at and not there: a header appearing at one changes the result.
  std::vector<std::string> project_header_probes;
  std::size_t errors = 0;
  std::string first_error;
  // For messages: the analysed file's absolute and displayed paths, the command's directory.
  fs::path main_absolute;
  std::string main_display;
  std::string_view main_source;  // the bytes analysed
  fs::path directory;
  // What the result depends on (facts::CppAnalysis).
  std::vector<facts::IncludedFile> included;
  std::vector<std::string> absent;
  // Each header found (absolute), with the paths searched before the one it was found at: one
  // appearing there would be read instead, so the result holds while they stay absent.
  std::vector<std::pair<std::string, std::vector<std::string>>> searched_before;
  bool dependencies_known = false;
  bool walked = false;  // the AST was built and walked: something was analysed
  // Syntax errors of the file itself (see ErrorCollector), which degraded mode must not hide.
  std::size_t syntax_errors = 0;
  std::string first_syntax_error;
  std::set<unsigned> lines_with_errors;  // lines of the main file an error was reported on
  // Why the compile was stopped (CompileBudget), or empty; the headers not read for their size.
  std::string stopped;
  std::vector<std::string> oversized;
};

// `file` as the report shows paths: the analysed file by its displayed path, a file beside it
// relative to the same place, anything else absolute.
std::string shown_path(const RunState& state, std::string_view file) {
  fs::path p(file);
  if (p.is_relative() && !state.directory.empty()) p = state.directory / p;
  p = p.lexically_normal();
  if (p == state.main_absolute) return state.main_display;
  const fs::path relative = p.lexically_relative(state.main_absolute.parent_path());
  if (relative.empty()) return p.string();
  const fs::path shown = (fs::path(state.main_display).parent_path() / relative).lexically_normal();
  if (shown.empty() || (shown.is_relative() && *shown.begin() == "..")) return p.string();
  return shown.string();
}

// The longest run of prefix-operator characters in `source` outside comments and literals
// (whitespace and `(` do not end a run): how deep Clang's parser will recurse on it, at least.
std::size_t longest_prefix_operator_run(std::string_view source) {
  std::size_t longest = 0, run = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '/' && i + 1 < source.size() && (source[i + 1] == '/' || source[i + 1] == '*')) {
      const bool line = source[i + 1] == '/';
      const std::size_t end = source.find(line ? "\n" : "*/", i + 2);
      if (end == std::string_view::npos) break;
      i = end + (line ? 0 : 1);
      continue;
    }
    if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < source.size() && source[j] != c && source[j] != '\n') j += source[j] == '\\' ? 2 : 1;
      i = j;
      run = 0;
      continue;
    }
    if (c == '~' || c == '!' || c == '-' || c == '+' || c == '*' || c == '&' || c == '(') {
      longest = std::max(longest, ++run);
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      run = 0;
    }
  }
  return longest;
}

// Whether `path` is `root` or lies below it (both absolute and normal).
bool is_within(std::string_view path, std::string_view root) {
  if (root.empty() || !path.starts_with(root)) return false;
  return path.size() == root.size() || root.back() == '/' || path[root.size()] == '/';
}

// The real path of `path` as `files` resolves it (symbolic links and `..` followed), or empty.
std::string real_path_of(llvm::vfs::FileSystem& files, const Twine& path) {
  SmallString<256> real;
  if (files.getRealPath(path, real)) return {};
  return std::string(real.str());
}

// The kernel's pseudo-files: never source, and /proc/self/environ holds the process's secrets.
bool is_pseudo_file(std::string_view real) {
  return is_within(real, "/proc") || is_within(real, "/sys") || is_within(real, "/dev");
}

// The physical file system a compile reads headers from. Static mode reads an untrusted tree
// under untrusted commands, and Clang's diagnostics quote what it reads: an `#include
// "../../secret.txt"` (or "/proc/self/environ", or a link in the tree) would put any readable
// file's text into a PR annotation. So it serves only regular files and directories (a FIFO,
// `/dev/stdin` or a device would block the compile or read without end), and opens a regular
// file only
//   - whose real path (links and `..` followed) lies in the project: a link in the tree is the
//     pull request's, and may point anywhere;
//   - or that lies, as named or as its real path, in a directory outside the project that the
//     configuration names or Clang searches (its own, the command's; added once the preprocessor
//     has them): such a directory and its links (/usr/local/include/cuda_runtime.h ->
//     /usr/local/cuda-13.0/...) are the machine's;
// never under /proc, /sys or /dev. Anything else is "not found", so degraded mode stands in for
// it and none of its bytes reach the compile. So is a file larger than kMaxHeaderBytes (a sparse
// 4 GB header cost 4.3 GB): its path is listed in `oversized`.
class ReadableFiles : public llvm::vfs::ProxyFileSystem {
 public:
  ReadableFiles(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> disk, const fs::path& project_root,
                std::vector<std::string>& oversized)
      : ProxyFileSystem(std::move(disk)),
        oversized_(oversized),
        project_(fs::path(project_root).lexically_normal().string()),
        project_real_(real_path_of(getUnderlyingFS(), project_root.string())) {}
  const std::string& project_real_path() const { return project_real_; }
  // Trusts `dir`, a directory the configuration names or Clang searches, unless it is the project's
  // (its files are judged by their real paths) or a link from the project to elsewhere. The compile's
  // own thread only.
  void allow(const Twine& dir) {
    const std::string named = absolute_normal(dir);
    const std::string real = real_path_of(getUnderlyingFS(), dir);
    if (real.empty() || in_project(named, real)) return;
    for (const std::string& d : {named, real})
      if (d != "/" && !is_pseudo_file(d)) trusted_.insert(d);
  }
  // A file's existence is not its content, and Clang's driver finds the toolchain (its C++
  // library headers) by the status of files outside every root: status serves regular files
  // anywhere. Opening is what reads, and header lookup opens to test (FileSystemStatCache): a
  // file it may not read fails to open and so is not found.
  llvm::ErrorOr<llvm::vfs::Status> status(const Twine& path) override {
    llvm::ErrorOr<llvm::vfs::Status> found = ProxyFileSystem::status(path);
    if (found && found->getType() != llvm::sys::fs::file_type::regular_file &&
        found->getType() != llvm::sys::fs::file_type::directory_file)
      return std::make_error_code(std::errc::no_such_file_or_directory);
    if (found && found->getType() == llvm::sys::fs::file_type::regular_file &&
        found->getSize() > kMaxHeaderBytes) {
      if (std::find(oversized_.begin(), oversized_.end(), found->getName()) == oversized_.end())
        oversized_.push_back(found->getName().str());
      return std::make_error_code(std::errc::file_too_large);
    }
    return found;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const Twine& path) override {
    llvm::ErrorOr<llvm::vfs::Status> found = status(path);
    if (!found) return found.getError();
    if (found->getType() != llvm::sys::fs::file_type::regular_file)
      return std::make_error_code(std::errc::is_a_directory);
    if (!readable(path)) return std::make_error_code(std::errc::no_such_file_or_directory);
    return ProxyFileSystem::openFileForRead(path);
  }

 private:
  std::string absolute_normal(const Twine& path) {
    SmallString<256> absolute;
    path.toVector(absolute);
    if (makeAbsolute(absolute)) return {};
    return fs::path(absolute.str().str()).lexically_normal().string();
  }
  bool in_project(std::string_view named, std::string_view real) const {
    return is_within(named, project_) || (!project_real_.empty() && is_within(real, project_real_));
  }
  bool trusted(std::string_view p) const {
    return std::any_of(trusted_.begin(), trusted_.end(),
                       [&](const std::string& d) { return is_within(p, d); });
  }
  bool readable(const Twine& path) {
    const std::string named = absolute_normal(path);
    const std::string real = real_path_of(getUnderlyingFS(), path);
    if (real.empty() || is_pseudo_file(real) || is_pseudo_file(named)) return false;
    if (!project_real_.empty() && is_within(real, project_real_)) return true;
    if (is_within(named, project_)) return trusted(real);  // a link out of the project
    return trusted(named) || trusted(real);
  }

  std::vector<std::string>& oversized_;
  std::string project_;       // as named, absolute and normal
  std::string project_real_;  // its real path
  std::set<std::string> trusted_;
};

// A path Clang names (relative to the command's directory, perhaps) made absolute.
fs::path absolute_in(const RunState& state, StringRef name) {
  fs::path p(name.str());
  if (p.is_relative() && !state.directory.empty()) p = state.directory / p;
  return p.lexically_normal();
}

// The project headers the translation unit read (user headers: not found in a system
// directory), with the hashes of their bytes, and every path a missing header was looked
// for at: the directories searched and those of the files that include; and, for each project
// header, the paths searched before the one it was found at (a header appearing there would
// shadow it).
void record_dependencies(const SourceManager& sm, HeaderSearch& headers, RunState& state) {
  state.dependencies_known = true;
  std::set<std::string> including_dirs{state.main_absolute.parent_path().string()};
  auto absolute = [&](StringRef name) { return absolute_in(state, name); };
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
    const FileEntry* entry = it->first;
    if (!entry) continue;
    const fs::path path = absolute(entry->getName());
    if (path == state.main_absolute || path.string().starts_with(kMissingHeaderRoot)) continue;
    const HeaderFileInfo* info = headers.getExistingFileInfo(entry, /*WantExternal=*/false);
    if (info && info->DirInfo != SrcMgr::C_User) continue;
    const llvm::Optional<StringRef> bytes = it->second ? it->second->getBufferDataIfLoaded() : llvm::None;
    if (!bytes) {
      state.dependencies_known = false;
      continue;
    }
    state.included.push_back({path.string(), XXH3_64bits(bytes->data(), bytes->size())});
    including_dirs.insert(path.parent_path().string());
  }
  std::set<std::string> absent(state.project_header_probes.begin(), state.project_header_probes.end());
  std::set<std::string> included;
  for (const auto& file : state.included) included.insert(file.path);
  for (const auto& [found, before] : state.searched_before)
    if (included.count(found)) absent.insert(before.begin(), before.end());
  std::set<std::string> dirs = including_dirs;
  if (!state.missing.empty())
    for (auto it = headers.search_dir_begin(); it != headers.search_dir_end(); ++it)
      if (const DirectoryEntry* dir = it->getDir()) dirs.insert(absolute(dir->getName()).string());
  for (const std::string& name : state.missing) {
    if (fs::path(name).is_absolute()) {
      absent.insert(fs::path(name).lexically_normal().string());
      continue;
    }
    for (const std::string& dir : dirs) absent.insert((fs::path(dir) / name).lexically_normal().string());
  }
  if (absent.size() > kMaxAbsentPaths) {
    state.dependencies_known = false;
    return;
  }
  state.absent.assign(absent.begin(), absent.end());
}

class MissingHeaders : public PPCallbacks {
 public:
  MissingHeaders(RunState& state, Preprocessor& preprocessor) : state_(state), preprocessor_(preprocessor) {}
  bool FileNotFound(StringRef name, SmallVectorImpl<char>& recovery) override {
    if (std::string found = project_header(name); !found.empty()) {
      recovery.assign(found.begin(), found.end());
      return true;
    }
    const std::string dir = std::string(kMissingHeaderRoot) + "/" + std::to_string(state_.missing.size());
    // The export macros of the file that includes it (and the main file's), which that header
    // may have been the one to define.
    std::string content = class_head_macros(state_.main_source);
    if (const PreprocessorLexer* includer = preprocessor_.getCurrentFileLexer())
      if (includer->getFileID() != preprocessor_.getSourceManager().getMainFileID())
        content += class_head_macros(preprocessor_.getSourceManager().getBufferData(includer->getFileID()));
    content += degraded_header(name, [this](HeaderFamily family) { return on_include_path(family); });
    state_.memory->addFile(dir + "/" + name.str(), 0, llvm::MemoryBuffer::getMemBufferCopy(content));
    state_.missing.push_back(name.str());
    recovery.assign(dir.begin(), dir.end());
    return true;
  }

  // A header found at `search_path`: the places searched before it (the including file's
  // directory for a quoted include, then the search directories in order) are where a new
  // header of that name would shadow it (record_dependencies keeps those of project headers).
  void InclusionDirective(SourceLocation hash, const Token&, StringRef name, bool angled, CharSourceRange,
                          const FileEntry* file, StringRef search_path, StringRef, const Module*,
                          SrcMgr::CharacteristicKind) override {
    if (!file || search_path.empty() || fs::path(name.str()).is_absolute()) return;
    const fs::path found_in = absolute_in(state_, search_path);
    if (found_in.string().starts_with(kMissingHeaderRoot)) return;
    std::vector<fs::path> order;
    const SourceManager& sm = preprocessor_.getSourceManager();
    if (!angled)
      if (const FileEntry* includer = sm.getFileEntryForID(sm.getFileID(sm.getExpansionLoc(hash))))
        order.push_back(absolute_in(state_, includer->getName()).parent_path());
    const HeaderSearch& headers = preprocessor_.getHeaderSearchInfo();
    for (auto it = angled ? headers.angled_dir_begin() : headers.search_dir_begin();
         it != headers.search_dir_end(); ++it)
      if (const DirectoryEntry* dir = it->getDir()) order.push_back(absolute_in(state_, dir->getName()));
    const std::string found = absolute_in(state_, file->getName()).string();
    std::vector<std::string> before;
    for (const fs::path& dir : order) {
      if (dir == found_in) break;
      std::string candidate = (dir / name.str()).lexically_normal().string();
      if (candidate != found) before.push_back(std::move(candidate));
    }
    if (!before.empty()) state_.searched_before.emplace_back(found, std::move(before));
  }

 private:
  // Degraded mode finds a quoted header of the project as the build's -I would (project_headers.hpp):
  // the directory to search, or empty. Only files ReadableFiles serves from the project's real
  // path qualify, so no byte from outside the project reaches the compile this way.
  std::string project_header(StringRef name) {
    if (state_.project_headers_root.empty() || state_.project_root.empty()) return {};
    const SourceManager& sm = preprocessor_.getSourceManager();
    // Clang 14's only preprocessor lexer is the raw-buffer Lexer (PreprocessorLexer's one subclass);
    // it stands past the directive just read.
    const auto* lexer = static_cast<const Lexer*>(preprocessor_.getCurrentFileLexer());
    if (!lexer) return {};
    const FileID includer_id = lexer->getFileID();
    const StringRef buffer = sm.getBufferData(includer_id);
    const char* at = lexer->getBufferLocation();
    if (at < buffer.begin() || at > buffer.end() ||
        !names_in_quotes(std::string_view(buffer.data(), buffer.size()),
                         static_cast<std::size_t>(at - buffer.begin()),
                         std::string_view(name.data(), name.size())))
      return {};
    const FileEntry* includer = sm.getFileEntryForID(includer_id);
    if (!includer) return {};
    const fs::path includer_dir = absolute_in(state_, includer->getName()).parent_path();
    ProjectHeader found =
        find_project_header(std::string_view(name.data(), name.size()), includer_dir,
                            state_.project_headers_root, [this](const std::string& candidate) {
                              const std::string real = real_path_of(*state_.disk, candidate);
                              if (real.empty() || !is_within(real, state_.project_root)) return false;
                              return static_cast<bool>(state_.disk->openFileForRead(candidate));
                            });
    state_.project_header_probes.insert(state_.project_header_probes.end(), found.absent.begin(),
                                        found.absent.end());
    if (!found.ambiguity.empty())
      state_.missing_why.emplace(name.str(), "a project header " + found.ambiguity);
    return found.directory;
  }

  // Whether a family's real headers can be found (torch on the path, only CUDA missing):
  // their declarations must not be replaced by the built-in ones.
  bool on_include_path(HeaderFamily family) {
    std::optional<bool>& known = found_[static_cast<std::size_t>(family)];
    if (!known) {
      const DirectoryLookup* current = nullptr;
      known = preprocessor_
                  .LookupFile(SourceLocation(), probe_header(family), /*isAngled=*/true, nullptr, nullptr,
                              &current, nullptr, nullptr, nullptr, nullptr, nullptr)
                  .hasValue();
    }
    return *known;
  }

  RunState& state_;
  Preprocessor& preprocessor_;
  std::array<std::optional<bool>, 6> found_{};
};

// Stops a compile that exceeds the budgets of kMacroTokensMinimum and its neighbours. It sees
// every token the preprocessor returns at any level (setPreprocessToken: argument pre-expansion
// too, which a watcher of the parser's tokens alone misses) and every macro expansion before its
// arguments are pre-expanded and copied. Clang 14 has no way to end a preprocessor inside a macro
// expansion (cutting the file lexer off or a fatal diagnostic leaves the expansion running to
// its end), so it ends the compile as crash recovery does: CrashRecoveryContext::HandleExit
// unwinds to the compile thread's RunSafely, which retires the thread; what the compile held,
// bounded by these budgets, is leaked as after a crash.
class CompileBudget : public PPCallbacks {
 public:
  CompileBudget(RunState& state, Preprocessor& preprocessor, const ASTContext* ast)
      : state_(state), preprocessor_(preprocessor), ast_(ast) {}

  void FileChanged(SourceLocation at, FileChangeReason reason, SrcMgr::CharacteristicKind, FileID) override {
    if (reason != EnterFile) return;
    const SourceManager& sm = preprocessor_.getSourceManager();
    if (const FileEntry* entry = sm.getFileEntryForID(sm.getFileID(at))) source_bytes_ += entry->getSize();
  }

  // One function-like expansion copies each argument (pre-expanded) once per use of its
  // parameter in the body: at most `uses` times the argument tokens read before this call and
  // those lexed while its arguments are pre-expanded, which is all within one top-level Lex call.
  void MacroExpands(const Token& name, const MacroDefinition& definition, SourceRange,
                    const MacroArgs* args) override {
    const MacroInfo* info = definition.getMacroInfo();
    if (!info || !args || !info->isFunctionLike() || info->getNumParams() == 0) return;
    std::uint64_t uses = 0;
    for (const Token& token : info->tokens())
      if (const IdentifierInfo* id = token.getIdentifierInfo(); id && info->getParameterNum(id) >= 0) ++uses;
    if (uses <= 1) return;
    std::uint64_t argument_tokens = 0;
    for (unsigned i = 0; i < args->getNumMacroArguments(); ++i)
      argument_tokens += args->getArgLength(args->getUnexpArgument(i));
    // A macro named in a file, not by another macro's tokens, starts a new top-level expansion:
    // the ones before it are done (a file processed only for its macros, `-imacros`, gives the
    // parser no token that would say so).
    if (name.getLocation().isFileID()) open_.clear();
    // An expansion with no more uses than an open one started earlier is covered by that one.
    if (!open_.empty() && open_.back().uses >= uses) return;
    open_.push_back({uses, argument_tokens, tokens_, name.getIdentifierInfo()->getName().str()});
    check_copies();
  }

  void on_token(const Token& token) {
    ++tokens_;
    // A token for the parser: every expansion its Lex call started has been copied.
    if (preprocessor_.getTokenCount() != parser_tokens_) {
      parser_tokens_ = preprocessor_.getTokenCount();
      open_.clear();
    }
    if (!open_.empty()) check_copies();
    if (token.getLocation().isMacroID() && ++macro_tokens_ > kMacroTokensMinimum &&
        macro_tokens_ > kMacroTokensPerSourceByte * source_bytes_)
      stop("macro expansion exceeds kvlint's budget: more than " + std::to_string(macro_tokens_ - 1) +
           " tokens expanded from " + std::to_string(source_bytes_) + " bytes of source");
    if ((tokens_ & 0xfff) == 0) check_memory();
  }

 private:
  struct Expansion {
    std::uint64_t uses;
    std::uint64_t argument_tokens;
    std::uint64_t tokens_at_start;
    std::string macro;
  };

  void check_copies() {
    for (const Expansion& e : open_)
      if (e.uses * (e.argument_tokens + tokens_ - e.tokens_at_start) > kMaxExpansionCopies)
        stop("macro expansion exceeds kvlint's budget: an expansion of " + e.macro + " copies up to " +
             std::to_string(e.argument_tokens + tokens_ - e.tokens_at_start) + " argument tokens " +
             std::to_string(e.uses) + " times (more than " + std::to_string(kMaxExpansionCopies) +
             " tokens)");
  }

  void check_memory() {
    const SourceManager& sm = preprocessor_.getSourceManager();
    std::size_t bytes =
        preprocessor_.getTotalMemory() + sm.getContentCacheSize() + sm.getDataStructureSizes();
    if (ast_) bytes += ast_->getASTAllocatedMemory() + ast_->getSideTableAllocatedMemory();
    if (bytes > kMaxCompileBytes)
      stop("the compile exceeds kvlint's memory ceiling: " + std::to_string(bytes >> 20) +
           " MiB of AST and preprocessor tables (more than " + std::to_string(kMaxCompileBytes >> 20) +
           " MiB)");
  }

  void stop(std::string why) {
    state_.stopped = std::move(why);
    // Every compile runs under recovery (CompileThreads); HandleExit does not return.
    if (llvm::CrashRecoveryContext* recovery = llvm::CrashRecoveryContext::GetCurrent())
      recovery->HandleExit(1);
  }

  RunState& state_;
  Preprocessor& preprocessor_;
  const ASTContext* ast_;
  std::uint64_t source_bytes_ = 0;
  std::uint64_t tokens_ = 0;  // at every level
  std::uint64_t macro_tokens_ = 0;
  unsigned parser_tokens_ = 0;
  std::vector<Expansion> open_;  // started in this top-level Lex call, uses increasing
};

// The errors that say the text itself is malformed (a missing `;` or `)`, an expression that is
// not there, an unterminated string or comment or #if). The rest of Clang's parse errors
// ("expected namespace name", "explicit instantiation of undeclared template") also follow
// from a header that is missing, so degraded mode cannot tell them from syntax errors.
bool is_syntax_diagnostic(unsigned id) {
  switch (id) {
    case diag::err_expected:
    case diag::err_expected_after:
    case diag::err_expected_either:
    case diag::err_expected_expression:
    case diag::err_expected_semi_declaration:
    case diag::err_expected_semi_after_expr:
    case diag::err_expected_semi_after_stmt:
    case diag::err_expected_rparen_after:
    case diag::err_unterminated_block_comment:
    case diag::ext_unterminated_char_or_string:
    case diag::err_unterminated_raw_string:
    case diag::err_pp_unterminated_conditional:
    case diag::err_pp_endif_without_if:
    case diag::err_pp_invalid_directive:
      return true;
    default:
      return false;
  }
}

// Whether byte `at` of `text` follows (blanks aside) the `<...>` of a name: `Ptr<T, U> layer(...)`
// with `Ptr` a template a missing header declares parses as a comparison, and the parser stops
// right after the `>` ("expected ';' after expression").
bool follows_template_arguments(std::string_view text, std::size_t at) {
  std::size_t i = at;
  while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')) --i;
  if (i == 0 || text[i - 1] != '>') return false;
  int depth = 0;
  for (std::size_t steps = 0; i > 0 && steps < 512; --i, ++steps) {
    const char c = text[i - 1];
    if (c == '>') ++depth;
    if (c == '<' && --depth == 0) break;
    if (c == ';' || c == '{' || c == '}') return false;
  }
  if (i < 2 || depth != 0) return false;
  const char before = text[i - 2];
  return std::isalnum(static_cast<unsigned char>(before)) || before == '_';
}

// Whether a parse error at byte `at` of `text` is what a missing header or a CUDA file read as
// C++ causes, not a syntax error of the file: at an upper-case name of two characters or more
// (a macro the header would define: `void f() C10_NOEXCEPT;`), or in a kernel launch's `<<<`.
bool not_a_syntax_error_at(std::string_view text, std::size_t at) {
  if (at >= text.size()) return false;
  if (follows_template_arguments(text, at)) return true;
  if (text[at] == '<' || text[at] == '>') {
    std::size_t begin = at, end = at;
    while (begin > 0 && text[begin - 1] == text[at]) --begin;
    while (end < text.size() && text[end] == text[at]) ++end;
    return end - begin >= 3;
  }
  if (!(text[at] >= 'A' && text[at] <= 'Z')) return false;
  std::size_t end = at;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c >= 'a' && c <= 'z') return false;
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) break;
  }
  return end - at >= 2;
}

class ErrorCollector : public DiagnosticConsumer {
 public:
  explicit ErrorCollector(RunState& state) : state_(state) {}
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    ++state_.errors;
    std::string where;
    bool in_main_file = false;
    bool explained = false;
    unsigned line = 0;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const SourceManager& sm = info.getSourceManager();
      const PresumedLoc p = sm.getPresumedLoc(info.getLocation());
      if (p.isValid()) {
        line = p.getLine();
        where = shown_path(state_, p.getFilename()) + ":" + std::to_string(line) + ":" +
                std::to_string(p.getColumn()) + ": ";
      }
      const SourceLocation file_loc = sm.getFileLoc(info.getLocation());
      in_main_file = sm.isWrittenInMainFile(file_loc);
      if (in_main_file) {
        const auto [file, offset] = sm.getDecomposedLoc(file_loc);
        bool invalid = false;
        const StringRef buffer = sm.getBufferData(file, &invalid);
        if (!invalid)
          explained = not_a_syntax_error_at(std::string_view(buffer.data(), buffer.size()), offset);
      }
    }
    // A syntax error of the file itself: a malformed-token or missing-punctuation error in the
    // main file, on a line no earlier error was reported on, not one not_a_syntax_error_at
    // explains. A missing header's unknown type or macro makes the parser stumble where it is
    // used: after the error that names it (`class C10_API Bar`), or at the macro itself.
    const bool syntax = in_main_file && line > 0 && !explained && is_syntax_diagnostic(info.getID()) &&
                        !state_.lines_with_errors.count(line);
    if (in_main_file && line > 0) state_.lines_with_errors.insert(line);
    if (!syntax && !state_.first_error.empty()) return;
    std::string message;
    if (quotable(info)) {
      SmallString<160> formatted;
      info.FormatDiagnostic(formatted);
      message = formatted.str().str();
    } else {
      // The text may quote the file's own bytes (`unknown type name 'root'` for /etc/shadow),
      // and reports reach pull requests: say where, not what.
      message = "an error in a file outside the project (Clang's message is not quoted)";
    }
    if (state_.first_error.empty()) state_.first_error = where + message;
    if (syntax && state_.syntax_errors++ == 0) state_.first_syntax_error = where + message;
  }

 private:
  // Whether Clang's message for `info` may be quoted: it is located (where written and where
  // expanded) in the project or in kvlint's stand-in headers, or nowhere in particular.
  bool quotable(const Diagnostic& info) const {
    if (!info.hasSourceManager() || !info.getLocation().isValid()) return true;
    const SourceManager& sm = info.getSourceManager();
    for (const SourceLocation at :
         {sm.getSpellingLoc(info.getLocation()), sm.getExpansionLoc(info.getLocation())}) {
      const FileEntry* file = sm.getFileEntryForID(sm.getFileID(at));
      if (!file) continue;  // a macro's scratch space, the command line's predefines
      const std::string name = fs::path(file->getName().str()).lexically_normal().string();
      if (name == state_.main_absolute.string() || name.starts_with(kMissingHeaderRoot)) continue;
      SmallString<256> real;
      if (llvm::sys::fs::real_path(file->getName(), real) || state_.project_root.empty() ||
          !is_within(real.str(), state_.project_root))
        return false;
    }
    return true;
  }

  RunState& state_;
};

// The line a suppression comment starting at `comment_start` (on `line`) applies to: its own
// when it trails code, else the next line that is neither blank nor a `//` comment (0: none).
// Lines end at "\r\n", "\n" or a lone "\r", as Clang counts them.
uint32_t applies_to_line(std::string_view source, std::size_t comment_start, uint32_t line) {
  const std::size_t before =
      comment_start == 0 ? std::string_view::npos : source.find_last_of("\r\n", comment_start - 1);
  for (std::size_t i = before == std::string_view::npos ? 0 : before + 1; i < comment_start; ++i)
    if (source[i] != ' ' && source[i] != '\t') return line;  // trails code
  uint32_t current = line;
  for (std::size_t begin = facts::next_line_start(source, comment_start); begin < source.size();
       begin = facts::next_line_start(source, begin)) {
    ++current;
    std::string_view text = source.substr(begin, facts::line_end(source, begin) - begin);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    if (!text.empty() && !text.starts_with("//")) return current;
  }
  return 0;
}

// `// kvlint: ignore[KV101] reason` and `/* kvlint: ... */`, from the raw token stream.
void read_suppressions(ASTContext& ast, facts::FileFacts& out) {
  const SourceManager& sm = ast.getSourceManager();
  const FileID main = sm.getMainFileID();
  const StringRef buffer = sm.getBufferData(main);
  Lexer lexer(sm.getLocForStartOfFile(main), ast.getLangOpts(), buffer.begin(), buffer.begin(), buffer.end());
  lexer.SetCommentRetentionState(true);
  Token token;
  for (;;) {
    const bool at_end = lexer.LexFromRawLexer(token);
    if (token.is(tok::comment)) {
      const unsigned offset = sm.getFileOffset(token.getLocation());
      std::string_view text(buffer.data() + offset, token.getLength());
      const bool block = text.starts_with("/*");
      std::string_view body = text.substr(2);
      if (block && body.ends_with("*/")) body.remove_suffix(2);
      facts::Suppression s;
      if (body.find("kvlint") != std::string_view::npos &&
          facts::parse_suppression_comment(body, offset + 2, block ? "/*" : "//", s)) {
        s.loc.file = out.path;
        s.loc.line = sm.getSpellingLineNumber(token.getLocation());
        s.loc.column = sm.getSpellingColumnNumber(token.getLocation());
        s.loc.end_line = s.loc.line;
        s.loc.end_column = s.loc.column + token.getLength();
        s.applies_to_line =
            applies_to_line(std::string_view(buffer.data(), buffer.size()), offset, s.loc.line);
        out.suppressions.push_back(std::move(s));
      }
    }
    if (at_end || token.is(tok::eof)) break;
  }
}

// The declarations written in the main file, outermost first. Facts come from the main file
// only, so the walk and the parent map the extractors query cover these alone, not every
// header's declarations (the standard library's, LibTorch's): building the parent map over a
// whole translation unit dominated the time of a small file. A namespace opened in one header
// and closed in another may hold main-file declarations, so it is searched too.
void main_file_declarations(const SourceManager& sm, const DeclContext& context, std::vector<Decl*>& out) {
  for (Decl* decl : context.decls()) {
    const SourceLocation at = decl->getLocation();
    if (at.isValid() && sm.isWrittenInMainFile(sm.getExpansionLoc(at))) {
      out.push_back(decl);
      continue;
    }
    const SourceRange range = decl->getSourceRange();
    if (isa<NamespaceDecl, LinkageSpecDecl>(decl) && range.isValid() &&
        sm.getFileID(sm.getExpansionLoc(range.getBegin())) !=
            sm.getFileID(sm.getExpansionLoc(range.getEnd())))
      main_file_declarations(sm, *cast<DeclContext>(decl), out);
  }
}

class FactsConsumer : public ASTConsumer {
 public:
  FactsConsumer(const facts::Vocabulary& vocabulary, facts::FileFacts& out, RunState& state, Preprocessor& pp,
                std::uint64_t work_budget)
      : vocabulary_(vocabulary), out_(out), state_(state), pp_(pp), work_budget_(work_budget) {}
  void HandleTranslationUnit(ASTContext& ast) override {
    state_.walked = true;
    record_dependencies(ast.getSourceManager(), pp_.getHeaderSearchInfo(), state_);
    std::vector<Decl*> scope;
    main_file_declarations(ast.getSourceManager(), *ast.getTranslationUnitDecl(), scope);
    ast.setTraversalScope(scope);
    read_suppressions(ast, out_);
    WorkMeter work;
    work.budget = work_budget_;
    Context cx{ast, vocabulary_, out_, {}, {}, {}, &work, facts::FilePath(out_.path)};
    try {
      walk_translation_unit(cx);
    } catch (const WorkBudgetExceeded&) {
      // Cut off where the walk stood: the facts found so far stay, as for the Python front end.
      facts::Location where;
      where.file = cx.file;
      if (work.last.isValid()) where = location_of(cx, SourceRange(work.last, work.last));
      if (where.line == 0) where.line = where.column = where.end_line = where.end_column = 1;
      out_.parse_problems.push_back(
          {where, "analysis stopped here: the file needs more than " + std::to_string(work_budget_) +
                      " analysis steps (the per-file budget for its size); facts from here on are missing"});
    }
  }

 private:
  const facts::Vocabulary& vocabulary_;
  facts::FileFacts& out_;
  RunState& state_;
  Preprocessor& pp_;
  std::uint64_t work_budget_;
};

class FactsAction : public ASTFrontendAction {
 public:
  FactsAction(const facts::Vocabulary& vocabulary, facts::FileFacts& out, RunState& state,
              std::uint64_t work_budget)
      : vocabulary_(vocabulary), out_(out), state_(state), work_budget_(work_budget) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& compiler, StringRef) override {
    Preprocessor& preprocessor = compiler.getPreprocessor();
    // Before any header is looked up: the directories Clang searches are readable roots.
    HeaderSearch& search = preprocessor.getHeaderSearchInfo();
    for (auto dir = search.search_dir_begin(); dir != search.search_dir_end(); ++dir)
      if (const DirectoryEntry* entry = dir->getDir()) state_.disk->allow(entry->getName());
    preprocessor.addPPCallbacks(std::make_unique<MissingHeaders>(state_, preprocessor));
    // The preprocessor owns the budget and the watcher that calls it.
    auto budget = std::make_unique<CompileBudget>(
        state_, preprocessor, compiler.hasASTContext() ? &compiler.getASTContext() : nullptr);
    preprocessor.setPreprocessToken(true);
    preprocessor.setTokenWatcher([watched = budget.get()](const Token& token) { watched->on_token(token); });
    preprocessor.addPPCallbacks(std::move(budget));
    return std::make_unique<FactsConsumer>(vocabulary_, out_, state_, compiler.getPreprocessor(),
                                           work_budget_);
  }

 private:
  const facts::Vocabulary& vocabulary_;
  facts::FileFacts& out_;
  RunState& state_;
  std::uint64_t work_budget_;
};

bool is_header(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".hpp" || ext == ".hh" || ext == ".hxx" || ext == ".cuh";
}

bool is_cuda(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cu" || ext == ".cuh";
}

// A repository's compile command is untrusted: only what changes how the source is read is
// kept (compile_flags.hpp), and what was left out is said under --verbose.
facts::CppCommand read_only(facts::CppCommand command, const fs::path& absolute_path) {
  ReadingCommand reading = reading_options_only(command.arguments, absolute_path.string());
  command.arguments = std::move(reading.arguments);
  command.dropped = std::move(reading.dropped);
  return command;
}

class Analyzer final : public facts::CppAnalyzer {
 public:
  Analyzer(const facts::Vocabulary& vocabulary, const facts::CppProjectSettings& settings)
      : vocabulary_(vocabulary), settings_(settings) {
    // A crash in Clang (see kCompileStackBytes) fails that file's analysis, not the run: the
    // same recovery libclang uses. Process-wide and idempotent.
    llvm::CrashRecoveryContext::Enable();
    run_crash_handlers_on_alternate_stacks();
    if (settings_.compile_database.empty()) return;
    std::string error;
    auto database = tooling::JSONCompilationDatabase::loadFromFile(
        settings_.compile_database.string(), error, tooling::JSONCommandLineSyntax::AutoDetect);
    if (!database) {
      problem_ = "cannot use " + settings_.compile_database.string() + ": " + error;
      return;
    }
    database_ = tooling::inferMissingCompileCommands(std::move(database));
  }

  std::string database_problem() const override { return problem_; }

  facts::CppCommand command_for(const fs::path& absolute_path) const override {
    facts::CppCommand command;
    if (database_) {
      std::vector<tooling::CompileCommand> found;
      {
        // The interpolating database is not documented as thread-safe.
        std::lock_guard<std::mutex> lock(database_mutex_);
        found = database_->getCompileCommands(absolute_path.string());
      }
      if (!found.empty()) {
        command.directory = found.front().Directory;
        // The entry may name the file relative to its directory, or a header's sibling
        // translation unit: the allow-list drops every input and analyses this file.
        command.arguments = found.front().CommandLine;
        command.from_database = true;
        return read_only(std::move(command), absolute_path);
      }
    }
    command.directory = absolute_path.parent_path();
    command.arguments.push_back("clang++");
    for (const auto& flag : settings_.fallback_flags) command.arguments.push_back(flag);
    if (is_cuda(absolute_path))
      for (const char* flag : {"-x", "c++", "-D__global__=", "-D__device__=", "-D__host__=", "-D__shared__=",
                               "-D__forceinline__=inline"})
        command.arguments.emplace_back(flag);
    else if (is_header(absolute_path))
      for (const char* flag : {"-x", "c++-header"}) command.arguments.emplace_back(flag);
    command.arguments.push_back("-I" + absolute_path.parent_path().string());
    for (const auto& dir : settings_.fallback_include_dirs) command.arguments.push_back("-I" + dir.string());
    return read_only(std::move(command), absolute_path);
  }

  facts::CppAnalysis analyze(const std::string& display_path, const fs::path& absolute_path,
                             std::string_view source, const facts::CppCommand& command) const override {
    facts::CppAnalysis result;
    result.facts.path = display_path;
    result.facts.language = facts::Language::Cpp;
    if (command.arguments.empty()) {
      result.failed = true;
      result.first_error = "empty compile command";
      return result;
    }
    // Again here, whoever built the command: nothing that writes a file reaches Clang.
    std::vector<std::string> args = reading_options_only(command.arguments, absolute_path.string()).arguments;
    args = tooling::getClangSyntaxOnlyAdjuster()(args, absolute_path.string());
    // No warnings, every error counted, the builtin headers of the Clang we link.
    std::vector<std::string> extra = {
        "-w",         "-ferror-limit=0",        "-resource-dir=" KVLINT_CLANG_RESOURCE_DIR,
        "-Wno-error", "-fno-color-diagnostics", "-fno-caret-diagnostics"};
    if (is_header(absolute_path) && command.from_database) extra.insert(extra.end(), {"-x", "c++-header"});
    args.insert(args.begin() + 1, extra.begin(), extra.end());

    if (const std::size_t run = longest_prefix_operator_run(source); run > kMaxPrefixOperatorRun) {
      result.failed = true;
      result.first_error = "an expression nests " + std::to_string(run) +
                           " prefix operators deep (more than the " + std::to_string(kMaxPrefixOperatorRun) +
                           " kvlint parses)";
      return result;
    }

    RunState state;
    state.main_source = source;
    state.main_absolute = absolute_path.lexically_normal();
    state.main_display = display_path;
    state.directory = command.directory;
    state.memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    // A physical file system with its own working directory: the shared getRealFileSystem()
    // changes the whole process's cwd on setCurrentWorkingDirectory, under the other workers.
    const fs::path project_root =
        settings_.project_root.empty() ? absolute_path.parent_path() : fs::absolute(settings_.project_root);
    auto disk = llvm::makeIntrusiveRefCnt<ReadableFiles>(
        llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>(llvm::vfs::createPhysicalFileSystem().release()),
        project_root, state.oversized);
    for (const auto& dir : settings_.fallback_include_dirs) disk->allow(dir.string());
    disk->allow(KVLINT_CLANG_RESOURCE_DIR);
    state.disk = disk.get();
    state.project_root = disk->project_real_path();
    if (!command.from_database) state.project_headers_root = project_root.lexically_normal();
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(disk);
    overlay->pushOverlay(state.memory);
    // The bytes the engine read (and hashed for the cache) are the bytes analysed.
    state.memory->addFile(absolute_path.string(), 0,
                          llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source.data(), source.size()),
                                                               absolute_path.string()));
    state.memory->addFile(std::string(kMissingHeaderRoot) + "/.keep", 0,
                          llvm::MemoryBuffer::getMemBuffer(""));
    if (!command.directory.empty()) overlay->setCurrentWorkingDirectory(command.directory.string());
    auto files = llvm::makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), overlay);
    const std::uint64_t work_budget =
        std::max(settings_.work_minimum_steps,
                 settings_.work_steps_per_byte * static_cast<std::uint64_t>(source.size()));
    // Written by the compile's thread; after a crash it may be half-built, so it is left alone.
    auto walked = std::make_unique<facts::FileFacts>(result.facts);
    auto errors = std::make_unique<ErrorCollector>(state);
    auto invocation = std::make_unique<tooling::ToolInvocation>(
        args, std::make_unique<FactsAction>(vocabulary_, *walked, state, work_budget), files.get());
    invocation->setDiagnosticConsumer(errors.get());
    const bool completed = compile_threads_.run([&] {
      try {
        (void)invocation->run();  // whether an AST was walked is state.walked
      } catch (const std::exception& e) {
        state.first_error = e.what();
      }
    });
    if (!completed) {
      // What the crashed compile held is leaked, as libclang does: unwinding it is not safe.
      (void)walked.release();
      (void)errors.release();
      (void)invocation.release();
      result.failed = true;
      result.first_error = state.stopped.empty()
                               ? "the compile crashed on this file (in Clang or in kvlint's walk)"
                               : state.stopped;
      return result;
    }
    result.facts = std::move(*walked);
    result.included = std::move(state.included);
    result.absent = std::move(state.absent);
    result.dependencies_known = state.dependencies_known;
    result.errors = state.errors;
    result.first_error = state.first_error;
    result.syntax_errors = state.syntax_errors;
    result.first_syntax_error = state.first_syntax_error;
    for (std::size_t i = 0; i < state.missing.size() && i < kMaxMissingListed; ++i) {
      const std::string& name = state.missing[i];
      const bool too_large = std::any_of(
          state.oversized.begin(), state.oversized.end(),
          [&](const std::string& p) { return p == name || std::string_view(p).ends_with("/" + name); });
      const auto why = state.missing_why.find(name);
      result.missing_headers.push_back(too_large
                                           ? name + ": larger than the " +
                                                 std::to_string(kMaxHeaderBytes >> 20) + " MiB kvlint reads"
                                       : why != state.missing_why.end() ? name + ": " + why->second
                                                                        : name);
    }
    result.cuda_read_as_cpp = is_cuda(absolute_path) && !command.from_database;
    result.full_types = state.missing.empty() && state.errors == 0;
    // No AST was built (a command with no input, another language, an unusable flag): nothing
    // was analysed.
    result.failed = !state.walked;
    if (result.failed && result.first_error.empty())
      result.first_error = "the compile command builds no C++ AST";
    return result;
  }

 private:
  facts::Vocabulary vocabulary_;
  facts::CppProjectSettings settings_;
  std::unique_ptr<tooling::CompilationDatabase> database_;
  mutable std::mutex database_mutex_;
  std::string problem_;
  mutable CompileThreads compile_threads_;
};

}  // namespace

std::unique_ptr<facts::CppAnalyzer> make_analyzer(const facts::Vocabulary& vocabulary,
                                                  const facts::CppProjectSettings& settings) {
  return std::make_unique<Analyzer>(vocabulary, settings);
}

}  // namespace kvlint::cpp

extern "C" kvlint::facts::CppAnalyzer* kvlint_make_cpp_analyzer(
    int abi, const kvlint::facts::Vocabulary* vocabulary, const kvlint::facts::CppProjectSettings* settings) {
  if (abi != kvlint::facts::kCppAnalyzerAbi || !vocabulary || !settings) return nullptr;
  try {
    return kvlint::cpp::make_analyzer(*vocabulary, *settings).release();
  } catch (...) {
    return nullptr;
  }
}
