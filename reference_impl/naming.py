"""Object keys (R5.1–R5.3, R11.2)."""
from __future__ import annotations

from reference_impl.config import SinkConfig
from reference_impl.formats import FormatOptions, format_for


def format_options(cfg: SinkConfig) -> FormatOptions:
    return FormatOptions(
        compression=cfg.compression_type,
        compression_level=cfg.compression_level,
        avro_codec=cfg.avro_codec,
        parquet_codec=cfg.parquet_codec,
        json_decimal_format=cfg.json_decimal_format,
        bytearray_separator=cfg.bytearray_separator,
        bytearray_extension=cfg.bytearray_extension,
        avro_default_names_indexed=cfg.version.avro_default_names_indexed,
        avro_writer_opens_once=cfg.version.avro_writer_opens_once,
    )


def directory(cfg: SinkConfig, topic: str, ep: str) -> str:
    d = cfg.directory_delim
    prefix = f"{cfg.topics_dir}{d}" if cfg.topics_dir.strip() else ""
    return f"{prefix}{topic}{d}{ep}"


def object_key(cfg: SinkConfig, topic: str, partition: int, ep: str, start_offset: int, view: str = "value") -> str:
    """R5.1: `[topics.dir/]topic/ep/topic+partition+startOffset.ext`; keys and headers objects
    put `.keys`/`.headers` before their own format's extension (R11.2)."""
    if cfg.zero_pad_width == 0:
        # Java's String.format("%00d") throws (spec open question 3): the first file fails.
        from reference_impl.errors import FatalError
        raise FatalError("R5.1", "filename.offset.zero.pad.width=0 builds the format %00d, which Java rejects")
    opts = format_options(cfg)
    fmt_class = {"value": cfg.format_class, "keys": cfg.keys_format_class, "headers": cfg.headers_format_class}[view]
    ext = format_for(fmt_class).extension(opts)
    if view != "value":
        ext = f".{view}{ext}"
    f = cfg.file_delim
    name = f"{topic}{f}{partition}{f}{start_offset:0{cfg.zero_pad_width}d}{ext}"
    return f"{directory(cfg, topic, ep)}{cfg.directory_delim}{name}"


def view_extension(cfg: SinkConfig, view: str) -> str:
    fmt_class = {"value": cfg.format_class, "keys": cfg.keys_format_class, "headers": cfg.headers_format_class}[view]
    return format_for(fmt_class).extension(format_options(cfg))


def sibling_key(cfg: SinkConfig, value_key: str, view: str) -> str | None:
    """R11.2: the key of the keys or headers object beside the value object `value_key`
    (None when `value_key` does not end with the value format's extension)."""
    ext = view_extension(cfg, "value")
    if not value_key.endswith(ext):
        return None
    return f"{value_key[: len(value_key) - len(ext)]}.{view}{view_extension(cfg, view)}"


def views_stored(cfg: SinkConfig) -> tuple[str, ...]:
    """The sibling views every data file gets (R11.1): keys, then headers."""
    return (("keys",) if cfg.store_kafka_keys else ()) + (("headers",) if cfg.store_kafka_headers else ())


def encoded_partition_of(cfg: SinkConfig, key: str, topic: str, partition: int, start_offset: int) -> str | None:
    """The encoded partition in `key` when it is the connector's name (R5.1) for a file of
    `topic`/`partition` starting at `start_offset` under some encoded partition; else None."""
    head = directory(cfg, topic, "")
    tail = object_key(cfg, topic, partition, "", start_offset)[len(head):]
    if len(key) > len(head) + len(tail) and key.startswith(head) and key.endswith(tail):
        return key[len(head): len(key) - len(tail)]
    return None
