// Items 1 (imports, aliases) and 2 (classes) of the front end.
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

TEST(FrontendImports, RecordsEveryImportForm) {
  const auto f = analyze(R"PY(import a.b as c
import a.b
from x import y as z
from .m import K
from . import sibling
from transformers.cache_utils import *
)PY");
  ASSERT_EQ(f.imports.size(), 6u);
  EXPECT_EQ(f.imports[0].local_name, "c");
  EXPECT_EQ(f.imports[0].target, "a.b");
  EXPECT_EQ(f.imports[1].local_name, "a");
  EXPECT_EQ(f.imports[1].target, "a");
  EXPECT_EQ(f.imports[2].local_name, "z");
  EXPECT_EQ(f.imports[2].target, "x.y");
  EXPECT_EQ(f.imports[3].local_name, "K");
  EXPECT_EQ(f.imports[3].target, ".m.K");
  EXPECT_EQ(f.imports[4].local_name, "sibling");
  EXPECT_EQ(f.imports[4].target, ".sibling");
  EXPECT_EQ(f.imports[5].local_name, "*");
  EXPECT_EQ(f.imports[5].target, "transformers.cache_utils");
  EXPECT_EQ(f.imports[0].loc.line, 1u);
  EXPECT_EQ(f.imports[5].loc.line, 6u);
  EXPECT_EQ(f.module_name, "pkg.snippet");
  EXPECT_EQ(f.path, "snippet.py");
}

TEST(FrontendImports, AliasesResolveCacheConstructors) {
  const auto f = analyze(R"PY(from transformers import DynamicCache as DC
import transformers.cache_utils as cu
from torch import nn
class M(nn.Module):
    def __init__(self):
        self.a = DC()
        self.b = cu.StaticCache(max_cache_len=8)
        self.c = NotACache()
)PY");
  ASSERT_EQ(f.cache_sites.size(), 2u);
  EXPECT_EQ(f.cache_sites[0].cache_class, "DynamicCache");
  EXPECT_EQ(f.cache_sites[0].written, "DC");
  EXPECT_EQ(f.cache_sites[1].cache_class, "StaticCache");
  EXPECT_EQ(f.cache_sites[1].written, "cu.StaticCache");
  ASSERT_EQ(f.classes.size(), 1u);
  ASSERT_EQ(f.classes[0].bases.size(), 1u);
  EXPECT_EQ(f.classes[0].bases[0].written, "nn.Module");
  EXPECT_EQ(f.classes[0].bases[0].resolved, "torch.nn.Module");
}

TEST(FrontendImports, StarImportMakesBareCacheNamesImported) {
  const auto f = analyze(R"PY(from transformers.cache_utils import *
class M:
    def __init__(self):
        self.a = DynamicCache()
class B(DynamicCache, Local):
    pass
)PY");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].cache_class, "DynamicCache");
  ASSERT_EQ(f.classes.size(), 2u);
  ASSERT_EQ(f.classes[1].bases.size(), 2u);
  EXPECT_EQ(f.classes[1].bases[0].resolved, "transformers.cache_utils.DynamicCache");
  // Names that are not imported stay as written.
  EXPECT_EQ(f.classes[1].bases[1].resolved, "Local");
}

TEST(FrontendClasses, NamesBasesMethodsAndNestedClasses) {
  const auto f = analyze(R"PY(from .base import Base as B
class Outer(B, metaclass=Meta):
    def __init__(self, config, *args, flag: bool = False, **kwargs):
        pass
    @staticmethod
    def helper(x, y=1):
        pass
    @classmethod
    def build(cls, cfg):
        pass
    class Inner:
        def run(self):
            pass
)PY");
  ASSERT_EQ(f.classes.size(), 2u);
  const auto& outer = f.classes[0];
  EXPECT_EQ(outer.name, "Outer");
  EXPECT_EQ(outer.loc.line, 2u);
  EXPECT_EQ(outer.loc.column, 1u);
  ASSERT_EQ(outer.bases.size(), 1u);  // metaclass= is not a base
  EXPECT_EQ(outer.bases[0].written, "B");
  EXPECT_EQ(outer.bases[0].resolved, ".base.Base");
  ASSERT_EQ(outer.methods.size(), 3u);
  EXPECT_EQ(outer.methods[0].name, "__init__");
  EXPECT_EQ(outer.methods[0].parameters, (std::vector<std::string>{"config", "args", "flag", "kwargs"}));
  EXPECT_EQ(outer.methods[0].loc.line, 3u);
  EXPECT_EQ(outer.methods[1].parameters, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(outer.methods[2].parameters, (std::vector<std::string>{"cfg"}));
  EXPECT_EQ(f.classes[1].name, "Inner");
  ASSERT_EQ(f.classes[1].methods.size(), 1u);
  EXPECT_EQ(f.classes[1].methods[0].name, "run");
}

}  // namespace
}  // namespace kvlint::frontend_test
