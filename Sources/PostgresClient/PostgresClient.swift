// The PostgresClient module; see docs/ARCHITECTURE.md.
