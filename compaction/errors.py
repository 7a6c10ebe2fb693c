"""Every error a user can cause, in one hierarchy.

:class:`CompactionError` is the root: a log that cannot be read, a setting that is not valid, a replay stopped by
its budget. Each carries one line naming the file, line, field or parameter and what was expected; the CLI prints it
and exits with status 2, the app shows it as a message. Anything else that escapes is a bug in Compaction Lab: the CLI
exits with status 1 and a short report.

The classes also derive from the built-in exception a caller would expect (``ValueError`` for bad input), so code
that catches those keeps working.
"""

from __future__ import annotations


class CompactionError(Exception):
    """Something a user caused (a bad log, setting or request), described in one line."""


class LoadError(CompactionError, ValueError):
    """A log that cannot be read: names the file, the line or field, and what was expected."""

    def __init__(self, path: str | None, message: str, line: int | None = None, field: str | None = None,
                 internal: bool = False) -> None:
        self.path = path
        #: True when a reader met data it did not anticipate (a reader bug made safe), not a checked rule
        self.internal = internal
        self.line = line
        self.field = field
        self.reason = message
        where = path or "<input>"
        if line is not None:
            where += f", line {line}"
        if field:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class ConfigError(CompactionError, ValueError):
    """A setting that is not valid: an unknown strategy, parameter, counter or format, a value of the wrong type or
    out of range, thresholds the framework itself refuses."""


class UsageError(ConfigError):
    """A mistake in a command line itself (a malformed option)."""


__all__ = ["CompactionError", "ConfigError", "LoadError", "UsageError"]
