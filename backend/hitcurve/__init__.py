"""Hitcurve backend: FastAPI service for memcached hit-rate curves."""

__version__ = "0.1.0"
