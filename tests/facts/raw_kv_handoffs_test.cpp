// Project::join_raw_kv_handoffs (analyzers/facts/project_raw_kv_handoffs.cpp): a kept tensor one
// class hands out as a view becomes raw K/V where another class hands that view to attention.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/python/python_frontend.hpp"

namespace kvlint::facts {
namespace {

constexpr std::string_view kArena = R"PY(import torch
class Arena:
    def __init__(self, n_timesteps, depth, heads, width):
        self.n_timesteps, self.depth, self.heads, self.att_width = n_timesteps, depth, heads, width
        self._att = None
    def att_cache_view(self, batch_size, frames):
        storage = self._att
        if storage is None:
            storage = torch.zeros(self.n_timesteps, self.depth, 2 * batch_size, self.heads, frames, self.att_width)
            self._att = storage
        return storage[:, :, : 2 * batch_size]
)PY";

std::vector<FileFacts> files_with_wrapper(std::string_view wrapper) {
  std::vector<FileFacts> files;
  files.push_back(python::analyze("pkg/arena.py", kArena, {}, "pkg.arena"));
  files.push_back(python::analyze("pkg/graphs.py", wrapper, {}, "pkg.graphs"));
  return files;
}

const CacheSite* raw_site_of(const Project& project, std::string_view owner) {
  for (const auto& file : project.files())
    for (const auto& s : file.cache_sites)
      if (s.owner_class == owner && s.raw_kv) return &s;
  return nullptr;
}

TEST(ProjectRawKvHandoffs, AViewHandedToAttentionByAHolderMakesTheOwnersTensorRawKv) {
  Project project(files_with_wrapper(R"PY(from .arena import Arena
class Wrapper:
    def __init__(self, estimator):
        self.arena = Arena(10, 4, 8, 128)
    def capture(self, b, n):
        arena = self.arena
        return self.estimator(att_cache=arena.att_cache_view(b, n))
)PY"),
                  Vocabulary{});
  const CacheSite* site = raw_site_of(project, "Arena");
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->loc.file, "pkg/arena.py");
  EXPECT_EQ(site->loc.line, 9u);
  EXPECT_EQ(site->raw_kv->members, (std::vector<std::string>{"_att"}));
  ASSERT_TRUE(site->raw_kv->written_at);
  EXPECT_EQ(site->raw_kv->written_at->file, "pkg/graphs.py");
  EXPECT_EQ(site->raw_kv->written_at->line, 7u);
  EXPECT_EQ(site->raw_kv->written_by, "handed to attention as `att_cache` by `Wrapper.capture` in graphs.py");
  ASSERT_EQ(site->raw_kv->accesses.size(), 1u);
  EXPECT_EQ(site->raw_kv->accesses[0].kind, RawKvAccess::Kind::Pass);
  EXPECT_EQ(site->raw_kv->accesses[0].method, "Wrapper.capture");
  // The joined site is the project's reading: the files come back as the front end gave them.
  const std::vector<FileFacts> back = std::move(project).release_files();
  EXPECT_TRUE(back[0].cache_sites.empty());
}

TEST(ProjectRawKvHandoffs, AnAnnotatedHolderAttributeTypesTheReceiver) {
  Project project(files_with_wrapper(R"PY(from .arena import Arena
class Wrapper:
    def __init__(self):
        self.arena: Arena | None = None
    def capture(self, b, n):
        return self.estimator(kv_cache=self.arena.att_cache_view(b, n))
)PY"),
                  Vocabulary{});
  EXPECT_NE(raw_site_of(project, "Arena"), nullptr);
}

TEST(ProjectRawKvHandoffs, AViewHandedOnAsAMaskOrFromAnUnknownReceiverStaysSilent) {
  Project project(files_with_wrapper(R"PY(from .arena import Arena
class Wrapper:
    def __init__(self):
        self.arena = Arena(10, 4, 8, 128)
    def capture(self, b, n, other):
        self.estimator(attn_mask=self.arena.att_cache_view(b, n))
        return self.estimator(att_cache=other.att_cache_view(b, n))
)PY"),
                  Vocabulary{});
  EXPECT_EQ(raw_site_of(project, "Arena"), nullptr);
}

}  // namespace
}  // namespace kvlint::facts
