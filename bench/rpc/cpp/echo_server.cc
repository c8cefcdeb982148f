// testing.v1.Echo/Unary on C++ gRPC's callback API (grpc::CallbackService with
// ServerUnaryReactor), the baseline for bench/rpc/run.sh. Same behaviour as
// the Swift EchoServer for what the benchmark sends: message and payload are
// echoed; deadline_remaining_ms is -1 without a deadline.
// Usage: echo_server HOST:PORT (port 0 = any). Prints "listening on HOST:PORT".
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "testing/v1/echo.grpc.pb.h"

namespace {

class EchoService final : public testing::v1::Echo::CallbackService {
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context,
                                  const testing::v1::EchoRequest* request,
                                  testing::v1::EchoResponse* response) override {
    response->set_message(request->message());
    response->set_payload(request->payload());
    const auto deadline = context->deadline();
    if (deadline == std::chrono::system_clock::time_point::max()) {
      response->set_deadline_remaining_ms(-1);
    } else {
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::system_clock::now());
      response->set_deadline_remaining_ms(remaining.count() > 0 ? remaining.count() : 0);
    }
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    if (request->fail_with_code() != 0) {
      reactor->Finish(grpc::Status(static_cast<grpc::StatusCode>(request->fail_with_code()),
                                   request->fail_with_message()));
    } else {
      reactor->Finish(grpc::Status::OK);
    }
    return reactor;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string address = argc > 1 ? argv[1] : "127.0.0.1:0";
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "usage: echo_server HOST:PORT\n");
    return 2;
  }
  EchoService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "echo_server: could not listen on %s\n", address.c_str());
    return 1;
  }
  std::printf("listening on %s:%d\n", address.substr(0, colon).c_str(), port);
  std::fflush(stdout);
  server->Wait();  // Ends when the bench script terminates the process.
  return 0;
}
