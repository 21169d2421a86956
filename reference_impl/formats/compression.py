"""gzip as the connector applies it (R10.1, R10.2, R10.5): the whole object is one gzip
stream at `s3.compression.level` (-1 = zlib's default, level 6, as Java's Deflater).

The model's bytes are deterministic (mtime 0) but not byte-identical to the JVM's (the
connector sync-flushes, and header bytes differ by JDK); compare objects by `decode`.
"""
from __future__ import annotations

import gzip
import zlib

from reference_impl.formats import FormatOptions, detect_compression


def compress(data: bytes, opts: FormatOptions) -> bytes:
    if opts.compression == "none":
        return data
    if opts.compression != "gzip":
        raise ValueError(f"s3.compression.type={opts.compression!r} is not none or gzip")
    level = opts.compression_level
    if not -1 <= level <= 9:
        raise ValueError(f"s3.compression.level={level} is outside -1..9")
    if level == zlib.Z_DEFAULT_COMPRESSION:
        level = 6  # zlib's Z_DEFAULT_COMPRESSION; gzip.compress would otherwise use 9
    return gzip.compress(data, compresslevel=level, mtime=0)


def decompress(data: bytes) -> bytes:
    """gzip (any number of members) → bytes; anything else is returned unchanged, raw bytes
    that merely start with gzip's magic number included (a ByteArray value can)."""
    if detect_compression(data) != "gzip":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, OSError, zlib.error):
        return data
