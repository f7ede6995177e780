#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed frames of the firmware frame fuzzer (firmware/fuzz/fuzz_frame.cpp) into
tests/fuzz/corpus/frame/: one valid request per command of docs/protocol.md, a '!' twin of each
with a payload (the harness repairs the header and CRC of inputs starting with '!' and more than a
header, so mutations of the payload still reach the command decoder), and a few broken frames.
An even seq gives the response the whole output buffer, an odd one a small buffer (the harness).
Usage: make_frame_seeds.py [DIR]"""
import os
import struct
import sys
import zlib

MAGIC, VERSION, REQUEST = 0x46555054, 1, 0x01


def frame(command, payload, seq=1):
    header = struct.pack("<IBBBBII", MAGIC, VERSION, REQUEST, command, 0, seq, len(payload))
    crc = zlib.crc32(payload, zlib.crc32(header)) & 0xFFFFFFFF  # IEEE CRC-32, header then payload
    return header + struct.pack("<I", crc) + payload


requests = {
    "ping": (0x01, b"hello"),
    "info": (0x02, b""),
    "write_mem": (0x10, struct.pack("<QI", 0x100, 8) + bytes(range(8))),
    "read_mem": (0x11, struct.pack("<QI", 0x100, 64)),
    "write_smem": (0x12, struct.pack("<IIII", 4, 2, 0xDEADBEEF, 7)),
    "read_smem": (0x13, struct.pack("<II", 4, 2)),
    "load_program": (0x14, struct.pack("<QI", 0x1000, 32) + bytes(32)),
    "run": (0x20, struct.pack("<IQ", 0, 10000)),
    "run_resume": (0x20, struct.pack("<IQ", 1, 100)),
    "get_state": (0x21, b""),
    "read_counters": (0x22, b""),
    "set_sem": (0x23, struct.pack("<II", 3, 7)),
    "reset": (0x24, b""),
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "frame")
os.makedirs(out, exist_ok=True)
seeds = {}
for i, (name, (command, payload)) in enumerate(requests.items(), start=1):
    f = frame(command, payload, 2 * i)
    seeds[name] = f
    if payload:
        seeds["repair-" + name] = b"!" + f[1:]
seeds["small-out-read_mem"] = frame(0x11, struct.pack("<QI", 0, 4096), 3)
seeds["small-out-get_state"] = frame(0x21, b"", 5)
good = seeds["write_mem"]
seeds["bad-crc"] = good[:16] + bytes([good[16] ^ 1]) + good[17:]
seeds["bad-magic"] = b"XPUF" + good[4:]
seeds["truncated"] = good[:12]
seeds["bad-length"] = good[:-1]
seeds["unknown-command"] = frame(0x7F, b"")
seeds["short-payload"] = frame(0x11, struct.pack("<Q", 0))
for name, data in seeds.items():
    with open(os.path.join(out, name + ".bin"), "wb") as fh:
        fh.write(data)
