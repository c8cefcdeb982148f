"""Fixtures: generated stubs and a running Swift EchoServer."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import stubs  # noqa: E402

ROOT = stubs.ROOT


@pytest.fixture(scope="session")
def protos():
    return stubs.load()


@pytest.fixture(scope="session")
def echo_server_address():
    binary = os.environ.get("ECHO_SERVER_BIN", os.path.join(ROOT, ".build", "debug", "EchoServer"))
    if not os.path.exists(binary):
        pytest.fail(f"EchoServer binary not found at {binary}: run `swift build` first (or set ECHO_SERVER_BIN)")
    process = subprocess.Popen([binary, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline().strip()
        if not line.startswith("listening on "):
            pytest.fail(f"EchoServer did not start: {line!r}")
        yield line[len("listening on "):]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
