// SPDX-License-Identifier: Apache-2.0
/* tpuemu wire protocol: frame layout, command and status codes, and the freestanding codec.
 *
 * Shared by the firmware (device side, freestanding: no heap, no exceptions, no libc beyond
 * <stdint.h>/<stddef.h>) and the host runtime, which reuses these functions instead of writing the
 * format a second time. Byte-exact description: docs/protocol.md. Everything is little-endian and
 * accessed byte-wise, so the code is independent of the CPU's endianness and alignment rules.
 *
 * C-compatible interface (the board's HAL may be written in C); implemented in C++17. */
#ifndef TPUEMU_FW_PROTOCOL_H
#define TPUEMU_FW_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- frame header ------------------------------------------------------------------------- */
#define FW_MAGIC 0x46555054u /* bytes 'T','P','U','F' */
#define FW_PROTOCOL_VERSION 1u
#define FW_HEADER_SIZE 20u
/* Largest payload of any frame, request or response. */
#define FW_MAX_PAYLOAD (0x100000u + 64u)
/* Largest data part of one WRITE_MEM/READ_MEM/LOAD_PROGRAM (1 MiB); the host splits larger
 * transfers. The 64 extra payload bytes leave room for the command's own fields. */
#define FW_MAX_CHUNK 0x100000u
#define FW_MAX_FRAME (FW_HEADER_SIZE + FW_MAX_PAYLOAD)

/* Header byte offsets. */
#define FW_OFF_MAGIC 0u
#define FW_OFF_VERSION 4u
#define FW_OFF_TYPE 5u
#define FW_OFF_COMMAND 6u
#define FW_OFF_STATUS 7u
#define FW_OFF_SEQ 8u
#define FW_OFF_LENGTH 12u
#define FW_OFF_CRC 16u

/* Frame types. */
#define FW_TYPE_REQUEST 0x01u
#define FW_TYPE_RESPONSE 0x02u

/* ---- commands ----------------------------------------------------------------------------- */
#define FW_CMD_PING 0x01u          /* echo the payload */
#define FW_CMD_INFO 0x02u          /* ID, CONFIG, versions, limits, memory capacity */
#define FW_CMD_WRITE_MEM 0x10u     /* u64 addr, u32 len, len bytes */
#define FW_CMD_READ_MEM 0x11u      /* u64 addr, u32 len -> u64 addr, u32 len, len bytes */
#define FW_CMD_WRITE_SMEM 0x12u    /* u32 word, u32 count, count u32 */
#define FW_CMD_READ_SMEM 0x13u     /* u32 word, u32 count -> u32 word, u32 count, count u32 */
#define FW_CMD_LOAD_PROGRAM 0x14u  /* u64 addr, u32 len, len bytes; sets PROG_BASE */
#define FW_CMD_RUN 0x20u           /* u32 flags, u64 max_cycles -> run record */
#define FW_CMD_GET_STATE 0x21u     /* -> run record of the current state */
#define FW_CMD_READ_COUNTERS 0x22u /* -> u32 n, n u64 */
#define FW_CMD_SET_SEM 0x23u       /* u32 index, u32 value */
#define FW_CMD_RESET 0x24u         /* CTRL soft reset -> u32 STATUS */

/* Session commands (docs/protocol.md 7): answered by the network front end that owns the
 * connection (`tpuemu serve`, or a board's), never by fw_handle_frame, which answers them
 * UNKNOWN_COMMAND like any code it does not know. */
#define FW_CMD_HELLO 0x03u          /* versions, client name, preset digest -> session record */
#define FW_CMD_MEM_STATS 0x40u      /* -> JSON text of the memory statistics (empty: none) */
#define FW_CMD_TIMELINE_START 0x41u /* record the next runs' instruction and HBM timeline */
#define FW_CMD_TIMELINE_STOP 0x42u  /* -> u32 events, u32 hbm_intervals recorded */
#define FW_CMD_TIMELINE_READ 0x43u  /* u32 which, u32 first, u32 max -> u32 which, u32 first, u32 n, records */
#define FW_CMD_PRESET 0x44u         /* -> u64 digest, the server's preset as canonical JSON text */

/* RUN flags. */
#define FW_RUN_RESUME 0x1u /* do not write CTRL.start; keep waiting for the run in progress */

/* ---- frame status (header byte 7 of a response; 0 in requests) ---------------------------- */
#define FW_ST_OK 0x00u
#define FW_ST_TRUNCATED 0x01u       /* fewer than FW_HEADER_SIZE bytes */
#define FW_ST_BAD_MAGIC 0x02u
#define FW_ST_BAD_VERSION 0x03u
#define FW_ST_BAD_TYPE 0x04u        /* a request frame was expected */
#define FW_ST_BAD_LENGTH 0x05u      /* payload_len != bytes received after the header */
#define FW_ST_BAD_CRC 0x06u
#define FW_ST_UNKNOWN_COMMAND 0x07u
#define FW_ST_BAD_PAYLOAD 0x08u     /* payload too short / too long / inconsistent for the command */
#define FW_ST_BAD_ARGUMENT 0x09u    /* a field value is not allowed (alignment, index, zero) */
#define FW_ST_OUT_OF_RANGE 0x0Au    /* address range outside the memory (HBM bytes, SMEM words) */
#define FW_ST_TOO_LARGE 0x0Bu       /* payload_len > FW_MAX_PAYLOAD, transfer > FW_MAX_CHUNK,
                                       or the response does not fit */
#define FW_ST_BUSY 0x0Cu            /* the core is running (RUN without RESUME) */
#define FW_ST_HAL_ERROR 0x0Du       /* the HAL reported a failure (simulator exception, bus error) */
/* Session statuses: sent by a network front end, never by fw_handle_frame (docs/protocol.md 7). */
#define FW_ST_NO_SESSION 0x0Eu      /* the command needs a device: HELLO first */
#define FW_ST_PRESET_MISMATCH 0x0Fu /* HELLO: the client's preset digest is not the device's */

/* ---- run record status (first field of RUN / GET_STATE responses) ------------------------- */
#define FW_RUN_DONE 0u     /* STATUS.done, no error */
#define FW_RUN_ERROR 1u    /* STATUS.error with an error code other than deadlock */
#define FW_RUN_DEADLOCK 2u /* STATUS.error with error code 2 (hardware deadlock detector) */
#define FW_RUN_TIMEOUT 3u  /* firmware watchdog: still busy after max_cycles */
#define FW_RUN_IDLE 4u     /* GET_STATE only: not busy, not done, no error */
#define FW_RUN_BUSY 5u     /* GET_STATE only: running */

/* Session: a timeline record on the wire (TIMELINE_READ). */
#define FW_TIMELINE_EVENTS 0u
#define FW_TIMELINE_HBM 1u
#define FW_TIMELINE_EVENT_SIZE 16u /* u64 cycle, u8 queue, u8 kind, u16 0, u32 queue_index */
#define FW_TIMELINE_HBM_SIZE 24u   /* u32 channel, u32 kind, u64 begin, u64 end */

#define FW_RUN_RECORD_SIZE 176u
#define FW_INFO_SIZE 52u
#define FW_ERROR_PAYLOAD_SIZE 16u

/* ---- firmware version ---------------------------------------------------------------------- */
#define FW_VERSION_MAJOR 1u
#define FW_VERSION_MINOR 1u
#define FW_VERSION_PATCH 0u
#define FW_VERSION ((FW_VERSION_MAJOR << 16) | (FW_VERSION_MINOR << 8) | FW_VERSION_PATCH)

/* ---- CRC-32 (IEEE 802.3: reflected, polynomial 0xEDB88320, init and final xor 0xFFFFFFFF) --- */
/* zlib-style: start with crc = 0, feed the result back in to continue. */
uint32_t fw_crc32(uint32_t crc, const uint8_t* data, size_t len);

/* ---- little-endian access ------------------------------------------------------------------ */
void fw_put_u16(uint8_t* p, uint16_t v);
void fw_put_u32(uint8_t* p, uint32_t v);
void fw_put_u64(uint8_t* p, uint64_t v);
uint16_t fw_get_u16(const uint8_t* p);
uint32_t fw_get_u32(const uint8_t* p);
uint64_t fw_get_u64(const uint8_t* p);
void fw_copy(uint8_t* dst, const uint8_t* src, size_t n);

/* ---- frames --------------------------------------------------------------------------------- */
struct fw_frame_header {
  uint32_t magic;
  uint8_t version;
  uint8_t type;
  uint8_t command;
  uint8_t status;
  uint32_t seq;
  uint32_t payload_len;
  uint32_t crc;
};

/* Reads the 20 header bytes without any check (in_len must be >= FW_HEADER_SIZE). */
void fw_header_read(const uint8_t* in, struct fw_frame_header* h);

/* Checks magic, version and payload_len <= max_payload (else FW_ST_TOO_LARGE) of the first
 * FW_HEADER_SIZE bytes: what a stream receiver needs before it reads the payload. Fills *h
 * (always, when in_len is large enough). Returns FW_ST_OK or the status; detail0 and detail1 (may be NULL) receive what an error
 * frame reports (docs/protocol.md). */
int fw_header_check(const uint8_t* in, size_t in_len, uint32_t max_payload,
                    struct fw_frame_header* h, uint64_t* detail0, uint64_t* detail1);

/* Full validation of a complete frame: header check, payload_len == in_len - FW_HEADER_SIZE, CRC.
 * On FW_ST_OK *payload points into in. The frame type is not checked. */
int fw_frame_decode(const uint8_t* in, size_t in_len, uint32_t max_payload,
                    struct fw_frame_header* h, const uint8_t** payload, uint64_t* detail0,
                    uint64_t* detail1);

/* Writes the header for a payload already placed at buf + FW_HEADER_SIZE and computes the CRC.
 * Returns the frame size. */
size_t fw_frame_finish(uint8_t* buf, uint8_t type, uint8_t command, uint8_t status, uint32_t seq,
                       uint32_t payload_len);

/* Copies payload behind a new header into out. Returns FW_ST_OK, or FW_ST_TOO_LARGE when the frame
 * does not fit out_cap or payload_len > FW_MAX_PAYLOAD (then *out_len = 0). */
int fw_frame_encode(uint8_t type, uint8_t command, uint8_t status, uint32_t seq,
                    const uint8_t* payload, size_t payload_len, uint8_t* out, size_t out_cap,
                    size_t* out_len);

/* ---- bounded payload cursors (never read or write outside their buffer) --------------------- */
struct fw_reader {
  const uint8_t* p;
  size_t len;
  size_t pos;
  int short_read; /* set once a read went past the end; later reads return 0 */
};
void fw_reader_init(struct fw_reader* r, const uint8_t* p, size_t len);
uint8_t fw_rd_u8(struct fw_reader* r);
uint32_t fw_rd_u32(struct fw_reader* r);
uint64_t fw_rd_u64(struct fw_reader* r);
/* Returns a pointer to the next n bytes and skips them, or NULL (and sets short_read). */
const uint8_t* fw_rd_bytes(struct fw_reader* r, size_t n);
size_t fw_rd_remaining(const struct fw_reader* r);

struct fw_writer {
  uint8_t* p;
  size_t cap;
  size_t pos;
  int overflow; /* set once a write did not fit; later writes are dropped */
};
void fw_writer_init(struct fw_writer* w, uint8_t* p, size_t cap);
void fw_wr_u8(struct fw_writer* w, uint8_t v);
void fw_wr_u32(struct fw_writer* w, uint32_t v);
void fw_wr_u64(struct fw_writer* w, uint64_t v);
void fw_wr_bytes(struct fw_writer* w, const uint8_t* data, size_t n);
/* Reserves n bytes and returns where to put them, or NULL on overflow. */
uint8_t* fw_wr_reserve(struct fw_writer* w, size_t n);

/* Names for humans (static strings; "unknown" for values without a name). */
const char* fw_command_name(uint8_t command);
const char* fw_status_name(uint8_t status);
const char* fw_run_status_name(uint32_t run_status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TPUEMU_FW_PROTOCOL_H */
