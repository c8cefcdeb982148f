// Entry point of Gateway.
print("Gateway: not wired yet")
