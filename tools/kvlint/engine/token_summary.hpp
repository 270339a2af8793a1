// A file's identifier tokens, kept compactly so the widening stage's text searches can be
// answered without the file's bytes: every maximal run of identifier bytes (is_identifier_byte),
// unique and sorted, as "\0tok1\0tok2\0...\0". A search whose needle's identifier runs are not
// all in the summary cannot match the bytes (each occurrence of a run lies inside one token),
// so "no" is exact; "maybe" is confirmed on the bytes.
#pragma once

#include <string>
#include <string_view>

#include "tools/kvlint/engine/needle_search.hpp"

namespace kvlint {

// The summary of `content`.
std::string token_summary(std::string_view content);

// Whether bytes summarised by `summary` may contain `needle` (where `start` lets it start):
// false only when they cannot.
bool summary_may_contain(std::string_view summary, std::string_view needle,
                         NeedleSearch::Start start = NeedleSearch::Start::Anywhere);

}  // namespace kvlint
