// SPDX-License-Identifier: Apache-2.0
// The firmware's command processor against a fake core (test_firmware_fake.h): every command, and
// every class of malformed request answered by the right error frame.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_firmware_fake.h"
#include "tpuemu/fw/firmware.h"

namespace {

using tpuemu::testing::FakeCore;

struct Bytes {
  std::vector<std::uint8_t> b;
  Bytes& u32(std::uint32_t v) {
    b.resize(b.size() + 4);
    fw_put_u32(b.data() + b.size() - 4, v);
    return *this;
  }
  Bytes& u64(std::uint64_t v) {
    b.resize(b.size() + 8);
    fw_put_u64(b.data() + b.size() - 8, v);
    return *this;
  }
  Bytes& raw(const std::vector<std::uint8_t>& v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
};

std::vector<std::uint8_t> frame(std::uint8_t command, const std::vector<std::uint8_t>& payload,
                                std::uint32_t seq = 7, std::uint8_t type = FW_TYPE_REQUEST) {
  std::vector<std::uint8_t> f(FW_HEADER_SIZE + payload.size());
  std::size_t n = 0;
  EXPECT_EQ(fw_frame_encode(type, command, 0, seq, payload.data(), payload.size(), f.data(),
                            f.size(), &n),
            static_cast<int>(FW_ST_OK));
  EXPECT_EQ(n, f.size());
  return f;
}

struct Response {
  fw_frame_header h{};
  std::vector<std::uint8_t> payload;
  std::uint64_t detail0 = 0;
  std::uint64_t detail1 = 0;
  std::uint32_t u32(std::size_t off) const { return fw_get_u32(payload.data() + off); }
  std::uint64_t u64(std::size_t off) const { return fw_get_u64(payload.data() + off); }
};

// Runs one frame through the firmware; the answer must always be a well-formed response frame.
Response handle(const FakeCore& core, const std::uint8_t* in, std::size_t in_len,
                std::size_t out_cap = FW_MAX_FRAME) {
  std::vector<std::uint8_t> out(out_cap);
  std::size_t n = 12345;
  EXPECT_EQ(fw_handle_frame(core.hal(), in, in_len, out.data(), out.size(), &n), 0);
  Response r;
  const std::uint8_t* payload = nullptr;
  std::uint64_t d0 = 0, d1 = 0;
  EXPECT_LE(n, out_cap);
  EXPECT_EQ(fw_frame_decode(out.data(), n, FW_MAX_PAYLOAD, &r.h, &payload, &d0, &d1),
            static_cast<int>(FW_ST_OK));
  EXPECT_EQ(r.h.type, FW_TYPE_RESPONSE);
  if (payload) r.payload.assign(payload, payload + r.h.payload_len);
  if (r.h.status != FW_ST_OK) {
    EXPECT_EQ(r.payload.size(), FW_ERROR_PAYLOAD_SIZE);
    if (r.payload.size() == FW_ERROR_PAYLOAD_SIZE) {
      r.detail0 = r.u64(0);
      r.detail1 = r.u64(8);
    }
  }
  return r;
}

Response call(const FakeCore& core, std::uint8_t command, const std::vector<std::uint8_t>& payload,
              std::uint32_t seq = 7, std::size_t out_cap = FW_MAX_FRAME) {
  const auto f = frame(command, payload, seq);
  Response r = handle(core, f.data(), f.size(), out_cap);
  EXPECT_EQ(r.h.seq, seq);
  EXPECT_EQ(r.h.command, command);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

TEST(Firmware, PingEchoesPayloadAndSequence) {
  FakeCore core;
  const std::vector<std::uint8_t> data = {1, 2, 3, 250, 0, 9};
  Response r = call(core, FW_CMD_PING, data, 0xA1B2C3D4u);
  EXPECT_EQ(r.h.status, FW_ST_OK);
  EXPECT_EQ(r.h.seq, 0xA1B2C3D4u);
  EXPECT_EQ(r.payload, data);
  EXPECT_EQ(call(core, FW_CMD_PING, {}).payload.size(), 0u);
}

TEST(Firmware, InfoReportsIdConfigVersionsAndLimits) {
  FakeCore core;
  Response r = call(core, FW_CMD_INFO, {});
  ASSERT_EQ(r.h.status, FW_ST_OK);
  ASSERT_EQ(r.payload.size(), FW_INFO_SIZE);
  EXPECT_EQ(r.u32(0), 0x54505545u);
  EXPECT_EQ(r.u32(4), core.config);
  EXPECT_EQ(r.u32(8), FW_VERSION);
  EXPECT_EQ(r.u32(12), FW_PROTOCOL_VERSION);
  EXPECT_EQ(r.u32(16), FW_MAX_PAYLOAD);
  EXPECT_EQ(r.u32(20), FW_MAX_CHUNK);
  EXPECT_EQ(r.u32(24), 32u);
  EXPECT_EQ(r.u32(28), 23u);
  EXPECT_EQ(r.u64(32), core.mem.size());
  EXPECT_EQ(r.u32(40), 0u);
  EXPECT_EQ(r.u32(44), FW_RUN_POLL_SLICE);
  EXPECT_EQ(r.u32(48), core.smem.size());
  EXPECT_EQ(core.bad_csr_accesses, 0);
}

TEST(Firmware, WriteThenReadMemory) {
  FakeCore core;
  std::vector<std::uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  Response w = call(core, FW_CMD_WRITE_MEM, Bytes().u64(0x1230).u32(1000).raw(data).b);
  ASSERT_EQ(w.h.status, FW_ST_OK);
  ASSERT_EQ(w.payload.size(), 12u);
  EXPECT_EQ(w.u64(0), 0x1230u);
  EXPECT_EQ(w.u32(8), 1000u);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), core.mem.begin() + 0x1230));

  Response r = call(core, FW_CMD_READ_MEM, Bytes().u64(0x1230).u32(1000).b);
  ASSERT_EQ(r.h.status, FW_ST_OK);
  ASSERT_EQ(r.payload.size(), 12u + 1000u);
  EXPECT_EQ(r.u64(0), 0x1230u);
  EXPECT_EQ(r.u32(8), 1000u);
  EXPECT_EQ(std::vector<std::uint8_t>(r.payload.begin() + 12, r.payload.end()), data);

  // Zero-length transfers are allowed and touch nothing.
  EXPECT_EQ(call(core, FW_CMD_WRITE_MEM, Bytes().u64(0).u32(0).b).h.status, FW_ST_OK);
  EXPECT_EQ(call(core, FW_CMD_READ_MEM, Bytes().u64(0).u32(0).b).payload.size(), 12u);
}

TEST(Firmware, FullChunkTransfer) {
  FakeCore core;
  std::vector<std::uint8_t> data(FW_MAX_CHUNK, 0x5A);
  data.front() = 1;
  data.back() = 2;
  EXPECT_EQ(call(core, FW_CMD_WRITE_MEM, Bytes().u64(64).u32(FW_MAX_CHUNK).raw(data).b).h.status,
            FW_ST_OK);
  Response r = call(core, FW_CMD_READ_MEM, Bytes().u64(64).u32(FW_MAX_CHUNK).b);
  ASSERT_EQ(r.h.status, FW_ST_OK);
  EXPECT_EQ(r.payload.size(), 12u + FW_MAX_CHUNK);
  EXPECT_EQ(r.payload[12], 1);
  EXPECT_EQ(r.payload.back(), 2);
}

TEST(Firmware, MemoryRangeErrors) {
  FakeCore core(4096);
  Response r = call(core, FW_CMD_WRITE_MEM, Bytes().u64(4090).u32(8).raw({1, 2, 3, 4, 5, 6, 7, 8}).b);
  EXPECT_EQ(r.h.status, FW_ST_OUT_OF_RANGE);
  EXPECT_EQ(r.detail0, 4090u);
  EXPECT_EQ(r.detail1, 8u);
  // The end of the range wraps around: still out of range, not a wild write.
  r = call(core, FW_CMD_WRITE_MEM, Bytes().u64(~0ull - 1).u32(4).raw({1, 2, 3, 4}).b);
  EXPECT_EQ(r.h.status, FW_ST_OUT_OF_RANGE);
  r = call(core, FW_CMD_READ_MEM, Bytes().u64(4096).u32(1).b);
  EXPECT_EQ(r.h.status, FW_ST_OUT_OF_RANGE);
  // Exactly up to the end is fine.
  EXPECT_EQ(call(core, FW_CMD_READ_MEM, Bytes().u64(4088).u32(8).b).h.status, FW_ST_OK);
}

TEST(Firmware, MemoryPayloadErrors) {
  FakeCore core;
  // Declared length disagrees with the data.
  Response r = call(core, FW_CMD_WRITE_MEM, Bytes().u64(0).u32(5).raw({1, 2, 3}).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(r.detail0, 15u);
  EXPECT_EQ(r.detail1, 17u);
  // Shorter than the fixed fields.
  r = call(core, FW_CMD_WRITE_MEM, Bytes().u64(0).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(r.detail0, 8u);
  EXPECT_EQ(r.detail1, 12u);
  r = call(core, FW_CMD_READ_MEM, Bytes().u64(0).u32(4).u32(0).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_PAYLOAD);
  // Larger than one chunk.
  r = call(core, FW_CMD_READ_MEM, Bytes().u64(0).u32(FW_MAX_CHUNK + 1).b);
  EXPECT_EQ(r.h.status, FW_ST_TOO_LARGE);
  EXPECT_EQ(r.detail0, FW_MAX_CHUNK + 1u);
  EXPECT_EQ(r.detail1, FW_MAX_CHUNK);
  r = call(core, FW_CMD_WRITE_MEM, Bytes().u64(0).u32(FW_MAX_CHUNK + 8).raw(std::vector<std::uint8_t>(FW_MAX_CHUNK + 8)).b);
  EXPECT_EQ(r.h.status, FW_ST_TOO_LARGE);
}

TEST(Firmware, ReadResponseLargerThanOutputBuffer) {
  FakeCore core;
  const std::size_t cap = FW_HEADER_SIZE + 100;
  Response r = call(core, FW_CMD_READ_MEM, Bytes().u64(0).u32(200).b, 9, cap);
  EXPECT_EQ(r.h.status, FW_ST_TOO_LARGE);
  EXPECT_EQ(r.detail0, 212u);
  EXPECT_EQ(r.detail1, 100u);
  EXPECT_EQ(call(core, FW_CMD_READ_MEM, Bytes().u64(0).u32(88).b, 9, cap).h.status, FW_ST_OK);
  // PING echo that does not fit.
  EXPECT_EQ(call(core, FW_CMD_PING, std::vector<std::uint8_t>(101), 9, cap).h.status,
            FW_ST_TOO_LARGE);
}

TEST(Firmware, OutputBufferTooSmallForAnyFrame) {
  FakeCore core;
  const auto f = frame(FW_CMD_PING, {});
  std::vector<std::uint8_t> out(FW_HEADER_SIZE + FW_ERROR_PAYLOAD_SIZE - 1);
  std::size_t n = 99;
  EXPECT_EQ(fw_handle_frame(core.hal(), f.data(), f.size(), out.data(), out.size(), &n), -1);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(fw_handle_frame(core.hal(), f.data(), f.size(), nullptr, 1000, &n), -1);
  out.resize(FW_HEADER_SIZE + FW_ERROR_PAYLOAD_SIZE);
  EXPECT_EQ(fw_handle_frame(core.hal(), f.data(), f.size(), out.data(), out.size(), &n), 0);
  EXPECT_EQ(n, FW_HEADER_SIZE);
}

TEST(Firmware, SmemWriteAndRead) {
  FakeCore core;
  Response w = call(core, FW_CMD_WRITE_SMEM, Bytes().u32(10).u32(3).u32(0x11).u32(0x22).u32(0xFFFFFFFF).b);
  ASSERT_EQ(w.h.status, FW_ST_OK);
  EXPECT_EQ(w.u32(0), 10u);
  EXPECT_EQ(w.u32(4), 3u);
  EXPECT_EQ(core.smem[9], 0u);
  EXPECT_EQ(core.smem[10], 0x11u);
  EXPECT_EQ(core.smem[11], 0x22u);
  EXPECT_EQ(core.smem[12], 0xFFFFFFFFu);
  EXPECT_EQ(core.smem[13], 0u);

  core.smem[13] = 0x44;
  Response r = call(core, FW_CMD_READ_SMEM, Bytes().u32(11).u32(3).b);
  ASSERT_EQ(r.h.status, FW_ST_OK);
  ASSERT_EQ(r.payload.size(), 8u + 12u);
  EXPECT_EQ(r.u32(0), 11u);
  EXPECT_EQ(r.u32(4), 3u);
  EXPECT_EQ(r.u32(8), 0x22u);
  EXPECT_EQ(r.u32(12), 0xFFFFFFFFu);
  EXPECT_EQ(r.u32(16), 0x44u);
  EXPECT_EQ(core.bad_csr_accesses, 0);
}

TEST(Firmware, SmemErrors) {
  FakeCore core;
  EXPECT_EQ(call(core, FW_CMD_WRITE_SMEM, Bytes().u32(0).u32(2).u32(1).b).h.status,
            FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(call(core, FW_CMD_WRITE_SMEM, Bytes().u32(0).b).h.status, FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(call(core, FW_CMD_READ_SMEM, Bytes().u32(0).b).h.status, FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(call(core, FW_CMD_READ_SMEM, Bytes().u32(0xFFFFFFFF).u32(2).b).h.status,
            FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(call(core, FW_CMD_WRITE_SMEM, Bytes().u32(0xFFFFFFFF).u32(2).u32(1).u32(2).b).h.status,
            FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(call(core, FW_CMD_READ_SMEM, Bytes().u32(0).u32(FW_MAX_CHUNK / 4 + 1).b).h.status,
            FW_ST_TOO_LARGE);
}

// The core wraps SMEM_ADDR around at its size: a transfer past the end would reach word 0. The
// firmware refuses it whole, OUT_OF_RANGE with the word and count, before any CSR access.
TEST(Firmware, SmemPastTheEndIsRefusedBeforeAnythingIsWritten) {
  FakeCore core;
  const std::uint32_t words = static_cast<std::uint32_t>(core.smem.size());
  core.smem[0] = 0xA0;
  core.smem[1] = 0xA1;
  core.smem[words - 1] = 0xAF;
  Response w = call(core, FW_CMD_WRITE_SMEM, Bytes().u32(words - 1).u32(3).u32(7).u32(8).u32(9).b);
  EXPECT_EQ(w.h.status, FW_ST_OUT_OF_RANGE);
  EXPECT_EQ(w.u64(0), words - 1);
  EXPECT_EQ(w.u64(8), 3u);
  EXPECT_EQ(core.smem[0], 0xA0u);
  EXPECT_EQ(core.smem[1], 0xA1u);
  EXPECT_EQ(core.smem[words - 1], 0xAFu);
  Response r = call(core, FW_CMD_READ_SMEM, Bytes().u32(words - 6).u32(10).b);
  EXPECT_EQ(r.h.status, FW_ST_OUT_OF_RANGE);
  EXPECT_EQ(r.u64(0), words - 6);
  EXPECT_EQ(r.u64(8), 10u);
  EXPECT_EQ(call(core, FW_CMD_READ_SMEM, Bytes().u32(0).u32(words + 1).b).h.status,
            FW_ST_OUT_OF_RANGE);
  EXPECT_EQ(call(core, FW_CMD_WRITE_SMEM, Bytes().u32(words).u32(1).u32(5).b).h.status,
            FW_ST_OUT_OF_RANGE);
  // The whole SMEM, and nothing at its end, are in range.
  EXPECT_EQ(call(core, FW_CMD_READ_SMEM, Bytes().u32(0).u32(words).b).h.status, FW_ST_OK);
  EXPECT_EQ(call(core, FW_CMD_READ_SMEM, Bytes().u32(words).u32(0).b).h.status, FW_ST_OK);
  EXPECT_EQ(core.bad_csr_accesses, 0);
}

TEST(Firmware, LoadProgramWritesMemoryAndSetsProgBase) {
  FakeCore core;
  std::vector<std::uint8_t> prog(64);
  for (std::size_t i = 0; i < prog.size(); ++i) prog[i] = static_cast<std::uint8_t>(0x80 + i);
  Response r = call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(0x2000).u32(64).raw(prog).b);
  ASSERT_EQ(r.h.status, FW_ST_OK);
  EXPECT_EQ(r.u64(0), 0x2000u);
  EXPECT_EQ(r.u32(8), 64u);
  EXPECT_EQ(core.prog_base, 0x2000u);
  EXPECT_TRUE(std::equal(prog.begin(), prog.end(), core.mem.begin() + 0x2000));
  // An empty program only moves PROG_BASE (the host wrote a large program with WRITE_MEM).
  EXPECT_EQ(call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(0x40).u32(0).b).h.status, FW_ST_OK);
  EXPECT_EQ(core.prog_base, 0x40u);
}

TEST(Firmware, LoadProgramErrors) {
  FakeCore core;
  std::vector<std::uint8_t> one(32, 1);
  Response r = call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(0x10).u32(32).raw(one).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_ARGUMENT);  // not 32-byte aligned
  EXPECT_EQ(r.detail0, 0x10u);
  EXPECT_EQ(r.detail1, 32u);
  r = call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(0).u32(31).raw(std::vector<std::uint8_t>(31)).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_ARGUMENT);  // not whole instructions
  r = call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(1ull << 32).u32(0).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_ARGUMENT);  // PROG_BASE is 32 bits
  r = call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(core.mem.size()).u32(32).raw(one).b);
  EXPECT_EQ(r.h.status, FW_ST_OUT_OF_RANGE);
  EXPECT_EQ(core.prog_base, 0u);
  core.status = FW_STATUS_BUSY;
  r = call(core, FW_CMD_LOAD_PROGRAM, Bytes().u64(0).u32(32).raw(one).b);
  EXPECT_EQ(r.h.status, FW_ST_BUSY);
  EXPECT_EQ(core.mem[0], 0);
}

struct RunRecord {
  std::uint32_t run_status, error_code, error_pc, status, queue_state, head_wait, pc, nsem;
  std::uint64_t cycles, waited;
  std::vector<std::uint32_t> sems;
};

RunRecord run_record(const Response& r) {
  EXPECT_EQ(r.payload.size(), FW_RUN_RECORD_SIZE);
  RunRecord rec{};
  if (r.payload.size() != FW_RUN_RECORD_SIZE) return rec;
  rec.run_status = r.u32(0);
  rec.error_code = r.u32(4);
  rec.error_pc = r.u32(8);
  rec.status = r.u32(12);
  rec.cycles = r.u64(16);
  rec.waited = r.u64(24);
  rec.queue_state = r.u32(32);
  rec.head_wait = r.u32(36);
  rec.pc = r.u32(40);
  rec.nsem = r.u32(44);
  for (std::uint32_t i = 0; i < 32; ++i) rec.sems.push_back(r.u32(48 + 4 * i));
  return rec;
}

Response run(const FakeCore& core, std::uint64_t max_cycles, std::uint32_t flags = 0) {
  return call(core, FW_CMD_RUN, Bytes().u32(flags).u64(max_cycles).b);
}

TEST(Firmware, RunCompletes) {
  FakeCore core;
  core.run_cycles = 5000;
  core.counters[FW_COUNTER_CYCLES] = 111;  // left from an earlier run: START clears it, RUN reports this run's
  Response r = run(core, 1'000'000);
  ASSERT_EQ(r.h.status, FW_ST_OK);
  RunRecord rec = run_record(r);
  EXPECT_EQ(rec.run_status, FW_RUN_DONE);
  EXPECT_EQ(rec.error_code, 0u);
  EXPECT_EQ(rec.cycles, 5000u);
  EXPECT_EQ(rec.waited, 5000u);
  EXPECT_EQ(rec.status, FW_STATUS_DONE);
  EXPECT_EQ(rec.pc, 12u);
  EXPECT_EQ(rec.nsem, 32u);
  EXPECT_EQ(core.starts, 1);
  // Polled in slices of at most FW_RUN_POLL_SLICE cycles.
  ASSERT_FALSE(core.wait_requests.empty());
  for (auto w : core.wait_requests) EXPECT_LE(w, FW_RUN_POLL_SLICE);
  EXPECT_EQ(core.wait_requests.size(), (5000 + FW_RUN_POLL_SLICE - 1) / FW_RUN_POLL_SLICE);
}

TEST(Firmware, RunDeadlockIsReportedWithQueueStateAndSemaphores) {
  FakeCore core;
  core.outcome = FakeCore::Outcome::Deadlock;
  core.run_cycles = 3000;
  RunRecord rec = run_record(run(core, 1'000'000));
  EXPECT_EQ(rec.run_status, FW_RUN_DEADLOCK);
  EXPECT_EQ(rec.error_code, FW_ERR_DEADLOCK);
  EXPECT_EQ(rec.error_pc, 6u);
  EXPECT_EQ(rec.pc, 7u);
  EXPECT_EQ(rec.queue_state, core.queue_state);
  EXPECT_EQ(rec.head_wait, core.head_wait);
  EXPECT_EQ(rec.sems[9], 4u);
  EXPECT_EQ(rec.cycles, 3000u);
}

TEST(Firmware, RunHardwareErrorOtherThanDeadlock) {
  FakeCore core;
  core.outcome = FakeCore::Outcome::IllegalOpcode;
  core.run_cycles = 10;
  RunRecord rec = run_record(run(core, 1'000'000));
  EXPECT_EQ(rec.run_status, FW_RUN_ERROR);
  EXPECT_EQ(rec.error_code, FW_ERR_ILLEGAL_OPCODE);
  EXPECT_EQ(rec.error_pc, 5u);
}

TEST(Firmware, RunWatchdogIsDistinctFromDeadlock) {
  FakeCore core;
  core.outcome = FakeCore::Outcome::Hang;
  RunRecord rec = run_record(run(core, 10'000));
  EXPECT_EQ(rec.run_status, FW_RUN_TIMEOUT);
  EXPECT_EQ(rec.error_code, 0u);
  EXPECT_EQ(rec.status & FW_STATUS_BUSY, FW_STATUS_BUSY);
  EXPECT_EQ(rec.waited, 10'000u);
  EXPECT_EQ(rec.cycles, 10'000u);
  EXPECT_EQ(rec.queue_state, 0x00020101u);
  EXPECT_EQ(rec.pc, 3u);
  // The watchdog budget is exact: the last slice is shortened.
  std::uint64_t sum = 0;
  for (auto w : core.wait_requests) sum += w;
  EXPECT_EQ(sum, 10'000u);

  // Still running: a new RUN is refused, a RESUME keeps waiting and can complete.
  Response busy = run(core, 100);
  EXPECT_EQ(busy.h.status, FW_ST_BUSY);
  EXPECT_EQ(core.starts, 1);
  core.outcome = FakeCore::Outcome::Complete;
  core.busy_left = 700;
  rec = run_record(run(core, 100'000, FW_RUN_RESUME));
  EXPECT_EQ(rec.run_status, FW_RUN_DONE);
  EXPECT_EQ(rec.cycles, 700u);
  EXPECT_EQ(core.starts, 1);
}

TEST(Firmware, RunArgumentErrors) {
  FakeCore core;
  EXPECT_EQ(run(core, 0).h.status, FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(run(core, 10, 0x2).h.status, FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(call(core, FW_CMD_RUN, Bytes().u32(0).b).h.status, FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(call(core, FW_CMD_RUN, Bytes().u32(0).u64(5).u32(0).b).h.status, FW_ST_BAD_PAYLOAD);
  EXPECT_EQ(core.starts, 0);
}

TEST(Firmware, GetStateFollowsTheCore) {
  FakeCore core;
  RunRecord rec = run_record(call(core, FW_CMD_GET_STATE, {}));
  EXPECT_EQ(rec.run_status, FW_RUN_IDLE);
  core.outcome = FakeCore::Outcome::Hang;
  run(core, 2048);
  rec = run_record(call(core, FW_CMD_GET_STATE, {}));
  EXPECT_EQ(rec.run_status, FW_RUN_BUSY);
  EXPECT_EQ(rec.cycles, 2048u);
  EXPECT_EQ(rec.waited, 0u);
  core.status = FW_STATUS_DONE;
  EXPECT_EQ(run_record(call(core, FW_CMD_GET_STATE, {})).run_status, FW_RUN_DONE);
  core.status = FW_STATUS_ERROR | (4u << 8);
  rec = run_record(call(core, FW_CMD_GET_STATE, {}));
  EXPECT_EQ(rec.run_status, FW_RUN_ERROR);
  EXPECT_EQ(rec.error_code, 4u);
  EXPECT_EQ(call(core, FW_CMD_GET_STATE, {0}).h.status, FW_ST_BAD_PAYLOAD);
}

TEST(Firmware, ReadCountersReturnsAll64BitCounters) {
  FakeCore core;
  for (std::size_t j = 0; j < FW_NUM_COUNTERS; ++j) core.counters[j] = (std::uint64_t{j} << 32) | (j * 3 + 1);
  Response r = call(core, FW_CMD_READ_COUNTERS, {});
  ASSERT_EQ(r.h.status, FW_ST_OK);
  ASSERT_EQ(r.payload.size(), 4u + 8u * FW_NUM_COUNTERS);
  EXPECT_EQ(r.u32(0), FW_NUM_COUNTERS);
  for (std::size_t j = 0; j < FW_NUM_COUNTERS; ++j) EXPECT_EQ(r.u64(4 + 8 * j), core.counters[j]) << j;
  EXPECT_EQ(call(core, FW_CMD_READ_COUNTERS, {1, 2}).h.status, FW_ST_BAD_PAYLOAD);
}

TEST(Firmware, SetSemaphore) {
  FakeCore core;
  Response r = call(core, FW_CMD_SET_SEM, Bytes().u32(31).u32(0xFFFF).b);
  ASSERT_EQ(r.h.status, FW_ST_OK);
  EXPECT_EQ(core.sems[31], 0xFFFFu);
  EXPECT_EQ(r.u32(0), 31u);
  EXPECT_EQ(r.u32(4), 0xFFFFu);
  r = call(core, FW_CMD_SET_SEM, Bytes().u32(32).u32(1).b);
  EXPECT_EQ(r.h.status, FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(r.detail0, 32u);
  EXPECT_EQ(r.detail1, 32u);
  EXPECT_EQ(call(core, FW_CMD_SET_SEM, Bytes().u32(0).u32(0x10000).b).h.status, FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(call(core, FW_CMD_SET_SEM, Bytes().u32(0).b).h.status, FW_ST_BAD_PAYLOAD);
}

TEST(Firmware, ResetIsASoftReset) {
  FakeCore core;
  core.status = FW_STATUS_ERROR | (2u << 8);
  core.sems[4] = 3;
  core.counters[FW_COUNTER_CYCLES] = 99;
  Response r = call(core, FW_CMD_RESET, {});
  ASSERT_EQ(r.h.status, FW_ST_OK);
  EXPECT_EQ(r.u32(0), 0u);
  EXPECT_EQ(core.soft_resets, 1);
  EXPECT_EQ(core.sems[4], 0u);
  EXPECT_EQ(core.counters[FW_COUNTER_CYCLES], 0u);
  EXPECT_EQ(call(core, FW_CMD_RESET, {0, 0, 0, 0}).h.status, FW_ST_BAD_PAYLOAD);
}

TEST(Firmware, HalFailureIsReported) {
  FakeCore core;
  core.hal_failed = true;
  EXPECT_EQ(call(core, FW_CMD_INFO, {}).h.status, FW_ST_HAL_ERROR);
  EXPECT_EQ(call(core, FW_CMD_READ_MEM, Bytes().u64(0).u32(4).b).h.status, FW_ST_HAL_ERROR);
  core.outcome = FakeCore::Outcome::Hang;
  EXPECT_EQ(run(core, 1'000'000'000'000ull).h.status, FW_ST_HAL_ERROR);  // stops at once
  EXPECT_LE(core.wait_requests.size(), 1u);
}

TEST(Firmware, IncompleteHalIsAnError) {
  FakeCore core;
  fw_hal broken = *core.hal();
  broken.wait_cycles = nullptr;
  const auto f = frame(FW_CMD_PING, {});
  std::vector<std::uint8_t> out(256);
  std::size_t n = 0;
  ASSERT_EQ(fw_handle_frame(&broken, f.data(), f.size(), out.data(), out.size(), &n), 0);
  EXPECT_EQ(out[FW_OFF_STATUS], FW_ST_HAL_ERROR);
  ASSERT_EQ(fw_handle_frame(nullptr, f.data(), f.size(), out.data(), out.size(), &n), 0);
  EXPECT_EQ(out[FW_OFF_STATUS], FW_ST_HAL_ERROR);
  fw_hal no_smem_size = *core.hal();
  no_smem_size.smem_words = nullptr;
  ASSERT_EQ(fw_handle_frame(&no_smem_size, f.data(), f.size(), out.data(), out.size(), &n), 0);
  EXPECT_EQ(out[FW_OFF_STATUS], FW_ST_HAL_ERROR);
}

// ---------------------------------------------------------------------------------------------
// Malformed frames: each class gets its own status, the details say why.
// ---------------------------------------------------------------------------------------------

TEST(FirmwareMalformed, Truncated) {
  FakeCore core;
  const auto f = frame(FW_CMD_INFO, {});
  for (std::size_t len = 0; len < FW_HEADER_SIZE; ++len) {
    Response r = handle(core, f.data(), len);
    EXPECT_EQ(r.h.status, FW_ST_TRUNCATED) << len;
    EXPECT_EQ(r.detail0, len);
    EXPECT_EQ(r.detail1, FW_HEADER_SIZE);
    EXPECT_EQ(r.h.seq, 0u);
    EXPECT_EQ(r.h.command, 0u);
  }
  EXPECT_EQ(handle(core, nullptr, 100).h.status, FW_ST_TRUNCATED);
}

TEST(FirmwareMalformed, BadMagic) {
  FakeCore core;
  auto f = frame(FW_CMD_INFO, {}, 42);
  f[0] = 'X';
  Response r = handle(core, f.data(), f.size());
  EXPECT_EQ(r.h.status, FW_ST_BAD_MAGIC);
  EXPECT_EQ(r.detail0, fw_get_u32(f.data()));
  EXPECT_EQ(r.detail1, FW_MAGIC);
  EXPECT_EQ(r.h.seq, 42u);  // echoed from the bytes where the header would have it
  EXPECT_EQ(r.h.command, FW_CMD_INFO);
}

TEST(FirmwareMalformed, BadVersion) {
  FakeCore core;
  auto f = frame(FW_CMD_INFO, {});
  f[FW_OFF_VERSION] = 2;
  Response r = handle(core, f.data(), f.size());
  EXPECT_EQ(r.h.status, FW_ST_BAD_VERSION);
  EXPECT_EQ(r.detail0, 2u);
  EXPECT_EQ(r.detail1, FW_PROTOCOL_VERSION);
}

TEST(FirmwareMalformed, ResponseSentToFirmware) {
  FakeCore core;
  auto f = frame(FW_CMD_INFO, {}, 1, FW_TYPE_RESPONSE);
  Response r = handle(core, f.data(), f.size());
  EXPECT_EQ(r.h.status, FW_ST_BAD_TYPE);
  EXPECT_EQ(r.detail0, FW_TYPE_RESPONSE);
}

TEST(FirmwareMalformed, LengthDisagreesWithBytesReceived) {
  FakeCore core;
  auto f = frame(FW_CMD_PING, {1, 2, 3, 4});
  // Missing payload bytes.
  Response r = handle(core, f.data(), f.size() - 1);
  EXPECT_EQ(r.h.status, FW_ST_BAD_LENGTH);
  EXPECT_EQ(r.detail0, 4u);
  EXPECT_EQ(r.detail1, 3u);
  // Extra bytes behind the frame.
  f.push_back(0);
  r = handle(core, f.data(), f.size());
  EXPECT_EQ(r.h.status, FW_ST_BAD_LENGTH);
  EXPECT_EQ(r.detail1, 5u);
}

TEST(FirmwareMalformed, DeclaredPayloadTooLarge) {
  FakeCore core;
  auto f = frame(FW_CMD_PING, {});
  fw_put_u32(f.data() + FW_OFF_LENGTH, FW_MAX_PAYLOAD + 1);
  Response r = handle(core, f.data(), f.size());
  EXPECT_EQ(r.h.status, FW_ST_TOO_LARGE);
  EXPECT_EQ(r.detail0, FW_MAX_PAYLOAD + 1u);
  EXPECT_EQ(r.detail1, FW_MAX_PAYLOAD);
  fw_put_u32(f.data() + FW_OFF_LENGTH, 0xFFFFFFFFu);
  EXPECT_EQ(handle(core, f.data(), f.size()).h.status, FW_ST_TOO_LARGE);
}

TEST(FirmwareMalformed, CrcMismatch) {
  FakeCore core;
  auto f = frame(FW_CMD_WRITE_MEM, Bytes().u64(0).u32(4).raw({9, 9, 9, 9}).b);
  const std::uint32_t good = fw_get_u32(f.data() + FW_OFF_CRC);
  f.back() ^= 0x01;  // payload corrupted
  Response r = handle(core, f.data(), f.size());
  EXPECT_EQ(r.h.status, FW_ST_BAD_CRC);
  EXPECT_EQ(r.detail0, good);
  EXPECT_NE(r.detail1, good);
  EXPECT_EQ(core.mem[0], 0);  // nothing executed
  f.back() ^= 0x01;
  f[FW_OFF_CRC] ^= 0x80;  // CRC field corrupted
  EXPECT_EQ(handle(core, f.data(), f.size()).h.status, FW_ST_BAD_CRC);
  f[FW_OFF_CRC] ^= 0x80;
  f[FW_OFF_SEQ] ^= 0x10;  // header corrupted
  EXPECT_EQ(handle(core, f.data(), f.size()).h.status, FW_ST_BAD_CRC);
}

TEST(FirmwareMalformed, UnknownCommand) {
  FakeCore core;
  for (std::uint8_t cmd : {std::uint8_t{0x00}, std::uint8_t{0x03}, std::uint8_t{0x15},
                           std::uint8_t{0x25}, std::uint8_t{0xFF}}) {
    Response r = call(core, cmd, {1, 2});
    EXPECT_EQ(r.h.status, FW_ST_UNKNOWN_COMMAND);
    EXPECT_EQ(r.detail0, cmd);
  }
}

TEST(FirmwareMalformed, ShortPayloadForEveryCommandWithFields) {
  FakeCore core;
  struct Case {
    std::uint8_t cmd;
    std::size_t min_len;
  };
  for (Case c : {Case{FW_CMD_WRITE_MEM, 12}, Case{FW_CMD_READ_MEM, 12}, Case{FW_CMD_WRITE_SMEM, 8},
                 Case{FW_CMD_READ_SMEM, 8}, Case{FW_CMD_LOAD_PROGRAM, 12}, Case{FW_CMD_RUN, 12},
                 Case{FW_CMD_SET_SEM, 8}}) {
    for (std::size_t len = 0; len < c.min_len; ++len) {
      Response r = call(core, c.cmd, std::vector<std::uint8_t>(len, 0));
      EXPECT_EQ(r.h.status, FW_ST_BAD_PAYLOAD) << fw_command_name(c.cmd) << " len " << len;
      EXPECT_EQ(r.detail0, len);
    }
  }
  EXPECT_EQ(core.starts, 0);
  EXPECT_EQ(core.bad_csr_accesses, 0);
}

}  // namespace
