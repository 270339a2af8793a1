// Functions compiled as C++17 against the declaration header (see cxx17_use.cpp).
#pragma once

#include <cstdint>

std::int64_t cxx17_talker_bytes_per_row();
bool cxx17_fixed_without_reason_throws();
// The declared_line spec_from_config records under C++17, and the line of that call.
std::uint32_t cxx17_spec_from_config_line();
std::uint32_t cxx17_spec_from_config_expected_line();
