"""docs/configuration.md is the one table of `HITCURVE_*` variables: every variable the services
read (their pydantic-settings fields, by prefix) or a script, test or benchmark names is in it,
and every variable in it is read by something. A new setting without a row, or a row whose
setting went, fails here."""

import re
import subprocess
from pathlib import Path

from pydantic_settings import BaseSettings

from hitcurve.core.config import Settings
from hitcurve.core.mail import SmtpSettings
from hitcurve.rules.status import Thresholds
from hitcurve_worker.settings import WorkerSettings

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"HITCURVE_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_])")  # a prefix (HITCURVE_SMTP_) is no name


def settings_names(cls: type[BaseSettings]) -> set[str]:
    prefix = cls.model_config.get("env_prefix", "")
    return {(f.alias or prefix + name).upper() for name, f in cls.model_fields.items()}


def table_names() -> set[str]:
    lines = (ROOT / "docs" / "configuration.md").read_text().splitlines()
    rows = [line for line in lines if line.startswith("| `")]
    return {n for row in rows for n in NAME.findall(row.split("|")[1])}


def named_in_files() -> set[str]:
    """Names written in the tracked files other than the table and the dated result files."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    files = listed.stdout.split()
    names: set[str] = set()
    for f in files:
        if f.startswith(("docs/", "bench/results/")) or f.endswith((".md", ".json", ".lock")):
            continue
        path = ROOT / f
        if path.is_file():
            names |= set(NAME.findall(path.read_text(errors="replace")))
    return names


def test_every_variable_has_one_row_and_every_row_a_reader() -> None:
    read = set().union(*(settings_names(c) for c in (Settings, SmtpSettings, Thresholds, WorkerSettings)))
    named = named_in_files()
    table = table_names()
    missing, unread = (read | named) - table, table - read - named
    assert not missing, f"read or named but not in docs/configuration.md: {sorted(missing)}"
    assert not unread, f"in docs/configuration.md but read by nothing: {sorted(unread)}"
