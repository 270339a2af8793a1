// Item 6: declarations (specs, fields, rows spellings, helpers, forwards, guards).
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

using facts::RowsDriver;

TEST(FrontendDeclarations, SpecsFieldsAndRowsSpellings) {
  const auto f = analyze(R"PY(class Decoder(nn.Module):
    def model_local_kv_specs(self):
        if not self.async_chunk:
            return []
        return [
            spec_from_hf_config(self.config, name="codec", physical_capacity_positions=self.config.sliding_window - 1,
                                scope=ModelLocalKVScope.REQUEST, rows=RowDriver.MAX_NUM_SEQS),
            spec_from_hf_config(self.config, name="pool", rows=RowDriver.FIXED, rows_fixed=1, rows_reason="bucket"),
            ModelLocalKVSpec(name="old", layers=2, batch_capacity=4, rows=Fixed(1, because="per session")),
            ModelLocalKVSpec(name="old2", rows=MaxNumSeqs(), max_live_instances=2),
            ModelLocalKVSpec(name="odd", rows=pick_rows()),
            ModelLocalKVSpec(name="none"),
        ]
)PY");
  ASSERT_EQ(f.declarations.size(), 1u);
  const auto& d = f.declarations[0];
  EXPECT_EQ(d.owner_class, "Decoder");
  EXPECT_EQ(d.loc.line, 2u);
  EXPECT_TRUE(d.returns_empty_somewhere);
  ASSERT_EQ(d.specs.size(), 6u);

  const auto& codec = d.specs[0];
  EXPECT_EQ(codec.constructor, "spec_from_hf_config");
  ASSERT_TRUE(codec.config.has_value());
  EXPECT_EQ(codec.config->text, "self.config");
  EXPECT_EQ(codec.rows, RowsDriver::MaxNumSeqs);
  ASSERT_NE(codec.field("physical_capacity_positions"), nullptr);
  EXPECT_EQ(codec.field("physical_capacity_positions")->value.names,
            (std::vector<std::string>{"self.config.sliding_window"}));
  ASSERT_NE(codec.field("name"), nullptr);
  EXPECT_EQ(codec.field("name")->value.literal_value, "codec");
  ASSERT_EQ(codec.guards.size(), 1u);
  EXPECT_EQ(codec.guards[0].origin, facts::Guard::Origin::EarlyReturn);
  EXPECT_TRUE(codec.guards[0].negated);
  EXPECT_EQ(codec.guards[0].self_attributes, (std::vector<std::string>{"async_chunk"}));

  const auto& pool = d.specs[1];
  EXPECT_EQ(pool.rows, RowsDriver::Fixed);
  ASSERT_NE(pool.field("rows_reason"), nullptr);
  EXPECT_EQ(pool.field("rows_reason")->value.literal_value, "bucket");

  const auto& old = d.specs[2];
  EXPECT_EQ(old.constructor, "ModelLocalKVSpec");
  EXPECT_FALSE(old.config.has_value());
  EXPECT_EQ(old.rows, RowsDriver::Fixed);
  // batch_capacity is renamed; Fixed(1, because=...) adds rows_fixed / rows_reason only when absent.
  ASSERT_NE(old.field("rows_fixed"), nullptr);
  EXPECT_EQ(old.field("rows_fixed")->value.literal_value, "4");
  ASSERT_NE(old.field("rows_reason"), nullptr);
  EXPECT_EQ(old.field("rows_reason")->value.literal_value, "per session");
  EXPECT_EQ(old.field("batch_capacity"), nullptr);

  EXPECT_EQ(d.specs[3].rows, RowsDriver::MaxNumSeqs);
  ASSERT_NE(d.specs[3].field("rows_fixed"), nullptr);
  EXPECT_EQ(d.specs[4].rows, RowsDriver::Other);
  EXPECT_EQ(d.specs[5].rows, RowsDriver::Absent);
}

TEST(FrontendDeclarations, UnpackedArgumentsAreRecordedSoMissingFieldsAreUnknown) {
  const auto f = analyze(R"PY(class Decoder(nn.Module):
    def model_local_kv_specs(self, **kw):
        common = dict(scope=ModelLocalKVScope.REQUEST)
        return [
            ModelLocalKVSpec(**common, physical_capacity_positions=2048),
            spec_from_hf_config(cfg, **kw),
            spec_from_hf_config(*args, name="x"),
            spec_from_hf_config(cfg, name="plain", rows=RowDriver.FIXED),
        ]
)PY");
  ASSERT_EQ(f.declarations.size(), 1u);
  const auto& specs = f.declarations[0].specs;
  ASSERT_EQ(specs.size(), 4u);
  ASSERT_EQ(specs[0].unpacked.size(), 1u);
  EXPECT_EQ(specs[0].unpacked[0].text, "**common");
  EXPECT_EQ(specs[0].unpacked[0].names, (std::vector<std::string>{"common"}));
  ASSERT_EQ(specs[0].fields.size(), 1u);
  EXPECT_TRUE(specs[0].may_set("rows_reason"));
  EXPECT_EQ(specs[0].field("rows_reason"), nullptr);
  ASSERT_EQ(specs[1].unpacked.size(), 1u);
  EXPECT_EQ(specs[1].unpacked[0].text, "**kw");
  ASSERT_TRUE(specs[1].config);
  EXPECT_EQ(specs[1].config->text, "cfg");
  ASSERT_EQ(specs[2].unpacked.size(), 1u);
  EXPECT_EQ(specs[2].unpacked[0].text, "*args");
  EXPECT_FALSE(specs[2].config);  // the config may be inside *args: not guessed
  EXPECT_TRUE(specs[3].unpacked.empty());
  EXPECT_FALSE(specs[3].may_set("rows_reason"));
  EXPECT_TRUE(specs[3].may_set("rows"));
}

TEST(FrontendDeclarations, FixedSpellingSynthesizesRowFields) {
  const auto f = analyze(R"PY(class E:
    def model_local_kv_specs(self):
        return [ModelLocalKVSpec(name="enc", rows=Fixed(1, because="one per session"))]
)PY");
  ASSERT_EQ(f.declarations.size(), 1u);
  const auto& spec = f.declarations[0].specs.at(0);
  EXPECT_EQ(spec.rows, RowsDriver::Fixed);
  ASSERT_NE(spec.field("rows_fixed"), nullptr);
  EXPECT_EQ(spec.field("rows_fixed")->value.literal_value, "1");
  ASSERT_NE(spec.field("rows_reason"), nullptr);
  EXPECT_EQ(spec.field("rows_reason")->value.literal_value, "one per session");
  EXPECT_FALSE(f.declarations[0].returns_empty_somewhere);
}

TEST(FrontendDeclarations, HelpersForwardsAndGuardsFromBoth) {
  const auto f = analyze(R"PY(class Holder(nn.Module):
    def model_local_kv_specs(self):
        specs = list(self.gen.model_local_kv_specs())
        if self.streaming:
            specs += self._encoder_specs()
        specs += collect_model_local_kv_specs(self.talker.inner)
        return specs
    def _encoder_specs(self):
        if self.encoder is None:
            return list()
        return [spec_from_hf_config(self.enc_config, name="enc")]
    def unrelated(self):
        return [spec_from_hf_config(self.x, name="never")]
)PY");
  ASSERT_EQ(f.declarations.size(), 1u);
  const auto& d = f.declarations[0];
  EXPECT_FALSE(d.returns_empty_somewhere);  // the helper's `return list()` is not the declaration's
  ASSERT_EQ(d.specs.size(), 1u);
  EXPECT_EQ(d.specs[0].field("name")->value.literal_value, "enc");
  EXPECT_TRUE(has_guard(d.specs[0].guards, facts::Guard::Origin::EarlyReturn, "self.encoder is None", true));
  EXPECT_TRUE(has_guard(d.specs[0].guards, facts::Guard::Origin::If, "self.streaming", false));
  ASSERT_EQ(d.forwards.size(), 2u);
  EXPECT_EQ(d.forwards[0].via_attribute, "gen");
  EXPECT_EQ(d.forwards[0].loc.line, 3u);
  EXPECT_EQ(d.forwards[1].via_attribute, "talker");
  EXPECT_TRUE(d.forwards[1].guards.empty());
}

TEST(FrontendDeclarations, RenamedProtocolNames) {
  facts::Vocabulary vocabulary;
  vocabulary.declaration_method = "kv_specs";
  vocabulary.spec_constructors = {"make_spec"};
  vocabulary.row_driver = "Rows";
  vocabulary.row_fixed = "ONE";
  const auto f = analyze(R"PY(class A:
    def kv_specs(self):
        return [make_spec(cfg, name="a", rows=Rows.ONE)]
    def model_local_kv_specs(self):
        return [spec_from_hf_config(cfg)]
)PY",
                         vocabulary);
  ASSERT_EQ(f.declarations.size(), 1u);
  ASSERT_EQ(f.declarations[0].specs.size(), 1u);
  EXPECT_EQ(f.declarations[0].specs[0].constructor, "make_spec");
  EXPECT_EQ(f.declarations[0].specs[0].rows, RowsDriver::Fixed);
  ASSERT_TRUE(f.declarations[0].specs[0].config.has_value());
  EXPECT_EQ(f.declarations[0].specs[0].config->text, "cfg");
}

}  // namespace
}  // namespace kvlint::frontend_test
