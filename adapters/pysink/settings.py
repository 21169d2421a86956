"""The Python sink's configuration: `SinkSettings.from_config` reads a connector config, refusing
what the sink does not implement (it never ignores a setting)."""
from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass, field
from typing import Any, Callable

from adapters.pysink.converters import RecordConverter
from adapters.pysink.errors import SinkConfigError

MIN_PART = 5 * 1024 * 1024

JSON_FORMAT_CLASS = "io.confluent.connect.s3.format.json.JsonFormat"
BYTEARRAY_FORMAT_CLASS = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
AVRO_FORMAT_CLASS = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET_FORMAT_CLASS = "io.confluent.connect.s3.format.parquet.ParquetFormat"
# format.class (any package: the connector's validator takes the short name) → the format
FORMATS = {"JsonFormat": "json", "ByteArrayFormat": "bytearray", "AvroFormat": "avro", "ParquetFormat": "parquet"}
_TBP = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"
_EXTRACTORS = {f"{_TBP}{n}TimestampExtractor": n for n in ("Wallclock", "Record", "RecordField")}

_JODA = {"YYYY": "%Y", "yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ww": "%V"}


def joda_formatter(pattern: str) -> Callable[[dt.datetime], str]:
    """A Joda path.format subset: 'quoted literals' ('' is a quote), YYYY/yyyy, MM, dd, HH, mm, and
    ww (ISO week of the week-based year, beside YYYY's year of era: R6.3)."""
    out: list[str | tuple[str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            if j < 0:  # Joda never checks a quote closes: the rest of the pattern is text
                out.append(pattern[i + 1:])
                break
            out.append(pattern[i + 1:j] if j > i + 1 else "'")
            i = j + 1
            continue
        if not c.isalpha():
            out.append(c)
            i += 1
            continue
        j = i
        while j < len(pattern) and pattern[j] == c:
            j += 1
        tok = pattern[i:j]
        if tok not in _JODA:
            raise SinkConfigError(f"path.format={pattern!r}: the Python sink supports 'literals', "
                                  f"YYYY, yyyy, MM, dd, HH, mm and ww, not {tok!r}")
        out.append((_JODA[tok],))
        i = j
    return lambda t: "".join(p if isinstance(p, str) else t.strftime(p[0]) for p in out)


def _zone(name: str, prop: str) -> dt.tzinfo:
    if name.upper() == "UTC":
        return dt.timezone.utc
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise SinkConfigError(f"{prop}={name!r} is not a time zone") from None


@dataclass
class SinkSettings:
    bucket: str
    flush_size: int
    topics_dir: str = "topics"
    dir_delim: str = "/"  # directory.delim (R5.1, R5.2)
    file_delim: str = "+"  # file.delim (R5.1)
    partitioner: str = "default"  # default | field | time
    field_names: tuple[str, ...] = ()
    duration_ms: int = 3_600_000
    path: Callable[[dt.datetime], str] | None = None
    tz: dt.tzinfo = dt.timezone.utc
    rotate_interval_ms: int = -1
    schedule_ms: int = -1
    partition_change: bool = True
    gzip: bool = False
    gzip_level: int = -1
    part_size: int = 26_214_400
    nulls: str = "fail"
    retry_backoff_ms: int = 200
    pad: int = 10
    value_format: str = "json"  # json | bytearray | avro | parquet (R10)
    keys_format: str = "avro"  # keys.format.class (R11.2): json | avro | parquet
    headers_format: str = "avro"  # headers.format.class
    avro_codec: str = "null"  # avro.codec (R10.3)
    parquet_codec: str = "snappy"  # parquet.codec (R10.4)
    avro_meta: bool = True  # connect.meta.data
    avro_enhanced: bool = True  # enhanced.avro.schema.support
    optional_map_keys: bool = False  # allow.optional.map.keys
    bytearray_ext: str = ".bin"
    bytearray_sep: bytes = b"\n"  # the JVM line separator on Linux
    keys: bool = False  # store.kafka.keys, JsonFormat (R11)
    headers: bool = False  # store.kafka.headers, JsonFormat (R11)
    extractor: str = "Wallclock"  # Wallclock | Record | RecordField (R6.5)
    ts_field: str = "timestamp"
    tombstone_ep: str = "tombstone"
    decimal_format: str = "BASE64"  # json.decimal.format (R10.1)
    key_conv: RecordConverter = field(default_factory=lambda: RecordConverter("json"))
    value_conv: RecordConverter = field(default_factory=lambda: RecordConverter("json"))
    conditional_writes: bool = False  # R8.1: Complete carries If-None-Match: * (never overwrites)
    scan_limit: int = 100  # max.files.scan.limit (R8.2)
    compatibility: str = "NONE"  # schema.compatibility (R14): NONE | BACKWARD | FORWARD | FULL

    @property
    def registry_url(self) -> str | None:
        """The Schema Registry its converters read from (AvroConverter's or ProtobufConverter's schema.registry.url), if any."""
        return next((c.registry_url for c in (self.value_conv, self.key_conv) if c.kind in ("avro", "protobuf")), None)

    def attach_registry(self, registry: Any) -> None:
        """Give the converters that read the registry's wire format the registry to ask."""
        import dataclasses

        if self.key_conv.kind in ("avro", "protobuf"):
            self.key_conv = dataclasses.replace(self.key_conv, registry=registry)
        if self.value_conv.kind in ("avro", "protobuf"):
            self.value_conv = dataclasses.replace(self.value_conv, registry=registry)

    @property
    def value_ext(self) -> str:
        """R5.3: the value object's extension, `.gz` included."""
        return self.format_ext(self.value_format)

    def format_ext(self, fmt: str) -> str:
        """A format's extension: `.json`, ByteArray's own, `.avro` (whatever the codec), or
        parquet-mr's codec extension before `.parquet` (R5.3); `.gz` where gzip applies."""
        if fmt == "avro":
            return ".avro"
        if fmt == "parquet":
            from adapters.pysink.objectformats import PARQUET_CODECS

            return PARQUET_CODECS[self.parquet_codec][0] + ".parquet"
        return (".json" if fmt == "json" else self.bytearray_ext) + (".gz" if self.gzip else "")

    @classmethod
    def from_config(cls, c: dict[str, str], *, min_part_size: int = MIN_PART) -> "SinkSettings":
        def num(key: str, default: int) -> int:
            try:
                return int(str(c.get(key, default)).strip())
            except ValueError:
                raise SinkConfigError(f"{key}={c[key]!r} is not a number") from None

        for req in ("flush.size", "s3.bucket.name"):
            if not str(c.get(req, "")).strip():
                raise SinkConfigError(f"{req} is required")
        cls_name = c.get("partitioner.class", "DefaultPartitioner").rsplit(".", 1)[-1]
        kinds = {"DefaultPartitioner": "default", "FieldPartitioner": "field", "TimeBasedPartitioner": "time",
                 "HourlyPartitioner": "time", "DailyPartitioner": "time"}
        if cls_name not in kinds:
            raise SinkConfigError(f"partitioner.class={cls_name}: the Python sink supports {', '.join(kinds)}")

        def flag(key: str, default: bool) -> bool:
            v = str(c.get(key, "true" if default else "false")).strip().lower()
            if v not in ("true", "false"):
                raise SinkConfigError(f"{key}={c[key]!r} is not a boolean: use true or false")
            return v == "true"

        fmt = c.get("format.class", "JsonFormat").strip().rsplit(".", 1)[-1]
        if fmt not in FORMATS:
            raise SinkConfigError(f"format.class={fmt}: the Python sink writes {', '.join(FORMATS)}; set "
                                  f"format.class to one of those (e.g. {JSON_FORMAT_CLASS})")
        keys, headers = flag("store.kafka.keys", False), flag("store.kafka.headers", False)
        view_formats = {}
        for on, what, prop in ((keys, "store.kafka.keys", "keys.format.class"),
                               (headers, "store.kafka.headers", "headers.format.class")):
            given = prop in c
            kf = c.get(prop, AVRO_FORMAT_CLASS).strip().rsplit(".", 1)[-1]
            view_formats[prop] = FORMATS.get(kf, "json")
            if on and FORMATS.get(kf) not in ("json", "avro", "parquet"):
                raise SinkConfigError(f"{prop}={kf}{'' if given else ' (the default)'} with {what}=true: the Python "
                                      f"sink writes JsonFormat, AvroFormat and ParquetFormat keys and headers; set "
                                      f"{prop}={JSON_FORMAT_CLASS} or {AVRO_FORMAT_CLASS}")
        tolerance = c.get("errors.tolerance", "none").strip().lower()
        if tolerance != "none":
            raise SinkConfigError(f"errors.tolerance={tolerance}: the Python sink has no dead letter queue or "
                                  "errant-record reporter, so a record it cannot write stops the task; remove "
                                  "the property or set errors.tolerance=none")
        if c.get("errors.deadletterqueue.topic.name", "").strip():
            raise SinkConfigError(f"errors.deadletterqueue.topic.name={c['errors.deadletterqueue.topic.name'].strip()}"
                                  ": the Python sink has no dead letter queue (records it cannot write stop the "
                                  "task); remove the property")
        if flag("errors.log.enable", False):
            raise SinkConfigError("errors.log.enable=true: the Python sink has no errant-record reporter (with one, "
                                  "R12.2 makes an ignored null stop the task); remove the property or set it to false")
        # settings of the connector the Python sink does not implement: refused, never ignored,
        # so a run never claims behaviour the sink did not have
        unsupported = {
            "s3.schema.partition.affix.type": ("NONE", "it has no schema-name affix in encoded partitions (R6.6)"),
            "partitioner.max.open.files": ("-1", "it has no max-open-files rotation (R3.6)"),
            "max.write.duration.ms": (str(2**63 - 1), "it has no write deadline (R9.1)"),
            "s3.object.tagging": ("false", "it does not tag objects (R9.4)"),
        }
        for prop, (default, why) in unsupported.items():
            given = str(c.get(prop, default)).strip()
            if given.upper() != default.upper():
                raise SinkConfigError(f"{prop}={given}: the Python sink does not support this ({why}); remove the "
                                      f"property or set it to {default}")
        comp = c.get("s3.compression.type", "none").lower()
        if comp not in ("none", "gzip"):
            raise SinkConfigError(f"s3.compression.type={comp}: the Python sink supports none and gzip")
        if comp == "gzip":  # R10.5: the connector's validator refuses it, for values, keys and headers alike
            for prop, fmt_of, on in (("format.class", FORMATS[fmt], True),
                                     ("keys.format.class", view_formats["keys.format.class"], keys),
                                     ("headers.format.class", view_formats["headers.format.class"], headers)):
                if on and fmt_of in ("avro", "parquet"):
                    raise SinkConfigError(f"s3.compression.type=gzip with {prop}={fmt_of.capitalize()}Format: "
                                          "compression applies to JsonFormat and ByteArrayFormat only (R10.5); "
                                          "remove s3.compression.type or write JSON")
        from adapters.pysink.projection import mode_of  # it imports encoding, which imports this module

        part = num("s3.part.size", 26_214_400)
        if part < min_part_size:
            raise SinkConfigError(f"s3.part.size={part} is below the minimum {min_part_size}")
        s = cls(bucket=c["s3.bucket.name"], flush_size=max(num("flush.size", 1), 1),
                topics_dir=c.get("topics.dir", "topics"), partitioner=kinds[cls_name],
                dir_delim=c.get("directory.delim", "/"), file_delim=c.get("file.delim", "+"),
                rotate_interval_ms=num("rotate.interval.ms", -1), schedule_ms=num("rotate.schedule.interval.ms", -1),
                partition_change=c.get("rotate.file.on.partition.change", "true").lower() == "true",
                gzip=comp == "gzip", gzip_level=num("s3.compression.level", -1), part_size=part,
                nulls=c.get("behavior.on.null.values", "fail").lower(),
                retry_backoff_ms=num("retry.backoff.ms", 200),
                pad=num("filename.offset.zero.pad.width", 10),
                value_format=FORMATS[fmt], keys=keys, headers=headers,
                keys_format=view_formats["keys.format.class"], headers_format=view_formats["headers.format.class"],
                avro_codec=c.get("avro.codec", "null").strip(), parquet_codec=c.get("parquet.codec", "snappy").strip().lower(),
                avro_meta=flag("connect.meta.data", True), avro_enhanced=flag("enhanced.avro.schema.support", True),
                optional_map_keys=flag("allow.optional.map.keys", False),
                tombstone_ep=c.get("tombstone.encoded.partition", "tombstone").strip(),
                decimal_format=c.get("json.decimal.format", "BASE64").strip().upper(),
                scan_limit=num("max.files.scan.limit", 100),
                # R14.6: looked up by its exact name, anything else NONE (no validator refuses it)
                compatibility=mode_of(str(c.get("schema.compatibility", "NONE"))))
        # R8.1: on unless turned off, with any rotate.schedule.interval.ms but exactly -1, and
        # neither keys nor headers stored (S3SinkConnectorConfig.shouldEnableConditionalWrites)
        s.conditional_writes = (flag("enable.conditional.writes", True) and s.schedule_ms != -1
                                and not keys and not headers)
        from adapters.pysink.objectformats import AVRO_CODECS, PARQUET_CODECS

        if s.avro_codec not in AVRO_CODECS:
            raise SinkConfigError(f"avro.codec={s.avro_codec}: must be one of {', '.join(AVRO_CODECS)}")
        if s.parquet_codec not in PARQUET_CODECS:
            raise SinkConfigError(f"parquet.codec={s.parquet_codec}: the Python sink writes "
                                  f"{', '.join(PARQUET_CODECS)}; set one of those")
        if s.pad < 1:
            raise SinkConfigError(f"filename.offset.zero.pad.width={s.pad}: the Python sink needs a width of at least "
                                  "1 (the connector's validator rejects negative widths, and 0 builds Java's "
                                  "format %00d, which fails at the first file: R5.1)")
        if s.decimal_format not in ("BASE64", "NUMERIC"):
            raise SinkConfigError(f"json.decimal.format={s.decimal_format}: must be BASE64 or NUMERIC")
        try:
            s.key_conv = RecordConverter.from_config(c, "key")
            s.value_conv = RecordConverter.from_config(c, "value")
        except ValueError as e:
            raise SinkConfigError(str(e)) from None
        if s.nulls not in ("ignore", "fail", "write"):
            raise SinkConfigError(f"behavior.on.null.values={s.nulls}: the Python sink supports ignore, fail "
                                  "and write (the connector's values)")
        if s.nulls == "write" and not keys:
            raise SinkConfigError("behavior.on.null.values=write needs store.kafka.keys=true (R12.3: a tombstone is "
                                  "written as a keys object only, and the connector's validator requires it); "
                                  "set store.kafka.keys=true and keys.format.class, or use ignore or fail")
        if s.value_format == "bytearray":
            s.bytearray_ext = c.get("format.bytearray.extension", ".bin").strip()
            # R10.2: read untrimmed from the original config; default: the JVM line separator
            s.bytearray_sep = c.get("format.bytearray.separator", "\n").encode("utf-8")
        if s.partitioner == "field":
            s.field_names = tuple(f.strip() for f in c.get("partition.field.name", "").split(",") if f.strip())
            if not s.field_names:
                raise SinkConfigError("partition.field.name is required with FieldPartitioner")
        if s.partitioner == "time":
            extractor = c.get("timestamp.extractor", "Wallclock").strip()
            extractor = _EXTRACTORS.get(extractor, extractor)
            if extractor not in ("Wallclock", "Record", "RecordField"):
                raise SinkConfigError(f"timestamp.extractor={extractor}: the Python sink supports Wallclock, Record "
                                      "and RecordField (custom extractor classes are not loaded); use one of those")
            s.extractor = extractor
            s.ts_field = c.get("timestamp.field", "timestamp").strip()
            if not c.get("timezone", "").strip():
                raise SinkConfigError("timezone is required with a time-based partitioner")
            s.tz = _zone(c["timezone"].strip(), "timezone")
            d = c.get("directory.delim", "/")
            if cls_name == "HourlyPartitioner":
                s.duration_ms, pattern = 3_600_000, f"'year'=YYYY{d}'month'=MM{d}'day'=dd{d}'hour'=HH"
            elif cls_name == "DailyPartitioner":
                s.duration_ms, pattern = 86_400_000, f"'year'=YYYY{d}'month'=MM{d}'day'=dd"
            else:
                s.duration_ms, pattern = num("partition.duration.ms", -1), c.get("path.format", "")
                if s.duration_ms <= 0:
                    raise SinkConfigError("partition.duration.ms must be > 0 with TimeBasedPartitioner")
                if not pattern.strip():
                    raise SinkConfigError("path.format is required with TimeBasedPartitioner")
            if pattern.endswith(d):
                pattern = pattern[: -len(d)]  # R6.3: one trailing delimiter is stripped
            s.path = joda_formatter(pattern)
        if s.schedule_ms > 0:
            if not c.get("timezone", "").strip():
                raise SinkConfigError("timezone is required with rotate.schedule.interval.ms")
            s.tz = _zone(c["timezone"].strip(), "timezone")
        return s
