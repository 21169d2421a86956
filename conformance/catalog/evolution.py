"""Named scenarios of schema evolution (R14): a producer moves to a new version of its value
schema while another still writes the old one, under each `schema.compatibility`. They are
Confluent's connector's (and the Python sink's, which follows it): the other sinks have no
`schema.compatibility`.

The Avro ones go through the registry as a deployment's do (the stack's registry checks each new
version BACKWARD, as Confluent's does by default), so their changes are ones a registry accepts:
a field added with a default, an optional field, an enum gaining or losing a symbol (its default
kept), a union gaining a branch, a field added to or dropped from a nested record, a doc (with
another change: a doc alone is the same schema to a registry). The JSON ones carry their schemas
and versions in every record (JsonConverter with schemas), where nothing checks a change, so they
show what no registry would let through: a nested field changing type.
"""
from __future__ import annotations

from typing import Any, Callable

from conformance.catalog.base import BASE, PUBLIC_T
from conformance.catalog.registry import (AVRO_FORMAT, AVRO_VALUES, BASE_AVRO, ORDER_V1, ORDER_V2, PARQUET_FORMAT,
                                          TOPIC, order)
from conformance.inputs.scenario import Scenario

# v2: a required field with a default (a projected v1 record gets it), an optional field, an
# enum symbol more (a v1 record's status is a subset: projected, R14.3), a field's doc
ORDER_EVOLVED: dict[str, Any] = {**ORDER_V1, "fields": [
    *({**f, "type": {**f["type"], "symbols": [*f["type"]["symbols"], "CANCELLED"]}} if f["name"] == "status" else f
      for f in ORDER_V1["fields"]),
    {"name": "priority", "type": "int", "default": 3, "doc": "added in v2: 1 (rush) to 5"},
    {"name": "channel", "type": ["null", "string"], "default": None},
]}


# v2 without the enum symbol: under FORWARD a newer record is projected back only where its enum
# is a subset of the older file's, so the FORWARD story adds fields alone
ORDER_FIELDS_ADDED: dict[str, Any] = {**ORDER_V1, "fields": [*ORDER_V1["fields"], *ORDER_EVOLVED["fields"][-2:]]}


def _evolved(i: int) -> dict[str, Any]:
    return {**order(i), "status": ["NEW", "PAID", "SHIPPED", "CANCELLED"][i % 4], "priority": 1 + i % 5,
            "channel": [None, "web", "app"][i % 3]}


def _avro(versions: str, v2: dict[str, Any] = ORDER_EVOLVED) -> list[dict[str, Any]]:
    """One record per letter, `1` written with ORDER_V1, `2` with `v2`, one partition."""
    def value(i: int, v: str) -> dict[str, Any]:
        if v == "1":
            return {"schema": ORDER_V1, "payload": order(i)}
        payload = _evolved(i) if v2 is ORDER_EVOLVED else {**_evolved(i), "status": order(i)["status"]}
        return {"schema": v2, "payload": payload}

    return [{"topic": TOPIC, "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"order-{i % 7}",
             "value": value(i, v), "headers": [["source", "shop"]]} for i, v in enumerate(versions)]


def evolution_backward_avro() -> Scenario:
    """BACKWARD with AvroConverter and AvroFormat: a newer version rotates (DIFFERENT_VERSION); an
    older one is projected onto the file's newer schema: the new field's default filled in, the
    optional one null, its enum a subset of the file's (R14.3, R14.7)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": AVRO_FORMAT, "flush.size": "4", "schema.compatibility": "BACKWARD"}
    return Scenario("evolution-backward-avro", cfg, {TOPIC: 1}, _avro("111221112211"),
                    notes="R14.3: newer rotates, older projected with the new field's default")


def evolution_forward_avro() -> Scenario:
    """FORWARD with AvroConverter and AvroFormat: an older version rotates; a newer one is
    projected back onto the file's older schema, its new fields dropped (R14.4, R14.7)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": AVRO_FORMAT, "flush.size": "4", "schema.compatibility": "FORWARD"}
    return Scenario("evolution-forward-avro", cfg, {TOPIC: 1}, _avro("112221112", ORDER_FIELDS_ADDED),
                    notes="R14.4: older rotates, newer projected without its new fields")


def evolution_full_parquet() -> Scenario:
    """FULL with AvroConverter and ParquetFormat: as BACKWARD, in Parquet files whose schema is
    their first record's (R14.3, R10.4)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": PARQUET_FORMAT, "flush.size": "3", "schema.compatibility": "FULL",
           "s3.part.size": str(5 * 1024 * 1024)}
    return Scenario("evolution-full-parquet", cfg, {TOPIC: 1}, _avro("1211221"),
                    notes="R14.3 under FULL, Parquet")


# --- what only Avro has: documentation, enums, unions, records in arrays -----------------------------

def _versions(versions: str, schemas: dict[str, dict[str, Any]],
              payloads: dict[str, Callable[[int], dict[str, Any]]]) -> list[dict[str, Any]]:
    """One record per letter, written with schemas[letter], one partition."""
    return [{"topic": TOPIC, "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"order-{i % 7}",
             "value": {"schema": schemas[v], "payload": payloads[v](i)}, "headers": [["source", "shop"]]}
            for i, v in enumerate(versions)]


# v2 documents the record anew and adds an optional field (a doc alone would be the same schema to
# the registry, Avro's Schema.equals, which would answer it with v1's id); v3 adds another field
# and keeps v2's doc
ORDER_REDOCUMENTED: dict[str, Any] = {**ORDER_V2, "doc": "An order as the shop emits it, with the channel it came by"}
ORDER_REDOCUMENTED_V3: dict[str, Any] = {**ORDER_REDOCUMENTED, "fields": [
    *ORDER_REDOCUMENTED["fields"], {"name": "referrer", "type": ["null", "string"], "default": None}]}


def evolution_record_doc_avro() -> Scenario:
    """BACKWARD with AvroConverter and JsonFormat: version 2 adds an optional field and rewrites
    the record's doc, version 3 adds another field. AvroData puts a record doc in the Connect
    parameter `io.confluent.connect.avro.record.doc`, which storage-common's
    filterMetadataParameters (12.0.12, SchemaProjector.java lines 163-183) does not drop (it drops
    `connect.record.doc`, which AvroData writes only under discard.type.doc.default=true, and the
    field docs): so a version 1 record after a newer file rotates it (DIFFERENT_PARAMS), where a
    version 2 record after a version 3 file, whose doc is the same, is projected onto it, its
    map's entries in the order of projectMap's new HashMap (R14.3, R14.7)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "flush.size": "3", "schema.compatibility": "BACKWARD"}
    v2 = lambda i: {**order(i), "channel": ["web", "app"][i % 2]}  # noqa: E731
    v3 = lambda i: {**v2(i), "referrer": [None, "ads"][i % 2]}  # noqa: E731
    return Scenario("evolution-record-doc-avro", cfg, {TOPIC: 1},
                    _versions("1123213221", {"1": ORDER_V1, "2": ORDER_REDOCUMENTED, "3": ORDER_REDOCUMENTED_V3},
                              {"1": order, "2": v2, "3": v3}),
                    notes="R14.3: a record doc is a parameter the check compares: an older record rotates")


# v2 drops an enum symbol (the enum's default stays, so a registry checking BACKWARD takes it)
ORDER_FEWER_STATUSES: dict[str, Any] = {**ORDER_V1, "fields": [
    {**f, "type": {**f["type"], "symbols": ["NEW", "PAID"]}} if f["name"] == "status" else f for f in ORDER_V1["fields"]]}


def evolution_enum_symbol_dropped_avro() -> Scenario:
    """BACKWARD with AvroConverter and AvroFormat: version 2's enum lost a symbol. An older record
    after a newer file rotates it, whatever its own value: its enum's symbols are not a subset of
    the file's (DIFFERENT_PARAMS), where a symbol gained (evolution-backward-avro) is projected (R14.3)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": AVRO_FORMAT, "flush.size": "3", "schema.compatibility": "BACKWARD"}
    v2 = lambda i: {**order(i), "status": ["NEW", "PAID"][i % 2]}  # noqa: E731
    return Scenario("evolution-enum-symbol-dropped-avro", cfg, {TOPIC: 1},
                    _versions("1122112221", {"1": ORDER_V1, "2": ORDER_FEWER_STATUSES}, {"1": order, "2": v2}),
                    notes="R14.3: an enum that lost a symbol takes no older record")


# v2: the union gains a branch, the records in the `lines` array gain an optional field, the
# nested customer record loses its optional one
def _union_nested(f: dict[str, Any]) -> dict[str, Any]:
    if f["name"] == "coupon":
        return {**f, "type": ["null", "string", "long", "double"]}
    if f["name"] == "lines":
        line = f["type"]["items"]
        return {**f, "type": {**f["type"], "items": {**line, "fields": [
            *line["fields"], {"name": "discount", "type": ["null", "int"], "default": None}]}}}
    if f["name"] == "customer":
        return {**f, "type": {**f["type"], "fields": [g for g in f["type"]["fields"] if g["name"] != "tier"]}}
    return f


ORDER_UNION_NESTED: dict[str, Any] = {**ORDER_V1, "fields": [_union_nested(f) for f in ORDER_V1["fields"]]}


def _union_nested_order(i: int) -> dict[str, Any]:
    o = order(i)
    return {**o, "coupon": 12.5 if i % 3 == 2 else o["coupon"],  # a double: the new branch
            "lines": [{**line, "discount": [None, 5][j % 2]} for j, line in enumerate(o["lines"])],
            "customer": {"id": o["customer"]["id"]}}


def evolution_union_nested_forward_avro() -> Scenario:
    """FORWARD with AvroConverter and JsonFormat: version 2's union gains a branch (Connect's
    `io.confluent.connect.avro.Union` struct gains an optional field), the records in an array
    gain an optional field and a nested record loses one. A newer record after an older file is
    projected onto it at every depth: the array's records without the new field, the nested
    record's lost field null, and a coupon in the new branch (a double) written as a union of
    nulls, the file's schema having no branch for it; an older record after a newer file rotates
    (R14.4, R14.7)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "flush.size": "3", "schema.compatibility": "FORWARD"}
    return Scenario("evolution-union-nested-forward-avro", cfg, {TOPIC: 1},
                    _versions("1122211222", {"1": ORDER_V1, "2": ORDER_UNION_NESTED},
                              {"1": order, "2": _union_nested_order}),
                    notes="R14.4: projected at every depth; a union value in a new branch is lost")


# --- JSON with schemas: versions in the records, no registry to refuse a change --------------------

def _line(qty_type: str) -> dict[str, Any]:
    return {"field": "line", "type": "struct", "optional": False, "name": "com.acme.Line",
            "fields": [{"field": "sku", "type": "string", "optional": False},
                       {"field": "qty", "type": qty_type, "optional": False}]}


def _json_schema(version: int, qty_type: str, tags_value: str = "int32") -> dict[str, Any]:
    """Version 2 adds a required field with a default, which an older record projected onto it gets."""
    return {"type": "struct", "name": "com.acme.Shipment", "optional": False, "version": version,
            "fields": [{"field": "seq", "type": "int64", "optional": False},
                       {"field": "region", "type": "string", "optional": True},
                       _line(qty_type),
                       {"field": "tags", "type": "map", "optional": False,
                        "keys": {"type": "string", "optional": False},
                        "values": {"type": tags_value, "optional": False}},
                       *([{"field": "priority", "type": "int32", "optional": False, "default": 3}] if version > 1 else [])]}


def _json_records(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def qty(t: str, i: int) -> Any:
        return f"{i} pcs" if t == "string" else i + 1

    out = []
    for i, s in enumerate(schemas):
        line_t = s["fields"][2]["fields"][1]["type"]
        tag_t = s["fields"][3]["values"]["type"]
        payload = {"seq": i, "region": ["eu", None, "us"][i % 3], "line": {"sku": f"sku-{i % 4}", "qty": qty(line_t, i)},
                   "tags": {"prio": f"p{i % 3}" if tag_t == "string" else i % 3},
                   **({"priority": 1 + i % 5} if s["version"] > 1 else {})}
        out.append({"topic": "shipments.eu", "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"s-{i}",
                    "value": {"schema": s, "payload": payload}, "headers": []})
    return out


JSON_SCHEMAS = {**BASE, "value.converter.schemas.enable": "true"}


def evolution_nested_type_json() -> Scenario:
    """BACKWARD with JsonConverter schemas: version 2 widens a nested int32 to int64 (an older
    record is projected, its number widened) and version 1 of another producer has the nested
    field as text, which no projection can take: from storage-common 12.0.6 (#463) the check
    finds it and rotates; before, the check looked at the top level only and the projector's
    SchemaProjectorException stopped the task (R14.3, R14.7)."""
    v1_text, v1_int, v2 = _json_schema(1, "string"), _json_schema(1, "int32"), _json_schema(2, "int64")
    cfg = {**JSON_SCHEMAS, "flush.size": "3", "schema.compatibility": "BACKWARD"}
    return Scenario("evolution-nested-type-json", cfg, {"shipments.eu": 1},
                    _json_records([v2, v1_int, v2, v2, v1_text, v2, v1_int, v2]),
                    notes="R14.3: a nested type change rotates (12.0.6+), a widening is projected")


def evolution_forward_map_json() -> Scenario:
    """FORWARD with JsonConverter schemas: FORWARD checks the same structure as BACKWARD, only
    its version test is reversed; a newer record whose map values changed type rotates like an
    older one (R14.4)."""
    v1, v2_text, v2 = _json_schema(1, "int32"), _json_schema(2, "int32", "string"), _json_schema(2, "int32")
    cfg = {**JSON_SCHEMAS, "flush.size": "3", "schema.compatibility": "FORWARD"}
    return Scenario("evolution-forward-map-json", cfg, {"shipments.eu": 1},
                    _json_records([v1, v2, v1, v1, v2_text, v2_text, v1, v2, v1]),
                    notes="R14.4: FORWARD rotates on a nested type change too")


def evolution_lowercase_backward_json() -> Scenario:
    """`schema.compatibility=backward`, in lower case as a pasted config might have it, is NONE
    to the connector (an exact-name lookup, no validator, R14.6): every change of version rotates."""
    v1, v2 = _json_schema(1, "int32"), _json_schema(2, "int64")
    cfg = {**JSON_SCHEMAS, "flush.size": "4", "schema.compatibility": "backward"}
    return Scenario("evolution-lowercase-backward-json", cfg, {"shipments.eu": 1},
                    _json_records([v1, v2, v1, v1, v2, v2, v2, v2]),
                    notes="R14.6: lower-case backward is NONE")


def _stock_schema(version: int) -> dict[str, Any]:
    """Stock levels per warehouse: a map whose values are records; version 2's records gain an
    optional field and drop one."""
    level = {"type": "struct", "name": "com.acme.Level", "optional": False, "fields": [
        {"field": "qty", "type": "int32", "optional": False},
        *([{"field": "bin", "type": "string", "optional": True}] if version == 1 else
          [{"field": "reserved", "type": "int32", "optional": True}])]}
    return {"type": "struct", "name": "com.acme.Stock", "optional": False, "version": version, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "levels", "type": "map", "optional": False, "keys": {"type": "string", "optional": False},
         "values": level}]}


def _stock_records(versions: str) -> list[dict[str, Any]]:
    out = []
    for i, v in enumerate(versions):
        extra = (lambda w: {"bin": f"B{w}{i % 3}" if i % 2 else None}) if v == "1" else \
            (lambda w: {"reserved": i % 4 if w != "north" else None})
        levels = {w: {"qty": 10 * i + j, **extra(w)} for j, w in enumerate(("north", "south", "east")[: 1 + i % 3])}
        out.append({"topic": "stock.levels", "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"sku-{i % 4}",
                    "value": {"schema": _stock_schema(int(v)), "payload": {"seq": i, "levels": levels}},
                    "headers": []})
    return out


def evolution_map_of_records_json() -> Scenario:
    """FULL with JsonConverter schemas: the records in a map's values gain an optional field and
    lose one in version 2. An older record after a newer file is projected entry by entry, each
    record without the field the file's lacks and with the new one null; a newer record after an
    older file rotates it (R14.3, R14.7)."""
    cfg = {**JSON_SCHEMAS, "flush.size": "3", "schema.compatibility": "FULL"}
    return Scenario("evolution-map-of-records-json", cfg, {"stock.levels": 1}, _stock_records("1221121112"),
                    notes="R14.3 under FULL: records inside a map projected")


EVOLUTION_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "evolution-backward-avro": evolution_backward_avro,
    "evolution-forward-avro": evolution_forward_avro,
    "evolution-full-parquet": evolution_full_parquet,
    "evolution-nested-type-json": evolution_nested_type_json,
    "evolution-forward-map-json": evolution_forward_map_json,
    "evolution-lowercase-backward-json": evolution_lowercase_backward_json,
    "evolution-record-doc-avro": evolution_record_doc_avro,
    "evolution-enum-symbol-dropped-avro": evolution_enum_symbol_dropped_avro,
    "evolution-union-nested-forward-avro": evolution_union_nested_forward_avro,
    "evolution-map-of-records-json": evolution_map_of_records_json,
}
