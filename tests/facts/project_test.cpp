// Project-wide resolution over hand-built facts: inheritance across files,
// module-ness, ownership hops and declaration coverage.
#include <gtest/gtest.h>

#include "analyzers/facts/project.hpp"

namespace kvlint::facts {
namespace {

ClassFact make_class(std::string name, std::vector<std::pair<std::string, std::string>> bases) {
  ClassFact c;
  c.name = std::move(name);
  for (auto& [written, resolved] : bases) c.bases.push_back({written, resolved});
  return c;
}

Declaration make_declaration(std::string owner, int specs, std::vector<std::string> forwards = {}) {
  Declaration d;
  d.owner_class = std::move(owner);
  for (int i = 0; i < specs; ++i) d.specs.emplace_back();
  for (auto& f : forwards) d.forwards.push_back(Forward{f, {}, {}});
  return d;
}

CacheSite make_site(std::string owner) {
  CacheSite s;
  s.owner_class = std::move(owner);
  s.cache_class = "DynamicCache";
  return s;
}

OwnershipHop make_hop(std::string owner, std::string attr, std::string target) {
  return OwnershipHop{std::move(owner), std::move(attr), std::move(target), {}, false};
}

// base.py: class Base(nn.Module) with a declaration
// model.py: class Decoder(Base) builds a cache; class Wrapper holds a Generator
std::vector<FileFacts> two_files() {
  FileFacts base;
  base.path = "pkg/base.py";
  base.module_name = "pkg.base";
  base.classes.push_back(make_class("Base", {{"nn.Module", "torch.nn.Module"}}));
  base.declarations.push_back(make_declaration("Base", 1));

  FileFacts model;
  model.path = "pkg/model.py";
  model.module_name = "pkg.model";
  model.classes.push_back(make_class("Decoder", {{"Base", ".base.Base"}}));
  model.classes.push_back(make_class("Generator", {}));
  model.classes.push_back(make_class("Talker", {{"nn.Module", "torch.nn.Module"}}));
  model.classes.push_back(make_class("Plain", {{"Mystery", "somewhere.Mystery"}}));
  model.cache_sites.push_back(make_site("Decoder"));
  model.cache_sites.push_back(make_site("Generator"));
  model.declarations.push_back(make_declaration("Generator", 1));
  model.declarations.push_back(make_declaration("Talker", 0, {"gen"}));
  model.hops.push_back(make_hop("Talker", "gen", "Generator"));
  return {std::move(base), std::move(model)};
}

TEST(Project, ReleasesItsFactsWithoutACopyInTheOrderGiven) {
  Project project(two_files(), Vocabulary{});
  const ClassFact* decoder = project.find_class("Decoder").cls;
  ASSERT_NE(decoder, nullptr);
  std::vector<FileFacts> released = std::move(project).release_files();
  ASSERT_EQ(released.size(), 2u);
  EXPECT_EQ(released[0].path, "pkg/base.py");
  EXPECT_EQ(released[1].path, "pkg/model.py");
  EXPECT_EQ(&released[1].classes[0], decoder);  // the same objects: moved, not copied
  EXPECT_TRUE(project.files().empty());         // NOLINT(bugprone-use-after-move): left empty by design
  EXPECT_TRUE(project.classes().empty());
}

TEST(Project, ResolvesBasesAcrossFilesThroughRelativeImports) {
  Project p(two_files(), Vocabulary{});
  ClassRef decoder = p.find_class("Decoder");
  ASSERT_TRUE(decoder);
  auto ancestors = p.ancestors(decoder);
  ASSERT_EQ(ancestors.size(), 1u);
  EXPECT_EQ(ancestors[0].cls->name, "Base");
  EXPECT_EQ(ancestors[0].file->path, "pkg/base.py");
}

TEST(Project, ModuleNessIsYesNoOrUnknown) {
  Project p(two_files(), Vocabulary{});
  EXPECT_EQ(p.is_module(p.find_class("Decoder")), Tristate::Yes);
  EXPECT_EQ(p.is_module(p.find_class("Generator")), Tristate::No);
  EXPECT_EQ(p.is_module(p.find_class("Plain")), Tristate::Unknown);
}

TEST(Project, InheritedDeclarationCoversSubclassCache) {
  Project p(two_files(), Vocabulary{});
  auto cover = p.coverage(p.find_class("Decoder"));
  ASSERT_EQ(cover.size(), 1u);
  EXPECT_EQ(cover[0].how, Cover::How::Inherited);
  EXPECT_EQ(cover[0].declarer.cls->name, "Base");
}

TEST(Project, HolderForwardCoversHeldClass) {
  Project p(two_files(), Vocabulary{});
  ClassRef generator = p.find_class("Generator");
  auto holders = p.holders(generator);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].holder.cls->name, "Talker");
  EXPECT_EQ(holders[0].hop->attribute, "gen");
  auto cover = p.coverage(generator);
  ASSERT_EQ(cover.size(), 2u);
  EXPECT_EQ(cover[0].how, Cover::How::Own);
  EXPECT_EQ(cover[1].how, Cover::How::ForwardedByHolder);
}

TEST(Project, UncoveredClassHasNoCoverage) {
  auto files = two_files();
  files[1].declarations.clear();
  files[0].declarations.clear();
  Project p(std::move(files), Vocabulary{});
  EXPECT_TRUE(p.coverage(p.find_class("Decoder")).empty());
  EXPECT_TRUE(p.coverage(p.find_class("Generator")).empty());
}

TEST(Project, OwnedClosureFollowsHops) {
  Project p(two_files(), Vocabulary{});
  auto closure = p.owned_closure(p.find_class("Talker"));
  ASSERT_EQ(closure.size(), 2u);
  EXPECT_EQ(closure[1].cls->name, "Generator");
  EXPECT_EQ(p.cache_sites_of(p.find_class("Decoder")).size(), 1u);
}

TEST(Project, CacheSubclassesAreFoundTransitively) {
  FileFacts f;
  f.path = "c.py";
  f.classes.push_back(make_class("MyCache", {{"DynamicCache", "transformers.DynamicCache"}}));
  f.classes.push_back(make_class("MyOtherCache", {{"MyCache", "MyCache"}}));
  f.classes.push_back(make_class("NotACache", {{"nn.Module", "torch.nn.Module"}}));
  std::vector<FileFacts> files;
  files.push_back(std::move(f));
  Project p(std::move(files), Vocabulary{});
  EXPECT_EQ(p.cache_subclasses(), (std::vector<std::string>{"MyCache", "MyOtherCache"}));
}

TEST(Project, AmbiguousNamesPreferTheImportedModule) {
  FileFacts a, b, user;
  a.path = "pkg/a.py";
  a.module_name = "pkg.a";
  a.classes.push_back(make_class("Layer", {{"nn.Module", "torch.nn.Module"}}));
  b.path = "pkg/b.py";
  b.module_name = "pkg.b";
  b.classes.push_back(make_class("Layer", {}));
  user.path = "pkg/user.py";
  user.module_name = "pkg.user";
  std::vector<FileFacts> files{a, b, user};
  Project p(std::move(files), Vocabulary{});
  const FileFacts& from = p.files()[2];
  EXPECT_EQ(p.find_class("pkg.b.Layer", &from).file->path, "pkg/b.py");
  EXPECT_EQ(p.find_class(".a.Layer", &from).file->path, "pkg/a.py");
}

TEST(Project, ConstantsResolveClassThenModule) {
  FileFacts f;
  f.path = "m.py";
  f.constants.push_back(Constant{"", "MAX_LEN", {}});
  f.constants.push_back(Constant{"Talker", "MAX_LEN", {}});
  std::vector<FileFacts> files{f};
  Project p(std::move(files), Vocabulary{});
  EXPECT_EQ(p.constant(p.files()[0], "Talker", "MAX_LEN")->owner_class, "Talker");
  EXPECT_EQ(p.constant(p.files()[0], "Other", "MAX_LEN")->owner_class, "");
  EXPECT_EQ(p.constant(p.files()[0], "", "NOPE"), nullptr);
}

}  // namespace
}  // namespace kvlint::facts

namespace kvlint::facts {
namespace {

TEST(Project, SubclassOfAHolderInheritsTheHopAndCovers) {
  auto files = two_files();
  // class PerSequenceTalker(Talker) declares for the generator Talker holds.
  files[1].classes.push_back(make_class("PerSequenceTalker", {{"Talker", "Talker"}}));
  files[1].declarations.push_back(make_declaration("PerSequenceTalker", 1));
  Project p(std::move(files), Vocabulary{});
  ClassRef generator = p.find_class("Generator");
  auto holders = p.holders(generator);
  ASSERT_EQ(holders.size(), 2u);
  EXPECT_EQ(holders[0].holder.cls->name, "Talker");
  EXPECT_EQ(holders[1].holder.cls->name, "PerSequenceTalker");
  EXPECT_EQ(holders[1].hop->attribute, "gen");
  bool declared_by_subclass = false;
  for (const Cover& c : p.coverage(generator))
    declared_by_subclass |= c.how == Cover::How::DeclaredByHolder && c.declarer.cls->name == "PerSequenceTalker";
  EXPECT_TRUE(declared_by_subclass);
}

}  // namespace
}  // namespace kvlint::facts
