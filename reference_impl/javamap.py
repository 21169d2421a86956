"""The iteration order of a `java.util.HashMap`, which is the order the connector writes a map's
entries in.

JsonConverter reads a JSON object without a schema, and a MAP with one, into a `new HashMap<>()`
(entries put in document order); JsonFormat then writes that map as it iterates (Jackson for a
schemaless value, JsonConverter inside a Struct). So `{"seq":0,"region":"eu"}` lands as
`{"region":"eu","seq":0}`. The order is a pure function of the keys' Java `hashCode()` and the
order they were put: table of 16 buckets, doubled when the map holds more than 3/4 of it (or when
one bucket would hold a 9th entry while the table is under 64), bucket index `(h ^ h >>> 16) &
(capacity - 1)`, entries of a bucket in the order they came. (Bins of 9+ entries in tables of 64+
become trees; no record here comes near that.)
"""
from __future__ import annotations

import math
import struct
from typing import Any, Iterable, TypeVar

V = TypeVar("V")
_MASK = 0xFFFFFFFF


def _int32(x: int) -> int:
    return x & _MASK


def string_hash(s: str) -> int:
    """String.hashCode over UTF-16 code units, as an unsigned 32-bit int."""
    h = 0
    units = s.encode("utf-16-be", errors="surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & _MASK
    return h


def java_hash(key: Any, key_type: str | None = None) -> int:
    """`key.hashCode()` of the Java object Connect holds for `key` (unsigned 32-bit). `key_type`
    is the Connect type of the map's keys (None: schemaless, where keys are Strings)."""
    if isinstance(key, str):
        return string_hash(key)
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if key_type in ("int8", "int16", "int32"):
            return _int32(key)
        v = key & 0xFFFFFFFFFFFFFFFF  # Long.hashCode: (int) (value ^ (value >>> 32))
        return _int32(v ^ (v >> 32))
    if isinstance(key, float):
        if key_type == "float32":
            return struct.unpack(">I", struct.pack(">f", key))[0] if not math.isnan(key) else 0x7FC00000
        bits = struct.unpack(">Q", struct.pack(">d", key))[0] if not math.isnan(key) else 0x7FF8000000000000
        return _int32(bits ^ (bits >> 32))
    if key is None:
        return 0
    return string_hash(str(key))


def _index(h: int, capacity: int) -> int:
    return (h ^ (h >> 16)) & (capacity - 1)


def table_size_for(initial_capacity: int) -> int:
    """HashMap.tableSizeFor: the power of two a HashMap(initialCapacity) starts its table at."""
    n = 1
    while n < initial_capacity:
        n *= 2
    return n


def hashmap_order(items: Iterable[tuple[Any, V]], key_type: str | None = None,
                  initial_capacity: int | None = None) -> list[tuple[Any, V]]:
    """`items` (put in this order; a repeated key keeps its place and takes the new value) in the
    order a HashMap iterates them: `new HashMap<>()` (16 buckets), or `new HashMap<>(n)` with
    `initial_capacity` n (AvroData sizes its maps to their entries: its order differs)."""
    capacity = 16 if initial_capacity is None else table_size_for(initial_capacity)
    buckets: list[list[list[Any]]] = [[] for _ in range(capacity)]
    where: dict[Any, list[Any]] = {}
    size = 0

    def resize() -> None:
        nonlocal capacity, buckets
        old = buckets
        capacity *= 2
        buckets = [[] for _ in range(capacity)]
        for bucket in old:
            for entry in bucket:
                buckets[_index(entry[0], capacity)].append(entry)

    for key, value in items:
        marker = (type(key).__name__, key)
        if marker in where:
            where[marker][2] = value
            continue
        entry = [java_hash(key, key_type), key, value]
        where[marker] = entry
        bucket = buckets[_index(entry[0], capacity)]
        bucket.append(entry)
        if len(bucket) >= 9 and capacity < 64:  # treeifyBin on a small table resizes instead
            resize()
        size += 1
        if size > capacity * 3 // 4:
            resize()
    return [(k, v) for bucket in buckets for _, k, v in bucket]


def as_hashmap(d: dict[Any, V], key_type: str | None = None, initial_capacity: int | None = None) -> dict[Any, V]:
    """A dict whose insertion order is the HashMap's iteration order for `d` put in order."""
    return dict(hashmap_order(d.items(), key_type, initial_capacity))
