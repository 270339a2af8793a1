// Raw K/V whose evidence crosses classes: a class keeps an attention-shaped tensor and hands out
// views of it (facts::HeldTensorView: an arena's `att_cache_view()`, a slot pool's `rows()`), and
// another class hands that method's return on as attention K/V (facts::KvHandoff:
// `att_cache=arena.att_cache_view(b, n)`). The receiver's class is resolved as calls are
// (receiver_class: `self.arena` through the hop, annotation or parameter that types it); the
// owner's kept tensor then becomes a raw K/V cache site of the owner's file, with the hand-off
// as its evidence. The sites are the project's: release_files hands the files back without them.
#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::split_dotted;

void Project::join_raw_kv_handoffs() {
  struct Joined {
    std::size_t file = 0;
    CacheSite site;
  };
  std::vector<Joined> joined;
  // A call of a view's method in a file not analysed yet may hand it on.
  if (demand_)
    for (const FileFacts& file : files_)
      for (const HeldTensorView& view : file.held_tensor_views) demand_->mentioned(view.method);
  for (const FileFacts& file : files_)
    for (const KvHandoff& h : file.kv_handoffs) {
      const CodeRef from = code_at(file, h.owner_class, h.method);
      if (!from) continue;
      const std::string callee = h.receiver + "." + h.called;
      ClassRef type = h.receiver_class.empty() ? receiver_class(from, split_dotted(callee))
                                               : find_class(h.receiver_class, &file);
      const CodeRef method = type ? find_method(type, h.called) : CodeRef{};
      if (!method || !method.cls || method.cls == from.cls) continue;
      const FileFacts& owner_file = *method.cls.file;
      for (const HeldTensorView& view : owner_file.held_tensor_views) {
        if (view.method != h.called || view.site.owner_class != method.cls.cls->name) continue;
        const std::size_t index = static_cast<std::size_t>(&owner_file - files_.data());
        auto same = std::find_if(joined.begin(), joined.end(), [&](const Joined& j) {
          return j.file == index && j.site.loc == view.site.loc;
        });
        if (same == joined.end()) same = joined.insert(joined.end(), Joined{index, view.site});
        RawKv& kv = *same->site.raw_kv;
        // Named by the class and method that hand it on; the file too when it is another one,
        // since a finding's "at line N" reads as the owner's file.
        std::string by =
            "handed to attention as `" + h.keyword + "` by `" + h.owner_class + "." + h.method + "`";
        if (file.path != owner_file.path) {
          const std::string_view path = file.path;
          by += " in " + std::string(path.substr(path.rfind('/') + 1));
        }
        if (!kv.written_at) {
          kv.written_at = h.loc;
          kv.written_by = by;
        }
        kv.accesses.push_back(
            {RawKvAccess::Kind::Pass, h.owner_class + "." + h.method, h.loc, std::move(by)});
      }
    }
  if (joined.empty()) return;
  joined_from_.assign(files_.size(), 0);
  for (std::size_t i = 0; i < files_.size(); ++i) joined_from_[i] = files_[i].cache_sites.size();
  for (Joined& j : joined) files_[j.file].cache_sites.push_back(std::move(j.site));
  // The appended sites may have moved every site of their files: index them all again.
  auto& ix = *index_;
  ix.cache_sites.clear();
  for (const auto& file : files_)
    for (const auto& s : file.cache_sites)
      if (const ClassFact* c = class_of(file, s.owner_class).cls) ix.cache_sites[c].push_back(&s);
}

}  // namespace kvlint::facts
