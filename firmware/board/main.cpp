// SPDX-License-Identifier: Apache-2.0
// The board firmware's frame loop: a request frame from the host link, answered by the command
// processor (fw_handle_frame), the response back on the link; forever.
//
// A UART has no connection to open or close, so the loop resynchronises on silence:
// - a header the processor cannot trust (bad magic or version, a length beyond FW_MAX_PAYLOAD) is
//   answered from its 20 bytes alone, as `tpuemu serve` does before it closes the connection,
//   and what follows is dropped until the line has been idle for a while;
// - a header or payload that stops coming (the host gave up, or lost bytes) is answered as the
//   frame it is (TRUNCATED, or BAD_LENGTH: fewer bytes than its header says) once the line has
//   been idle as long.
// Either way the next byte after the silence starts a new header, so a host that gave up can
// open the link again (remote:// reconnecting to the serial port) and be understood.
#include "board.h"
#include "board_hal.h"
#include "tpuemu/fw/firmware.h"

namespace {

// Polls of an idle receiver after which the link counts as silent (about a second in QEMU, far
// longer than any gap inside a frame the host sends at once).
constexpr uint32_t kSilencePolls = 1000000;

uint8_t request[FW_MAX_FRAME];
uint8_t response[FW_MAX_FRAME];

// Reads into request[] until it holds `want` bytes or the line falls silent; returns the length.
size_t receive_until(size_t len, size_t want) {
  while (len < want && board_link_get_within(kSilencePolls, &request[len]) != 0) ++len;
  return len;
}

void drop_until_silence() {
  uint8_t ignored = 0;
  while (board_link_get_within(kSilencePolls, &ignored) != 0) {
  }
}

}  // namespace

extern "C" int main() {
  board_link_init();
  const fw_hal* hal = board_hal();
  for (;;) {
    request[0] = board_link_get();
    size_t len = receive_until(1, FW_HEADER_SIZE);
    fw_frame_header h{};
    const int header = len < FW_HEADER_SIZE
                           ? static_cast<int>(FW_ST_TRUNCATED)  // answered as such below
                           : fw_header_check(request, FW_HEADER_SIZE, FW_MAX_PAYLOAD, &h, nullptr, nullptr);
    if (header == static_cast<int>(FW_ST_OK)) len = receive_until(len, FW_HEADER_SIZE + h.payload_len);
    size_t out_len = 0;
    if (fw_handle_frame(hal, request, len, response, sizeof response, &out_len) == 0) {
      board_link_put(response, out_len);
    }
    if (header != static_cast<int>(FW_ST_OK) && len == FW_HEADER_SIZE) drop_until_silence();
  }
}
