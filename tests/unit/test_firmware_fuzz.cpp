// SPDX-License-Identifier: Apache-2.0
// Fuzz-ish robustness of the firmware's frame handling with a fixed seed: corrupted and random
// input never crashes, never reads or writes out of bounds (run under ASan to see), and is always
// answered with a well-formed error frame.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "test_firmware_fake.h"
#include "tpuemu/fw/firmware.h"

namespace {

using tpuemu::testing::FakeCore;

std::vector<std::uint8_t> make_frame(std::uint8_t command, const std::vector<std::uint8_t>& payload,
                                     std::uint32_t seq) {
  std::vector<std::uint8_t> f(FW_HEADER_SIZE + payload.size());
  std::size_t n = 0;
  fw_frame_encode(FW_TYPE_REQUEST, command, 0, seq, payload.data(), payload.size(), f.data(),
                  f.size(), &n);
  return f;
}

std::vector<std::uint8_t> le(std::initializer_list<std::pair<std::uint64_t, int>> fields) {
  std::vector<std::uint8_t> out;
  for (auto [v, bytes] : fields)
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return out;
}

// A valid request of every command.
std::vector<std::vector<std::uint8_t>> valid_requests() {
  std::vector<std::vector<std::uint8_t>> v;
  std::uint32_t seq = 1;
  v.push_back(make_frame(FW_CMD_PING, {1, 2, 3}, seq++));
  v.push_back(make_frame(FW_CMD_INFO, {}, seq++));
  auto wm = le({{0x100, 8}, {16, 4}});
  wm.resize(wm.size() + 16, 0xAB);
  v.push_back(make_frame(FW_CMD_WRITE_MEM, wm, seq++));
  v.push_back(make_frame(FW_CMD_READ_MEM, le({{0x100, 8}, {64, 4}}), seq++));
  v.push_back(make_frame(FW_CMD_WRITE_SMEM, le({{4, 4}, {2, 4}, {7, 4}, {8, 4}}), seq++));
  v.push_back(make_frame(FW_CMD_READ_SMEM, le({{4, 4}, {2, 4}}), seq++));
  auto lp = le({{0x200, 8}, {32, 4}});
  lp.resize(lp.size() + 32, 0);
  v.push_back(make_frame(FW_CMD_LOAD_PROGRAM, lp, seq++));
  v.push_back(make_frame(FW_CMD_RUN, le({{0, 4}, {4096, 8}}), seq++));
  v.push_back(make_frame(FW_CMD_GET_STATE, {}, seq++));
  v.push_back(make_frame(FW_CMD_READ_COUNTERS, {}, seq++));
  v.push_back(make_frame(FW_CMD_SET_SEM, le({{3, 4}, {9, 4}}), seq++));
  v.push_back(make_frame(FW_CMD_RESET, {}, seq++));
  return v;
}

// Checks the response and returns its status.
int answer(const FakeCore& core, const std::vector<std::uint8_t>& in, std::size_t out_cap) {
  // Exact-size heap buffers, so ASan catches any access past either end.
  std::vector<std::uint8_t> in_copy(in);
  std::vector<std::uint8_t> out(out_cap);
  std::size_t n = 0;
  const int rc = fw_handle_frame(core.hal(), in_copy.empty() ? nullptr : in_copy.data(),
                                 in_copy.size(), out.data(), out.size(), &n);
  EXPECT_EQ(rc, 0);
  EXPECT_LE(n, out_cap);
  fw_frame_header h{};
  const std::uint8_t* payload = nullptr;
  EXPECT_EQ(fw_frame_decode(out.data(), n, FW_MAX_PAYLOAD, &h, &payload, nullptr, nullptr),
            static_cast<int>(FW_ST_OK));
  EXPECT_EQ(h.type, FW_TYPE_RESPONSE);
  if (h.status != FW_ST_OK) {
    EXPECT_EQ(h.payload_len, FW_ERROR_PAYLOAD_SIZE);
  }
  return h.status;
}

TEST(FirmwareFuzz, ValidRequestsSucceed) {
  FakeCore core(1 << 16);
  core.run_cycles = 100;
  for (const auto& f : valid_requests()) EXPECT_EQ(answer(core, f, FW_MAX_FRAME), 0);
}

TEST(FirmwareFuzz, CorruptedFramesAlwaysGetAnErrorFrame) {
  FakeCore core(1 << 16);
  core.run_cycles = 100;
  std::mt19937_64 rng(0x7470756575ull);  // fixed seed
  const auto requests = valid_requests();
  int errors = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<std::uint8_t> f = requests[rng() % requests.size()];
    const std::vector<std::uint8_t> original = f;
    const int kinds = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < kinds; ++k) {
      switch (rng() % 6) {
        case 0:  // flip one bit anywhere
          f[rng() % f.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
          break;
        case 1:  // truncate
          f.resize(rng() % f.size());
          break;
        case 2:  // append garbage
          for (std::size_t i = 0, n = 1 + rng() % 40; i < n; ++i)
            f.push_back(static_cast<std::uint8_t>(rng()));
          break;
        case 3:  // overwrite a random byte
          if (!f.empty()) f[rng() % f.size()] = static_cast<std::uint8_t>(rng());
          break;
        case 4:  // lie about the payload length
          if (f.size() >= FW_HEADER_SIZE)
            fw_put_u32(f.data() + FW_OFF_LENGTH, static_cast<std::uint32_t>(rng()));
          break;
        case 5:  // a different command byte
          if (f.size() >= FW_HEADER_SIZE) f[FW_OFF_COMMAND] = static_cast<std::uint8_t>(rng());
          break;
      }
      if (f.empty()) break;
    }
    if (f == original) continue;
    const std::size_t cap = (rng() % 4 == 0) ? FW_HEADER_SIZE + FW_ERROR_PAYLOAD_SIZE + rng() % 64
                                             : FW_MAX_FRAME;
    const int st = answer(core, f, cap);
    // Every change is covered by the CRC, the length or the header checks.
    EXPECT_NE(st, 0) << "iteration " << iter;
    errors += st != 0;
  }
  EXPECT_GT(errors, 15000);
}

TEST(FirmwareFuzz, RandomBytesAndRecomputedCrc) {
  // Frames with a correct CRC but random header fields and payloads reach the command decoders.
  FakeCore core(1 << 16);
  core.run_cycles = 10;
  std::mt19937_64 rng(12345);
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<std::uint8_t> payload(rng() % 48);
    for (auto& b : payload) b = static_cast<std::uint8_t>(rng() % 4 == 0 ? rng() : rng() % 3);
    const std::uint8_t cmd = static_cast<std::uint8_t>(rng() % 2 ? rng() : 0x10 + rng() % 0x16);
    std::vector<std::uint8_t> f(FW_HEADER_SIZE + payload.size());
    for (std::size_t i = 0; i < payload.size(); ++i) f[FW_HEADER_SIZE + i] = payload[i];
    fw_frame_finish(f.data(), FW_TYPE_REQUEST, cmd, 0, static_cast<std::uint32_t>(rng()),
                    static_cast<std::uint32_t>(payload.size()));
    answer(core, f, rng() % 2 ? FW_MAX_FRAME : FW_HEADER_SIZE + 64);
    // Pure noise, too.
    std::vector<std::uint8_t> noise(rng() % 64);
    for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
    EXPECT_NE(answer(core, noise, 256), 0);
  }
  EXPECT_EQ(core.bad_csr_accesses, 0);
}

}  // namespace
