// Which observations are one cache. The C++ host (runtime/host) names the class and the data
// members a cache's memory is stored in; the lines it reports are where the plugin binary, built
// from some revision of the source, allocated. Those lines move with every edit above them, the
// owner and members do not: observations that name members are one cache when they name the same
// ones, and only those without members (the Python harness, a host without debug information) fall
// back to their creation site.
#pragma once

#include <string>

#include "tools/kvlint/confirm/protocol.hpp"

namespace kvlint::confirm {

// Whether `a` and `b` (say, one path at two concurrencies) observed the same cache.
bool same_observed_cache(const CacheEvent& a, const CacheEvent& b);

// A key equal for observations of one cache (for one report per cache): the owner and members when
// the cache names members, else `canonical_file`:line.
std::string observed_cache_key(const CacheEvent& cache, const std::string& canonical_file);

}  // namespace kvlint::confirm
