// Following code across the project: what a call runs, the class an attribute or a
// parameter holds, what a capture reaches, and who builds or enables a class. Facts come
// from the real Python front end over small sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/python/python_frontend.hpp"

namespace kvlint::facts {
namespace {

Project project_of(std::vector<std::pair<std::string, std::string>> sources) {
  std::vector<FileFacts> files;
  for (auto& [module, source] : sources) {
    std::string path = module;
    std::replace(path.begin(), path.end(), '.', '/');
    files.push_back(python::analyze(path + ".py", source, Vocabulary{}, module));
  }
  return Project(std::move(files), Vocabulary{});
}

const CaptureSite& only_capture(const Project& p, const FileFacts** file = nullptr) {
  for (const auto& f : p.files())
    if (!f.captures.empty()) {
      if (file) *file = &f;
      return f.captures.front();
    }
  throw std::runtime_error("no capture");
}

constexpr const char* kMimo = R"PY(import torch
from transformers import DynamicCache

class LocalDecodeCudaGraph:
    @classmethod
    def capture(cls, model, batch_size):
        with torch.cuda.graph(g):
            out = model.base_local_forward(batch_size)
        return cls()

class AudioLLM(torch.nn.Module):
    def __init__(self, config):
        self.graphs_by_bs = {}
        if torch.cuda.is_available():
            self.graphs_by_bs[1] = LocalDecodeCudaGraph.capture(self, batch_size=1)

    def base_local_forward(self, bs):
        return self._decode(bs)

    def _decode(self, bs):
        past = DynamicCache()
        return past
)PY";

TEST(FollowingCode, AParameterTakesTheClassItsCallersPass) {
  const Project p = project_of({{"pkg.mimo", kMimo}});
  const FileFacts* file = nullptr;
  const CaptureSite& capture = only_capture(p, &file);
  const CodeRef at = p.code_at(*file, capture.owner_class, capture.method);
  ASSERT_TRUE(at);
  const ClassRef model = p.parameter_class(at, "model");
  ASSERT_TRUE(model);
  EXPECT_EQ(model.cls->name, "AudioLLM");
  EXPECT_FALSE(p.parameter_class(at, "batch_size"));
}

TEST(FollowingCode, ACaptureReachesTheCacheItsCalleesBuild) {
  const Project p = project_of({{"pkg.mimo", kMimo}});
  const FileFacts* file = nullptr;
  const CaptureSite& capture = only_capture(p, &file);
  const auto writes = p.kv_reached_by(*file, capture);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].kind, KvWrite::Kind::BuildsCache);
  EXPECT_EQ(writes[0].holder.cls->name, "AudioLLM");
  EXPECT_EQ(writes[0].where.method->name, "_decode");  // two calls deep
  EXPECT_EQ(writes[0].entry, "model.base_local_forward");
  EXPECT_EQ(writes[0].through_parameter, "model");
  ASSERT_TRUE(writes[0].parameter_class);
  EXPECT_EQ(writes[0].parameter_class.cls->name, "AudioLLM");
}

TEST(FollowingCode, NothingReachedWhenTheCapturedCodeHoldsNoKV) {
  const Project p = project_of({{"pkg.vocoder", R"PY(import torch
from transformers import DynamicCache

class Vocoder(torch.nn.Module):
    def forward(self, mel):
        return self.conv(mel)

    def unrelated(self):
        return DynamicCache()

class Heads(torch.nn.Module):
    def __init__(self):
        self.vocoder = Vocoder()
        with torch.cuda.graph(g):
            self.vocoder(mel)
)PY"}});
  const FileFacts* file = nullptr;
  const CaptureSite& capture = only_capture(p, &file);
  EXPECT_TRUE(p.kv_reached_by(*file, capture).empty());
}

TEST(FollowingCode, HeldModulesAndAnnotatedParametersAcrossFiles) {
  const Project p = project_of({{"pkg.decoder", R"PY(import torch

class Decoder(torch.nn.Module):
    def forward(self, codes, caches):
        return self.pre_transformer(codes, past_key_values=caches.get("kv"), use_cache=True)
)PY"},
                                {"pkg.wrapper", R"PY(import torch
from .decoder import Decoder

class GraphWrapper:
    def __init__(self, decoder: "Decoder | None"):
        self.decoder = decoder

    def warmup(self):
        with torch.cuda.graph(g):
            self.decoder(codes, caches)
)PY"}});
  const FileFacts* file = nullptr;
  const CaptureSite& capture = only_capture(p, &file);
  const ClassRef wrapper = p.class_of(*file, "GraphWrapper");
  ASSERT_TRUE(wrapper);
  const ClassRef held = p.attribute_class(wrapper, "decoder");
  ASSERT_TRUE(held);
  EXPECT_EQ(held.cls->name, "Decoder");
  const auto writes = p.kv_reached_by(*file, capture);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].kind, KvWrite::Kind::WritesCache);
  EXPECT_EQ(writes[0].callee, "self.pre_transformer");
  EXPECT_TRUE(writes[0].through_parameter.empty());
  // Handed it, not built: a parameter holder, outside holders() and coverage().
  EXPECT_TRUE(p.holders(held).empty());
  const auto handed = p.parameter_holders(held);
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].holder.cls->name, "GraphWrapper");
  EXPECT_EQ(handed[0].hop->attribute, "decoder");
  const auto closure = p.owned_closure(wrapper);
  EXPECT_NE(std::find(closure.begin(), closure.end(), held), closure.end());
}

TEST(FollowingCode, InvocationsAndSelfCallers) {
  const Project p = project_of({{"pkg.code2wav", R"PY(import torch

class Wrapper:
    def warmup(self):
        self._capture()

    def _capture(self):
        with torch.cuda.graph(g):
            self.step()

class Decoder(torch.nn.Module):
    def enable(self):
        self.wrapper = Wrapper()
        self.wrapper.warmup()

class Code2Wav(torch.nn.Module):
    def __init__(self, config):
        self.decoder = Decoder._from_config(config)

    def load_weights(self, weights):
        if self.enforce_eager:
            return
        self.decoder.enable()
)PY"}});
  const FileFacts& file = p.files().front();
  const ClassRef wrapper = p.class_of(file, "Wrapper");
  const ClassRef decoder = p.class_of(file, "Decoder");
  auto callers = p.self_callers(wrapper, "_capture");
  std::sort(callers.begin(), callers.end());
  EXPECT_EQ(callers, (std::vector<std::string>{"_capture", "warmup"}));
  const auto into_wrapper = p.invocations_of(wrapper, "warmup");
  ASSERT_EQ(into_wrapper.size(), 1u);
  EXPECT_EQ(into_wrapper[0].caller.cls.cls->name, "Decoder");
  const auto into_decoder = p.invocations_of(decoder, "enable");
  ASSERT_EQ(into_decoder.size(), 1u);
  EXPECT_EQ(into_decoder[0].caller.method->name, "load_weights");
  ASSERT_EQ(into_decoder[0].call->guards.size(), 1u);
  EXPECT_EQ(into_decoder[0].call->guards[0].condition.text, "self.enforce_eager");
  const auto built = p.constructions_of(decoder);
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].by.cls->name, "Code2Wav");
  EXPECT_EQ(built[0].construction->factory, "_from_config");
}

}  // namespace
}  // namespace kvlint::facts
