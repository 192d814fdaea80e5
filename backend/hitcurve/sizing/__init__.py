"""The sizing answers and what they read: a subject's Basis (basis.py) loaded from the database
(server.py, cluster.py) or from recent windows (recent_windows.py), kept per process (cache.py),
its band (band.py), the `-m` rules (limits.py), the words (prose.py) and the answers
(answers.py)."""
