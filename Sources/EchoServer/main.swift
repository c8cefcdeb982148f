// EchoServer: serves testing.v1.Echo/Unary on RPCRuntime for interop tests
// and benchmarks. Usage: EchoServer --listen HOST:PORT (port 0 = any).
// Prints "listening on HOST:PORT" on stdout once ready; stops on SIGTERM/SIGINT.
import Foundation
import RPCCore
import RPCRuntime
import ServiceKit

let options: CommandLineOptions
do {
    options = try CommandLineOptions(
        specs: [
            OptionSpec(flag: "--listen", env: "ECHO_LISTEN", default: "127.0.0.1:0", help: "address to listen on"),
            OptionSpec(flag: "--tls-cert", env: "ECHO_TLS_CERT", help: "PEM certificate chain (enables TLS)"),
            OptionSpec(flag: "--tls-key", env: "ECHO_TLS_KEY", help: "PEM private key"),
        ],
        arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
    if options.helpRequested {
        print(options.helpText(program: "EchoServer", summary: "gRPC echo server for interop tests"))
        exit(0)
    }
} catch {
    FileHandle.standardError.write(Data("EchoServer: \(error)\n".utf8))
    exit(2)
}

// Installed before readiness is announced, so no signal is lost.
let termination = ShutdownSignal.install()

do {
    let address = try HostAndPort(parsing: try options.required("--listen"))
    var tls: TLSConfiguration?
    if let certificate = options.value("--tls-cert") {
        tls = .server(certificateChainPath: certificate, privateKeyPath: try options.required("--tls-key"))
    }
    var router = Router()
    EchoService.register(on: &router)
    let server = RPCServer(
        configuration: .init(listen: .init(host: address.host, port: address.port), tls: tls), router: router)
    let port = try server.start()
    // Unbuffered write so a parent process reading our stdout sees it at once.
    FileHandle.standardOutput.write(Data("listening on \(address.host):\(port)\n".utf8))
    let signal = await termination.wait()
    FileHandle.standardError.write(Data("EchoServer: \(signal), shutting down\n".utf8))
    await server.shutdown(gracePeriod: .seconds(5))
} catch {
    FileHandle.standardError.write(Data("EchoServer: \(error)\n".utf8))
    exit(1)
}
