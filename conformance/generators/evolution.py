"""Evolving value schemas within one stream (R14): a producer moves from version to version of its
schema, and an older producer goes on writing the versions before, under each
`schema.compatibility`.

Each version is the one before it with one or two changes a team makes to a value schema:

    add-optional      a new optional field                         (compatible everywhere)
    add-default       a new required field with a default          (a projected older record gets it)
    drop              an optional field removed                    (a projected newer record lacks it)
    widen             int8 → int16 → int32 → int64, float → double (a projected older number widens)
    doc               the schema's documentation                   (NONE rotates; the others do not care)
    nested-type       a field inside a struct, array or map changes type   (incompatible at any depth)
    rename            the schema's name                            (incompatible)
    require           an optional field becomes required, no default (an older record's null cannot go)
    decimal-scale     a Decimal's scale                            (its parameters differ: incompatible)

Through AvroConverter the changes are those a registry checking BACKWARD accepts (the first five,
widening only where Avro widens: int to long, float to double), and each version is first
written after the one before it, so the registry numbers them in order. JsonConverter's schemas
carry their version in every record (`"version": k`), and nothing stops the incompatible ones.
"""
from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

KINDS = ("add-optional", "add-default", "drop", "widen", "doc", "nested-type", "rename", "require", "decimal-scale")
REGISTRY_KINDS = ("add-optional", "add-default", "drop", "widen", "doc")
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
    return []


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
            kind = draw(st.sampled_from(options))
            current = _apply(kind, current, draw(st.sampled_from(_changeable(kind, current, kept, avro))), v, avro)
        if current["fields"] == versions[-1]["fields"] and current.get("doc") == versions[-1].get("doc") \
                and current.get("name") == versions[-1].get("name"):  # a field added, then dropped again
            current = _apply("add-optional", current, "*", v, avro)
        versions.append({**current, "version": v} if not avro else current)
    return versions


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


def evolution_kinds(versions: list[dict[str, Any]]) -> list[str]:
    """What changed between consecutive versions, for the coverage figures."""
    out = []
    for a, b in zip(versions, versions[1:]):
        names_a = {f["field"] for f in a["fields"]}
        names_b = {f["field"] for f in b["fields"]}
        if names_b - names_a:
            out.append("fields added")
        if names_a - names_b:
            out.append("fields dropped")
        if a.get("name") != b.get("name"):
            out.append("renamed")
        if a.get("doc") != b.get("doc"):
            out.append("doc")
        common = names_a & names_b
        fa = {f["field"]: f for f in a["fields"]}
        fb = {f["field"]: f for f in b["fields"]}
        if any(fa[n] != fb[n] for n in common):
            out.append("field changed")
    return out


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
