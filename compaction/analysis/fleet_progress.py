"""A progress bar for long fleet runs on the command line: tqdm on stderr when it is installed, else a plain line
rewritten in place. Never on stdout, so piped output stays clean."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


@contextmanager
def progress_bar(enabled: bool, what: str = "rows", stream: TextIO | None = None
                 ) -> Iterator[Callable[[int, int], None] | None]:
    """``progress(done, total)`` drawing a bar on ``stream`` (stderr) while the block runs; None when not
    ``enabled``."""
    if not enabled:
        yield None
        return
    stream = stream or sys.stderr
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=0, unit=f" {what}", file=stream, dynamic_ncols=True, smoothing=0.1)

        def update(done: int, total: int) -> None:
            if total != bar.total:
                bar.total = total
            bar.update(done - bar.n)

        try:
            yield update
        finally:
            bar.close()
        return
    last = [0.0]

    def line(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.2 and done < total:
            return
        last[0] = now
        share = done / total if total else 1.0
        stream.write(f"\r{done:,}/{total:,} {what} ({share:.0%})")
        stream.flush()

    try:
        yield line
    finally:
        stream.write("\n")
        stream.flush()
