"""Preview a report: `python -m hitcurve_worker.reports preview --org <id> [--cluster <id>] [--html]`
prints the e-mail's text (or HTML) version for the organization, as it would be sent now."""

from __future__ import annotations

import argparse
import sys
import uuid

from hitcurve.reports.content import build_report
from hitcurve.reports.render import render
from hitcurve_worker.reliability import now, session


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hitcurve_worker.reports")
    sub = p.add_subparsers(dest="cmd", required=True)
    pv = sub.add_parser("preview", help="print a report as it would be sent now")
    pv.add_argument("--org", required=True, type=uuid.UUID, help="organization id")
    pv.add_argument("--cluster", type=uuid.UUID, default=None, help="only this cluster of the organization")
    pv.add_argument("--to", default="you@example.com", help="recipient named in the footer")
    pv.add_argument("--html", action="store_true", help="print the HTML version instead of the text")
    args = p.parse_args(argv)
    from sqlalchemy.exc import NoResultFound

    with session() as db:
        try:
            report = build_report(db, args.org, now(), args.cluster)
        except NoResultFound:
            print(f"no organization {args.org}", file=sys.stderr)
            return 2
    subject, text, html = render(report, args.to)
    print(f"Subject: {subject}\n")
    print(html if args.html else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
