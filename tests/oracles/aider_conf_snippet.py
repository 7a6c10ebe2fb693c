"""Reads a generated ``.aider.conf.yml`` with aider's own argument parser (configargparse, in the oracle
environment) and prints the settings it yields: ``{"max_chat_history_tokens", "weak_model"}``."""

from __future__ import annotations

import json
import sys
import tempfile

from aider.args import get_parser

if __name__ == "__main__":
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        f.write(json.load(sys.stdin)["yaml"])
    args = get_parser([], None).parse_args(["--config", f.name])
    json.dump({"max_chat_history_tokens": args.max_chat_history_tokens, "weak_model": args.weak_model}, sys.stdout)
