// SPDX-License-Identifier: Apache-2.0
// Internal: the usual lambda-overload set for std::visit.
#pragma once

namespace tpuemu::detail {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
// Clang 14 has no aggregate CTAD yet.
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace tpuemu::detail
