// AttributeAssignment facts: every `self.<attr> = value` inside a class's methods,
// with the names the value reads (KV303 expands guards on `self.x` through them).
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzers/facts/facts_json.hpp"
#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

TEST(FrontendAttributeAssignments, RecordsMethodAssignmentsWithTheNamesTheyRead) {
  const auto f = analyze(R"PY(from torch import nn
LIMIT = 4
class Talker(nn.Module):
    flag = True
    def __init__(self, vllm_config, enabled=True):
        self._use_cuda_graphs = not vllm_config.model_config.enforce_eager
        self.enabled = enabled
        self.cfg.depth = 2
        self.a, self.b = 1, 2
    def reset(self):
        self.enabled = False
def helper(obj):
    obj.enabled = True
)PY");
  ASSERT_EQ(f.attribute_assignments.size(), 3u);
  const auto& eager = f.attribute_assignments[0];
  EXPECT_EQ(eager.owner_class, "Talker");
  EXPECT_EQ(eager.method, "__init__");
  EXPECT_EQ(eager.attribute, "_use_cuda_graphs");
  EXPECT_EQ(eager.value.text, "not vllm_config.model_config.enforce_eager");
  EXPECT_NE(
      std::find(eager.value.names.begin(), eager.value.names.end(), "vllm_config.model_config.enforce_eager"),
      eager.value.names.end());
  EXPECT_EQ(eager.loc.line, 6u);
  EXPECT_EQ(f.attribute_assignments[1].attribute, "enabled");
  EXPECT_EQ(f.attribute_assignments[1].value.text, "enabled");
  EXPECT_EQ(f.attribute_assignments[2].method, "reset");
  EXPECT_EQ(f.attribute_assignments[2].value.literal, facts::LiteralKind::Bool);
}

TEST(FrontendAttributeAssignments, ParametersKeptByOneTupleAssignmentAreEachRecorded) {
  const auto f = analyze(R"PY(from torch import nn
class GraphEncoder:
    def __init__(self, encoder: nn.Module, projection, *, page_positions=250):
        self.encoder, self.projection, self.page_positions, self.count = encoder, projection, page_positions, 0
)PY");
  ASSERT_EQ(f.attribute_assignments.size(), 3u);
  EXPECT_EQ(f.attribute_assignments[0].attribute, "encoder");
  EXPECT_EQ(f.attribute_assignments[0].value.text, "encoder");
  EXPECT_EQ(f.attribute_assignments[1].attribute, "projection");
  EXPECT_EQ(f.attribute_assignments[2].attribute, "page_positions");
  EXPECT_EQ(f.attribute_assignments[2].loc.line, 4u);
}

TEST(FrontendAttributeAssignments, SurviveTheJsonRoundTrip) {
  const auto f = analyze(R"PY(class Runner:
    def __init__(self, cfg):
        self.use_cuda_graph = not cfg.enforce_eager
)PY");
  ASSERT_EQ(f.attribute_assignments.size(), 1u);
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.attribute_assignments.size(), 1u);
  EXPECT_EQ(back.attribute_assignments[0].attribute, "use_cuda_graph");
  EXPECT_EQ(back.attribute_assignments[0].value.names, f.attribute_assignments[0].value.names);
  EXPECT_EQ(back.attribute_assignments[0].loc, f.attribute_assignments[0].loc);
}

}  // namespace
}  // namespace kvlint::frontend_test

namespace kvlint::frontend_test {
namespace {

TEST(FrontendDeclarationLocals, ForwardThroughALocalBoundToAHeldAttribute) {
  const auto f = analyze(R"PY(from torch import nn
class Talker(nn.Module):
    def model_local_kv_specs(self):
        generator = getattr(self, "audio_generator", None)
        if generator is None:
            return []
        wrapper = self._cudagraph_wrapper
        specs = list(generator.model_local_kv_specs())
        specs += collect_model_local_kv_specs(wrapper)
        other = make()
        specs += other.model_local_kv_specs()
        return specs
)PY");
  ASSERT_EQ(f.declarations.size(), 1u);
  const auto& d = f.declarations[0];
  ASSERT_EQ(d.forwards.size(), 2u);
  EXPECT_EQ(d.forwards[0].via_attribute, "audio_generator");
  EXPECT_EQ(d.forwards[0].loc.line, 8u);
  EXPECT_EQ(d.forwards[1].via_attribute, "_cudagraph_wrapper");
  ASSERT_EQ(d.local_assignments.size(), 4u);
  EXPECT_EQ(d.local_assignments[0].name, "generator");
  EXPECT_EQ(d.local_assignments[0].value.text, "getattr(self, \"audio_generator\", None)");
  EXPECT_EQ(d.local_assignments[3].name, "other");
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.declarations.size(), 1u);
  ASSERT_EQ(back.declarations[0].local_assignments.size(), 4u);
  EXPECT_EQ(back.declarations[0].local_assignments[1].value.text, "self._cudagraph_wrapper");
}

TEST(FrontendAttributeAssignments, AnAnnotatedAssignmentNamesTheClassItHolds) {
  const auto f = analyze(R"PY(import states
class Decoder:
    def __init__(self):
        self.stream: "StreamState | None" = None
        self.state: states.ConvState | None = None
        self.count: int = 0
        self.plain = None
)PY");
  ASSERT_EQ(f.attribute_assignments.size(), 4u);
  EXPECT_EQ(f.attribute_assignments[0].annotated_class, "StreamState");
  EXPECT_EQ(f.attribute_assignments[1].annotated_class, "states.ConvState");
  EXPECT_EQ(f.attribute_assignments[2].annotated_class, "");
  EXPECT_EQ(f.attribute_assignments[3].annotated_class, "");
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.attribute_assignments.size(), 4u);
  EXPECT_EQ(back.attribute_assignments[1].annotated_class, "states.ConvState");
}

}  // namespace
}  // namespace kvlint::frontend_test

namespace kvlint::frontend_test {
namespace {

TEST(FrontendConstructions, RecordsBuiltClassesWithTheirGuardsAndCallerGuards) {
  const auto f = analyze(R"PY(from .wrapper import GraphWrapper
class Codec:
    def load_weights(self, device):
        if not self.vllm_config.model_config.enforce_eager:
            self._configure(device)
    def _configure(self, device):
        if self._codec is None:
            return
        self.wrapper = GraphWrapper(self._codec)
        helper = Helper.from_config(self.cfg)
def build(codec):
    return GraphWrapper(codec)
)PY");
  ASSERT_EQ(f.constructions.size(), 3u);
  const auto& w = f.constructions[0];
  EXPECT_EQ(w.owner_class, "Codec");
  EXPECT_EQ(w.method, "_configure");
  EXPECT_EQ(w.target_class, ".wrapper.GraphWrapper");
  EXPECT_EQ(w.loc.line, 9u);
  ASSERT_EQ(w.guards.size(), 2u);
  EXPECT_EQ(w.guards[0].origin, facts::Guard::Origin::EarlyReturn);
  EXPECT_EQ(w.guards[1].origin, facts::Guard::Origin::CallerGuard);
  EXPECT_EQ(w.guards[1].condition.text, "not self.vllm_config.model_config.enforce_eager");
  EXPECT_EQ(f.constructions[1].target_class, "Helper");
  EXPECT_EQ(f.constructions[2].owner_class, "");
  EXPECT_EQ(f.constructions[2].method, "build");
  EXPECT_TRUE(f.constructions[2].guards.empty());
  const auto back = facts::file_facts_from_json(facts::to_json(f));
  ASSERT_EQ(back.constructions.size(), 3u);
  EXPECT_EQ(back.constructions[0].guards.size(), 2u);
  EXPECT_EQ(back.constructions[0].target_class, w.target_class);
}

}  // namespace
}  // namespace kvlint::frontend_test
