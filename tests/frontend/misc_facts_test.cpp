// Items 7-12: ownership hops, batch evidence, protocol uses, constants,
// suppressions, parse problems; plus deep nesting and the JSON and binary round trips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "analyzers/facts/compact.hpp"
#include "analyzers/facts/facts_binary.hpp"
#include "analyzers/facts/facts_json.hpp"
#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

using facts::BatchEvidence;
using facts::ProtocolUse;

TEST(FrontendHops, DirectContainerAndClassmethodConstructors) {
  const auto f = analyze(R"PY(from torch import nn
from .gen import MingAudioGenerator as Gen
class Holder(nn.Module):
    def __init__(self, config):
        self.gen = Gen(config)
        self.layers = nn.ModuleList([Layer(config, i) for i in range(4)])
        self.heads = {"a": Head(), "b": Head()}
        self.talker = Talker.from_config(config)
        self.cache = DynamicCache()
        self.size = compute(config)
        self.proj = nn.Linear(2, 2)
    def later(self):
        self.wrapper = CUDAGraphWrapper(self.model)
)PY");
  struct Want {
    const char* attribute;
    const char* target;
    bool in_container;
  };
  const Want wants[] = {
      {"gen", ".gen.MingAudioGenerator", false},
      {"layers", "Layer", true},
      {"heads", "Head", true},
      {"talker", "Talker", false},
      {"proj", "torch.nn.Linear", false},
      {"wrapper", "CUDAGraphWrapper", false},
  };
  ASSERT_EQ(f.hops.size(), std::size(wants));
  for (std::size_t i = 0; i < f.hops.size(); ++i) {
    EXPECT_EQ(f.hops[i].owner_class, "Holder");
    EXPECT_EQ(f.hops[i].attribute, wants[i].attribute);
    EXPECT_EQ(f.hops[i].target_class, wants[i].target);
    EXPECT_EQ(f.hops[i].in_container, wants[i].in_container) << wants[i].attribute;
  }
  EXPECT_EQ(f.hops[0].loc.line, 5u);
}

TEST(FrontendBatchEvidence, FirstElementAssertsAndRequestLoops) {
  const auto f = analyze(R"PY(class Talker:
    def forward(self, runtime_additional_information, input_ids, requests, items):
        info = runtime_additional_information[0]
        first = self.table[0]
        assert input_ids.shape[0] == 1, "batch one"
        assert len(items) == 1
        assert x == 1
        if bsz != 1:
            raise ValueError("one at a time")
        for req in requests:
            pass
        for item in items:
            pass
        for s in self.sessions:
            pass
)PY");
  std::vector<std::pair<BatchEvidence::Kind, uint32_t>> got;
  for (const auto& e : f.batch_evidence) {
    got.emplace_back(e.kind, e.loc.line);
    EXPECT_EQ(e.owner_class, "Talker");
    EXPECT_EQ(e.method, "forward");
  }
  const std::vector<std::pair<BatchEvidence::Kind, uint32_t>> want = {
      {BatchEvidence::Kind::TakesFirstElement, 3u}, {BatchEvidence::Kind::AssertsBatchOne, 5u},
      {BatchEvidence::Kind::AssertsBatchOne, 6u},   {BatchEvidence::Kind::AssertsBatchOne, 8u},
      {BatchEvidence::Kind::IteratesRequests, 10u}, {BatchEvidence::Kind::IteratesRequests, 14u},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(f.batch_evidence[0].expression.text, "runtime_additional_information[0]");
}

TEST(FrontendProtocolUses, CapacitySourceBranchesOnlyInConditions) {
  const auto f = analyze(R"PY(def report(specs):
    for s in specs:
        if s.capacity_source == "max_model_len":
            pass
        label = "x" if s.capacity_source else "y"
        ok = s.capacity_source in KNOWN
        print(s.capacity_source)
        make(capacity_source=s.capacity_source)
        assert s.capacity_source
)PY");
  std::vector<uint32_t> lines;
  for (const auto& u : f.protocol_uses) {
    EXPECT_EQ(u.kind, ProtocolUse::Kind::CapacitySourceBranch);
    EXPECT_EQ(u.function, "report");
    lines.push_back(u.loc.line);
  }
  EXPECT_EQ(lines, (std::vector<uint32_t>{3, 5, 6, 9}));
  ASSERT_FALSE(f.protocol_uses.empty());
  EXPECT_EQ(f.protocol_uses[0].expression.text, "s.capacity_source == \"max_model_len\"");
}

TEST(FrontendProtocolUses, ScopeDerivedRows) {
  const auto f = analyze(R"PY(class M:
    def model_local_kv_specs(self):
        scope = ModelLocalKVScope.REQUEST
        rows = RowDriver.MAX_NUM_SEQS if scope == ModelLocalKVScope.REQUEST else RowDriver.FIXED
        n = per_row * {ModelLocalKVScope.REQUEST: 2}[spec.scope]
        label = "a" if spec.scope == ModelLocalKVScope.MODEL else "b"
        if spec.scope is ModelLocalKVScope.SESSION:
            rows_fixed = 1
)PY");
  std::vector<uint32_t> lines;
  for (const auto& u : f.protocol_uses) {
    EXPECT_EQ(u.kind, ProtocolUse::Kind::ScopeDerivedRows);
    EXPECT_EQ(u.owner_class, "M");
    lines.push_back(u.loc.line);
  }
  EXPECT_EQ(lines, (std::vector<uint32_t>{4, 5, 7}));
}

TEST(FrontendProtocolUses, Collectors) {
  const auto f = analyze(R"PY(def collect_model_local_kv_specs(model):
    model = model.unwrap() if hasattr(model, "unwrap") else model
    specs = []
    for _, m in model.named_modules():
        fn = getattr(m, "model_local_kv_specs", None)
        if fn is not None:
            specs += fn()
    return specs
class Runner:
    def load_model(self):
        root = getattr(self.model, "runnable", self.model)
        for m in root.modules():
            specs = m.model_local_kv_specs()
        for m in self.model.modules():
            m.eval()
)PY");
  ASSERT_EQ(f.protocol_uses.size(), 2u);
  const auto& free = f.protocol_uses[0];
  EXPECT_EQ(free.kind, ProtocolUse::Kind::Collector);
  EXPECT_EQ(free.function, "collect_model_local_kv_specs");
  EXPECT_TRUE(free.calls_unwrap);
  EXPECT_FALSE(free.reads_runnable);
  EXPECT_TRUE(free.walks_named_modules);
  const auto& runner = f.protocol_uses[1];
  EXPECT_EQ(runner.owner_class, "Runner");
  EXPECT_EQ(runner.function, "load_model");
  EXPECT_FALSE(runner.calls_unwrap);
  EXPECT_TRUE(runner.reads_runnable);
  EXPECT_FALSE(runner.walks_named_modules);
}

TEST(FrontendConstants, ModuleAndClassLevelOnly) {
  const auto f = analyze(R"PY(MAX_CACHE_LEN = 2048
NAME = "talker"
RATIO = 0.5
WINDOW = CONFIG.window - 1
a, b = 1, 2
class M:
    BUCKETS = (1, 2, 4)
    FLAG = False
    def f(self):
        LOCAL = 3
)PY");
  ASSERT_EQ(f.constants.size(), 6u);
  EXPECT_EQ(f.constants[0].name, "MAX_CACHE_LEN");
  EXPECT_EQ(f.constants[0].owner_class, "");
  EXPECT_EQ(f.constants[0].value.literal, facts::LiteralKind::Int);
  EXPECT_EQ(f.constants[0].value.literal_value, "2048");
  EXPECT_EQ(f.constants[1].value.literal_value, "talker");
  EXPECT_EQ(f.constants[2].value.literal, facts::LiteralKind::Float);
  EXPECT_EQ(f.constants[3].value.literal, facts::LiteralKind::None);
  EXPECT_EQ(f.constants[3].value.names, (std::vector<std::string>{"CONFIG.window"}));
  EXPECT_EQ(f.constants[4].name, "BUCKETS");
  EXPECT_EQ(f.constants[4].owner_class, "M");
  EXPECT_EQ(f.constants[5].value.literal, facts::LiteralKind::Bool);
  EXPECT_EQ(f.constants[5].value.literal_value, "False");
}

TEST(FrontendSuppressions, CodesReasonsAndTargetLines) {
  const auto f = analyze(R"PY(# kvlint: ignore-file[KV403] geometry is hand written on purpose
import torch

# kvlint: ignore[KV101, KV2] the engine owns this one
# another comment

x = DynamicCache()  # kvlint: ignore[KV202]
y = 1  #kvlint:ignore[KV1O1 ,KV104]   spaced reason  
# kvlint: ignore everything here
z = 2
)PY");
  ASSERT_EQ(f.suppressions.size(), 5u);
  const auto& file = f.suppressions[0];
  EXPECT_TRUE(file.file_level);
  EXPECT_EQ(file.codes, (std::vector<std::string>{"KV403"}));
  EXPECT_EQ(file.reason, "geometry is hand written on purpose");
  EXPECT_EQ(file.applies_to_line, 2u);

  const auto& next = f.suppressions[1];
  EXPECT_FALSE(next.file_level);
  EXPECT_EQ(next.codes, (std::vector<std::string>{"KV101", "KV2"}));
  EXPECT_EQ(next.reason, "the engine owns this one");
  EXPECT_EQ(next.loc.line, 4u);
  EXPECT_EQ(next.applies_to_line, 7u);  // skips the comment and blank lines

  const auto& trailing = f.suppressions[2];
  EXPECT_EQ(trailing.codes, (std::vector<std::string>{"KV202"}));
  EXPECT_EQ(trailing.reason, "");
  EXPECT_EQ(trailing.applies_to_line, 7u);

  const auto& spaced = f.suppressions[3];
  EXPECT_EQ(spaced.codes, (std::vector<std::string>{"KV1O1", "KV104"}));
  EXPECT_EQ(spaced.reason, "spaced reason");
  EXPECT_EQ(spaced.applies_to_line, 8u);

  const auto& bare = f.suppressions[4];
  EXPECT_TRUE(bare.codes.empty());
  EXPECT_THAT(bare.malformed, ::testing::HasSubstr("without `[CODES]`"));
  EXPECT_EQ(bare.applies_to_line, 10u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(f.suppressions[i].malformed, "") << i;
}

// A stack of comment lines is scanned once for the code line after it (the scan per comment was
// quadratic in the stack): each comment of a stack still gets that line, and a stack after code
// gets its own.
TEST(FrontendSuppressions, EveryCommentOfAStackAppliesToTheCodeLineAfterTheStack) {
  const auto f = analyze(R"PY(# kvlint: ignore[KV101] one
# kvlint: ignore[KV102] two

# plain comment
# kvlint: ignore[KV103] three
x = 1
y = 2  # kvlint: ignore[KV104] trailing
# kvlint: ignore[KV105] four

z = 3
# kvlint: ignore[KV201] nothing after
# kvlint: ignore[KV202] nothing after either
)PY");
  ASSERT_EQ(f.suppressions.size(), 7u);
  std::vector<uint32_t> lines;
  for (const auto& s : f.suppressions) lines.push_back(s.applies_to_line);
  EXPECT_EQ(lines, (std::vector<uint32_t>{6, 6, 6, 7, 10, 0, 0}));
}

TEST(FrontendSuppressions, EveryKvlintCommentThatIsNotBracketedIgnoreIsMalformedAndNamesNoCode) {
  const auto f = analyze(R"PY(a = 1  # kvlint: ignore KV999
b = 2  # kvlint: ignore
c = 3  # kvlint: ignore[KV101 reason
d = 4  # kvlint: ignore[]  nothing named
e = 5  # kvlint: ignore-file KV403
g = 6  # kvlint: ignored[KV101]
h = 7  # kvlint: disable[KV101] wrong verb
i = 8  # kvlint:
j = 9  # kvlint: ignore: KV101
k = 0  # kvlint-fixture: select=KV101
)PY");
  ASSERT_EQ(f.suppressions.size(), 9u);
  for (const auto& s : f.suppressions) {
    EXPECT_TRUE(s.codes.empty()) << s.loc.line;
    EXPECT_NE(s.malformed, "") << s.loc.line;
    EXPECT_EQ(s.applies_to_line, s.loc.line);
  }
  EXPECT_THAT(f.suppressions[0].malformed, ::testing::HasSubstr("`ignore` without `[CODES]`"));
  EXPECT_THAT(f.suppressions[2].malformed, ::testing::HasSubstr("never closed"));
  EXPECT_THAT(f.suppressions[3].malformed, ::testing::HasSubstr("`[]` names no code"));
  EXPECT_TRUE(f.suppressions[4].file_level);
  EXPECT_THAT(f.suppressions[5].malformed, ::testing::HasSubstr("unknown directive `ignored`"));
  EXPECT_THAT(f.suppressions[6].malformed, ::testing::HasSubstr("unknown directive `disable`"));
}

TEST(FrontendParseProblems, SyntaxErrorsStillYieldFactsFromValidParts) {
  const auto f = analyze(R"PY(class Good:
    def __init__(self):
        self.cache = DynamicCache()

x = = 3

class Later:
    def model_local_kv_specs(self):
        return []
)PY");
  ASSERT_EQ(f.parse_problems.size(), 1u);
  EXPECT_EQ(f.parse_problems[0].loc.line, 5u);
  EXPECT_EQ(f.parse_problems[0].message, "syntax error");
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].owner_class, "Good");
  ASSERT_EQ(f.declarations.size(), 1u);
  EXPECT_EQ(f.declarations[0].owner_class, "Later");
}

TEST(FrontendParseProblems, CappedAtTwentyPlusOneSummary) {
  std::string source;
  for (int i = 0; i < 40; ++i) source += "def f" + std::to_string(i) + "(:\n    pass\nx = 1\n";
  const auto f = analyze(source);
  ASSERT_EQ(f.parse_problems.size(), 21u);
  EXPECT_NE(f.parse_problems.back().message.find("more"), std::string::npos);
}

TEST(FrontendRobustness, HundredThousandDeepNestingDoesNotCrash) {
  const std::size_t depth = 100000;
  const auto parens = analyze("x = " + std::string(depth, '(') + "1" + std::string(depth, ')') + "\n");
  ASSERT_EQ(parens.constants.size(), 1u);
  EXPECT_EQ(parens.constants[0].value.literal, facts::LiteralKind::Int);
  EXPECT_LE(parens.constants[0].value.text.size(), facts::kMaxTextBytes);

  const auto brackets = analyze("class M:\n    def f(self):\n        self.c = " + std::string(depth, '[') +
                                "DynamicCache()" + std::string(depth, ']') + "\n");
  ASSERT_EQ(brackets.cache_sites.size(), 1u);
  EXPECT_EQ(brackets.cache_sites[0].retention, facts::Retention::SelfContainer);

  std::string calls = "y = ";
  for (std::size_t i = 0; i < depth; ++i) calls += "f(";
  calls += std::string(depth, ')') + "\n";
  const auto nested_calls = analyze(calls);
  EXPECT_EQ(nested_calls.constants.size(), 1u);

  // Unbalanced at any depth: a syntax error like any other, and the facts around it survive.
  // (tree-sitter 0.20 corrupted its heap freeing such error trees; the 0.23 core does not, and
  // the sanitizer build runs this test under ASan.)
  const std::string class_after = "\nclass A:\n    def f(self):\n        self.c = DynamicCache()\n";
  for (const char open : {'[', '(', '{'}) {
    const auto unbalanced = analyze("z = " + std::string(depth, open) + class_after);
    EXPECT_FALSE(unbalanced.parse_problems.empty()) << open;
  }
  const auto mismatched = analyze("z = " + std::string(depth, '[') + std::string(depth, ')') + class_after);
  EXPECT_FALSE(mismatched.parse_problems.empty());
  // Deep but recoverable: the unclosed part is shallow, so it is parsed.
  const auto shallow_error = analyze("z = " + std::string(1000, '(') + "\nclass A:\n    pass\n");
  EXPECT_FALSE(shallow_error.parse_problems.empty());
  // Brackets inside strings and comments do not count as nesting.
  const auto in_strings = analyze("s = '" + std::string(depth, '[') + "'  # " + std::string(depth, '(') +
                                  "\nclass A:\n    pass\n");
  EXPECT_TRUE(in_strings.parse_problems.empty());
  EXPECT_EQ(in_strings.classes.size(), 1u);
}

// Long `.x` chains, rooted at names, calls and subscripts, in every position whose text the
// front end reads (constants, attribute assignments, cache arguments, guards, call
// arguments), with the words that switch on the optional handlers (use_cache,
// capacity_source, scope) present. Work is counted in analysis steps.
std::string attribute_chain_file(std::size_t target_bytes, std::size_t chain_length) {
  std::string x;
  for (std::size_t i = 0; i < chain_length; ++i) x += ".x";
  std::string out = "from transformers import DynamicCache\n";
  for (int i = 0; out.size() < target_bytes; ++i) {
    const std::string n = std::to_string(i);
    out += "C" + n + " = f()" + x +
           "\n"
           "class K" +
           n +
           "(nn.Module):\n"
           "    def __init__(self, b):\n"
           "        self.a = g()" +
           x +
           "\n"
           "        self.c = DynamicCache(b[0]" +
           x +
           ")\n"
           "        if k()" +
           x + ".capacity_source == b" + x +
           ":\n"
           "            self.d = DynamicCache(max_cache_len=b" +
           x +
           ".scope * 2)\n"
           "        h(b" +
           x + ", use_cache=True)\n";
  }
  return out;
}

TEST(FrontendRobustness, LongAttributeChainsTakeStepsLinearInTheFileSize) {
  const auto started = std::chrono::steady_clock::now();
  python::PythonAnalyzer analyzer{facts::Vocabulary{}};
  const std::string source = attribute_chain_file(400'000, 2'000);
  const auto f = analyzer.analyze("chains.py", source);
  EXPECT_TRUE(f.parse_problems.empty()) << f.parse_problems.front().message;
  EXPECT_GE(f.classes.size(), 5u);
  EXPECT_GE(f.cache_sites.size(), 10u);
  EXPECT_GE(f.attribute_assignments.size(), 5u);
  // Re-walking each chain from each of its nodes costs about chain_length / 2 steps per
  // byte (here ~1,000); a linear walk costs a few.
  const uint64_t steps = analyzer.last_steps();
  EXPECT_GT(steps, source.size() / 4);  // the counter counts
  EXPECT_LE(steps, 16 * source.size()) << steps << " steps for " << source.size() << " bytes";
  // Doubling the chains does not change the work per byte.
  const std::string longer = attribute_chain_file(400'000, 4'000);
  analyzer.analyze("chains.py", longer);
  EXPECT_LE(analyzer.last_steps(), 16 * longer.size());
  // Safety net only (speed is measured in bench/): the quadratic walk took half a minute.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
}

TEST(FrontendRobustness, AFileOverItsAnalysisBudgetIsCutOffWithAProblemAndKeepsEarlierFacts) {
  std::string source = "class Early:\n    def __init__(self):\n        self.cache = DynamicCache()\n";
  for (int i = 0; i < 2000; ++i) source += "v" + std::to_string(i) + " = f(a.b.c, d[e], g * h)\n";
  source += "class Late:\n    def __init__(self):\n        self.cache = DynamicCache()\n";
  python::PythonAnalyzer analyzer{facts::Vocabulary{}, python::AnalysisBudget{0, 2000}};
  const auto f = analyzer.analyze("big.py", source);
  ASSERT_EQ(f.parse_problems.size(), 1u);
  EXPECT_THAT(f.parse_problems[0].message, ::testing::HasSubstr("analysis stopped here"));
  EXPECT_GT(f.parse_problems[0].loc.line, 3u);
  ASSERT_EQ(f.cache_sites.size(), 1u);
  EXPECT_EQ(f.cache_sites[0].owner_class, "Early");
  ASSERT_GE(f.classes.size(), 1u);
  EXPECT_EQ(f.classes[0].name, "Early");
  EXPECT_LT(analyzer.last_steps(), source.size());  // stopped near the budget, not at the end
  // The default budget analyses the same file whole.
  python::PythonAnalyzer whole{facts::Vocabulary{}};
  const auto all = whole.analyze("big.py", source);
  EXPECT_TRUE(all.parse_problems.empty());
  EXPECT_EQ(all.cache_sites.size(), 2u);
}

TEST(FrontendApi, ReusableAnalyzerMatchesFreeFunction) {
  const std::string a = "class A:\n    def f(self):\n        self.c = DynamicCache()\n";
  const std::string b = "from x import y as z\n";
  python::PythonAnalyzer analyzer{facts::Vocabulary{}};
  const auto fa = analyzer.analyze("a.py", a, "a");
  const auto fb = analyzer.analyze("b.py", b);
  EXPECT_EQ(facts::to_json(fa), facts::to_json(python::analyze("a.py", a, facts::Vocabulary{}, "a")));
  EXPECT_EQ(fa.cache_sites.size(), 1u);
  EXPECT_EQ(fa.cache_sites[0].loc.file, "a.py");
  EXPECT_TRUE(fb.cache_sites.empty());
  EXPECT_EQ(fb.imports.size(), 1u);
  EXPECT_EQ(fb.module_name, "");
}

facts::FileFacts everything() {
  return analyze(R"PY(# kvlint: ignore-file[KV403] reason
from transformers import DynamicCache as DC
LIMIT = 2048
class M(nn.Module):
    def __init__(self, cfg):
        self.pkv = None
        self.gen = Gen(cfg)
    def forward(self, x, use_cache=False, past_key_values=None, requests=()):
        if use_cache and past_key_values is None:
            past_key_values = DC(config=self.config)
        self._d[x] = DC() if self.flag else None
        self.lm(x, use_cache=True, past_key_values=self.pkv)
        for r in requests:
            pass
        with torch.cuda.graph(self.g):
            self.step(x[0])
        return past_key_values
    def model_local_kv_specs(self):
        if not self.flag:
            return []
        return [spec_from_hf_config(self.config, name="n", rows=RowDriver.FIXED, rows_fixed=1, **kw)] + self.gen.model_local_kv_specs()  # kvlint: ignore KV999
def collect(model):
    for m in model.named_modules():
        if m.capacity_source == "x":
            m.model_local_kv_specs()
def broken(:
    pass
)PY");
}

// A ggml K/V's evidence in another file (only the C++ front end makes any).
facts::KvEvidence kv_evidence(facts::KvEvidence::Kind kind, const std::string& file, uint32_t line,
                              std::string member, std::string by) {
  facts::KvEvidence e;
  e.kind = kind;
  e.loc.file = file;
  e.loc.line = line;
  e.owner_class = "ModelContext";
  e.member = std::move(member);
  e.method = "__init__";
  e.by = std::move(by);
  e.detail = "n * MB";
  return e;
}

TEST(FrontendJson, ExactRoundTrip) {
  const auto f = everything();
  EXPECT_FALSE(f.cache_sites.empty());
  EXPECT_FALSE(f.implicit_caches.empty());
  EXPECT_FALSE(f.captures.empty());
  EXPECT_FALSE(f.declarations.empty());
  EXPECT_FALSE(f.hops.empty());
  EXPECT_FALSE(f.batch_evidence.empty());
  EXPECT_FALSE(f.protocol_uses.empty());
  EXPECT_FALSE(f.constants.empty());
  EXPECT_FALSE(f.suppressions.empty());
  EXPECT_FALSE(f.parse_problems.empty());
  const nlohmann::json j = facts::to_json(f);
  const facts::FileFacts back = facts::file_facts_from_json(j);
  EXPECT_EQ(facts::to_json(back), j);
  // Spot-check structural equality beyond the JSON text.
  ASSERT_EQ(back.cache_sites.size(), f.cache_sites.size());
  EXPECT_EQ(back.cache_sites[0].loc, f.cache_sites[0].loc);
  EXPECT_EQ(back.cache_sites[0].guards.size(), f.cache_sites[0].guards.size());
  EXPECT_EQ(back.implicit_caches[0].none_origin, f.implicit_caches[0].none_origin);
  EXPECT_EQ(back.declarations[0].specs[0].config->text, f.declarations[0].specs[0].config->text);
  ASSERT_EQ(back.declarations[0].specs[0].unpacked.size(), 1u);
  EXPECT_EQ(back.declarations[0].specs[0].unpacked[0].text, "**kw");
  ASSERT_EQ(back.suppressions.size(), 2u);
  EXPECT_NE(back.suppressions[1].malformed, "");
  EXPECT_EQ(back.suppressions[1].malformed, f.suppressions[1].malformed);
  // Through text, as the per-file cache stores it.
  EXPECT_EQ(facts::to_json(facts::file_facts_from_json(nlohmann::json::parse(j.dump()))), j);
  // A C++ growth site's flag (no Python site sets it) survives the trip.
  facts::FileFacts grown = f;
  grown.cache_sites[0].stores_existing = true;
  EXPECT_TRUE(facts::file_facts_from_json(facts::to_json(grown)).cache_sites[0].stores_existing);
  // A ggml K/V's evidence (no Python site has any), one location in another file, survives it too.
  grown.cache_sites[0].evidence.push_back(kv_evidence(facts::KvEvidence::Kind::ArenaCreated, "src/model.cpp",
                                                      416, "ctx_kv", "make_unique_ggml_context"));
  const facts::FileFacts evidenced =
      facts::file_facts_from_json(nlohmann::json::parse(facts::to_json(grown).dump()));
  ASSERT_EQ(evidenced.cache_sites[0].evidence.size(), 1u);
  EXPECT_EQ(evidenced.cache_sites[0].evidence[0].kind, facts::KvEvidence::Kind::ArenaCreated);
  EXPECT_EQ(evidenced.cache_sites[0].evidence[0].loc.file, "src/model.cpp");
  EXPECT_EQ(facts::to_json(evidenced), facts::to_json(grown));
}

TEST(FrontendJson, RejectsWrongVersionAndBadEnums) {
  nlohmann::json j = facts::to_json(everything());
  j["version"] = 999;
  EXPECT_ANY_THROW(facts::file_facts_from_json(j));
  j = facts::to_json(everything());
  j["cache_sites"][0]["retention"] = "sideways";
  EXPECT_ANY_THROW(facts::file_facts_from_json(j));
}

// The per-file cache's binary form: an exact round trip (to_json names every field, so a
// field missing from fields.hpp shows here), fields no Python fact sets included.
facts::FileFacts binary_round_trip(const facts::FileFacts& f) {
  facts::BinaryWriter out;
  facts::write_file_facts(out, f);
  facts::BinaryReader in(out.bytes());
  facts::FileFacts back = facts::read_file_facts(in);
  EXPECT_EQ(in.left(), 0u);
  return back;
}

TEST(FrontendBinary, ExactRoundTripOfEveryField) {
  facts::FileFacts f = everything();
  // What only the C++ front end or another file's location sets.
  f.classes[0].qualified_name = "ns.M";
  f.classes[0].out_of_line = true;
  f.classes[0].body_end_byte = 4'000'000'000u;
  f.language = facts::Language::Cpp;
  f.cache_sites[0].stores_existing = true;
  f.cache_sites[0].loc.file = std::string("include/m.h");
  auto with_calls = std::find_if(f.classes[0].methods.begin(), f.classes[0].methods.end(),
                                 [](const facts::MethodFact& m) { return !m.calls.empty(); });
  ASSERT_NE(with_calls, f.classes[0].methods.end());
  with_calls->calls[0].kv_read_only = true;
  f.hops.at(0).in_container = true;
  f.attribute_assignments.at(0).value.alias_of = "cfg";
  f.cache_sites[0].evidence.push_back(kv_evidence(facts::KvEvidence::Kind::WrittenByOther, "src/model.h", 728,
                                                  "k_cache", "`ggml_cpy` into a view"));
  const nlohmann::json expected = facts::to_json(f);
  ASSERT_EQ(expected["classes"][0]["out_of_line"], true);
  const facts::FileFacts back = binary_round_trip(f);
  EXPECT_EQ(facts::to_json(back), expected);
  EXPECT_EQ(back.cache_sites[0].loc.file, "include/m.h");
  EXPECT_EQ(back.classes[0].loc.file, "snippet.py");
}

// Every Python file of the rule fixtures and examples: read back from the binary form, the
// facts are the same, and as facts::compact leaves them (one shared guard for equal guards,
// one path, no spare capacity), so the engine need not compact them again.
TEST(FrontendBinary, RealFilesRoundTripCompact) {
  std::size_t files = 0, guards = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(KVLINT_SOURCE_DIR)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".py" ||
        (path.find("/fixtures/") == std::string::npos && path.find("/examples/") == std::string::npos))
      continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const facts::FileFacts f = python::analyze(path, text.str(), facts::Vocabulary{}, "pkg.m");
    const facts::FileFacts back = binary_round_trip(f);
    ASSERT_EQ(facts::to_json(back), facts::to_json(f)) << path;
    facts::FileFacts compacted = back;
    facts::compact(compacted);
    EXPECT_EQ(facts::to_json(compacted), facts::to_json(back)) << path;
    for (std::size_t c = 0; c < back.classes.size(); ++c) {
      EXPECT_EQ(back.classes[c].methods.capacity(), back.classes[c].methods.size()) << path;
      for (const auto& m : back.classes[c].methods)
        for (const auto& call : m.calls) {
          for (const auto& g : call.guards) {
            EXPECT_EQ(&g.condition.loc.file.str(), &back.classes[0].loc.file.str()) << path;
            ++guards;
          }
          // A call's passes under its own guard hold that one guard, as after compact.
          for (const auto& pass : call.passes) {
            if (!pass.guards.empty() && pass.guards == call.guards) {
              EXPECT_EQ(&pass.guards.front(), &call.guards.front()) << path;
            }
          }
        }
    }
    ++files;
  }
  EXPECT_GT(files, 100u);
  EXPECT_GT(guards, 50u);
}

// Bytes that are not a whole binary form (cut anywhere, or corrupted) throw
// BinaryFormatError or decode to something; they never read past the end (ASan runs this)
// nor allocate beyond the input's size.
TEST(FrontendBinary, TruncatedOrCorruptedBytesAreRefused) {
  facts::BinaryWriter out;
  facts::write_file_facts(out, everything());
  const std::string good = out.bytes();
  for (std::size_t length = 0; length < good.size(); ++length) {
    facts::BinaryReader in(std::string_view(good).substr(0, length));
    EXPECT_THROW(facts::read_file_facts(in), facts::BinaryFormatError) << "cut to " << length;
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string flipped = good;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x40);
    facts::BinaryReader in(flipped);
    try {
      facts::read_file_facts(in);
    } catch (const facts::BinaryFormatError&) {
    }
  }
  // A count far beyond the input, an enum value that names nothing, a flag that is not 0/1.
  facts::BinaryWriter huge;
  huge.text("m.py");
  huge.varint(std::uint64_t{1} << 60);
  facts::BinaryReader huge_in(huge.bytes());
  EXPECT_THROW(facts::read_file_facts(huge_in), facts::BinaryFormatError);
  facts::BinaryWriter bad_enum;
  bad_enum.text("m.py");
  bad_enum.varint(7);  // Language has two values
  facts::BinaryReader bad_enum_in(bad_enum.bytes());
  EXPECT_THROW(facts::read_file_facts(bad_enum_in), facts::BinaryFormatError);
  const std::string eleven_continuations(11, '\xff'), two(1, '\x02');
  facts::BinaryReader overflow(eleven_continuations);
  EXPECT_THROW(overflow.varint(), facts::BinaryFormatError);
  facts::BinaryReader not_flag(two);
  EXPECT_THROW(not_flag.flag(), facts::BinaryFormatError);
}

TEST(FrontendRealCode, StdlibFilesAnalyzeWithoutProblems) {
  const std::filesystem::path stdlib = "/root/.pyenv/versions/3.11.7/lib/python3.11";
  if (!std::filesystem::exists(stdlib / "functools.py")) GTEST_SKIP() << "no CPython stdlib at " << stdlib;
  for (const char* name : {"functools.py", "dataclasses.py", "typing.py", "argparse.py"}) {
    std::ifstream in(stdlib / name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const auto f = python::analyze(name, ss.str(), facts::Vocabulary{});
    EXPECT_TRUE(f.parse_problems.empty()) << name;
    EXPECT_FALSE(f.classes.empty()) << name;
    EXPECT_FALSE(f.imports.empty()) << name;
  }
}

// The engine compacts every file's facts it keeps: they read the same afterwards, hold no
// spare vector capacity, and all their locations share one copy of the path.
TEST(FrontendFactsCompact, SameFactsOnePathNoSpareCapacity) {
  facts::FileFacts f = analyze(R"PY(import torch
from transformers import DynamicCache

class Decoder(torch.nn.Module):
    def __init__(self, config):
        self.use_graphs = not config.enforce_eager
        if config.use_cache:
            self.cache = DynamicCache()

    def forward(self, x, past_key_values=None):
        if past_key_values is not None and self.use_graphs:
            return self.step(x, past_key_values=past_key_values)
        return self.lm(x, use_cache=True)
)PY");
  ASSERT_FALSE(f.classes.empty());
  ASSERT_FALSE(f.cache_sites.empty());
  ASSERT_FALSE(f.attribute_assignments.empty());
  // A location holding its own copy of the same path, as one read from elsewhere would.
  f.cache_sites[0].loc.file = std::string("snippet.py");
  f.classes.reserve(f.classes.size() + 8);
  const nlohmann::json before = facts::to_json(f);
  ASSERT_NE(&f.cache_sites[0].loc.file.str(), &f.classes[0].loc.file.str());

  facts::compact(f);

  EXPECT_EQ(facts::to_json(f), before);
  EXPECT_EQ(f.classes.capacity(), f.classes.size());
  const std::string* shared = &f.classes[0].loc.file.str();
  EXPECT_EQ(*shared, "snippet.py");
  EXPECT_EQ(&f.cache_sites[0].loc.file.str(), shared);
  EXPECT_EQ(&f.imports[0].loc.file.str(), shared);
  EXPECT_EQ(&f.attribute_assignments[0].value.loc.file.str(), shared);
  for (const auto& g : f.cache_sites[0].guards) EXPECT_EQ(&g.condition.loc.file.str(), shared);
}

// Facts under the same condition hold one copy of its guard (every call of a method under one
// `if` carried a copy of it): the front end makes each guard once, and compacting facts read
// back from the cache makes equal guards one again; other guards stay apart, the facts read the same.
TEST(FrontendFactsCompact, EqualGuardsAreOne) {
  const facts::FileFacts analysed = analyze(R"PY(import torch

class Decoder(torch.nn.Module):
    def forward(self, x):
        if self.streaming:
            self.first.run(x)
            self.second.run(x)
        else:
            self.third.run(x)
)PY");
  auto guard_of = [](const facts::FileFacts& f, std::string_view callee) -> const facts::Guard* {
    if (f.classes.size() != 1) return nullptr;
    for (const auto& m : f.classes[0].methods)
      for (const auto& c : m.calls)
        if (c.callee == callee && c.guards.size() == 1) return &c.guards[0];
    return nullptr;
  };
  for (const char* callee : {"self.first.run", "self.second.run", "self.third.run"})
    ASSERT_NE(guard_of(analysed, callee), nullptr) << callee;
  EXPECT_EQ(guard_of(analysed, "self.first.run"), guard_of(analysed, "self.second.run"));
  EXPECT_NE(guard_of(analysed, "self.first.run"), guard_of(analysed, "self.third.run"));
  EXPECT_TRUE(guard_of(analysed, "self.third.run")->negated);

  // Read back from JSON (as from the cache), each guard is its own copy until compacted.
  const nlohmann::json json = facts::to_json(analysed);
  facts::FileFacts read = facts::file_facts_from_json(json);
  ASSERT_NE(guard_of(read, "self.first.run"), guard_of(read, "self.second.run"));
  EXPECT_EQ(*guard_of(read, "self.first.run"), *guard_of(read, "self.second.run"));

  facts::compact(read);

  EXPECT_EQ(facts::to_json(read), json);
  EXPECT_EQ(guard_of(read, "self.first.run"), guard_of(read, "self.second.run"));
  EXPECT_NE(guard_of(read, "self.first.run"), guard_of(read, "self.third.run"));
}

}  // namespace
}  // namespace kvlint::frontend_test

namespace kvlint::frontend_test {
namespace {

// What facts.hpp (LiteralKind) says counts as a literal, case by case.
TEST(FrontendLiterals, ExactlyTheDocumentedFormsAreLiterals) {
  const auto f = analyze(R"PY(NEG = -1
NEG_SPACED = - 1
PLUS = +2.5
PAREN = (2048)
PAREN_NEG = ((-1))
NEG_PAREN = -(1)
HEX = 0x800
UNDERSCORE = 1_024
EXP = 1e-3
CONCAT = "a" 'b'
PAREN_CONCAT = ("a"
                "b")
RAW = r"\d"
ESCAPED = "a\tb"
OTHER_ESCAPE = "\x41"
FSTR = f"a{x}"
CONCAT_F = "a" f"{x}"
BYTES = b"a"
IMAG = 2j
NEG_IMAG = -2j
DOUBLE_NEG = --1
NEG_NAME = -x
SUM = 1 + 1
TUPLE = (1,)
ELLIPSIS = ...
NONE = None
)PY");
  auto value = [&](std::string_view name) -> const facts::Expression& {
    for (const auto& c : f.constants)
      if (c.name == name) return c.value;
    ADD_FAILURE() << "no constant " << name;
    static const facts::Expression none;
    return none;
  };
  using K = facts::LiteralKind;
  auto is = [&](std::string_view name, K kind, std::string_view v) {
    const auto& e = value(name);
    EXPECT_EQ(e.literal, kind) << name;
    EXPECT_EQ(e.literal_value, v) << name;
  };
  is("NEG", K::Int, "-1");
  is("NEG_SPACED", K::Int, "-1");
  is("PLUS", K::Float, "2.5");
  is("PAREN", K::Int, "2048");
  is("PAREN_NEG", K::Int, "-1");
  is("NEG_PAREN", K::Int, "-1");
  is("HEX", K::Int, "0x800");
  is("UNDERSCORE", K::Int, "1_024");
  is("EXP", K::Float, "1e-3");
  is("CONCAT", K::String, "ab");
  is("PAREN_CONCAT", K::String, "ab");
  is("RAW", K::String, "\\d");
  is("ESCAPED", K::String, "a\tb");
  is("OTHER_ESCAPE", K::String, "\\x41");
  is("NONE", K::NoneValue, "None");
  for (std::string_view name : {"FSTR", "CONCAT_F", "BYTES", "IMAG", "NEG_IMAG", "DOUBLE_NEG", "NEG_NAME",
                                "SUM", "TUPLE", "ELLIPSIS"})
    is(name, K::None, "");
}

}  // namespace
}  // namespace kvlint::frontend_test
