"""The start of every atheris target in this folder: seeds written fresh into a temporary
directory (they may depend on the time, as the decoder's windows must be recent), libFuzzer's
options and corpus directories from the command line, the target's input and mutator."""

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris


def run(
    name: str,
    seeds: Callable[[Path], None],
    one_input: Callable[[bytes], None],
    custom_mutator: Callable[[bytes, int, int], bytes],
) -> None:
    args = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{name}-seeds-") as into:
        seeds(Path(into))
        corpora = [a for a in args if not a.startswith("-")]
        options = [a for a in args if a.startswith("-")]
        atheris.Setup([sys.argv[0], *options, *corpora, into], one_input, custom_mutator=custom_mutator)
        atheris.Fuzz()
