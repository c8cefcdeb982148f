// The ServiceKit module; see docs/ARCHITECTURE.md.
