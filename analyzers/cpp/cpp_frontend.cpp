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
#include <clang/Basic/FileManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/Lexer.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/JSONCompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <array>
#include <mutex>
#include <optional>

#include "analyzers/cpp/degraded_headers.hpp"
#include "analyzers/cpp/walker.hpp"
#include "analyzers/facts/suppression_comment.hpp"

namespace kvlint::cpp {

namespace fs = std::filesystem;
using namespace clang;

namespace {

// Where missing headers are served from (an in-memory directory per header, so the
// file manager never sees a cached miss for a path that appears later).
constexpr std::string_view kMissingHeaderRoot = "/__kvlint_missing_headers__";
constexpr std::size_t kMaxMissingListed = 5;

struct RunState {
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory;
  std::vector<std::string> missing;
  std::size_t errors = 0;
  std::string first_error;
};

class MissingHeaders : public PPCallbacks {
 public:
  MissingHeaders(RunState& state, Preprocessor& preprocessor) : state_(state), preprocessor_(preprocessor) {}
  bool FileNotFound(StringRef name, SmallVectorImpl<char>& recovery) override {
    const std::string dir = std::string(kMissingHeaderRoot) + "/" + std::to_string(state_.missing.size());
    const std::string content =
        degraded_header(name, [this](HeaderFamily family) { return on_include_path(family); });
    state_.memory->addFile(dir + "/" + name.str(), 0, llvm::MemoryBuffer::getMemBufferCopy(content));
    state_.missing.push_back(name.str());
    recovery.assign(dir.begin(), dir.end());
    return true;
  }

 private:
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
  std::array<std::optional<bool>, 4> found_{};
};

class ErrorCollector : public DiagnosticConsumer {
 public:
  explicit ErrorCollector(RunState& state) : state_(state) {}
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    ++state_.errors;
    if (!state_.first_error.empty()) return;
    SmallString<160> message;
    info.FormatDiagnostic(message);
    std::string where;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const PresumedLoc p = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (p.isValid()) where = std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ":" +
                               std::to_string(p.getColumn()) + ": ";
    }
    state_.first_error = where + message.str().str();
  }

 private:
  RunState& state_;
};

uint32_t applies_to_line(std::string_view source, std::size_t comment_start, uint32_t line) {
  std::size_t line_start = source.rfind('\n', comment_start == 0 ? 0 : comment_start - 1);
  line_start = (line_start == std::string_view::npos || comment_start == 0) ? 0 : line_start + 1;
  for (std::size_t i = line_start; i < comment_start; ++i)
    if (source[i] != ' ' && source[i] != '\t') return line;  // trails code
  std::size_t pos = source.find('\n', comment_start);
  uint32_t current = line;
  while (pos != std::string_view::npos) {
    ++current;
    const std::size_t begin = pos + 1;
    const std::size_t end = source.find('\n', begin);
    std::string_view l = source.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    if (!l.empty() && l != "\r" && !l.starts_with("//")) return current;
    pos = end;
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
        s.applies_to_line = applies_to_line(std::string_view(buffer.data(), buffer.size()), offset, s.loc.line);
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
        sm.getFileID(sm.getExpansionLoc(range.getBegin())) != sm.getFileID(sm.getExpansionLoc(range.getEnd())))
      main_file_declarations(sm, *cast<DeclContext>(decl), out);
  }
}

class FactsConsumer : public ASTConsumer {
 public:
  FactsConsumer(const facts::Vocabulary& vocabulary, facts::FileFacts& out) : vocabulary_(vocabulary), out_(out) {}
  void HandleTranslationUnit(ASTContext& ast) override {
    std::vector<Decl*> scope;
    main_file_declarations(ast.getSourceManager(), *ast.getTranslationUnitDecl(), scope);
    ast.setTraversalScope(scope);
    read_suppressions(ast, out_);
    Context cx{ast, vocabulary_, out_, {}, {}, {}};
    walk_translation_unit(cx);
  }

 private:
  const facts::Vocabulary& vocabulary_;
  facts::FileFacts& out_;
};

class FactsAction : public ASTFrontendAction {
 public:
  FactsAction(const facts::Vocabulary& vocabulary, facts::FileFacts& out, RunState& state)
      : vocabulary_(vocabulary), out_(out), state_(state) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& compiler, StringRef) override {
    compiler.getPreprocessor().addPPCallbacks(
        std::make_unique<MissingHeaders>(state_, compiler.getPreprocessor()));
    return std::make_unique<FactsConsumer>(vocabulary_, out_);
  }

 private:
  const facts::Vocabulary& vocabulary_;
  facts::FileFacts& out_;
  RunState& state_;
};

bool is_header(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".hpp" || ext == ".hh" || ext == ".hxx" || ext == ".cuh";
}

bool is_cuda(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cu" || ext == ".cuh";
}

class Analyzer final : public facts::CppAnalyzer {
 public:
  Analyzer(const facts::Vocabulary& vocabulary, const facts::CppProjectSettings& settings)
      : vocabulary_(vocabulary), settings_(settings) {
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
        command.arguments = found.front().CommandLine;
        // The entry may name the file relative to its directory, or a header's
        // sibling translation unit: analyse this file.
        if (!command.arguments.empty()) {
          const std::string& last = command.arguments.back();
          if (fs::path(last).filename() == absolute_path.filename() || is_header(absolute_path) ||
              fs::path(found.front().Filename).filename() == fs::path(last).filename())
            command.arguments.back() = absolute_path.string();
        }
        command.from_database = true;
        return command;
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
    command.arguments.push_back(absolute_path.string());
    return command;
  }

  facts::CppAnalysis analyze(const std::string& display_path, const fs::path& absolute_path, std::string_view source,
                             const facts::CppCommand& command) const override {
    facts::CppAnalysis result;
    result.facts.path = display_path;
    result.facts.language = facts::Language::Cpp;
    if (command.arguments.empty()) {
      result.failed = true;
      result.first_error = "empty compile command";
      return result;
    }
    std::vector<std::string> args = command.arguments;
    args = tooling::getClangStripOutputAdjuster()(args, absolute_path.string());
    args = tooling::getClangStripDependencyFileAdjuster()(args, absolute_path.string());
    args = tooling::getClangSyntaxOnlyAdjuster()(args, absolute_path.string());
    // No warnings, every error counted, the builtin headers of the Clang we link.
    std::vector<std::string> extra = {"-w", "-ferror-limit=0", "-resource-dir=" KVLINT_CLANG_RESOURCE_DIR,
                                      "-Wno-error", "-fno-color-diagnostics",
                                      "-fno-caret-diagnostics"};
    if (is_header(absolute_path) && command.from_database)
      extra.insert(extra.end(), {"-x", "c++-header"});
    args.insert(args.begin() + 1, extra.begin(), extra.end());

    RunState state;
    state.memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    // A physical file system with its own working directory: the shared getRealFileSystem()
    // changes the whole process's cwd on setCurrentWorkingDirectory, under the other workers.
    llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> disk(llvm::vfs::createPhysicalFileSystem().release());
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(disk);
    overlay->pushOverlay(state.memory);
    // The bytes the engine read (and hashed for the cache) are the bytes analysed.
    state.memory->addFile(absolute_path.string(), 0,
                          llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source.data(), source.size()),
                                                               absolute_path.string()));
    state.memory->addFile(std::string(kMissingHeaderRoot) + "/.keep", 0, llvm::MemoryBuffer::getMemBuffer(""));
    if (!command.directory.empty()) overlay->setCurrentWorkingDirectory(command.directory.string());
    auto files = llvm::makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), overlay);
    ErrorCollector errors(state);
    tooling::ToolInvocation invocation(args, std::make_unique<FactsAction>(vocabulary_, result.facts, state),
                                       files.get());
    invocation.setDiagnosticConsumer(&errors);
    bool ran = false;
    try {
      ran = invocation.run();
    } catch (const std::exception& e) {
      state.first_error = e.what();
    }
    result.errors = state.errors;
    result.first_error = state.first_error;
    for (std::size_t i = 0; i < state.missing.size() && i < kMaxMissingListed; ++i)
      result.missing_headers.push_back(state.missing[i]);
    result.full_types = state.missing.empty() && state.errors == 0;
    // A run that produced no facts at all and no AST: the command itself failed.
    result.failed = !ran && result.facts.classes.empty() && result.facts.functions.empty() &&
                    result.facts.suppressions.empty() && state.errors > 0 && state.first_error.find(':') == std::string::npos;
    return result;
  }

 private:
  facts::Vocabulary vocabulary_;
  facts::CppProjectSettings settings_;
  std::unique_ptr<tooling::CompilationDatabase> database_;
  mutable std::mutex database_mutex_;
  std::string problem_;
};

}  // namespace

std::unique_ptr<facts::CppAnalyzer> make_analyzer(const facts::Vocabulary& vocabulary,
                                                  const facts::CppProjectSettings& settings) {
  return std::make_unique<Analyzer>(vocabulary, settings);
}

}  // namespace kvlint::cpp

extern "C" kvlint::facts::CppAnalyzer* kvlint_make_cpp_analyzer(int abi, const kvlint::facts::Vocabulary* vocabulary,
                                                                const kvlint::facts::CppProjectSettings* settings) {
  if (abi != kvlint::facts::kCppAnalyzerAbi || !vocabulary || !settings) return nullptr;
  try {
    return kvlint::cpp::make_analyzer(*vocabulary, *settings).release();
  } catch (...) {
    return nullptr;
  }
}
