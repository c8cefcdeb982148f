// The AppStoreVerification module; see docs/ARCHITECTURE.md.
