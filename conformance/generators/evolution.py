"""Evolving value schemas within one stream (R14): a producer moves from version to version of its
schema, and an older producer goes on writing the versions before, under each
`schema.compatibility`.

Each version is the one before it with one or two changes a team makes to a value schema:

    add-optional      a new optional field                         (compatible everywhere)
    add-default       a new required field with a default          (a projected older record gets it)
    drop              an optional field removed                    (a projected newer record lacks it)
    widen             int8 → int16 → int32 → int64, float → double (a projected older number widens)
    doc               the schema's documentation                   (NONE rotates; through AvroConverter a
                                                                    record doc is a parameter storage-common
                                                                    does not filter: every mode rotates)
    nested-add        an optional field inside a record nested in a field, in an array's elements or in
                      a map's values                               (projected at that depth)
    nested-drop       an optional field of such a nested record removed
    logical           a Date or Time field becomes its plain int32 (the Connect name goes: incompatible)
    nested-type       a field inside a struct, array or map changes type   (incompatible at any depth)
    rename            the schema's name                            (incompatible)
    require           an optional field becomes required, no default (an older record's null cannot go)
    decimal-scale     a Decimal's scale                            (its parameters differ: incompatible)

and, through AvroConverter alone, on what only Avro has (avro_values.AVRO_ONLY):

    enum-add          the enum gains a symbol                      (an older record's symbols are a subset)
    enum-drop         the enum loses a symbol (its default stays)  (an older record's are not: incompatible)
    union-add         the union gains a branch                     (Connect's Union struct gains an optional
                                                                    field; values stay in the old branches)
    namespace         the record moves to another namespace, the old full name an alias
                                                                   (the Connect name changes: incompatible)

Through AvroConverter the changes are those a registry checking BACKWARD accepts (all but
nested-type, rename, require and decimal-scale; widening only where Avro widens: int to long,
float to double), and each version is first written after the one before it, so the registry
numbers them in order. A change of docs or aliases alone is the same schema to the registry
(Avro's Schema.equals), which answers it with the id it has: the connector never sees it, so
`doc` is drawn with another change there. JsonConverter's schemas carry their version in every
record (`"version": k`), and nothing stops the incompatible ones.
"""
from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

KINDS = ("add-optional", "add-default", "drop", "widen", "doc", "nested-add", "nested-drop", "logical",
         "nested-type", "rename", "require", "decimal-scale")
AVRO_KINDS = ("enum-add", "enum-drop", "union-add", "namespace")
REGISTRY_KINDS = ("add-optional", "add-default", "drop", "widen", "doc", "nested-add", "nested-drop", "logical",
                  *AVRO_KINDS)
_DATE = "org.apache.kafka.connect.data.Date"
_TIME = "org.apache.kafka.connect.data.Time"
_NEW_SYMBOLS = ("REFUNDED", "ON_HOLD", "RETURNED")
_OTHER_NAMESPACE = "com.acme.shop.orders"
# the fields every value keeps: how checkers find a record (seq), what partitioners read
KEPT = ("seq", "region", "ts")
_WIDER = {"int8": "int16", "int16": "int32", "int32": "int64", "float": "double"}
_AVRO_WIDER = {"int32": "int64", "float": "double"}  # int8 and int16 are Avro ints too: no change there


def _extras(schema: dict[str, Any], kept: tuple[str, ...]) -> list[dict[str, Any]]:
    return [f for f in schema["fields"] if f["field"] not in kept]


def _changeable(kind: str, schema: dict[str, Any], kept: tuple[str, ...], avro: bool) -> list[str]:
    """The fields `kind` can change in `schema` (["*"]: the schema itself)."""
    extras = _extras(schema, kept)
    plain = [f for f in extras if not f.get("name")]  # not a logical type
    if kind in ("add-optional", "add-default", "doc", "rename"):
        return ["*"]
    if kind == "drop":
        return [f["field"] for f in extras if f.get("optional") or "default" in f]
    if kind == "widen":
        wider = _AVRO_WIDER if avro else _WIDER
        return [f["field"] for f in plain if f["type"] in wider]
    if kind == "nested-type":
        return [f["field"] for f in extras if f["type"] in ("struct", "array", "map") and _nested_leaf(f) is not None]
    if kind == "require":
        return [f["field"] for f in plain if f.get("optional") and "default" not in f]
    if kind == "decimal-scale":
        return [f["field"] for f in extras if f.get("name") == "org.apache.kafka.connect.data.Decimal"]
    if kind == "nested-add":
        return [path for path, _ in _nested_records(extras)]
    if kind == "nested-drop":
        # an optional field of a nested record that keeps another (no record without fields:
        # Parquet has no empty group)
        return [f"{path}/{f['field']}" for path, rec in _nested_records(extras) if len(rec["fields"]) > 1
                for f in rec["fields"] if f.get("optional") and "default" not in f]
    if kind == "logical":
        return [f["field"] for f in extras if f.get("name") in (_DATE, _TIME)]
    if kind in AVRO_KINDS:
        return _avro_changeable(kind, schema) if avro else []
    return []


def _avro_changeable(kind: str, schema: dict[str, Any]) -> list[str]:
    extras = schema.get("x-avro-extras", ())
    changes = schema.get("x-avro-changes", {})
    if kind == "enum-add" and "status" in extras:
        return ["status"] if any(s not in _symbols(changes) for s in _NEW_SYMBOLS) else []
    if kind == "enum-drop" and "status" in extras:
        return ["status"] if len(_symbols(changes)) > 2 else []
    if kind == "union-add" and "coupon" in extras:
        return ["coupon"] if "double" not in changes.get("coupon", ()) else []
    if kind == "namespace":
        return ["*"] if "namespace" not in changes else []
    return []


def _symbols(changes: dict[str, Any]) -> list[str]:
    from conformance.generators.avro_values import STATUSES

    return list(changes.get("status", STATUSES))


def _nested_records(fields: list[dict[str, Any]], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """The records nested in `fields`, at any depth: a struct field, an array's struct elements,
    a map's struct values; each with its path (field names joined by '.')."""
    out = []
    for f in fields:
        path = f"{prefix}{f['field']}"
        inner = f
        if f["type"] == "array":
            inner = f["items"]
        elif f["type"] == "map":
            inner = f["values"]
        if inner["type"] == "struct":
            out.append((path, inner))
            out += _nested_records(inner["fields"], path + ".")
    return out


def _record_at(fields: list[dict[str, Any]], path: str) -> dict[str, Any]:
    return dict(_nested_records(fields))[path]


def _nested_leaf(field: dict[str, Any]) -> dict[str, Any] | None:
    """The primitive schema one level inside a struct, array or map field, to change the type of."""
    t = field["type"]
    if t == "struct":
        inner = [f for f in field["fields"] if f["type"] not in ("struct", "array", "map")]
        return inner[0] if inner else None
    if t == "array":
        items = field["items"]
        if items["type"] == "struct":
            return _nested_leaf(items)
        return items if items["type"] not in ("array", "map") else None
    if t == "map":
        values = field["values"]
        return values if values["type"] not in ("struct", "array", "map") else None
    return None


def _apply(kind: str, schema: dict[str, Any], target: str, version: int, avro: bool) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    fields = out["fields"]
    by_name = {f["field"]: f for f in fields}
    if kind == "add-optional":
        fields.append({"field": f"added_v{version}_{len(fields)}", "type": "string", "optional": True})
    elif kind == "add-default":
        fields.append({"field": f"since_v{version}_{len(fields)}", "type": "int32", "optional": False, "default": version * 10})
    elif kind == "drop":
        fields.remove(by_name[target])
    elif kind == "widen":
        f = by_name[target]
        f["type"] = (_AVRO_WIDER if avro else _WIDER)[f["type"]]
    elif kind == "doc":
        out["doc"] = f"an order, as version {version} of the producer writes it"
    elif kind == "nested-type":
        leaf = _nested_leaf(by_name[target])
        assert leaf is not None
        name, was = leaf.get("field"), leaf["type"]
        leaf.clear()
        leaf.update({"type": "int64" if was == "string" else "string", "optional": False,
                     **({"field": name} if name else {})})
    elif kind == "rename":
        out["name"] = f"{out.get('name') or 'order'}_v{version}"
    elif kind == "require":
        by_name[target]["optional"] = False
    elif kind == "decimal-scale":
        params = by_name[target].setdefault("parameters", {})
        params["scale"] = str(int(params.get("scale", "0")) + 1)
    elif kind == "nested-add":
        rec = _record_at(fields, target)
        rec["fields"].append({"field": f"added_v{version}_{len(rec['fields'])}", "type": "string", "optional": True})
    elif kind == "nested-drop":
        path, name = target.rsplit("/", 1)
        rec = _record_at(fields, path)
        rec["fields"] = [f for f in rec["fields"] if f["field"] != name]
    elif kind == "logical":
        f = by_name[target]
        for key in ("name", "version", "parameters"):
            f.pop(key, None)
    elif kind in AVRO_KINDS:
        changes = out.setdefault("x-avro-changes", {})
        if kind == "enum-add":
            symbols = _symbols(changes)
            changes["status"] = symbols + [next(s for s in _NEW_SYMBOLS if s not in symbols)]
        elif kind == "enum-drop":
            symbols = _symbols(changes)
            changes["status"] = [s for s in symbols if s != symbols[-1]]  # the default (the first) stays
        elif kind == "union-add":
            changes["coupon"] = [*changes.get("coupon", ("null", "string", "long")), "double"]
        elif kind == "namespace":
            changes["namespace"] = _OTHER_NAMESPACE
    return out


@st.composite
def schema_versions(draw: st.DrawFn, base: dict[str, Any], avro: bool, kept: tuple[str, ...] = KEPT,
                    max_versions: int = 3) -> list[dict[str, Any]]:
    """The versions of `base` a stream's producers write, oldest first (two or three). JSON
    schemas carry `version`; Avro ones get theirs from the registry. Shrinks toward one
    added optional field."""
    kinds = REGISTRY_KINDS if avro else KINDS
    versions = [{**base, "version": 1} if not avro else base]
    for v in range(2, draw(st.integers(2, max_versions)) + 1):
        current = versions[-1]
        for _ in range(draw(st.integers(1, 2))):
            options = [k for k in kinds if _changeable(k, current, kept, avro)]
            # an enum's and a union's changes are three of a dozen options, in the one Avro stream
            # in three that has each: drawn alone two times in three there, so the dozen Avro
            # streams of --profile ci add and drop symbols and add branches (R14.3 projects an
            # older record after the one, not the other). The enum and the union come no more
            # often: every Avro record's schema is parsed again as they grow
            avro_only = [k for k in options if k in ("enum-add", "enum-drop", "union-add")]
            kind = draw(st.sampled_from(avro_only if avro_only and draw(st.integers(0, 2)) > 0 else options))
            current = _apply(kind, current, draw(st.sampled_from(_changeable(kind, current, kept, avro))), v, avro)
        if _unchanged(versions[-1], current, avro):  # a field added, then dropped again; a doc alone
            current = _apply("add-optional", current, "*", v, avro)
        versions.append({**current, "version": v} if not avro else current)
    return versions


def _unchanged(before: dict[str, Any], after: dict[str, Any], avro: bool) -> bool:
    """Whether `after` is no new version of `before`: the same but for its version (and, to a
    registry, its docs: the producer gets the old id back)."""
    ignored = ("version", "doc") if avro else ("version",)
    return ({k: v for k, v in before.items() if k not in ignored}
            == {k: v for k, v in after.items() if k not in ignored})


@st.composite
def version_picks(draw: st.DrawFn, n_records: int, n_versions: int) -> list[int]:
    """Which version each record is written with: each version from a record on (so a registry
    numbers them in order, and every version is written where the stream is long enough), and
    after that, one record in four of an older producer still running."""
    if n_records < 2 or n_versions < 2:
        return [0] * n_records
    firsts = sorted(draw(st.lists(st.integers(1, n_records - 1), min_size=min(n_versions, n_records) - 1,
                                  max_size=min(n_versions, n_records) - 1, unique=True)))
    picks: list[int] = []
    for i in range(n_records):
        newest = sum(1 for f in firsts if f <= i)
        older = newest > 0 and i not in firsts and draw(st.integers(0, 3)) == 0
        picks.append(draw(st.integers(0, newest - 1)) if older else newest)
    return picks


_NUMBERS = ("int8", "int16", "int32", "int64", "float32", "float64")
# documentation as parameters: JsonConverter's and AvroData's (a record's, an enum's, a field's)
_DOC_KEYS = ("connect.record.doc", "io.confluent.connect.avro.record.doc")
_DOC_PREFIXES = ("io.confluent.connect.avro.field.doc.", "io.confluent.connect.avro.enum.doc.")


def _shape(params: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if k not in _DOC_KEYS and not k.startswith(_DOC_PREFIXES)}


def connect_changes(before: Any, after: Any, path: str = "") -> set[str]:
    """What changed from one value schema to the next as the connector sees them (Connect
    schemas, reference_impl.connect_data.Schema), named for the coverage figures: `fields
    added`, `enum symbols added`, `union branches added`, `nested fields added` (inside a record
    in a field, an array or a map), `logical type changed`, …"""
    from reference_impl.avro_data import ENUM, UNION

    out: set[str] = set()
    inside = path.count(".") + path.count("[") + path.count("{") >= 2  # below a top-level field
    if before.name != after.name:
        logical = {_DATE, _TIME, "org.apache.kafka.connect.data.Timestamp"}
        short = (before.name or "").rpartition(".")[2] == (after.name or "").rpartition(".")[2]
        out.add("logical type changed" if {before.name, after.name} & logical else
                "namespace changed" if short else "renamed")
    if before.type != after.type:
        widened = before.type in _NUMBERS and after.type in _NUMBERS
        out.add(("nested " if inside else "") + ("number widened" if widened else "type changed"))
    if ENUM in before.params and ENUM in after.params:
        b = {k for k in before.params if k.startswith(ENUM + ".")}
        a = {k for k in after.params if k.startswith(ENUM + ".")}
        out |= {"enum symbols added"} if a - b else set()
        out |= {"enum symbols dropped"} if b - a else set()
    elif _shape(before.params) != _shape(after.params):
        out.add("parameters changed")
    if before.doc != after.doc or (before.params != after.params and _shape(before.params) == _shape(after.params)):
        out.add("doc changed")
    if before.optional != after.optional:
        out.add("optionality changed")
    if before.type == after.type == "struct":
        names_b = {f.name for f in before.fields}
        names_a = {f.name for f in after.fields}
        what = "union branches" if before.name == UNION else "nested fields" if path else "fields"
        if names_a - names_b:
            out.add(f"{what} added")
        if names_b - names_a:
            out.add(f"{what} dropped")
        for f in before.fields:
            g = after.field(f.name)
            if g is not None:
                out |= connect_changes(f.schema, g.schema, f"{path}.{f.name}")
    elif before.type == after.type == "array":
        out |= connect_changes(before.items, after.items, path + "[]")
    elif before.type == after.type == "map":
        out |= connect_changes(before.keys, after.keys, path + "{}") | connect_changes(before.values, after.values, path + "{}")
    return out


def _connect_schema(value: Any, avro: bool) -> Any:
    """The Connect schema a record's value has to the connector (its version left out)."""
    if avro:
        from reference_impl.avro_binary import parse
        from reference_impl.avro_data import to_connect_schema

        return to_connect_schema(*parse(value["schema"]))
    from reference_impl.connect_data import parse_schema

    return parse_schema(value["schema"])


def evolution_changes(scenarios: Any) -> "Counter[tuple[str, str]]":
    """(value converter kind, change) -> how many of `scenarios` under a schema.compatibility
    write a value schema after another that differs from it by that change (connect_changes)."""
    from collections import Counter

    from conformance.inputs.scenario import converter_kind

    seen: Counter[tuple[str, str]] = Counter()
    for sc in scenarios:
        converter = converter_kind(sc.connector)
        if "schema.compatibility" not in sc.connector or converter not in ("json-schemas", "avro"):
            continue
        distinct: list[Any] = []
        for r in sc.records:
            v = r["value"]
            if isinstance(v, dict) and "schema" in v and v["schema"] not in distinct:
                distinct.append(v["schema"])
        schemas = [_connect_schema({"schema": d}, converter == "avro") for d in distinct]
        found: set[str] = set()
        for a, b in zip(schemas, schemas[1:]):
            found |= connect_changes(a, b)
        seen.update((converter, c) for c in found)
    return seen


def evolving_streams(scenarios: Any) -> "Counter[tuple[str, str]]":
    """(value converter kind, schema.compatibility as the connector reads it) -> how many of
    `scenarios` write more than one value schema under it."""
    from collections import Counter

    from conformance.inputs.scenario import converter_kind
    from reference_impl.schema_evolution import compatibility_mode

    seen: Counter[tuple[str, str]] = Counter()
    for sc in scenarios:
        schemas = {repr(r["value"]["schema"]) for r in sc.records
                   if isinstance(r["value"], dict) and "schema" in r["value"]}
        if "schema.compatibility" in sc.connector and len(schemas) > 1:
            seen[(converter_kind(sc.connector), compatibility_mode(sc.connector["schema.compatibility"]))] += 1
    return seen
