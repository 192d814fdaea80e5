"""A local SMTP sink: every mail it receives is written as a file <time>-<n>-<recipient>.eml into
the folder given. `make demo` sends its mails here (sign-up confirmations, invitations, password
resets, test reports land in .run/dev/mail/), and the browser checks follow the links in them.
Listens on 127.0.0.1 only; runs until killed. Usage: mailsink.py PORT DIR"""

import sys
import time
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.n = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd API
        self.n += 1
        for rcpt in envelope.rcpt_tos:
            name = f"{time.time_ns()}-{self.n:04d}-{rcpt}.eml"
            (self.folder / name).write_bytes(envelope.content)
        return "250 OK"


def main() -> None:
    port, folder = int(sys.argv[1]), Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    ctl = Controller(Sink(folder), hostname="127.0.0.1", port=port)
    ctl.start()
    try:
        while True:
            time.sleep(3600)
    finally:
        ctl.stop()


if __name__ == "__main__":
    main()
