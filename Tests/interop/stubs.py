"""Generates Python gRPC stubs from the repository's protos into a temp dir.

Stubs are produced at test time (never committed) with grpc_tools.protoc.
"""
import importlib
import importlib.util
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTOS = os.path.join(ROOT, "Protos")
FILES = ["testing/v1/echo.proto", "grpc/health/v1/health.proto"]


def load():
    """Returns (echo_pb2, echo_pb2_grpc, health_pb2)."""
    from grpc_tools import protoc
    import grpc_tools

    out = tempfile.mkdtemp(prefix="rpc-interop-stubs-")
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["protoc", f"-I{PROTOS}", f"-I{include}", f"--python_out={out}", f"--grpc_python_out={out}"] + FILES
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed for {FILES}")
    for package in ["testing", "testing/v1", "grpc", "grpc/health", "grpc/health/v1"]:
        open(os.path.join(out, package, "__init__.py"), "a").close()
    # Appended, not prepended: the generated "grpc" package must not shadow grpcio.
    sys.path.append(out)
    echo_pb2 = importlib.import_module("testing.v1.echo_pb2")
    echo_pb2_grpc = importlib.import_module("testing.v1.echo_pb2_grpc")
    # Health messages load by file path for the same reason.
    spec = importlib.util.spec_from_file_location(
        "interop_health_pb2", os.path.join(out, "grpc", "health", "v1", "health_pb2.py"))
    health_pb2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(health_pb2)
    return echo_pb2, echo_pb2_grpc, health_pb2


def load_points():
    """Returns (points_pb2, points_pb2_grpc) for points/v1/points.proto."""
    from grpc_tools import protoc
    import grpc_tools

    out = tempfile.mkdtemp(prefix="rpc-interop-points-stubs-")
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["protoc", f"-I{PROTOS}", f"-I{include}", f"--python_out={out}", f"--grpc_python_out={out}", "points/v1/points.proto"]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed for points/v1/points.proto")
    for package in ["points", "points/v1"]:
        open(os.path.join(out, package, "__init__.py"), "a").close()
    sys.path.append(out)
    return importlib.import_module("points.v1.points_pb2"), importlib.import_module("points.v1.points_pb2_grpc")
