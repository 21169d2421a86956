"""Witnesses of a wrong schema evolution (R14), named for what the sink got wrong, with the record
and both value schemas: a record written into a file whose schema it is incompatible with
(`missed-schema-rotation`), a file closed for a record the release projects
(`needless-schema-rotation`), a record projected onto its file's schema wrongly
(`wrong-projection`). The rotation and contents checkers call them where their own witness would
only say that a record is in another object, or that a row differs."""
from __future__ import annotations

from typing import Any, Sequence

from conformance.judging.verdicts import Witness
from reference_impl.connect_data import Schema, SinkRecord
from reference_impl.schema_evolution import compatibility_mode


def describe(schema: Schema | None) -> dict[str, Any]:
    """A value schema in the parts a reader tells versions apart by."""
    if schema is None:
        return {"schema": None}
    out: dict[str, Any] = {"type": schema.type}
    for attr in ("name", "version", "doc"):
        if getattr(schema, attr) is not None:
            out[attr] = getattr(schema, attr)
    if schema.fields:
        out["fields"] = {f.name: _short(f.schema) for f in schema.fields}
    return out


def _short(schema: Schema) -> str:
    text = schema.name.rsplit(".", 1)[-1] if schema.name else schema.type
    if schema.type == "struct":
        text += "{" + ", ".join(f"{f.name}: {_short(f.schema)}" for f in schema.fields) + "}"
    elif schema.type == "array" and schema.items is not None:
        text += f"<{_short(schema.items)}>"
    elif schema.type == "map" and schema.keys is not None and schema.values is not None:
        text += f"<{_short(schema.keys)}, {_short(schema.values)}>"
    if schema.optional:
        text += "?"
    if schema.default is not None:
        text += f" = {schema.default!r}"
    return text


def _mode(cfg: Any) -> str:
    return compatibility_mode(getattr(cfg, "schema_compatibility", None))


def rotation_witness(cfg: Any, model_objects: Sequence[Any], by_offset: dict, rec: tuple[str, int, int],
                     expected_key: str, observed_key: str, at: str) -> Witness | None:
    """Where a misplaced record's file boundary is the model's schema rule: the model closes the
    file before it for its schema (the sink did not), or keeps it in a file of another schema
    (the sink closed that file)."""
    topic, partition, offset = rec
    record: SinkRecord | None = by_offset.get(rec)
    if record is None:
        return None
    before = next((o for o in model_objects if o.topic == topic and o.partition == partition and o.offsets
                   and o.offsets[-1] + 1 == offset and o.rotation.startswith("R14")), None)
    mode = _mode(cfg)
    if before is not None:
        file_record = by_offset.get((topic, partition, before.offsets[0]))
        why = before.rotation.split("(", 1)[-1].rstrip(")") if "(" in before.rotation else "a schema change"
        return Witness("missed-schema-rotation", (at,), (expected_key, observed_key),
                       expected={"file schema": describe(file_record.value_schema if file_record else None),
                                 "record schema": describe(record.value_schema)},
                       observed=observed_key,
                       explanation=f"the record's value schema cannot be projected onto the schema of the file "
                                   f"before it under schema.compatibility={mode} ({why}): the connector commits that "
                                   f"file and starts a new one (R14.2-R14.4); the sink wrote the record into it")
    mine = next((o for o in model_objects if o.key == expected_key), None)
    if mine is None or not mine.offsets or mode == "NONE":
        return None
    file_record = by_offset.get((topic, partition, mine.offsets[0]))
    if file_record is None or file_record.value_schema == record.value_schema:
        return None
    return Witness("needless-schema-rotation", (at,), (expected_key, observed_key),
                   expected={"file schema": describe(file_record.value_schema),
                             "record schema": describe(record.value_schema)},
                   observed=observed_key,
                   explanation=f"under schema.compatibility={mode} the connector projects the record onto its "
                               f"file's schema and keeps it in that file (R14.3, R14.4, R14.7); the sink started "
                               f"another file for it")


def projection_witness(cfg: Any, obj_key: str, recs: Sequence[SinkRecord], want: list, got: list,
                       at: Any) -> Witness | None:
    """A row that differs where its record's value schema is not its file's: the projection."""
    if _mode(cfg) == "NONE" or not recs or len(want) != len(got) or len(recs) != len(want):
        return None
    file_schema = recs[0].value_schema
    i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), None)
    if i is None or file_schema is None or recs[i].value_schema in (None, file_schema):
        return None
    r = recs[i]
    return Witness("wrong-projection", (at((r.topic, r.partition), r.offset),), (obj_key,),
                   expected={"row": want[i], "file schema": describe(file_schema),
                             "record schema": describe(r.value_schema)},
                   observed={"row": got[i]},
                   explanation=f"the record is written projected onto the value schema of its file's first record "
                               f"under schema.compatibility={_mode(cfg)} (R14.7: fields the file's schema lacks "
                               "dropped, those the record lacks given their defaults, numbers widened); the row "
                               "differs from that projection")
