# SPDX-License-Identifier: Apache-2.0
"""The backend the suite runs on: --tpuemu-backend NAME, else $TPUEMU_BOARD (a lab's board as
remote://host:port), else fake. `--tpuemu-backend serve` starts a `tpuemu serve` (tlm devices) on a
free port for the session and runs on remote://127.0.0.1:PORT. $TPUEMU_CLI is the tpuemu
executable the results are compared with."""

import json
import os
import subprocess
import time

import pytest

import tpuemu


def pytest_addoption(parser):
    parser.addoption("--tpuemu-backend", default=None,
                     help="fake, tlm, rtl, remote://host:port, or serve (a tpuemu serve started here)")


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("TPUEMU_CLI")
    assert path and os.access(path, os.X_OK), "TPUEMU_CLI must name the tpuemu executable"
    return path


@pytest.fixture(scope="session")
def backend(request, cli, tmp_path_factory):
    name = request.config.getoption("--tpuemu-backend") or os.environ.get("TPUEMU_BOARD") or "fake"
    if name != "serve":
        yield name
        return
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "w") as err:
        server = subprocess.Popen([cli, "serve", "--listen", "127.0.0.1:0", "--json", "--backend", "tlm",
                                   "--devices", "2"], stderr=err, stdout=subprocess.DEVNULL)
    try:
        port = None
        for _ in range(200):
            for line in open(log):
                event = json.loads(line)
                if event.get("event") == "listening":
                    port = event["port"]
            if port or server.poll() is not None:
                break
            time.sleep(0.05)
        assert port, f"tpuemu serve did not start: {open(log).read()}"
        yield f"remote://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture
def device(backend):
    with tpuemu.open_device(backend, preset="default") as dev:
        yield dev
