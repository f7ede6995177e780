// SPDX-License-Identifier: Apache-2.0
// The firmware on a board's byte stream (TPUEMU_BOARD=host:port; tests/cli/rv32_qemu_test.sh
// runs it against the rv32 firmware in QEMU): what a stream without connections needs beyond the
// conformance subset - error frames for bad frames, the link taken up again after garbage or a
// frame cut short, and memory transfers split across many frames. Without TPUEMU_BOARD every test
// fails: the script always sets it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "raw_client.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/device/protocol.h"

namespace tpuemu {
namespace {

using testing_support::RawClient;
using namespace std::chrono_literals;

struct Board {
  std::string host;
  std::uint16_t port = 0;
};

Board board() {
  const char* b = std::getenv("TPUEMU_BOARD");
  if (b == nullptr) throw std::runtime_error("TPUEMU_BOARD=host:port is not set");
  const std::string s(b);
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("TPUEMU_BOARD must be host:port, got " + s);
  return {s.substr(0, colon), static_cast<std::uint16_t>(std::stoul(s.substr(colon + 1)))};
}

std::string backend() { return "remote://" + std::string(std::getenv("TPUEMU_BOARD") ? std::getenv("TPUEMU_BOARD") : ""); }

// A PING answered OK, retried while the firmware waits out the silence after garbage. A ping
// sent while it still drops bytes is dropped too and restarts its wait, so the attempts are
// spaced well beyond that silence (about a second in QEMU; more on a loaded machine).
bool pings_within(RawClient& c, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (std::uint32_t seq = 100; std::chrono::steady_clock::now() < end; ++seq) {
    c.request(FW_CMD_PING, seq, std::vector<std::uint8_t>{9, 8, 7});
    const auto a = c.read(6s);
    if (a && a->status == FW_ST_OK && a->seq == seq) return true;
  }
  return false;
}

TEST(BoardLink, BadCrcAndUnknownCommandsAreAnsweredAndTheLinkStays) {
  const Board b = board();
  RawClient c(b.port, b.host);
  // The link stays up through each error: every answer comes, in order, with its seq.
  auto a = c.call_with_bad_crc(FW_CMD_PING, 7, std::vector<std::uint8_t>{1, 2});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(std::pair(a->status, a->seq), std::pair(std::uint8_t{FW_ST_BAD_CRC}, 7u));
  // 0x7e is no command; a bare firmware has no session commands, so HELLO is unknown as well (the
  // client then falls back to protocol 1).
  for (const auto [command, seq] : {std::pair<std::uint8_t, std::uint32_t>{0x7e, 8}, {FW_CMD_HELLO, 9}}) {
    a = c.call(command, seq);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(std::pair(a->status, a->command), std::pair(std::uint8_t{FW_ST_UNKNOWN_COMMAND}, command));
  }
  a = c.call(FW_CMD_PING, 10, std::vector<std::uint8_t>{4});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_OK);
  EXPECT_EQ(a->payload, std::vector<std::uint8_t>{4});
}

TEST(BoardLink, UnusableHeaderIsAnsweredAndTheLinkIsTakenUpAfterSilence) {
  const Board b = board();
  RawClient c(b.port, b.host);
  std::vector<std::uint8_t> frame = protocol::encode_request(FW_CMD_PING, 5, std::vector<std::uint8_t>(40, 0xAB));
  frame[FW_OFF_MAGIC] = 0;
  c.write(frame);
  const auto a = c.read();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_MAGIC);
  std::this_thread::sleep_for(3s);  // the firmware drops the rest of the frame until the line is quiet
  EXPECT_TRUE(pings_within(c, 40s));
}

TEST(BoardLink, FrameCutShortIsAnsweredOnceTheLineFallsSilent) {
  const Board b = board();
  RawClient c(b.port, b.host);
  std::vector<std::uint8_t> frame = protocol::encode_request(FW_CMD_PING, 6, std::vector<std::uint8_t>(100, 0x5A));
  frame.resize(protocol::kHeaderSize + 10);  // the header promises 100 bytes, 10 come
  c.write(frame);
  const auto a = c.read(20s);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_LENGTH);
  EXPECT_TRUE(pings_within(c, 40s));
  // A header cut short: TRUNCATED, then the link serves again.
  c.write(std::span<const std::uint8_t>(protocol::encode_request(FW_CMD_PING, 11).data(), 9));
  const auto t = c.read(20s);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->status, FW_ST_TRUNCATED);
  EXPECT_TRUE(pings_within(c, 40s));
}

TEST(BoardLink, MemoryRoundTripsSplitAcrossFrames) {
  const Preset preset = load_preset("small");
  DeviceOptions o;
  o.max_chunk = 1024;  // a 20 000-byte transfer is 20 frames each way
  const auto device = open_device(backend(), preset, o);
  EXPECT_EQ(device->info().hbm_capacity, preset.hbm.capacity_bytes);
  std::mt19937 rng(17);
  const std::uint64_t cap = preset.hbm.capacity_bytes;
  for (const auto [size, addr] : {std::pair<std::size_t, std::uint64_t>{1, 0}, {7, 12345}, {4096, cap / 2 + 3},
                                  {20000, rng() % (cap - 20000)}, {64, cap - 64}}) {
    std::vector<std::uint8_t> data(size);
    for (auto& v : data) v = static_cast<std::uint8_t>(rng());
    device->write_hbm(addr, data);
    EXPECT_EQ(device->read_hbm(addr, size), data) << size << " bytes at " << addr;
  }
}

}  // namespace
}  // namespace tpuemu
