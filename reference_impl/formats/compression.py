"""gzip as the connector applies it: the whole object is one gzip stream (R10.1, R10.2)."""
from __future__ import annotations

import gzip
import zlib

from reference_impl.formats import FormatOptions, detect_compression


def compress(data: bytes, opts: FormatOptions) -> bytes:
    if opts.compression == "none":
        return data
    if opts.compression != "gzip":
        raise ValueError(f"s3.compression.type={opts.compression!r} is not none or gzip")
    level = zlib.Z_DEFAULT_COMPRESSION if opts.compression_level == -1 else opts.compression_level
    return gzip.compress(data, compresslevel=9 if level == -1 else level, mtime=0)


def decompress(data: bytes) -> bytes:
    return gzip.decompress(data) if detect_compression(data) == "gzip" else data
