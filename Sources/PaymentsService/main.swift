import Foundation

// Entry point of PaymentsService: `verify-jws` for support staff; the RPC
// server is wired in PaymentsServer.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "verify-jws" {
    exit(VerifyJWSCommand.run(arguments: Array(arguments.dropFirst())))
}
print("PaymentsService: not wired yet")
