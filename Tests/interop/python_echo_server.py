"""A stock grpcio implementation of testing.v1.Echo for the Swift client's
interop test. Prints "listening on 127.0.0.1:PORT" once serving; exits on
SIGTERM or when stdin closes (so it never outlives the test)."""
import os
import signal
import sys
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.dirname(__file__))
import grpc  # noqa: E402
import stubs  # noqa: E402

echo_pb2, echo_pb2_grpc, _ = stubs.load()


class Echo(echo_pb2_grpc.EchoServicer):
    def Unary(self, request, context):
        if request.delay_ms > 0:
            # Wait, but stop early when the call is cancelled or its deadline passes.
            end = time.monotonic() + min(request.delay_ms, 60000) / 1000
            while time.monotonic() < end and context.is_active():
                time.sleep(0.005)
        metadata = list(context.invocation_metadata())
        echoed = [(k, v) for (k, v) in metadata if k in set(request.echo_metadata_keys)]
        if request.fail_with_code != 0:
            context.set_trailing_metadata(echoed)
            context.abort(grpc.StatusCode(_status_code(request.fail_with_code)), request.fail_with_message)
        context.send_initial_metadata(echoed)
        context.set_trailing_metadata(echoed)
        remaining = context.time_remaining()
        response = echo_pb2.EchoResponse(
            message=request.message,
            payload=request.payload,
            deadline_remaining_ms=-1 if remaining is None else int(remaining * 1000),
        )
        for key, value in echoed:
            text = ",".join(str(b) for b in value) if isinstance(value, bytes) else value
            response.metadata.add(key=key, value=text)
        return response


def _status_code(number):
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code.value
    raise ValueError(number)


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    echo_pb2_grpc.add_EchoServicer_to_server(Echo(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    stop.wait()
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
