// SPDX-License-Identifier: Apache-2.0
// The wire protocol's codec: CRC-32, byte-exact header layout, the host's frame and payload
// helpers built on the firmware's freestanding functions.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tpuemu/device/memory_statistics.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/fw/protocol.h"

namespace {

namespace proto = tpuemu::protocol;

// Bit-at-a-time reference CRC-32 (no table), to check the firmware's table-driven one.
std::uint32_t reference_crc32(const std::vector<std::uint8_t>& data) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint8_t b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tpuemu::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Crc32, StandardCheckValues) {
  const auto check = bytes("123456789");
  EXPECT_EQ(fw_crc32(0, check.data(), check.size()), 0xCBF43926u);
  EXPECT_EQ(fw_crc32(0, nullptr, 0), 0u);
  const auto fox = bytes("The quick brown fox jumps over the lazy dog");
  EXPECT_EQ(fw_crc32(0, fox.data(), fox.size()), 0x414FA339u);
}

TEST(Crc32, IncrementalEqualsOneShotAndMatchesReference) {
  std::vector<std::uint8_t> data(4099);
  std::uint32_t x = 1;
  for (auto& b : data) b = static_cast<std::uint8_t>((x = x * 1103515245u + 12345u) >> 16);
  const std::uint32_t whole = fw_crc32(0, data.data(), data.size());
  EXPECT_EQ(whole, reference_crc32(data));
  for (std::size_t split : {0u, 1u, 7u, 2048u, 4098u, 4099u}) {
    std::uint32_t c = fw_crc32(0, data.data(), split);
    c = fw_crc32(c, data.data() + split, data.size() - split);
    EXPECT_EQ(c, whole) << split;
  }
}

TEST(FrameLayout, HeaderIsByteExact) {
  const std::vector<std::uint8_t> payload = {0xAA, 0xBB, 0xCC};
  const auto f = proto::encode_frame(FW_TYPE_REQUEST, FW_CMD_READ_MEM, 0, 0x01020304u, payload);
  ASSERT_EQ(f.size(), 23u);
  const std::vector<std::uint8_t> head(f.begin(), f.begin() + 16);
  const std::vector<std::uint8_t> want = {'T', 'P', 'U', 'F', 1, 1, 0x11, 0,
                                          0x04, 0x03, 0x02, 0x01, 3, 0, 0, 0};
  EXPECT_EQ(head, want);
  // CRC over bytes 0..15 and the payload, little-endian at offset 16.
  std::vector<std::uint8_t> covered(f.begin(), f.begin() + 16);
  covered.insert(covered.end(), payload.begin(), payload.end());
  const std::uint32_t crc = reference_crc32(covered);
  EXPECT_EQ(f[16], crc & 0xFF);
  EXPECT_EQ(f[17], (crc >> 8) & 0xFF);
  EXPECT_EQ(f[18], (crc >> 16) & 0xFF);
  EXPECT_EQ(f[19], crc >> 24);
  EXPECT_EQ(std::vector<std::uint8_t>(f.begin() + 20, f.end()), payload);
}

TEST(FrameLayout, LittleEndianHelpers) {
  std::uint8_t b[8] = {};
  fw_put_u64(b, 0x0807060504030201ull);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], i + 1);
  EXPECT_EQ(fw_get_u64(b), 0x0807060504030201ull);
  EXPECT_EQ(fw_get_u32(b + 4), 0x08070605u);
  EXPECT_EQ(fw_get_u16(b + 1), 0x0302u);
  fw_put_u16(b, 0xBEEF);
  EXPECT_EQ(b[0], 0xEF);
  EXPECT_EQ(b[1], 0xBE);
}

TEST(FrameCodec, RoundTrip) {
  const std::vector<std::uint8_t> payload(1000, 0x42);
  const auto f = proto::encode_frame(FW_TYPE_RESPONSE, FW_CMD_RUN, FW_ST_BUSY, 77, payload);
  const proto::Frame d = proto::decode_frame(f);
  EXPECT_EQ(d.type, FW_TYPE_RESPONSE);
  EXPECT_EQ(d.command, FW_CMD_RUN);
  EXPECT_EQ(d.status, FW_ST_BUSY);
  EXPECT_EQ(d.seq, 77u);
  EXPECT_EQ(d.payload, payload);
  EXPECT_EQ(proto::payload_size_from_header(std::span(f).first(proto::kHeaderSize)), 1000u);
}

TEST(FrameCodec, MaxPayloadIsAccepted) {
  const std::vector<std::uint8_t> payload(proto::kMaxPayload, 1);
  EXPECT_EQ(proto::decode_frame(proto::encode_request(FW_CMD_PING, 1, payload)).payload.size(),
            proto::kMaxPayload);
  const std::vector<std::uint8_t> too_big(proto::kMaxPayload + 1, 1);
  EXPECT_NE(error_of([&] { proto::encode_request(FW_CMD_PING, 1, too_big); }).find("exceeds"),
            std::string::npos);
}

TEST(FrameCodec, DecodeErrorsAreNamed) {
  auto f = proto::encode_request(FW_CMD_INFO, 5, {});
  EXPECT_EQ(error_of([&] { proto::decode_frame(std::span(f).first(10)); }),
            "protocol: bad frame: truncated frame (10 bytes, the header alone is 20)");
  auto bad = f;
  bad[0] = 'X';
  EXPECT_EQ(error_of([&] { proto::decode_frame(bad); }),
            "protocol: bad frame: bad magic 0x46555058 (expected 0x46555054)");
  bad = f;
  bad[4] = 9;
  EXPECT_EQ(error_of([&] { proto::decode_frame(bad); }),
            "protocol: bad frame: unsupported protocol version 9 (supported: 1)");
  bad = f;
  bad.push_back(1);
  EXPECT_EQ(error_of([&] { proto::decode_frame(bad); }),
            "protocol: bad frame: bad length: the header declares 0 payload bytes, 1 were "
            "received");
  bad = f;
  bad[8] ^= 1;
  EXPECT_NE(error_of([&] { proto::decode_frame(bad); }).find("CRC mismatch"), std::string::npos);
  bad = f;
  fw_put_u32(bad.data() + FW_OFF_LENGTH, 0x7FFFFFFF);
  EXPECT_NE(error_of([&] { proto::payload_size_from_header(bad); }).find("too large: 2147483647"),
            std::string::npos);
  // A frame type that is neither request nor response.
  bad = proto::encode_frame(7, FW_CMD_INFO, 0, 1, {});
  EXPECT_EQ(error_of([&] { proto::decode_frame(bad); }),
            "protocol: bad frame: unknown frame type 7");
}

TEST(FrameCodec, EncodeIntoReusesBuffer) {
  std::vector<std::uint8_t> buf;
  proto::encode_frame_into(buf, FW_TYPE_REQUEST, FW_CMD_PING, 0, 1, std::vector<std::uint8_t>(50));
  EXPECT_EQ(buf.size(), 70u);
  proto::encode_frame_into(buf, FW_TYPE_REQUEST, FW_CMD_PING, 0, 2, {});
  EXPECT_EQ(buf.size(), 20u);
  EXPECT_EQ(proto::decode_frame(buf).seq, 2u);
}

TEST(FrameCodec, FirmwareEncodeRejectsWhatDoesNotFit) {
  std::uint8_t out[FW_HEADER_SIZE + 4];
  const std::uint8_t payload[8] = {};
  std::size_t n = 99;
  EXPECT_EQ(fw_frame_encode(FW_TYPE_REQUEST, 1, 0, 0, payload, 8, out, sizeof out, &n),
            static_cast<int>(FW_ST_TOO_LARGE));
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(fw_frame_encode(FW_TYPE_REQUEST, 1, 0, 0, payload, 4, out, sizeof out, &n),
            static_cast<int>(FW_ST_OK));
  EXPECT_EQ(n, sizeof out);
  EXPECT_EQ(fw_frame_encode(FW_TYPE_REQUEST, 1, 0, 0, nullptr, 4, out, sizeof out, &n),
            static_cast<int>(FW_ST_TOO_LARGE));
}

TEST(Payload, ReaderAndWriterAreBounded) {
  proto::PayloadWriter w;
  w.u32(0xDEADBEEF).u64(0x1122334455667788ull).bytes(std::vector<std::uint8_t>{9, 8});
  const auto data = w.data();
  ASSERT_EQ(data.size(), 14u);
  proto::PayloadReader r(data, "TEST");
  EXPECT_EQ(r.u32(), 0xDEADBEEFu);
  EXPECT_EQ(r.u64(), 0x1122334455667788ull);
  EXPECT_EQ(r.remaining(), 2u);
  EXPECT_EQ(error_of([&] { r.finish(); }), "protocol: TEST: 2 unexpected trailing payload bytes");
  EXPECT_EQ(error_of([&] { r.u32(); }), "protocol: TEST: payload too short (14 bytes)");

  // The freestanding cursors stop at the end and remember it.
  std::uint8_t buf[6];
  fw_writer fw;
  fw_writer_init(&fw, buf, sizeof buf);
  fw_wr_u32(&fw, 1);
  EXPECT_EQ(fw.overflow, 0);
  fw_wr_u32(&fw, 2);
  EXPECT_EQ(fw.overflow, 1);
  EXPECT_EQ(fw.pos, 4u);
  fw_wr_u8(&fw, 3);  // dropped after an overflow
  EXPECT_EQ(fw.pos, 4u);
  fw_reader fr;
  fw_reader_init(&fr, buf, 5);
  EXPECT_EQ(fw_rd_u32(&fr), 1u);
  EXPECT_EQ(fw_rd_u32(&fr), 0u);
  EXPECT_EQ(fr.short_read, 1);
  EXPECT_EQ(fw_rd_u8(&fr), 0u);  // sticky
  EXPECT_EQ(fw_rd_bytes(&fr, 0), nullptr);
}

TEST(Payload, StatusDescriptions) {
  EXPECT_EQ(proto::describe_status(FW_ST_OUT_OF_RANGE, {0x1000, 0x20}),
            "address range [0x1000, 0x1020) is outside device memory");
  EXPECT_EQ(proto::describe_status(FW_ST_UNKNOWN_COMMAND, {0x7f, 0}), "unknown command 0x7f");
  EXPECT_EQ(proto::describe_status(FW_ST_BAD_PAYLOAD, {3, 12}),
            "malformed payload (3 bytes, expected 12)");
  EXPECT_EQ(proto::describe_status(0xEE, {1, 2}), "unknown status 0xee (0x1, 0x2)");
  EXPECT_EQ(proto::command_name(FW_CMD_LOAD_PROGRAM), "LOAD_PROGRAM");
  EXPECT_EQ(proto::command_name(0x99), "0x99");
  EXPECT_EQ(proto::describe_status(FW_ST_NO_SESSION, {FW_CMD_RUN, FW_CMD_HELLO}), "RUN needs a session: HELLO first");
  for (unsigned s = 0; s <= FW_ST_PRESET_MISMATCH; ++s)
    EXPECT_STRNE(fw_status_name(static_cast<std::uint8_t>(s)), "unknown") << s;
}

}  // namespace

TEST(MemoryStatistics, RegisteredByNameWithTotalsAndChannels) {
  tpuemu::MemoryStatistics m("test memory", 2);
  m.add_per_channel("reads", "commands", "RD commands", {3, 4});
  m.add_total("row_hit_rate", "fraction", "hits / requests", 0.5);
  EXPECT_EQ(m.count("reads"), 7u);
  EXPECT_EQ(m.channel("reads", 1), 4);
  EXPECT_EQ(m.total("row_hit_rate"), 0.5);
  EXPECT_EQ(m.find("writes"), nullptr);
  const nlohmann::json j = m.to_json();
  EXPECT_EQ(j["source"], "test memory");
  EXPECT_EQ(j["statistics"][0]["per_channel"], nlohmann::json::array({3.0, 4.0}));
  EXPECT_FALSE(j["statistics"][1].contains("per_channel"));
  // a wrong channel count, a duplicate, an unknown name and a missing channel are named errors
  EXPECT_THROW(m.add_per_channel("writes", "commands", "", {1}), tpuemu::Error);
  EXPECT_THROW(m.add_total("reads", "commands", "", 1), tpuemu::Error);
  try {
    (void)m.total("writes");
    ADD_FAILURE() << "no throw";
  } catch (const tpuemu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no statistic 'writes' (source test memory)"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)m.channel("row_hit_rate", 0), tpuemu::Error);
  EXPECT_THROW((void)m.channel("reads", 2), tpuemu::Error);
}
