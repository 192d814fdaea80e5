"""Test support shared by the Python tests, the e2e seed and the benchmarks (never imported by a
service): synthetic agent uploads (`snapshots`) and reference workloads (`workloads`)."""
