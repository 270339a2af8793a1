// Whether this binary is a sanitizer build (scripts/test-sanitizers): GCC says so by macro, Clang
// by __has_feature. The CLI frees everything before exiting there, so the leak checker sees a
// whole run; time-bounded tests scale their bounds.
#pragma once

namespace kvlint {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

}  // namespace kvlint
