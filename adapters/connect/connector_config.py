"""A connector config for a profile: a user's own parsed (`{"name": ..., "config": {...}}` or a flat
map) and filled with the S3 server's keys, a scenario's translated to another sink (what is sent,
mapped and dropped, with the reason), a small default one, and any of them redacted."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from adapters.connect.profiles import ConnectorProfile, PROFILES, S3Location


class ConnectorConfigError(ValueError):
    """A connector config that cannot be used, or that the worker rejected. `errors` maps each
    property to its reasons."""

    def __init__(self, message: str, errors: Mapping[str, list[str]] | None = None):
        super().__init__(message)
        self.errors = dict(errors or {})


def parse_connector_config(data: str | bytes | Path | Mapping[str, Any],
                           default_name: str = "sinkcheck-sink") -> tuple[str, dict[str, str]]:
    """Accept `{"name": ..., "config": {...}}` or a flat map (JSON text, a file path, or a
    dict); return (name, config with string values)."""
    if isinstance(data, Path):
        data = data.read_text()
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise ConnectorConfigError(f"connector config is not valid JSON: {e}") from None
    if not isinstance(data, Mapping):
        raise ConnectorConfigError(
            f"connector config must be a JSON object, got {type(data).__name__}")
    if "config" in data and isinstance(data["config"], Mapping):
        name = str(data.get("name") or data["config"].get("name") or default_name)
        flat = dict(data["config"])
    else:
        flat = dict(data)
        name = str(flat.get("name") or default_name)
    flat.pop("name", None)
    return name, {str(k): _str(v) for k, v in flat.items()}


def _str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_str(x) for x in v)
    return str(v)


def profile_for(config: Mapping[str, str], profile: str | None = None) -> ConnectorProfile:
    """The profile named `profile`, else the one whose connector class the config names."""
    if profile:
        try:
            return PROFILES[profile]
        except KeyError:
            raise ConnectorConfigError(
                f"unknown connector profile {profile!r}; known: {', '.join(PROFILES)}") from None
    cls = config.get("connector.class", "")
    for p in PROFILES.values():
        if cls in (p.connector_class, p.connector_class.rsplit(".", 1)[-1]):
            return p
    raise ConnectorConfigError(
        f"connector.class {cls!r} matches no profile ({', '.join(PROFILES)}); "
        f"name one with profile=...")


# Kafka Connect's own connector properties (ConnectorConfig, SinkConnectorConfig): every sink has them
FRAMEWORK_KEYS = frozenset({
    "name", "tasks.max", "tasks.max.enforce", "topics", "topics.regex", "key.converter", "value.converter",
    "header.converter", "config.action.reload", "transforms", "predicates",
})
FRAMEWORK_PREFIXES = ("key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.",
                      "errors.", "consumer.override.")


def framework_property(key: str) -> bool:
    return key in FRAMEWORK_KEYS or key.startswith(FRAMEWORK_PREFIXES)


@dataclass(frozen=True)
class Translation:
    """A scenario's connector config as one sink gets it."""

    profile: str
    config: dict[str, str]  # what is sent (before the endpoint, bucket and credentials are filled)
    mapped: dict[str, str] = field(default_factory=dict)  # sent property → what it stands for
    dropped: dict[str, str] = field(default_factory=dict)  # scenario property → why it is not sent
    given: bool = False  # the config named this sink's connector: used as given

    def to_json(self) -> dict[str, object]:
        return {"profile": self.profile, "given": self.given, "mapped": dict(self.mapped),
                "dropped": dict(self.dropped)}


def translate(config: Mapping[str, str], profile: ConnectorProfile,
              defaults: Mapping[str, str] = {}) -> Translation:
    """`config` (a scenario's, written for Confluent's S3 sink) as `profile`'s sink gets it.
    `defaults`: the worker's converters, made explicit where the config names none (a sink that
    cannot write what they produce gets its counterpart). A config naming the profile's
    connector class, or a profile that speaks the scenario's language, is used as given."""
    cfg = {str(k): str(v) for k, v in config.items()}
    if profile.counterparts is None or cfg.get("connector.class") in (
            profile.connector_class, profile.connector_class.rsplit(".", 1)[-1]):
        return Translation(profile.name, cfg, given=True)
    for key, value in defaults.items():
        role = key.split(".converter", 1)[0]
        if f"{role}.converter" not in cfg:
            cfg[key] = value
    out: dict[str, str] = {"connector.class": profile.connector_class}
    mapped: dict[str, str] = {}
    consumed: set[str] = set()
    for c in profile.counterparts(cfg):
        out[c.key] = c.value
        mapped[c.key] = f"{', '.join(c.sources)}: {c.why}"
        consumed.update(c.sources)
    dropped: dict[str, str] = {}
    for key, value in cfg.items():
        if key in consumed or key == "connector.class" or key in out:
            continue
        if framework_property(key) or key.startswith(profile.own_prefixes):
            out[key] = value
        else:
            dropped[key] = f"no counterpart in {profile.name}'s connector"
    return Translation(profile.name, out, mapped, dropped)


# a registry converter's settings that reach the user's own registry: its credentials and TLS
REGISTRY_ACCESS = ("basic.auth.credentials.source", "basic.auth.user.info", "schema.registry.basic.auth.user.info",
                   "bearer.auth.", "schema.registry.ssl.", "proxy.")


def onto_registry(config: Mapping[str, str], url: str) -> tuple[dict[str, str], list[str]]:
    """`config` with its registry converters pointed at the run's Schema Registry (`url`, which
    needs no credentials): each `<role>.converter.schema.registry.url` set to it, the settings that
    reach the user's registry (credentials, TLS, proxy) dropped. Returns the config and what was
    changed, for the report."""
    out, changed = dict(config), []
    for role in ("key", "value", "header"):
        prefix = f"{role}.converter."
        if not any(k.startswith(prefix + "schema.registry.url") for k in out):
            continue
        was = out.get(prefix + "schema.registry.url")
        out[prefix + "schema.registry.url"] = url
        changed.append(f"{prefix}schema.registry.url={was} → sinkcheck's registry {url}")
        for key in [k for k in out if k.startswith(prefix) and k[len(prefix):].startswith(REGISTRY_ACCESS)]:
            del out[key]
            changed.append(f"{key} dropped (sinkcheck's registry takes no credentials)")
    return out, changed


def fill_config(config: Mapping[str, str], profile: ConnectorProfile,
                s3: S3Location | None, topics: Mapping[str, int] | None = None,
                registry_url: str | None = None) -> dict[str, str]:
    """The user's config with only the endpoint, bucket and credentials keys set, and the
    topics the run created as `topics` where the config names neither `topics` nor
    `topics.regex` (a sink connector needs one of them); its registry converters pointed at the
    run's Schema Registry where there is one (`registry_url`)."""
    out = dict(config)
    if registry_url is not None:
        out = onto_registry(out, registry_url)[0]
    out.setdefault("connector.class", profile.connector_class)
    if topics and not str(out.get("topics", "")).strip() and not str(out.get("topics.regex", "")).strip():
        out["topics"] = ",".join(topics)
    if s3 is not None:
        out.update(profile.fill(s3))
        if profile.place is not None:
            out.update(profile.place(out, s3))
    return out


def default_config(profile: ConnectorProfile | str, topics: list[str] | str,
                   s3: S3Location | None, **overrides: str) -> dict[str, str]:
    """A small working config for `profile` (the profile's defaults, then overrides)."""
    if isinstance(profile, str):
        profile = PROFILES[profile]
    cfg = {"connector.class": profile.connector_class, "tasks.max": "1",
           "topics": topics if isinstance(topics, str) else ",".join(topics)}
    cfg.update(profile.defaults)
    cfg.update({k: _str(v) for k, v in overrides.items()})
    return fill_config(cfg, profile, s3)


def redact(config: Mapping[str, str], profile: ConnectorProfile | None = None) -> dict[str, str]:
    secret = set(profile.secret_keys) if profile else set()
    out = {}
    for k, v in config.items():
        lk = k.lower()
        if k in secret or "secret" in lk or "password" in lk:
            out[k] = "****"
        else:
            out[k] = v
    return out
