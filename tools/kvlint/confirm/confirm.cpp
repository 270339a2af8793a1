// TODO(runtime): placeholder until the runtime companion lands.
#include "tools/kvlint/confirm/confirm.hpp"

#include <cstdio>

namespace kvlint {

int run_confirm(const ConfirmOptions&) {
  std::fputs("kvlint confirm: not implemented yet\n", stderr);
  return 2;
}

}  // namespace kvlint
