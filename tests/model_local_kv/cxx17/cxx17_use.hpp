// Functions compiled as C++17 against the declaration header (see cxx17_use.cpp).
#pragma once

#include <cstdint>

std::int64_t cxx17_talker_bytes_per_row();
bool cxx17_fixed_without_reason_throws();
