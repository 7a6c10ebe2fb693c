"""Build the hostile files of issue 13 ("safe to share") and measure what reading each one costs.

    python tools/make_hostile_files.py [--dir DIR]

Writes, into DIR (default: a temporary folder): an Inspect ``.eval`` archive whose one sample member inflates to
900 MB (a ~0.9 MB file; ``--lying`` also writes one whose headers declare 1 KB), a gzip bomb, a FIFO and a symlink
to ``/dev/zero``; then loads each in a fresh ``python -m compaction info`` process and prints its exit status, its
first line of error output, the wall time and the peak RSS. Nothing is asserted: these are the figures of the
"Done when" list.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20


def eval_bomb(path: Path, megabytes: int = 900, level: int = 9) -> Path:
    """An ``.eval`` (zip) archive with a ``header.json`` and one sample member of ``megabytes`` MB of one byte,
    written as a stream (never held in memory) at deflate ``level``."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        archive.writestr("header.json", '{"status": "success"}')
        with archive.open("samples/1_epoch_1.json", "w", force_zip64=False) as member:
            block = b" " * MB
            for _ in range(megabytes):
                member.write(block)
    return path


#: the zip headers that declare a member's uncompressed size, local then central: (signature, offset of the name's
#: length, offset of the name, offset of the uncompressed size)
_ZIP_HEADERS = ((b"PK\x03\x04", 26, 30, 22), (b"PK\x01\x02", 28, 46, 24))


def lying_eval_bomb(source: Path, path: Path, declared: int = 1024) -> Path:
    """A copy of ``source`` whose sample member's local and central headers declare ``declared`` uncompressed bytes
    (the data still inflates to the full size)."""
    data = bytearray(source.read_bytes())
    name = b"samples/1_epoch_1.json"
    for signature, name_len_at, name_at, size_at in _ZIP_HEADERS:
        header = data.find(signature)
        while header >= 0:
            name_len = int.from_bytes(data[header + name_len_at:header + name_len_at + 2], "little")
            if data[header + name_at:header + name_at + name_len] == name:
                data[header + size_at:header + size_at + 4] = declared.to_bytes(4, "little")
                break
            header = data.find(signature, header + 4)
    path.write_bytes(bytes(data))
    return path


def gzip_bomb(path: Path, megabytes: int = 1024) -> Path:
    """A gzip file inflating to ``megabytes`` MB of spaces: one compressed megabyte repeated as that many gzip
    members (a valid gzip file; each member is about 1 KB)."""
    import gzip

    member = gzip.compress(b" " * MB, 9)
    with open(path, "wb") as out:
        for _ in range(megabytes):
            out.write(member)
    return path


#: runs the CLI, then writes the process's own peak RSS (``VmHWM``: per address space, so it starts afresh at exec,
#: unlike ``ru_maxrss``, which keeps the high-water mark of the forked copy of a large parent such as a test worker)
_MEASURED_CLI = """
import os, sys
from compaction.cli import main
try:
    status = main(sys.argv[1:])
finally:
    with open("/proc/self/status") as f:
        peak = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    with open(os.environ["COMPACTION_LAB_PEAK_RSS_FILE"], "w") as out:
        out.write(peak)
sys.exit(status)
"""


def measure(path: Path) -> tuple[int, str, float, float]:
    """(exit status, first stderr line, seconds, peak RSS in MB) of ``python -m compaction info PATH``."""
    with tempfile.NamedTemporaryFile(prefix="peak-rss-", delete=False) as peak_file:
        peak_path = Path(peak_file.name)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _MEASURED_CLI, "info", str(path)], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env={**os.environ, "COMPACTION_LAB_PEAK_RSS_FILE": str(peak_path)})
    elapsed = time.monotonic() - started
    try:
        peak_kb = float(peak_path.read_text() or 0)
    finally:
        peak_path.unlink(missing_ok=True)
    line = (proc.stderr.decode(errors="replace").strip().splitlines() or [""])[0]
    return proc.returncode, line, elapsed, peak_kb / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir")
    parser.add_argument("--lying", action="store_true", help="also the .eval whose headers lie about the size")
    args = parser.parse_args(argv)
    folder = Path(args.dir or tempfile.mkdtemp(prefix="hostile-"))
    folder.mkdir(parents=True, exist_ok=True)
    files = [eval_bomb(folder / "bomb.eval")]
    if args.lying:
        files.append(lying_eval_bomb(files[0], folder / "lying.eval"))
    files.append(gzip_bomb(folder / "bomb.jsonl.gz"))
    fifo, zero, directory = folder / "fifo.jsonl", folder / "zero.jsonl", folder / "folder.jsonl"
    for stale in (fifo, zero):
        stale.unlink(missing_ok=True)
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    directory.mkdir(exist_ok=True)
    files += [fifo, zero, directory]
    for path in files:
        size = path.stat().st_size if path.is_file() else 0
        status, line, seconds, rss = measure(path)
        print(f"{path.name:16} {size / MB:8.2f} MB  exit {status}  {seconds:5.2f} s  peak RSS {rss:6.0f} MB  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
