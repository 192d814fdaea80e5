"""The answer rules, pure (no database, no HTTP): curves and their interpolation, the band, which
windows an answer rests on, warm-up, memcached's -m, hysteresis, TTLs, health thresholds and
status, the alert rules, and the words and percentages answers are written in."""
