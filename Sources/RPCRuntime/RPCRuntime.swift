// The RPCRuntime module; see docs/ARCHITECTURE.md.
