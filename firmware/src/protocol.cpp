// SPDX-License-Identifier: Apache-2.0
// Freestanding frame codec of the tpuemu wire protocol (see tpuemu/fw/protocol.h).
#include "tpuemu/fw/protocol.h"

namespace {

void set_detail(uint64_t* d0, uint64_t* d1, uint64_t v0, uint64_t v1) {
  if (d0) *d0 = v0;
  if (d1) *d1 = v1;
}

}  // namespace

extern "C" {

void fw_put_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void fw_put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void fw_put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t fw_get_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8));
}
uint32_t fw_get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t fw_get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
void fw_copy(uint8_t* dst, const uint8_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}

void fw_header_read(const uint8_t* in, struct fw_frame_header* h) {
  h->magic = fw_get_u32(in + FW_OFF_MAGIC);
  h->version = in[FW_OFF_VERSION];
  h->type = in[FW_OFF_TYPE];
  h->command = in[FW_OFF_COMMAND];
  h->status = in[FW_OFF_STATUS];
  h->seq = fw_get_u32(in + FW_OFF_SEQ);
  h->payload_len = fw_get_u32(in + FW_OFF_LENGTH);
  h->crc = fw_get_u32(in + FW_OFF_CRC);
}

int fw_header_check(const uint8_t* in, size_t in_len, uint32_t max_payload,
                    struct fw_frame_header* h, uint64_t* detail0, uint64_t* detail1) {
  if (in == nullptr || in_len < FW_HEADER_SIZE) {
    set_detail(detail0, detail1, in == nullptr ? 0 : in_len, FW_HEADER_SIZE);
    return static_cast<int>(FW_ST_TRUNCATED);
  }
  fw_header_read(in, h);
  if (h->magic != FW_MAGIC) {
    set_detail(detail0, detail1, h->magic, FW_MAGIC);
    return static_cast<int>(FW_ST_BAD_MAGIC);
  }
  if (h->version != FW_PROTOCOL_VERSION) {
    set_detail(detail0, detail1, h->version, FW_PROTOCOL_VERSION);
    return static_cast<int>(FW_ST_BAD_VERSION);
  }
  if (h->payload_len > max_payload) {
    set_detail(detail0, detail1, h->payload_len, max_payload);
    return static_cast<int>(FW_ST_TOO_LARGE);
  }
  set_detail(detail0, detail1, 0, 0);
  return static_cast<int>(FW_ST_OK);
}

int fw_frame_decode(const uint8_t* in, size_t in_len, uint32_t max_payload,
                    struct fw_frame_header* h, const uint8_t** payload, uint64_t* detail0,
                    uint64_t* detail1) {
  if (payload) *payload = nullptr;
  int st = fw_header_check(in, in_len, max_payload, h, detail0, detail1);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  const size_t got = in_len - FW_HEADER_SIZE;
  if (static_cast<size_t>(h->payload_len) != got) {
    set_detail(detail0, detail1, h->payload_len, got);
    return static_cast<int>(FW_ST_BAD_LENGTH);
  }
  uint32_t crc = fw_crc32(0, in, FW_OFF_CRC);
  crc = fw_crc32(crc, in + FW_HEADER_SIZE, got);
  if (crc != h->crc) {
    set_detail(detail0, detail1, h->crc, crc);
    return static_cast<int>(FW_ST_BAD_CRC);
  }
  if (payload) *payload = in + FW_HEADER_SIZE;
  return static_cast<int>(FW_ST_OK);
}

size_t fw_frame_finish(uint8_t* buf, uint8_t type, uint8_t command, uint8_t status, uint32_t seq,
                       uint32_t payload_len) {
  fw_put_u32(buf + FW_OFF_MAGIC, FW_MAGIC);
  buf[FW_OFF_VERSION] = static_cast<uint8_t>(FW_PROTOCOL_VERSION);
  buf[FW_OFF_TYPE] = type;
  buf[FW_OFF_COMMAND] = command;
  buf[FW_OFF_STATUS] = status;
  fw_put_u32(buf + FW_OFF_SEQ, seq);
  fw_put_u32(buf + FW_OFF_LENGTH, payload_len);
  uint32_t crc = fw_crc32(0, buf, FW_OFF_CRC);
  crc = fw_crc32(crc, buf + FW_HEADER_SIZE, payload_len);
  fw_put_u32(buf + FW_OFF_CRC, crc);
  return FW_HEADER_SIZE + static_cast<size_t>(payload_len);
}

int fw_frame_encode(uint8_t type, uint8_t command, uint8_t status, uint32_t seq,
                    const uint8_t* payload, size_t payload_len, uint8_t* out, size_t out_cap,
                    size_t* out_len) {
  if (out_len) *out_len = 0;
  if (out == nullptr || payload_len > FW_MAX_PAYLOAD || out_cap < FW_HEADER_SIZE ||
      out_cap - FW_HEADER_SIZE < payload_len || (payload_len > 0 && payload == nullptr)) {
    return static_cast<int>(FW_ST_TOO_LARGE);
  }
  fw_copy(out + FW_HEADER_SIZE, payload, payload_len);
  size_t n = fw_frame_finish(out, type, command, status, seq, static_cast<uint32_t>(payload_len));
  if (out_len) *out_len = n;
  return static_cast<int>(FW_ST_OK);
}

void fw_reader_init(struct fw_reader* r, const uint8_t* p, size_t len) {
  r->p = p;
  r->len = p ? len : 0;
  r->pos = 0;
  r->short_read = 0;
}

const uint8_t* fw_rd_bytes(struct fw_reader* r, size_t n) {
  if (r->short_read || r->len - r->pos < n) {
    r->short_read = 1;
    return nullptr;
  }
  const uint8_t* p = r->p + r->pos;
  r->pos += n;
  return p;
}
uint8_t fw_rd_u8(struct fw_reader* r) {
  const uint8_t* p = fw_rd_bytes(r, 1);
  return p ? p[0] : 0;
}
uint32_t fw_rd_u32(struct fw_reader* r) {
  const uint8_t* p = fw_rd_bytes(r, 4);
  return p ? fw_get_u32(p) : 0;
}
uint64_t fw_rd_u64(struct fw_reader* r) {
  const uint8_t* p = fw_rd_bytes(r, 8);
  return p ? fw_get_u64(p) : 0;
}
size_t fw_rd_remaining(const struct fw_reader* r) { return r->len - r->pos; }

void fw_writer_init(struct fw_writer* w, uint8_t* p, size_t cap) {
  w->p = p;
  w->cap = p ? cap : 0;
  w->pos = 0;
  w->overflow = 0;
}
uint8_t* fw_wr_reserve(struct fw_writer* w, size_t n) {
  if (w->overflow || w->cap - w->pos < n) {
    w->overflow = 1;
    return nullptr;
  }
  uint8_t* p = w->p + w->pos;
  w->pos += n;
  return p;
}
void fw_wr_u8(struct fw_writer* w, uint8_t v) {
  uint8_t* p = fw_wr_reserve(w, 1);
  if (p) p[0] = v;
}
void fw_wr_u32(struct fw_writer* w, uint32_t v) {
  uint8_t* p = fw_wr_reserve(w, 4);
  if (p) fw_put_u32(p, v);
}
void fw_wr_u64(struct fw_writer* w, uint64_t v) {
  uint8_t* p = fw_wr_reserve(w, 8);
  if (p) fw_put_u64(p, v);
}
void fw_wr_bytes(struct fw_writer* w, const uint8_t* data, size_t n) {
  uint8_t* p = fw_wr_reserve(w, n);
  if (p && n) fw_copy(p, data, n);
}

const char* fw_command_name(uint8_t command) {
  switch (command) {
    case FW_CMD_PING: return "PING";
    case FW_CMD_INFO: return "INFO";
    case FW_CMD_WRITE_MEM: return "WRITE_MEM";
    case FW_CMD_READ_MEM: return "READ_MEM";
    case FW_CMD_WRITE_SMEM: return "WRITE_SMEM";
    case FW_CMD_READ_SMEM: return "READ_SMEM";
    case FW_CMD_LOAD_PROGRAM: return "LOAD_PROGRAM";
    case FW_CMD_RUN: return "RUN";
    case FW_CMD_GET_STATE: return "GET_STATE";
    case FW_CMD_READ_COUNTERS: return "READ_COUNTERS";
    case FW_CMD_SET_SEM: return "SET_SEM";
    case FW_CMD_RESET: return "RESET";
    case FW_CMD_HELLO: return "HELLO";
    case FW_CMD_MEM_STATS: return "MEM_STATS";
    case FW_CMD_TIMELINE_START: return "TIMELINE_START";
    case FW_CMD_TIMELINE_STOP: return "TIMELINE_STOP";
    case FW_CMD_TIMELINE_READ: return "TIMELINE_READ";
    case FW_CMD_PRESET: return "PRESET";
    default: return "unknown";
  }
}

const char* fw_status_name(uint8_t status) {
  switch (status) {
    case FW_ST_OK: return "ok";
    case FW_ST_TRUNCATED: return "truncated frame";
    case FW_ST_BAD_MAGIC: return "bad magic";
    case FW_ST_BAD_VERSION: return "unsupported protocol version";
    case FW_ST_BAD_TYPE: return "bad frame type";
    case FW_ST_BAD_LENGTH: return "bad length";
    case FW_ST_BAD_CRC: return "CRC mismatch";
    case FW_ST_UNKNOWN_COMMAND: return "unknown command";
    case FW_ST_BAD_PAYLOAD: return "malformed payload";
    case FW_ST_BAD_ARGUMENT: return "bad argument";
    case FW_ST_OUT_OF_RANGE: return "address out of range";
    case FW_ST_TOO_LARGE: return "too large";
    case FW_ST_BUSY: return "device busy";
    case FW_ST_HAL_ERROR: return "device access failed";
    case FW_ST_NO_SESSION: return "no session";
    case FW_ST_PRESET_MISMATCH: return "preset mismatch";
    default: return "unknown";
  }
}

const char* fw_run_status_name(uint32_t run_status) {
  switch (run_status) {
    case FW_RUN_DONE: return "done";
    case FW_RUN_ERROR: return "error";
    case FW_RUN_DEADLOCK: return "deadlock";
    case FW_RUN_TIMEOUT: return "watchdog timeout";
    case FW_RUN_IDLE: return "idle";
    case FW_RUN_BUSY: return "busy";
    default: return "unknown";
  }
}

}  // extern "C"
