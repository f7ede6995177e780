// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/base/stop.h"

#include <fmt/format.h>

namespace tpuemu {

void StopToken::throw_if_requested(std::string_view work) const {
  if (requested()) throw Interrupted(fmt::format("interrupted during {}; nothing was written", work));
}

}  // namespace tpuemu
