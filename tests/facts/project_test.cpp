// Project-wide resolution over hand-built facts: inheritance across files,
// module-ness, ownership hops and declaration coverage.
#include "analyzers/facts/project.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

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
    declared_by_subclass |=
        c.how == Cover::How::DeclaredByHolder && c.declarer.cls->name == "PerSequenceTalker";
  EXPECT_TRUE(declared_by_subclass);
}

}  // namespace
}  // namespace kvlint::facts

namespace kvlint::facts {
namespace {

// The classes coverage() can be non-empty for, and those with a declaration of their own or
// inherited, computed the long way: every class of the project.
std::set<const ClassFact*> covered_the_long_way(const Project& p) {
  std::set<const ClassFact*> out;
  for (ClassRef c : p.classes())
    if (!p.coverage(c).empty()) out.insert(c.cls);
  return out;
}

TEST(Project, DeclaringAndCoveredClassesStandInForGoingOverEveryClass) {
  auto files = two_files();
  files[1].classes.push_back(make_class("PerSequenceTalker", {{"Talker", "Talker"}}));
  files[1].classes.push_back(make_class("Held", {}));
  files[1].classes.push_back(make_class("Deeper", {}));
  files[0].hops.push_back(make_hop("Base", "held", "Held"));  // Decoder inherits this hop
  files[1].hops.push_back(make_hop("Held", "deeper", "Deeper"));
  Project p(std::move(files), Vocabulary{});
  std::set<const ClassFact*> declaring;
  for (ClassRef c : p.declaring_classes()) declaring.insert(c.cls);
  std::set<const ClassFact*> expected_declaring;
  for (ClassRef c : p.classes())
    if (!p.inherited_declarations(c).empty()) expected_declaring.insert(c.cls);
  EXPECT_EQ(declaring, expected_declaring);
  EXPECT_EQ(declaring.size(), 5u);  // Base, Decoder, Generator, Talker, PerSequenceTalker
  std::set<const ClassFact*> covered;
  for (ClassRef c : p.covered_classes()) covered.insert(c.cls);
  for (const ClassFact* c : covered_the_long_way(p)) EXPECT_TRUE(covered.count(c)) << c->name;
  EXPECT_TRUE(covered.count(p.find_class("Deeper").cls));  // two holders down
  EXPECT_FALSE(covered.count(p.find_class("Plain").cls));
  // In project order.
  std::vector<std::string> order;
  for (ClassRef c : p.covered_classes()) order.push_back(c.cls->name);
  EXPECT_EQ(order, (std::vector<std::string>{"Base", "Decoder", "Generator", "Talker", "PerSequenceTalker",
                                             "Held", "Deeper"}));
}

TEST(Project, DescendantsOfAClass) {
  auto files = two_files();
  files[1].classes.push_back(make_class("Deeper", {{"Decoder", "Decoder"}}));
  Project p(std::move(files), Vocabulary{});
  std::vector<std::string> names;
  for (ClassRef c : p.descendants(p.find_class("Base"))) names.push_back(c.cls->name);
  EXPECT_EQ(names, (std::vector<std::string>{"Decoder", "Deeper"}));
  EXPECT_TRUE(p.descendants(p.find_class("Plain")).empty());
}

TEST(Project, ADemandRecordsWhatFilesNotGivenCouldAddToTheRulesQuestions) {
  auto files = two_files();
  FileFacts& model = files[1];
  model.classes.back().methods.emplace_back();  // Plain.helper()
  model.classes.back().methods.back().name = "helper";
  model.functions.emplace_back();
  model.functions.back().name = "capture_step";
  Demand demand;
  Project p(std::move(files), Vocabulary{}, &demand);
  // Building the project asks nothing on the rules' behalf.
  EXPECT_TRUE(demand.take().empty());

  ClassRef generator = p.find_class("Generator");
  Demand::Wants w = demand.take();
  EXPECT_EQ(w.classes, (std::set<std::string>{"Generator"}));

  p.holders(generator);  // built by Talker: subclasses of Talker name it
  w = demand.take();
  EXPECT_EQ(w.classes, (std::set<std::string>{"Generator"}));  // another `Generator` could be the one
  EXPECT_EQ(w.built, (std::set<std::string>{"Generator"}));
  EXPECT_EQ(w.mentioned, (std::set<std::string>{"Talker"}));

  p.constructions_of(generator);
  p.parameter_holders(generator);
  w = demand.take();
  EXPECT_EQ(w.built, (std::set<std::string>{"Generator"}));
  EXPECT_EQ(w.mentioned, (std::set<std::string>{"Generator"}));

  p.invocations_of(generator, "enable_graphs");
  p.function_callers(CodeRef{&p.files()[1], {}, &p.files()[1].functions.front()});
  p.module_constants("MAX_LEN");
  p.attribute_class(generator, "_graph_wrapper");
  w = demand.take();
  EXPECT_EQ(w.mentioned, (std::set<std::string>{"capture_step", "enable_graphs"}));
  EXPECT_EQ(w.constants, (std::set<std::string>{"MAX_LEN"}));
  EXPECT_EQ(w.handed_self, (std::set<std::string>{"_graph_wrapper"}));
  EXPECT_FALSE(w.everything);

  // Scanning all code for calls of a class's methods: a file not given adds a caller only by
  // naming one, or, for `forward`, by calling a held module, which any file may.
  EXPECT_FALSE(p.code_calling({"decode"}).empty());
  w = demand.take();
  EXPECT_EQ(w.mentioned, (std::set<std::string>{"decode"}));
  EXPECT_FALSE(w.everything);
  p.code_calling({"decode", "forward"});
  EXPECT_TRUE(demand.take().everything);
}

}  // namespace
}  // namespace kvlint::facts
