"""Start the API the way every launcher does (scripts, systemd, compose):

    python -m hitcurve.serve --host 127.0.0.1 --port 8000 [--workers N]

- `Settings.api_workers` processes (default 2): an upload keeping one process busy leaves the
  others answering; uvicorn restarts a process that dies.
- No access log unless `Settings.api_access_log` (a line per upload costs more than it tells).
- Request heads bounded in size and time (hitcurve.api.http_protocol: uvicorn's httptools
  protocol with a 431 past Settings.max_request_head_bytes and a 408 past
  Settings.request_header_timeout_s); bodies in hitcurve.api.bounds.
- uvicorn's own proxy-header handling is off. By default uvicorn believes X-Forwarded-For from
  127.0.0.1, so any local client (or anything a loopback proxy passes through) picks its own
  address. The app believes those headers only from `Settings.trusted_proxies` (main.py).
"""

import argparse

import uvicorn

from hitcurve.api.http_protocol import BoundedHttpToolsProtocol
from hitcurve.core.config import get_settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hitcurve.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=None, help="API processes (HITCURVE_API_WORKERS)")
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    uvicorn.run(
        "hitcurve.main:app",
        host=args.host,
        port=args.port,
        workers=args.workers or get_settings().api_workers,
        access_log=get_settings().api_access_log,
        proxy_headers=False,
        forwarded_allow_ips="",
        server_header=False,
        http=BoundedHttpToolsProtocol,
        # A process that answers no health ping within this time is replaced; importing the app
        # takes several seconds on a loaded machine, so the default 5 s killed healthy starts.
        timeout_worker_healthcheck=30,
        log_level=args.log_level,
    )


if __name__ == "__main__":
    main()
