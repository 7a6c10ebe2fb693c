"""Load a tiktoken encoding, offline if need be.

tiktoken downloads its BPE files on first use and caches them. On a machine without internet access that first
download fails. The ``bpe-openai`` package ships the same ``o200k_base`` and ``cl100k_base`` files (gzip-compressed);
their decompressed bytes carry exactly the sha256 that tiktoken verifies, so they can be placed in tiktoken's own
cache, after which the real tiktoken loads them as if it had downloaded them.

Order: tiktoken's normal path first (network or an existing cache); if that fails, seed the cache from bpe-openai
and try again; if that fails too, raise :class:`EncodingUnavailable` with the reasons, so callers can fall back.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from functools import lru_cache
from importlib import resources
from typing import Any

_BLOB_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


class EncodingUnavailable(RuntimeError):
    """No way to load the requested tiktoken encoding on this machine."""


def _tiktoken_cache_dir() -> str:
    """The directory tiktoken itself reads its cache from (same rule as ``tiktoken.load``)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def seed_cache_from_bpe_openai(encoding: str) -> str:
    """Write bpe-openai's copy of ``encoding`` into tiktoken's cache; returns the path written.

    Raises :class:`EncodingUnavailable` when bpe-openai is missing, has no such file, or its bytes do not match the
    hash tiktoken expects.
    """
    if encoding not in _BLOB_URLS:
        raise EncodingUnavailable(f"bpe-openai ships no copy of {encoding!r} (only {', '.join(_BLOB_URLS)})")
    try:
        data_dir = resources.files("bpe_openai") / "data" / f"{encoding}.tiktoken.gz"
        raw = gzip.decompress(data_dir.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise EncodingUnavailable(f"bpe-openai is not installed or lacks {encoding}: {exc}") from exc
    if hashlib.sha256(raw).hexdigest() != _SHA256[encoding]:
        raise EncodingUnavailable(f"bpe-openai's {encoding} does not match tiktoken's expected sha256")
    cache_dir = _tiktoken_cache_dir()
    if cache_dir == "":
        raise EncodingUnavailable("tiktoken caching is disabled (TIKTOKEN_CACHE_DIR is empty)")
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, hashlib.sha1(_BLOB_URLS[encoding].encode()).hexdigest())
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(raw)
    os.replace(tmp, path)
    return path


@lru_cache(maxsize=8)
def get_encoding(encoding: str = "o200k_base") -> Any:
    """A ``tiktoken.Encoding``: tiktoken's normal path first, then the bpe-openai seed."""
    try:
        import tiktoken
    except ImportError as exc:  # pragma: no cover - tiktoken is a core dependency
        raise EncodingUnavailable("tiktoken is not installed") from exc
    try:
        return tiktoken.get_encoding(encoding)
    except Exception as first:  # network errors, hash errors, unknown encodings
        if encoding not in tiktoken.list_encoding_names():
            raise EncodingUnavailable(
                f"unknown tiktoken encoding {encoding!r}; known: {', '.join(tiktoken.list_encoding_names())}"
            ) from first
        try:
            seed_cache_from_bpe_openai(encoding)
            return tiktoken.get_encoding(encoding)
        except EncodingUnavailable as second:
            raise EncodingUnavailable(
                f"tiktoken could not load {encoding!r} ({type(first).__name__}: {str(first)[:160]}) and {second}"
            ) from second
