"""Strategies for records: streams for the model's own inputs, and a scenario's records with
timestamps near a zone's edges, partition fields and values of the converter's kinds."""
from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from conformance.generators import values
from conformance.generators.evolution import KEPT, schema_versions, version_picks
from conformance.inputs.scenario import converter_kind, seq_value
from conformance.generators.testable import first_written
from conformance.inputs.wire import with_worker_converters
from conformance.generators.configs import JSON_FORMAT, PARTITION_FIELDS, partition_field_roots, value_kinds


T0 = 1714557600000  # 2024-05-01T10:00:00Z, an hour edge

VALUE_SCHEMA = {
    "type": "struct", "optional": False, "name": "order",
    "fields": [
        {"field": "region", "type": "string", "optional": True},
        {"field": "n", "type": "int32", "optional": False},
        {"field": "ts", "type": "int64", "optional": False},
    ],
}


@st.composite
def record_streams(draw: st.DrawFn, max_records: int = 24) -> list[dict[str, Any]]:
    """RECORDS.jsonl objects over 1–3 topic-partitions: late and out-of-order timestamps, hour
    edges, idle gaps, nulls, keys, Struct values."""
    tps = draw(st.lists(st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 2)), min_size=1, max_size=3, unique=True))
    n = draw(st.integers(0, max_records))
    next_offset = {tp: draw(st.integers(0, 5)) for tp in tps}
    clock = T0 - draw(st.sampled_from([0, 500, 3_000]))
    out = []
    for _ in range(n):
        tp = draw(st.sampled_from(tps))
        step = draw(st.sampled_from([0, 100, 1000, 2500, 60_000, 3_600_000]))
        clock += step
        ts = clock - draw(st.sampled_from([0, 0, 0, 1500, 3_600_000]))  # late records
        value: Any
        kind = draw(st.integers(0, 11))
        if kind == 0:
            value = None
        elif kind == 1:
            value = f"text-{len(out)}"  # a string (StringConverter-like)
        elif kind == 2:
            value = {"schema": {"type": "bytes", "optional": True}, "payload": "AAEC"}  # bytes
        elif kind == 3:
            value = {"n": len(out), "region": "eu"}  # schemaless JSON
        else:
            value = {"schema": VALUE_SCHEMA,
                     "payload": {"region": draw(st.sampled_from(["eu", "us", None])), "n": len(out), "ts": ts}}
        out.append({"topic": tp[0], "partition": tp[1], "offset": next_offset[tp], "timestamp": ts,
                    "key": f"k{len(out)}", "value": value, "headers": [["h", "1"]]})
        next_offset[tp] += 1
    return out


@st.composite
def put_schedules(draw: st.DrawFn, n_records: int) -> list[dict[str, int]]:
    """put() calls carrying all records in order, with empty puts and idle gaps."""
    at = T0 + draw(st.integers(0, 10_000))
    puts, left = [], n_records
    while left > 0 or not puts:
        count = min(left, draw(st.integers(0, 5)))
        puts.append({"at": at, "count": count})
        left -= count
        at += draw(st.sampled_from([10, 1000, 5000, 61_000, 600_000]))
    for _ in range(draw(st.integers(0, 2))):
        puts.append({"at": at, "count": 0})
        at += draw(st.sampled_from([1000, 600_000]))
    return puts


@functools.lru_cache(maxsize=None)
def zone_anchors(zone: str) -> tuple[int, ...]:
    """Instants worth putting records around for a config in `zone`: an hour edge in UTC, the
    zone's local midnight, and the zone's offset changes of 2024 (DST, to the minute)."""
    import datetime as dt
    import zoneinfo

    tz = dt.timezone.utc if zone.upper() == "UTC" else zoneinfo.ZoneInfo(zone)
    out = [T0, int(dt.datetime(2024, 5, 1, tzinfo=tz).timestamp() * 1000)]
    t = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    before = t.astimezone(tz).utcoffset()
    for _ in range(366 * 24):
        nxt = t + dt.timedelta(hours=1)
        if nxt.astimezone(tz).utcoffset() != before:
            while t.astimezone(tz).utcoffset() == before:
                t += dt.timedelta(minutes=1)
            out.append(int(t.timestamp() * 1000))
            before = t.astimezone(tz).utcoffset()
        t = nxt
    return tuple(out)


# instants around 1970-01-01T00:00Z: the epoch, half an hour before it, mid-1969, and 05:00Z (local
# midnight in New York, whose local epoch milliseconds are negative before it)
EPOCH_ANCHORS = (0, -1_800_000, -17_280_000_000 + 5_400_000, 18_000_000 - 1_500)


def with_partition_fields(schema: dict[str, Any], cfg: dict[str, str]) -> dict[str, Any]:
    """The value schema with the fields FieldPartitioner reads (PARTITION_FIELDS, and a user's
    own: region_fields) it lacks."""
    if not cfg.get("partitioner.class", "").endswith("FieldPartitioner"):
        return schema
    have = {f["field"] for f in schema["fields"]}
    more = [{"field": n, **PARTITION_FIELDS[n]} for n in partition_field_roots(cfg) if n in PARTITION_FIELDS and n not in have]
    more += [{"field": n, "type": "string", "optional": True} for n in region_fields(cfg, have)]
    return {**schema, "fields": schema["fields"] + more} if more else schema


def region_fields(cfg: dict[str, str], have: set[str]) -> tuple[str, ...]:
    """The fields a user's FieldPartitioner config reads that a value of the generator's schema
    (`have`) lacks and PARTITION_FIELDS has no type for (a dotted path is left to the run's
    fit): text fields holding what `region` holds (REGIONS: a '/' inside, a space, '=', null),
    so a stream drawn for the user's config meets the values R6.2 writes as they are. Without
    them the run fitted a date into the field (conformance.playing.user_config.with_fields), and
    a sink escaping a '/' in a partition value passed every run under `partition.field.name=dt`."""
    if not cfg.get("partitioner.class", "").endswith("FieldPartitioner"):
        return ()
    names = [x.strip() for x in cfg.get("partition.field.name", "").split(",") if x.strip()]
    return tuple(dict.fromkeys(n for n in names if "." not in n and n not in PARTITION_FIELDS and n not in have))


# the regions FieldPartitioner encodes: plain, null (`region=null`), one with a '/' inside
# (values are not escaped: it makes a directory level of its own, R6.2), a space and a '='
REGIONS = ("eu", "us", "eu", "us", None, "eu/west", "eu central", "tier=1")


@st.composite
def record_value(draw: st.DrawFn, kind: str, seq: int, ts: int, converter: str, schema: dict[str, Any],
                 one_shape: bool = False, zone: str = "UTC", region_fields: tuple[str, ...] = ()) -> Any:
    """A value of `kind` (conformance.inputs.scenario.seq_value) carrying `seq`, in the notation of the
    value converter: Structs of `schema`, schemaless maps with nested extras, text, bytes.
    `one_shape`: schemaless maps keep the fields and types of `schema` from record to record,
    as the topic a table sink reads does (a field that turns from a map into text stops it).
    A `ts` string is in one of RecordField's forms, offset-less ones as wall times of `zone`.
    `region_fields`: a user's FieldPartitioner fields that hold the region too (records.region_fields)."""
    region = draw(st.sampled_from(REGIONS))
    if kind == "struct" and converter == "avro":
        from conformance.generators.avro_values import extra_values, producer_payload, producer_schema

        # x-avro-*: what the producer's .avsc has beyond the Connect fields (evolution.AVRO_KEYS)
        extras, changes = tuple(schema.get("x-avro-extras", ())), schema.get("x-avro-changes")
        connect = {k: v for k, v in schema.items() if not k.startswith("x-avro-")}
        payload = producer_payload(connect, draw(values.struct_payload(connect, seq, region, ts, zone, region_fields)))
        return {"schema": producer_schema(connect, extras, changes),
                "payload": {**payload, **draw(extra_values(extras, seq, changes))}}
    if kind == "struct" and converter == "protobuf":
        from conformance.inputs.protobuf_notation import producer_payload, producer_schema

        payload = producer_payload(schema, draw(values.struct_payload(schema, seq, region, ts, zone, region_fields)))
        return {"schema": producer_schema(schema), "payload": payload}
    if kind == "struct":
        return {"schema": schema, "payload": draw(values.struct_payload(schema, seq, region, ts, zone, region_fields))}
    if kind == "map" and one_shape:
        # a map with other than string keys has no schemaless shape of its own: JsonConverter
        # writes it as [key, value] pairs, arrays of mixed types that no table column holds
        pairs = {f["field"] for f in schema["fields"] if f["type"] == "map" and f["keys"]["type"] != "string"}
        payload = draw(values.struct_payload(schema, seq, region, ts))
        return {k: v for k, v in payload.items() if k not in pairs}
    if kind == "map":
        extras = draw(values.schemaless_extras())
        ts_value: Any = draw(values.ts_texts(ts, zone)) if draw(st.integers(0, 2)) == 0 else ts
        return {"seq": seq, "region": region, "ts": ts_value, **extras}
    if kind == "string" and draw(st.booleans()):
        text = f"seq={seq} {draw(st.sampled_from(values.TEXTS))}"
        return {"schema": {"type": "string", "optional": False}, "payload": text} if converter == "json-schemas" else text
    return seq_value(seq, kind, {"region": region, "ts": ts}, None, converter)


# the fields a Protobuf producer's later versions add, in order (each optional: an older record
# projected onto a newer file has them null)
PROTOBUF_ADDED = ({"field": "channel", "type": "string", "optional": True},
                  {"field": "priority", "type": "int32", "optional": True},
                  {"field": "audit", "type": "struct", "name": "audit", "optional": True,
                   "fields": [{"field": "by", "type": "string", "optional": False}]})


@st.composite
def protobuf_versions(draw: st.DrawFn, base: dict[str, Any]) -> list[dict[str, Any]]:
    """One or two later versions of a Protobuf producer's schema, each adding one or two fields."""
    versions, fields, left = [], list(base["fields"]), [f for f in PROTOBUF_ADDED
                                                       if f["field"] not in {x["field"] for x in base["fields"]}]
    for _ in range(draw(st.integers(1, 2))):
        if not left:
            break
        take = draw(st.integers(1, min(2, len(left))))
        fields, left = fields + left[:take], left[take:]
        versions.append({**base, "fields": fields})
    return versions


@st.composite
def sink_records(draw: st.DrawFn, topics: dict[str, int], max_records: int = 40,
                 cfg: dict[str, str] | None = None, kinds: tuple[str, ...] | None = None,
                 evolving: bool = False) -> list[dict[str, Any]]:
    """Records with a `seq` in every value (how checkers find them in S3), of the kinds the
    config can write (value_kinds), across Connect's types (conformance.generators.values): timestamps
    late and out of order, around hour edges, local midnight and DST changes of the config's
    zone, with idle gaps; keys null, text, maps or Structs; headers none, one or several (text,
    bytes, null); null values in some streams (rarely where nulls kill the task). One stream in
    three lives around 1970 (value times before it too); half step finely across rotate.interval.ms.
    `evolving`: the producers move through versions of the value schema where the converter
    gives schemas, whatever schema.compatibility says (a user's config, given as it is: NONE
    where it sets none, and every change rotates, R14.2); else only where the config sets one."""
    cfg = with_worker_converters(cfg or {})
    table = kinds is not None  # a table sink's value kinds (value_kinds_for): its maps keep one shape
    kinds = value_kinds(cfg, kinds)
    if not kinds:
        raise ValueError(f"value.converter={converter_kind(cfg)} gives no value this config can write "
                         f"({cfg.get('format.class', JSON_FORMAT).rsplit('.', 1)[-1]}, "
                         f"{cfg.get('partitioner.class', 'DefaultPartitioner').rsplit('.', 1)[-1]})")
    converter, key_kind = converter_kind(cfg), converter_kind(cfg, "key")
    keys_stored = cfg.get("store.kafka.keys", "false").lower() == "true"
    headers_stored = cfg.get("store.kafka.headers", "false").lower() == "true"
    zone = cfg.get("timezone", "UTC") or "UTC"
    record_field = cfg.get("timestamp.extractor") == "RecordField"
    # RecordField reads the ts field: there its text forms come in one schema in two
    drawn = draw(values.value_schemas(("string", "int64", "timestamp", "string") if record_field else
                                      ("int64", "timestamp", "string")))
    texts = region_fields(cfg, {f["field"] for f in drawn["fields"]})
    schema = with_partition_fields(drawn, cfg)
    if converter == "avro":  # the producer's schema has Avro's own kinds of field too, the same all stream long
        from conformance.generators.avro_values import avro_only_extras

        schema = {**schema, "x-avro-extras": draw(avro_only_extras())}
    n = draw(st.integers(1, max_records))
    # under a schema.compatibility the producers move through versions of the schema (R14)
    versions, picks = [schema], [0] * n
    evolves = evolving or "schema.compatibility" in cfg
    if evolves and converter == "protobuf":
        # a Protobuf producer's versions add fields at the end (new numbers): what a registry
        # checking its Protobuf schemas accepts, where a dropped or retyped field is refused
        versions = [schema, *draw(protobuf_versions(schema))]
        picks = draw(version_picks(n, len(versions)))
    elif evolves and converter in ("json-schemas", "avro"):
        kept = KEPT + partition_field_roots(cfg)
        versions = draw(schema_versions(schema, converter == "avro", kept))
        picks = draw(version_picks(n, len(versions)))
        # a producer's values of one topic: its record schema's versions, no bare strings between
        # them (they carry no version, which every mode but NONE needs: R14.5)
        kinds = tuple(k for k in kinds if k == "struct") or kinds
    tps = [(t, p) for t, k in topics.items() for p in range(k)]
    # one stream in three lives around 1970: Java's division truncates toward zero there (R6.3)
    epoch = draw(st.integers(0, 2)) == 0
    anchor = draw(st.sampled_from(EPOCH_ANCHORS if epoch else zone_anchors(zone)))
    clock = anchor - draw(st.sampled_from([0, 1500, 60_000, 3_600_000]))
    # fine steps cross rotate.interval.ms (1 s, 3 s) between the records of one bucket, so a
    # window's base record time, and what resets it (R3.1 step 4), decides the files
    steps = (0, 100, 1000, 2500, 60_000, 3_600_000) if draw(st.booleans()) else (0, 400, 700, 1100, 1300, 2600)
    fatal_nulls = cfg.get("behavior.on.null.values", "fail").lower() == "fail"
    with_nulls = draw(st.integers(0, 3)) == 0 if fatal_nulls else draw(st.booleans())
    # where stored keys must not be null (R11.4), a null key comes in one stream in five
    null_keys = not keys_stored or draw(st.integers(0, 4)) == 0
    out = []
    for seq in range(n):
        t, p = draw(st.sampled_from(tps))
        clock += draw(st.sampled_from(steps))
        ts = clock - draw(st.sampled_from([0, 0, 0, 1500, 3_600_000]))
        # a stream of tombstones only writes nothing a checker could compare: its last record has a value
        if with_nulls and draw(st.integers(0, 7)) == 0 and (seq < n - 1 or any(r["value"] is not None for r in out)):
            value = None
        else:
            value = draw(record_value(draw(st.sampled_from(kinds)), seq, ts, converter, versions[picks[seq]], table,
                                      zone, texts))
        # a Kafka record timestamp is never negative (a value's time field can be): one before
        # 1970 keeps its time of day on 1970-01-01; and never 0, which librdkafka sends as "now"
        out.append({"topic": t, "partition": p, "timestamp": max(1, ts % 86_400_000 if ts < 0 else ts),
                    "key": draw(values.record_keys(key_kind, seq, null_keys)), "value": value,
                    "headers": draw(values.header_lists(seq, headers_stored))})
    out = first_written(out, keys_stored, headers_stored, fatal_nulls, key_kind)
    return protobuf_subjects(out, versions, cfg) if converter == "protobuf" and len(versions) > 1 else out


def protobuf_subjects(records: list[dict[str, Any]], versions: list[dict[str, Any]],
                      cfg: dict[str, str]) -> list[dict[str, Any]]:
    """A Protobuf producer's values as the registry's subjects take them, in the order the
    records register them. A version a subject first meets after a newer one (an older producer
    writing a topic the newer one wrote first, or a record first_written moved ahead) drops the
    newer one's fields: its text reserves their numbers and names (protobuf_notation.dropped_fields),
    as a registry checking Protobuf evolutions (Apicurio's) requires. Reserved fields never come
    back, so a drop is kept only where no version above it is still to come to that subject;
    otherwise the older producer's record is written with the nearest version the subject holds
    (the smallest newer one: the record's fields are all in it). A version a subject holds is
    written with the text it was registered with, which the registry finds again without a check.
    Changed after drawing, so the draws stay the same."""
    from conformance.inputs.protobuf_notation import (dropped_fields, message_full_name, message_layout,
                                                      producer_schema)
    from reference_impl.avro_data import TOPIC_NAME_STRATEGY, subject_for

    plain = {producer_schema(v): k for k, v in enumerate(versions)}
    layouts = [message_layout(v) for v in versions]
    strategy = with_worker_converters(cfg).get("value.subject.name.strategy", TOPIC_NAME_STRATEGY)
    name = message_full_name(versions[0])
    at = [(i, subject_for(r["topic"], "value", strategy, name), plain[r["value"]["schema"]])
          for i, r in enumerate(records) if isinstance(r["value"], dict) and r["value"].get("schema") in plain]
    held: dict[str, dict[int, str]] = {}  # a subject's versions, each with the text it registered
    history: dict[str, list[int]] = {}  # a subject's versions in the order it registered them
    out = list(records)
    for n, (i, subject, k) in enumerate(at):
        texts, order = held.setdefault(subject, {}), history.setdefault(subject, [])
        if k not in texts:
            latest, top = (order[-1], max(order)) if order else (-1, -1)
            grows = k > top and latest == top  # adds fields to all the subject had: nothing to reserve
            # a drop nothing newer comes after: no later record of the subject has a version above
            # it that the subject does not hold yet
            drops = k < latest and not any(s == subject and v > k and v not in texts for _, s, v in at[n + 1:])
            if grows or drops:
                texts[k] = producer_schema(versions[k], dropped_fields((layouts[v] for v in order), layouts[k]))
                order.append(k)
            else:
                newer = [v for v in texts if v > k]
                k = min(newer) if newer else max(texts)
        value = records[i]["value"]
        fields = next(iter(layouts[k].values()))  # the top message's, laid out first
        out[i] = {**records[i], "value": {**value, "schema": texts[k],
                                          "payload": {f: x for f, x in value["payload"].items() if f in fields}}}
    return out
