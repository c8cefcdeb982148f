// The Contracts module; see docs/ARCHITECTURE.md.
