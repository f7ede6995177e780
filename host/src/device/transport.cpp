// SPDX-License-Identifier: Apache-2.0
// In-process transport: frames go straight into the firmware's command processor.
#include <fmt/format.h>

#include "tpuemu/device/device.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/fw/firmware.h"

namespace tpuemu {

InProcessTransport::InProcessTransport(const fw_hal* hal, std::string name)
    : hal_(hal),
      name_(std::move(name)),
      buffer_(new std::uint8_t[protocol::kMaxFrame]) {  // not zeroed: the firmware writes it
  if (hal_ == nullptr) throw Error("device", "in-process transport needs a firmware HAL");
}

void InProcessTransport::send(std::span<const std::uint8_t> frame) {
  have_response_ = false;
  std::size_t n = 0;
  const int rc = fw_handle_frame(hal_, frame.data(), frame.size(), buffer_.get(),
                                 protocol::kMaxFrame, &n);
  after_frame();
  if (rc != 0)
    throw Error("device", fmt::format("{}: the firmware produced no response", name_));
  response_size_ = n;
  have_response_ = true;
}

std::vector<std::uint8_t> InProcessTransport::receive() {
  const auto frame = receive_view();
  return {frame.begin(), frame.end()};
}

std::span<const std::uint8_t> InProcessTransport::receive_view() {
  if (!have_response_)
    throw Error("device", fmt::format("{}: receive without a pending request", name_));
  have_response_ = false;
  return {buffer_.get(), response_size_};
}

}  // namespace tpuemu
