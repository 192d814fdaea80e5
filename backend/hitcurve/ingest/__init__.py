"""Agent uploads on their way in: decoding and validation away from the event loop (uploads), a
snapshot as its stored column values (snapshot_rows), trace chunk records' storage format
(tracecodec)."""
