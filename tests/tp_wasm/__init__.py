"""The real Perfetto trace_processor (wasm, run by Node) for integration tests."""
