// Entry point of EchoServer.
print("EchoServer: not wired yet")
