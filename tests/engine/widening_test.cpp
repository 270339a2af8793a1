// The widening steps (engine/widen.cpp, WideningStep): each pulls in the file a question needs
// that the prefilter skipped or deferred, and not a look-alike that does not answer it; the run
// says which step pulled in which file (CheckResult::widened, `--verbose`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/engine/check_tree.hpp"
#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/project_run.hpp"

namespace kvlint {
namespace {

using kvlint::testing::TempDir;
using kvlint::testing::check_tree;
using ::testing::Contains;

// The step that pulled `file_name` in, or "" when no step did.
std::string widened_by(const CheckResult& result, std::string_view file_name) {
  for (const WidenedFile& w : result.widened)
    if (std::filesystem::path(w.path).filename() == file_name) return w.step;
  return "";
}

TEST(WideningSteps, EachIsRegisteredOnceWithItsQuestionTextAndFiles) {
  std::vector<std::string> names;
  for (const pipeline::WideningStep& step : pipeline::ProjectRun::widening_steps()) {
    EXPECT_FALSE(step.question.empty()) << step.name;
    EXPECT_FALSE(step.looks_for.empty()) << step.name;
    EXPECT_FALSE(step.analyses.empty()) << step.name;
    // The demand step runs between rule rounds (resolve_and_check.cpp); the others run themselves.
    EXPECT_EQ(step.run == nullptr, step.when == pipeline::WideningStep::When::RulesAsk) << step.name;
    names.emplace_back(step.name);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("capture-holders", "kv-store-holders", "bases",
                                            "cache-subclasses", "demand"));
}

// A class that captures a CUDA graph (a seed) and a module in a file naming no anchor that
// builds it only when not eager: the gate is there.
TEST(WideningSteps, CaptureHoldersPullInTheFileBuildingACapturingClass) {
  TempDir dir;
  dir.write("wrapper.py",
            "import torch\n"
            "class GraphWrapper:\n"
            "    def warmup(self, fn):\n"
            "        graph = torch.cuda.CUDAGraph()\n"
            "        with torch.cuda.graph(graph):\n"
            "            fn()\n");
  dir.write("holder.py",
            "from torch import nn\n"
            "from .wrapper import GraphWrapper\n"
            "class Codec(nn.Module):\n"
            "    def load(self, eager):\n"
            "        self.wrapper = None if eager else GraphWrapper()\n");
  // Builds a class whose name ends like the capturing one's: not a construction of it.
  dir.write("other.py",
            "class Codec2:\n"
            "    def load(self):\n"
            "        self.wrapper = MyGraphWrapper()\n");
  const CheckResult result = check_tree(dir);
  EXPECT_EQ(widened_by(result, "holder.py"), "capture-holders");
  EXPECT_EQ(widened_by(result, "other.py"), "");
  // What --verbose prints.
  EXPECT_THAT(result.details,
              Contains(::testing::AllOf(::testing::StartsWith("widening step capture-holders analysed "),
                                        ::testing::EndsWith("holder.py"))));
}

// A base class defined in a file with no anchor is analysed so inheritance resolves; a file
// defining another class is not.
TEST(WideningSteps, BasesPullInTheFileDefiningABaseClass) {
  TempDir dir;
  dir.write("decoder.py",
            "from transformers import DynamicCache\n"
            "from .base import DecoderBase\n"
            "class Decoder(DecoderBase):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.cache = DynamicCache()\n");
  dir.write("base.py",
            "from torch import nn\n"
            "class DecoderBase(nn.Module):\n"
            "    pass\n");
  dir.write("other.py",
            "class EncoderBase:\n"
            "    pass\n");
  const CheckResult result = check_tree(dir);
  EXPECT_EQ(widened_by(result, "base.py"), "bases");
  EXPECT_EQ(widened_by(result, "other.py"), "");
}

// A cache class the project defines joins the vocabulary: a file building it (which names no
// vocabulary class) is analysed; one building a class it is a suffix of is not.
TEST(WideningSteps, CacheSubclassesPullInTheFileNamingTheProjectsCacheClass) {
  TempDir dir;
  dir.write("cache.py",
            "from transformers import DynamicCache\n"
            "class RollingKV(DynamicCache):\n"
            "    pass\n"
            "def fallback():\n"
            "    return DynamicCache()\n");
  dir.write("model.py",
            "from torch import nn\n"
            "from .cache import RollingKV\n"
            "class Model(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.kv = RollingKV()\n");
  dir.write("other.py",
            "class Other:\n"
            "    def __init__(self):\n"
            "        self.kv = Rolling()\n");
  const CheckResult result = check_tree(dir);
  EXPECT_EQ(widened_by(result, "model.py"), "cache-subclasses");
  EXPECT_EQ(widened_by(result, "other.py"), "");
}

// A class that builds a cache and is no module; the module holding it names `use_cache` only as
// a parameter (deferred: context only). KV101 asks who holds the class: that file is analysed,
// another deferred file is not.
TEST(WideningSteps, DemandPullsInTheDeferredFileARuleAsksFor) {
  TempDir dir;
  dir.write("generator.py",
            "from transformers import StaticCache\n"
            "class AudioGenerator:\n"
            "    def __init__(self, config):\n"
            "        self.cache = StaticCache(config=config, max_batch_size=1, max_cache_len=2048)\n");
  dir.write("talker.py",
            "from torch import nn\n"
            "from .generator import AudioGenerator\n"
            "class Talker(nn.Module):\n"
            "    def __init__(self, config):\n"
            "        super().__init__()\n"
            "        self.gen = AudioGenerator(config)\n"
            "    def forward(self, x, use_cache=False):\n"
            "        return self.gen(x, use_cache=use_cache)\n");
  dir.write("config.py",
            "class TalkerConfig:\n"
            "    def __init__(self, use_cache=True):\n"
            "        self.use_cache = use_cache\n");
  const CheckResult result = check_tree(dir);
  EXPECT_EQ(widened_by(result, "talker.py"), "demand");
  EXPECT_EQ(widened_by(result, "config.py"), "");
  EXPECT_EQ(result.stats.files_deferred, 1u);  // config.py
}

#ifdef KVLINT_TEST_HAS_CPP_FRONTEND
// A C++ class that keeps K/V and is no module, and a module holding it through an owning
// pointer in a header that names no anchor; a header holding another class is not analysed.
TEST(WideningSteps, KvStoreHoldersPullInTheCppFileHoldingAKvStore) {
  TempDir dir;
  dir.write("layer_kv.h",
            "#pragma once\n"
            "#include <torch/torch.h>\n"
            "struct LayerKV {\n"
            "  LayerKV(int64_t b, int64_t h, int64_t p, int64_t d)\n"
            "      : keys(torch::zeros({b, h, p, d})), values(torch::zeros({b, h, p, d})) {}\n"
            "  torch::Tensor keys;\n"
            "  torch::Tensor values;\n"
            "};\n");
  dir.write("attention.h",
            "#pragma once\n"
            "#include <memory>\n"
            "#include <torch/torch.h>\n"
            "#include \"layer_kv.h\"\n"
            "class Attention : public torch::nn::Module {\n"
            " private:\n"
            "  std::shared_ptr<LayerKV> store_;\n"
            "};\n");
  dir.write("other.h",
            "#pragma once\n"
            "#include <memory>\n"
            "struct OtherState {};\n"
            "class Other {\n"
            "  std::shared_ptr<OtherState> store_;\n"
            "};\n");
  const CheckResult result = check_tree(dir);
  EXPECT_EQ(widened_by(result, "attention.h"), "kv-store-holders");
  EXPECT_EQ(widened_by(result, "other.h"), "");
}
#endif

}  // namespace
}  // namespace kvlint
