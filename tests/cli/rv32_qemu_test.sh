#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The rv32 firmware in QEMU (docs/fpga.md): qemu-system-riscv32 -M virt runs
# tpuemu_fw_rv32_qemu.elf with its UART on a TCP port, and the host's remote backend talks to it
# as to a board (TPUEMU_BOARD): the conformance suite's protocol subset (INFO, PING, SMEM round
# trips, out-of-range errors) and the link's own tests (error frames, resynchronisation, transfers
# split across frames). Fails - never skips - when QEMU or the firmware image is missing:
# scripts/setup.sh installs QEMU and the cross toolchain.
#   rv32_qemu_test.sh FIRMWARE_ELF TEST_CONFORMANCE TEST_BOARD_LINK
set -u
elf=$1
conformance=$2
board_link=$3
qemu=$(command -v qemu-system-riscv32) || { echo "FAIL qemu-system-riscv32 is missing: run scripts/setup.sh"; exit 1; }
[[ -f "$elf" ]] || { echo "FAIL $elf was not built (no rv32 cross toolchain at configure): run scripts/setup.sh and configure again"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
pid=""
on_exit+=('[[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null')
# A free loopback port (the kernel picks it; QEMU binds it right after).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$qemu" -M virt -m 256M -display none -monitor none -bios none -kernel "$elf" \
  -serial "tcp:127.0.0.1:$port,server=on,wait=off" >"$tmp/qemu.log" 2>&1 &
pid=$!
# Ready once the firmware answers a PING: bytes sent before it set up its UART are lost, and the
# frame they were part of is answered only after a quiet second, so the probe retries.
ready=$(python3 - "$port" <<'PY'
import socket, struct, sys, time, zlib
port = int(sys.argv[1])
header = struct.pack("<IBBBBII", 0x46555054, 1, 1, 0x01, 0, 1, 4)
payload = b"ping"
frame = header + struct.pack("<I", zlib.crc32(header + payload)) + payload
deadline = time.time() + 90
while time.time() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
            s.sendall(frame)
            answer = b""
            while len(answer) < 24:
                chunk = s.recv(64)
                if not chunk:
                    break
                answer += chunk
            if len(answer) >= 24 and answer[7] == 0 and answer[20:24] == payload:
                print("yes")
                sys.exit(0)
    except OSError:
        time.sleep(0.2)
print("no")
PY
)
[[ "$ready" == yes ]] || { echo "FAIL the firmware in QEMU did not answer a PING within 90 s: $(cat "$tmp/qemu.log")"; exit 1; }
export TPUEMU_BOARD=127.0.0.1:$port TPUEMU_BOARD_PRESET=small
echo "rv32: $(basename "$elf") in QEMU, UART on $TPUEMU_BOARD"
subset='InfoMatchesThePreset:PingEchoesThePayload:SmemRoundTrips:OutOfRangeAccessIsAnError:SmemPastTheEndIsRefusedBeforeAnythingIsWritten:FirmwareRefusesSmemPastTheEndFromAnyClient'
filter=$(sed -E 's#([A-Za-z]+)#Backends/Conformance.\1/board#g' <<<"$subset")
"$conformance" --gtest_filter="$filter" || { echo "FAIL the conformance subset on the rv32 firmware"; exit 1; }
"$board_link" || { echo "FAIL the link tests on the rv32 firmware"; exit 1; }
kill -0 "$pid" 2>/dev/null || { echo "FAIL QEMU died during the tests: $(cat "$tmp/qemu.log")"; exit 1; }
echo "PASS rv32 firmware in QEMU: conformance subset and link tests"
