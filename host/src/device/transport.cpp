// In-process transport: frames go straight into the firmware's command processor.
#include <fmt/format.h>

#include "tpuemu/device.h"
#include "tpuemu/fw/firmware.h"
#include "tpuemu/protocol.h"

namespace tpuemu {

InProcessTransport::InProcessTransport(const fw_hal* hal, std::string name)
    : hal_(hal), name_(std::move(name)) {
  if (hal_ == nullptr) throw Error("device", "in-process transport needs a firmware HAL");
}

void InProcessTransport::send(std::span<const std::uint8_t> frame) {
  response_.resize(protocol::kMaxFrame);
  std::size_t n = 0;
  have_response_ = false;
  const int rc = fw_handle_frame(hal_, frame.data(), frame.size(), response_.data(),
                                 response_.size(), &n);
  after_frame();
  if (rc != 0)
    throw Error("device", fmt::format("{}: the firmware produced no response", name_));
  response_.resize(n);
  have_response_ = true;
}

std::vector<std::uint8_t> InProcessTransport::receive() {
  if (!have_response_)
    throw Error("device", fmt::format("{}: receive without a pending request", name_));
  have_response_ = false;
  std::vector<std::uint8_t> out;
  out.swap(response_);
  return out;
}

}  // namespace tpuemu
