#include "tools/kvlint/engine/discovery.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/config/glob.hpp"
#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint {
namespace {

namespace fs = std::filesystem;
using kvlint::testing::TempDir;

GlobPattern pattern(std::string_view text) {
  GlobPattern p;
  EXPECT_TRUE(GlobPattern::parse(text, p)) << text;
  return p;
}

TEST(Glob, GitignoreSemantics) {
  EXPECT_TRUE(pattern("*.py").matches("a/b/c.py", false));  // no slash: any depth
  EXPECT_TRUE(pattern("build").matches("x/build", true));
  EXPECT_FALSE(pattern("/build").matches("x/build", true));  // anchored
  EXPECT_TRUE(pattern("/build").matches("build", true));
  EXPECT_TRUE(pattern("docs/*.py").matches("docs/a.py", false));
  EXPECT_FALSE(pattern("docs/*.py").matches("docs/sub/a.py", false));  // `*` stops at '/'
  EXPECT_FALSE(pattern("docs/*.py").matches("x/docs/a.py", false));    // middle slash anchors
  EXPECT_TRUE(pattern("out/").matches("out", true));
  EXPECT_FALSE(pattern("out/").matches("out", false));  // dir-only
  EXPECT_TRUE(pattern("a/**/b.py").matches("a/b.py", false));
  EXPECT_TRUE(pattern("a/**/b.py").matches("a/x/y/b.py", false));
  EXPECT_TRUE(pattern("**/gen").matches("p/q/gen", true));
  EXPECT_TRUE(pattern("lib/**").matches("lib/x/y.py", false));
  EXPECT_TRUE(pattern("!keep.py").negated);
  EXPECT_TRUE(pattern("\\#hash.py").matches("#hash.py", false));
  GlobPattern comment;
  EXPECT_FALSE(GlobPattern::parse("# comment", comment));
  EXPECT_FALSE(GlobPattern::parse("   ", comment));
}

// Segments without glob characters compare as text, and a pattern without `**` matches only
// as many parts as it has segments; fnmatch's answers stay where a segment has `*?[\\`.
TEST(Glob, LiteralSegmentsAndSegmentCountsMatchAsFnmatchWould) {
  EXPECT_TRUE(pattern("/libexec/lib.so").matches("libexec/lib.so", false));
  EXPECT_FALSE(pattern("/libexec/lib.so").matches("libexec/lib.so/x", false));
  EXPECT_FALSE(pattern("/libexec/lib.so").matches("libexec", true));
  EXPECT_FALSE(pattern("/versions").matches("versions/3.11/lib/a.py", false));  // the dir, not below
  EXPECT_TRUE(matches_path_or_ancestor({pattern("/versions")}, "versions/3.11/lib/a.py", false));
  EXPECT_TRUE(pattern("a/*/c").matches("a/b/c", false));
  EXPECT_FALSE(pattern("a/*/c").matches("a/b/b/c", false));
  EXPECT_TRUE(pattern("/src/*.[oa]").matches("src/x.o", false));
  EXPECT_FALSE(pattern("/src/*.[oa]").matches("src/x.c", false));
  EXPECT_TRUE(pattern("\\*.py").matches("*.py", false));  // escaped: the text `*.py` only
  EXPECT_FALSE(pattern("\\*.py").matches("a.py", false));
  EXPECT_TRUE(pattern("ma?e.py").matches("make.py", false));
  EXPECT_FALSE(pattern("make.py").matches("Make.py", false));
}

TEST(Glob, LastMatchWinsAndNegationReincludes) {
  std::vector<GlobPattern> list{pattern("*.py"), pattern("!keep.py")};
  EXPECT_EQ(match_patterns(list, "drop.py", false), 1);
  EXPECT_EQ(match_patterns(list, "keep.py", false), -1);
  EXPECT_EQ(match_patterns(list, "x.txt", false), 0);
  EXPECT_TRUE(matches_path_or_ancestor({pattern("build")}, "build/lib/a.py", false));
}

std::vector<std::string> displays(const DiscoveryResult& r) {
  std::vector<std::string> out;
  for (const auto& f : r.reported_files()) out.push_back(f.display);
  return out;
}

TEST(Discovery, HonoursNestedGitignoreNegationAndExcludes) {
  TempDir dir;
  dir.write(".gitignore", "gen_*.py\n/top_only.py\nbuild/\n");
  dir.write("a.py", "");
  dir.write("gen_x.py", "");
  dir.write("top_only.py", "");
  dir.write("notes.txt", "");
  dir.write("build/b.py", "");
  dir.write("pkg/.gitignore", "!gen_keep.py\nlocal.py\n");
  dir.write("pkg/gen_keep.py", "");
  dir.write("pkg/gen_drop.py", "");
  dir.write("pkg/local.py", "");
  dir.write("pkg/top_only.py", "");  // the root pattern is anchored to the root
  dir.write("pkg/__pycache__/c.py", "");
  dir.write(".git/hooks/h.py", "");
  dir.write("vendor/v.py", "");
  dir.write(".kvlint_cache/k.py", "");
  Config config;
  config.root = dir.path();
  config.exclude = {"vendor"};
  DiscoveryOptions options;
  options.cache_dir = dir.path() / ".kvlint_cache";
  const auto found = discover_files({dir.path()}, config, options);
  const std::string root = dir.path().generic_string();
  EXPECT_EQ(displays(found),
            (std::vector<std::string>{root + "/a.py", root + "/pkg/gen_keep.py", root + "/pkg/top_only.py"}));
  EXPECT_TRUE(found.diagnostics.empty());

  config.respect_gitignore = false;
  EXPECT_EQ(discover_files({dir.path()}, config, options).reported_files().size(),
            8u);  // vendor, .git, __pycache__ and the cache dir stay out
}

// The walk reads a directory's entries to know whether it holds a .gitignore or a config
// file: one reached through a symbolic link still counts (its target is read), and a root
// named with a trailing slash walks as without one.
TEST(Discovery, LinkedGitignoreAndConfigFilesCountAndATrailingSlashChangesNothing) {
  TempDir dir;
  dir.write("shared/ignore-list", "skip.py\n");
  dir.write("shared/kvlint.toml", "select = [\"KV2\"]\n");
  dir.write("a.py", "");
  dir.write("skip.py", "");
  dir.write("pkg/b.py", "");
  dir.write("pkg/skip.py", "");
  dir.write("sub/c.py", "");
  fs::create_symlink(dir.path() / "shared/ignore-list", dir.path() / ".gitignore");
  fs::create_symlink(dir.path() / "shared/kvlint.toml", dir.path() / "sub/kvlint.toml");
  dir.write("shared/skip.py", "");
  DiscoveryOptions options;
  options.nearest_config = true;
  const auto found = discover_files({dir.path()}, Config{}, options);
  std::vector<std::string> relative;
  for (const auto& f : found.reported_files())
    relative.push_back(fs::path(f.display).lexically_relative(dir.path()).generic_string());
  EXPECT_EQ(relative, (std::vector<std::string>{"a.py", "pkg/b.py", "sub/c.py"}));
  std::vector<std::string> roots;
  for (const auto& project : found.projects) roots.push_back(project.config.root.generic_string());
  EXPECT_EQ(roots,
            (std::vector<std::string>{dir.path().generic_string(), (dir.path() / "sub").generic_string()}));

  const auto slashed = discover_files({dir.path().string() + "/"}, Config{}, options);
  ASSERT_EQ(slashed.reported_files().size(), found.reported_files().size());
  for (std::size_t i = 0; i < found.reported_files().size(); ++i) {
    EXPECT_EQ(slashed.reported_files()[i].display, found.reported_files()[i].display);
    EXPECT_EQ(slashed.reported_files()[i].absolute, found.reported_files()[i].absolute);
  }
}

TEST(Discovery, ExplicitFilesAreCheckedUnlessForceExcluded) {
  TempDir dir;
  auto file = dir.write("vendor/v.py", "");
  Config config;
  config.root = dir.path();
  config.exclude = {"vendor/"};
  EXPECT_EQ(discover_files({file}, config, {}).reported_files().size(), 1u);
  DiscoveryOptions force;
  force.force_exclude = true;
  EXPECT_TRUE(discover_files({file}, config, force).reported_files().empty());
}

TEST(Discovery, SymlinkLoopsAreWalkedOnceAndDanglingLinksDiagnosed) {
  TempDir dir;
  dir.write("pkg/a.py", "");
  fs::create_directory_symlink("..", dir.path() / "pkg/loop");
  fs::create_symlink(dir.path() / "missing.py", dir.path() / "pkg/dangling.py");
  Config config;
  config.root = dir.path();
  const auto found = discover_files({dir.path()}, config, {});
  EXPECT_EQ(displays(found), std::vector<std::string>{dir.path().generic_string() + "/pkg/a.py"});
  ASSERT_EQ(found.diagnostics.size(), 1u);
  EXPECT_EQ(found.diagnostics[0].kind, "read-error");
  EXPECT_THAT(found.diagnostics[0].path, ::testing::EndsWith("pkg/dangling.py"));
  EXPECT_THAT(found.diagnostics[0].message, ::testing::HasSubstr("dangling symbolic link"));
}

TEST(Discovery, MissingExplicitPathIsDiagnosed) {
  TempDir dir;
  Config config;
  config.root = dir.path();
  const auto found = discover_files({dir.path() / "nope.py"}, config, {});
  EXPECT_TRUE(found.reported_files().empty());
  EXPECT_EQ(found.missing, 1u);
  ASSERT_EQ(found.diagnostics.size(), 1u);
  EXPECT_EQ(found.diagnostics[0].kind, "read-error");
}

TEST(Glob, TrailingDoubleStarMatchesInsideTheDirectoryNotTheDirectory) {
  EXPECT_FALSE(pattern("foo/**").matches("foo", true));
  EXPECT_TRUE(pattern("foo/**").matches("foo/keep.py", false));
  EXPECT_TRUE(pattern("foo/**").matches("foo/sub", true));
  EXPECT_TRUE(pattern("**/foo").matches("foo", true));  // a leading `**` still matches zero directories
  EXPECT_TRUE(pattern("a/**/b.py").matches("a/b.py", false));
}

TEST(Glob, ConfigGlobsReadALeadingDotSlashAsTheConfigRoot) {
  GlobPattern top;
  ASSERT_TRUE(GlobPattern::parse_config("./top.py", top));
  EXPECT_TRUE(top.matches("top.py", false));
  EXPECT_FALSE(top.matches("pkg/top.py", false));  // anchored at the root, as "/top.py"
  EXPECT_EQ(top.text, "./top.py");
  GlobPattern tests;
  ASSERT_TRUE(GlobPattern::parse_config("./tests/**", tests));
  EXPECT_TRUE(tests.matches("tests/unit/a.py", false));
  GlobPattern negated;
  ASSERT_TRUE(GlobPattern::parse_config("!./keep.py", negated));
  EXPECT_TRUE(negated.negated);
  EXPECT_TRUE(negated.matches("keep.py", false));
}

TEST(Discovery, ExcludeWithLeadingDotSlashExcludesFromTheRoot) {
  TempDir dir;
  dir.write("top.py", "");
  dir.write("pkg/top.py", "");
  dir.write("tests/t.py", "");
  Config config;
  config.root = dir.path();
  config.exclude = {"./top.py", "./tests/**"};
  EXPECT_EQ(displays(discover_files({dir.path()}, config, {})),
            std::vector<std::string>{dir.path().generic_string() + "/pkg/top.py"});
}

// `git ls-files --others --exclude-standard`: the untracked files git does not ignore.
std::set<std::string> git_not_ignored(const fs::path& repo) {
  const std::string command =
      "cd '" + repo.string() + "' && git ls-files --others --exclude-standard -- '*.py' 2>/dev/null";
  std::set<std::string> out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string s(line);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    out.insert(s);
  }
  ::pclose(pipe);
  return out;
}

TEST(Discovery, GitignoreReincludesAFileUnderDoubleStarAsGitDoes) {
  TempDir dir;
  if (std::system(("git init -q '" + dir.path().string() + "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "git is not available";
  dir.write(".gitignore", "foo/**\n!foo/keep.py\nbar/\n!bar/keep.py\nbaz/*\n!baz/keep.py\n");
  for (const char* f : {"top.py", "foo/keep.py", "foo/drop.py", "foo/sub/keep.py", "bar/keep.py",
                        "baz/keep.py", "baz/drop.py", "pkg/foo/x.py"})
    dir.write(f, "");
  Config config;
  config.root = dir.path();
  std::set<std::string> ours;
  for (const auto& f : discover_files({dir.path()}, config, {}).reported_files())
    ours.insert(fs::path(f.absolute).lexically_relative(dir.path()).generic_string());
  const std::set<std::string> expected = {"top.py", "foo/keep.py", "baz/keep.py", "pkg/foo/x.py"};
  EXPECT_EQ(ours, expected);
  EXPECT_EQ(git_not_ignored(dir.path()), expected);
}

TEST(Discovery, SymlinksLeavingTheTreeAreNotFollowed) {
  TempDir dir, outside;
  outside.write("etc/secret.py", "");
  outside.write("other.py", "");
  dir.write("pkg/a.py", "");
  fs::create_directory_symlink(outside.path(), dir.path() / "rootfs");
  fs::create_symlink(outside.path() / "other.py", dir.path() / "pkg/leak.py");
  Config config;
  config.root = dir.path();
  const auto found = discover_files({dir.path()}, config, {});
  EXPECT_EQ(displays(found), std::vector<std::string>{dir.path().generic_string() + "/pkg/a.py"});
  ASSERT_EQ(found.links_leaving_tree.size(), 2u);
  EXPECT_THAT(found.links_leaving_tree[0], ::testing::HasSubstr("pkg/leak.py -> "));
  EXPECT_THAT(found.links_leaving_tree[1], ::testing::HasSubstr("rootfs -> " + outside.path().string()));
  EXPECT_TRUE(found.diagnostics.empty());
}

TEST(Discovery, FilesReachedThroughLinksInsideTheTreeAreFoundOnceWithoutTheLink) {
  TempDir dir;
  dir.write("pkg/m.py", "");
  fs::create_directory_symlink(dir.path() / "pkg", dir.path() / "a_alias");  // sorts before pkg
  fs::create_symlink(dir.path() / "pkg/m.py", dir.path() / "a.py");
  Config config;
  config.root = dir.path();
  EXPECT_EQ(displays(discover_files({dir.path()}, config, {})),
            std::vector<std::string>{dir.path().generic_string() + "/pkg/m.py"});
}

TEST(Discovery, AFileNamedTwoWaysIsFoundOnceUnderTheFirstSpelling) {
  TempDir dir, elsewhere;
  const fs::path file = dir.write("m.py", "");
  fs::create_directory_symlink(dir.path(), elsewhere.path() / "link");
  const fs::path other_spelling = elsewhere.path() / "link" / "m.py";
  Config config;
  config.root = dir.path();
  EXPECT_EQ(displays(discover_files({file, other_spelling}, config, {})),
            std::vector<std::string>{file.generic_string()});
  EXPECT_EQ(displays(discover_files({other_spelling, file}, config, {})),
            std::vector<std::string>{other_spelling.generic_string()});
  EXPECT_EQ(displays(discover_files({dir.path(), other_spelling}, config, {})),
            std::vector<std::string>{file.generic_string()});
}

TEST(Discovery, EachDirectoryWithAConfigFileStartsItsOwnProject) {
  TempDir dir;
  dir.write("kvlint.toml", "select = [\"KV1\"]\n");
  dir.write("a.py", "");
  dir.write("sub/kvlint.toml", "select = [\"KV2\"]\n");
  dir.write("sub/b.py", "");
  DiscoveryOptions options;
  options.nearest_config = true;
  const auto found = discover_files({dir.path()}, Config{}, options);
  ASSERT_EQ(found.projects.size(), 2u);
  EXPECT_EQ(found.projects[0].config.root, dir.path());
  EXPECT_EQ(found.projects[0].config.select, std::vector<std::string>{"KV1"});
  ASSERT_EQ(found.projects[0].files.size(), 1u);
  EXPECT_EQ(found.projects[0].files[0].absolute, dir.path() / "a.py");
  EXPECT_EQ(found.projects[1].config.root, dir.path() / "sub");
  EXPECT_EQ(found.projects[1].config.select, std::vector<std::string>{"KV2"});
  ASSERT_EQ(found.projects[1].files.size(), 1u);
  EXPECT_EQ(found.projects[1].files[0].absolute, dir.path() / "sub/b.py");
}

TEST(Discovery, ProjectContextLoadsTheConfigRootTreeUnreported) {
  TempDir dir;
  dir.write("kvlint.toml", "select = [\"KV\"]\n");
  dir.write("pkg/base.py", "");
  const fs::path child = dir.write("pkg/child.py", "");
  dir.write("sub/kvlint.toml", "");
  dir.write("sub/other.py", "");  // another project: not context
  DiscoveryOptions options;
  options.nearest_config = true;
  options.load_context = true;
  const auto found = discover_files({child}, Config{}, options);
  ASSERT_EQ(found.projects.size(), 1u);
  std::vector<std::pair<std::string, bool>> files;
  for (const auto& f : found.projects[0].files)
    files.emplace_back(fs::path(f.absolute).lexically_relative(dir.path()).generic_string(), f.reported);
  EXPECT_EQ(files,
            (std::vector<std::pair<std::string, bool>>{{"pkg/base.py", false}, {"pkg/child.py", true}}));
  EXPECT_EQ(displays(found), std::vector<std::string>{child.generic_string()});
}

// Each file of `found`'s only project, relative to `root`, with whether it is reported.
std::vector<std::pair<std::string, bool>> files_of(const DiscoveryResult& found, const fs::path& root) {
  std::vector<std::pair<std::string, bool>> files;
  for (const auto& project : found.projects)
    for (const auto& f : project.files)
      files.emplace_back(fs::path(f.absolute).lexically_relative(root).generic_string(), f.reported);
  return files;
}

DiscoveryResult discover_with_context(const std::vector<fs::path>& paths, std::size_t max_unconfigured = 5000,
                                      std::size_t max_entries = 100000) {
  DiscoveryOptions options;
  options.nearest_config = true;
  options.load_context = true;
  options.max_unconfigured_context = max_unconfigured;
  options.max_unconfigured_entries = max_entries;
  return discover_files(paths, Config{}, options);
}

bool git_init(const fs::path& dir) {
  return std::system(("git init -q '" + dir.string() + "' 2>/dev/null").c_str()) == 0;
}

TEST(Discovery, WithoutAConfigFileTheContextIsThePythonProjectOfTheNamedFilesNotTheWholeCheckout) {
  TempDir dir;
  if (!git_init(dir.path())) GTEST_SKIP() << "git is not available";
  for (int i = 0; i < 30; ++i) dir.write(fmt::format("unrelated/m{}.py", i), "");
  dir.write("pkg/pyproject.toml", "[project]\nname = \"pkg\"\n");  // no [tool.kvlint]: not a config
  dir.write("pkg/src/base.py", "");
  const fs::path child = dir.write("pkg/src/models/child.py", "");
  const auto found = discover_with_context({child});
  ASSERT_EQ(found.projects.size(), 1u);
  // Paths and fingerprints stay relative to the work tree.
  EXPECT_EQ(found.projects[0].config.root, dir.path());
  EXPECT_EQ(files_of(found, dir.path()), (std::vector<std::pair<std::string, bool>>{
                                             {"pkg/src/base.py", false}, {"pkg/src/models/child.py", true}}));
  EXPECT_TRUE(found.notes.empty());
}

TEST(Discovery, NamedFilesInTwoPythonProjectsTakeTheirCommonParentAsContext) {
  TempDir dir;
  if (!git_init(dir.path())) GTEST_SKIP() << "git is not available";
  dir.write("unrelated/u.py", "");
  dir.write("proj/b.py", "");
  dir.write("proj/a/other.py", "");
  dir.write("proj/a/pkg1/setup.cfg", "");
  const fs::path one = dir.write("proj/a/pkg1/m/one.py", "");
  const fs::path two = dir.write("proj/a/pkg1/m/deep/two.py", "");  // its way up passes m again
  dir.write("proj/a/pkg2/setup.py", "");
  const fs::path three = dir.write("proj/a/pkg2/three.py", "");
  const auto found = discover_with_context({one, two, three});
  EXPECT_EQ(files_of(found, dir.path()),
            (std::vector<std::pair<std::string, bool>>{{"proj/a/other.py", false},
                                                       {"proj/a/pkg1/m/deep/two.py", true},
                                                       {"proj/a/pkg1/m/one.py", true},
                                                       {"proj/a/pkg2/setup.py", false},
                                                       {"proj/a/pkg2/three.py", true}}));
}

TEST(Discovery, AnUnconfiguredContextTooBigToBeOneProjectIsLeftOutWithANote) {
  TempDir dir;
  if (!git_init(dir.path())) GTEST_SKIP() << "git is not available";
  for (int i = 0; i < 12; ++i) dir.write(fmt::format("other/m{}.py", i), "");
  const fs::path named = dir.write("a/named.py", "");
  const auto small_enough = discover_with_context({named}, 12);
  EXPECT_EQ(files_of(small_enough, dir.path()).size(), 13u);
  EXPECT_TRUE(small_enough.notes.empty());
  const auto too_big = discover_with_context({named}, 11);
  EXPECT_EQ(files_of(too_big, dir.path()), (std::vector<std::pair<std::string, bool>>{{"a/named.py", true}}));
  ASSERT_EQ(too_big.notes.size(), 1u);
  EXPECT_THAT(too_big.notes[0], ::testing::HasSubstr("more than 11 source files"));
  // A config file says the tree is one project: its whole tree is context, however big.
  dir.write("kvlint.toml", "");
  EXPECT_EQ(files_of(discover_with_context({named}, 11), dir.path()).size(), 13u);
}

// A scratch folder under a busy parent (a work tree full of data files and a few modules): the
// context walk stops after reading its budget of directory entries, counted as work, and loads
// nothing; the same tree under a larger budget loads its modules, so the bound is what cut it.
TEST(Discovery, AnUnconfiguredContextWalkUnderABusyParentIsBoundedInItsOwnWork) {
  TempDir dir;
  if (!git_init(dir.path())) GTEST_SKIP() << "git is not available";
  for (int d = 0; d < 60; ++d)
    for (int f = 0; f < 25; ++f) dir.write(fmt::format("data/run{:03}/shard{:02}.npy", d, f), "");
  for (int i = 0; i < 20; ++i) dir.write(fmt::format("lib/m{:02}.py", i), "");
  const fs::path named = dir.write("scratch/m.py", "");

  const auto bounded = discover_with_context({named}, 5000, 500);
  EXPECT_EQ(files_of(bounded, dir.path()),
            (std::vector<std::pair<std::string, bool>>{{"scratch/m.py", true}}));
  ASSERT_EQ(bounded.notes.size(), 1u);
  EXPECT_THAT(bounded.notes[0], ::testing::HasSubstr("500 directory entries"));
  EXPECT_LE(bounded.context_entries, 501u) << "the walk read past its budget";

  const auto whole = discover_with_context({named}, 5000, 5000);
  EXPECT_EQ(files_of(whole, dir.path()).size(), 21u);
  EXPECT_TRUE(whole.notes.empty());
  EXPECT_GT(whole.context_entries, 1500u);
}

TEST(Discovery, CppFilesAreContextOnlyBesideTheNamedCppFiles) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  const fs::path py = dir.write("a.py", "");
  dir.write("b.py", "");
  const fs::path cpp = dir.write("cc/x.cpp", "");
  dir.write("cc/x.h", "");
  dir.write("other/z.cpp", "");
  using Files = std::vector<std::pair<std::string, bool>>;
  EXPECT_EQ(files_of(discover_with_context({py}), dir.path()), (Files{{"a.py", true}, {"b.py", false}}));
  EXPECT_EQ(files_of(discover_with_context({cpp}), dir.path()),
            (Files{{"a.py", false}, {"b.py", false}, {"cc/x.cpp", true}, {"cc/x.h", false}}));
}

TEST(Discovery, WithoutAConfigFileTheProjectIsTheCommonParentOfTheNamedPaths) {
  TempDir dir;
  const fs::path a = dir.write("x/a.py", "");
  const fs::path b = dir.write("y/b.py", "");
  DiscoveryOptions options;
  options.nearest_config = true;
  const auto found = discover_files({a, b}, Config{}, options);
  if (git_work_tree_top(dir.path())) GTEST_SKIP() << "the temporary directory is inside a git work tree";
  ASSERT_EQ(found.projects.size(), 1u);
  EXPECT_EQ(found.projects[0].config.root, dir.path());
}

TEST(Utf8, AcceptsValidAndLocatesInvalidSequences) {
  EXPECT_FALSE(find_invalid_utf8("plain ascii\n"));
  EXPECT_FALSE(
      find_invalid_utf8("\xEF\xBB\xBFh\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"));  // BOM, é, €, emoji
  const auto bad = find_invalid_utf8("ok\nab\xFF");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->offset, 5u);
  EXPECT_EQ(bad->line, 2u);
  EXPECT_EQ(bad->column, 3u);
  // Lines end at "\r\n", "\n" or a lone "\r", as the front ends and reports count them.
  for (const std::string text : {"ok\r\nab\xFF", "ok\rab\xFF", "x\r\ry\nab\xFF"}) {
    const auto at = find_invalid_utf8(text);
    ASSERT_TRUE(at) << text;
    EXPECT_EQ(at->line, text.starts_with("x") ? 4u : 2u) << text;
    EXPECT_EQ(at->column, 3u) << text;
  }
  EXPECT_TRUE(find_invalid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_TRUE(find_invalid_utf8("\xED\xA0\x80"));      // UTF-16 surrogate
  EXPECT_TRUE(find_invalid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_TRUE(find_invalid_utf8("\xE2\x82"));          // truncated
  EXPECT_TRUE(find_invalid_utf8("\x80"));              // lone continuation
}

// ASCII is skipped eight bytes at a time: an error anywhere in or after such runs, and a
// sequence that straddles a word, are still found at their line and column.
TEST(Utf8, LocatesInvalidSequencesAfterLongAsciiRuns) {
  const std::string lines = "import torch\n# a comment line\nx = 1\n";  // 3 lines, 37 bytes
  for (std::size_t pad = 0; pad < 17; ++pad) {
    const std::string head = lines + std::string(pad, 'a');
    const auto bad = find_invalid_utf8(head + "\xC3\xA9 \xFF tail");
    ASSERT_TRUE(bad) << pad;
    EXPECT_EQ(bad->offset, head.size() + 3) << pad;
    EXPECT_EQ(bad->line, 4u) << pad;
    EXPECT_EQ(bad->column, pad + 4) << pad;
    EXPECT_FALSE(find_invalid_utf8(head + "\xE2\x82\xAC" + lines)) << pad;  // € across a word boundary
    EXPECT_TRUE(find_invalid_utf8(head + "\xE2\x82")) << pad;               // truncated at the end
  }
}

TEST(ReadSource, ClassifiesBinaryInvalidUtf8TooLargeAndMissing) {
  TempDir dir;
  auto binary = dir.write("b.py", std::string("x = 1\0\n", 7));
  auto invalid = dir.write("u.py", "x = 1\ny = '\xFE'\n");
  auto big = dir.write("big.py", std::string(2048, 'x'));
  auto good = dir.write("g.py", "x = 1\n");
  EXPECT_EQ(read_source(binary, "b.py").problem->kind, "binary");
  const auto utf8 = read_source(invalid, "u.py");
  ASSERT_TRUE(utf8.problem);
  EXPECT_EQ(utf8.problem->kind, "invalid-utf8");
  EXPECT_EQ(utf8.problem->line, 2u);
  EXPECT_THAT(utf8.problem->message, ::testing::HasSubstr("byte offset 11"));
  EXPECT_EQ(read_source(big, "big.py", 1024).problem->kind, "too-large");
  EXPECT_EQ(read_source(dir.path() / "none.py", "none.py").problem->kind, "read-error");
  const auto ok = read_source(good, "g.py");
  EXPECT_FALSE(ok.problem);
  EXPECT_EQ(ok.content, "x = 1\n");
}

// The check of a cached file's bytes: the hash a whole read gives, over several buffers'
// worth; nothing for what read_source would not read either.
TEST(HashRegularFile, HashesAsAWholeReadAndRefusesWhatIsNoRegularFile) {
  TempDir dir;
  std::string content;
  for (int i = 0; content.size() < 200'000; ++i) content += fmt::format("x_{} = {}\n", i, i);
  const auto file = dir.write("m.py", content);
  const auto hashed = hash_regular_file(file);
  ASSERT_TRUE(hashed);
  EXPECT_EQ(hashed->hash, XXH3_64bits(content.data(), content.size()));
  EXPECT_EQ(hashed->size, content.size());
  EXPECT_FALSE(hash_regular_file(file, 1024));  // over the limit
  EXPECT_FALSE(hash_regular_file(dir.path() / "none.py"));
  EXPECT_FALSE(hash_regular_file(dir.path()));  // a directory
  const auto fifo = dir.path() / "pipe.py";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(hash_regular_file(fifo));  // and does not wait for a writer
}

}  // namespace
}  // namespace kvlint
