"""The install's settings from the host, no restart (the database the HITCURVE_* settings name):

    python -m hitcurve.notify.install_admin private-webhooks [allow|refuse]

Without allow/refuse it prints the setting. "allow" lets notification channels target loopback,
private and link-local addresses (a self-hosted install whose receivers live on its own network);
"refuse" restores the default. The API reads the setting at each channel save and before each
send (hitcurve.crud.install), so it takes effect at once."""

from __future__ import annotations

import argparse
import sys

from hitcurve.core.db import get_sessionmaker
from hitcurve.crud import install


def main(argv: list[str] | None = None) -> int:
    prog = "python -m hitcurve.notify.install_admin"
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    pw = sub.add_parser("private-webhooks", help="private addresses for notification channels")
    pw.add_argument("change", nargs="?", choices=("allow", "refuse"))
    args = ap.parse_args(argv)
    with get_sessionmaker()() as db:
        if args.change is not None:
            install.set_private_webhooks(db, args.change == "allow", "host")
            db.commit()
        p = install.private_webhooks(db)
    state = "allowed" if p.allowed else "refused"
    why = f" ({install.ENV_VAR}=true)" if p.from_environment else ""
    print(f"private webhook targets: {state}{why}; install setting: {'allow' if p.stored else 'refuse'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
