// Hand-built-facts tests for KV501 and KV502.
#include <gtest/gtest.h>

#include "kv_spec_test_support.hpp"

namespace {

using namespace kvtest;
using kvlint::facts::ProtocolUse;

TEST(KV501, EveryCapacitySourceBranch) {
  FileBuilder f("runner.py");
  f.cls("OmniGPUModelRunner");
  f.use(ProtocolUse::Kind::CapacitySourceBranch, "OmniGPUModelRunner", "load_model", 12,
        "spec.capacity_source == \"max_model_len\"");
  f.use(ProtocolUse::Kind::CapacitySourceBranch, "", "summarize", 30, "\"sliding\" in s.capacity_source");
  f.use(ProtocolUse::Kind::ScopeDerivedRows, "", "summarize", 31, "spec.scope");
  auto findings = run_rule("KV501", {f.build()});
  EXPECT_EQ(lines_of(findings), (std::vector<uint32_t>{12, 30}));
  EXPECT_EQ(findings[0].owner_class, "OmniGPUModelRunner");
  EXPECT_NE(findings[0].message.find("`OmniGPUModelRunner.load_model`"), std::string::npos);
  EXPECT_NE(findings[0].message.find("diagnostic text"), std::string::npos);
}

TEST(KV502, CollectorReadingRunnableWithoutUnwrap) {
  FileBuilder f("collect.py");
  auto& bad = f.use(ProtocolUse::Kind::Collector, "", "collect_model_local_kv_specs", 5,
                    "getattr(model, \"runnable\", None)");
  bad.reads_runnable = true;
  bad.walks_named_modules = true;
  auto& good = f.use(ProtocolUse::Kind::Collector, "", "collect_unwrapped", 20, "model.runnable");
  good.reads_runnable = true;
  good.calls_unwrap = true;
  auto& plain = f.use(ProtocolUse::Kind::Collector, "", "collect_plain", 30, "model.named_modules()");
  plain.walks_named_modules = true;
  auto findings = run_rule("KV502", {f.build()});
  EXPECT_EQ(lines_of(findings), (std::vector<uint32_t>{5}));
  EXPECT_NE(findings[0].message.find("unwrap()"), std::string::npos);
  EXPECT_NE(findings[0].message.find("twice"), std::string::npos);
}

}  // namespace
