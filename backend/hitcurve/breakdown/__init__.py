"""The what-if models on one agent window's per-prefix curves: a pool of its own for a prefix
(poolsplit) and a prefix's TTL changed (ttlwhatif)."""
