"""The options the commands share, read and checked before anything starts: a bad one is a
usage error (exit 4) whose message names the option and what to fix."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

from conformance.playing.session import PROFILES, SIMULATED_EXAMPLES
from sinkcheck.exitcodes import UsageError


def check_target_spec(spec: str, plugin_path: Sequence[str] = (), progress: Any = None,
                      version: str | None = None) -> None:
    """conformance.inputs.targets.check_target, its refusal as a usage error (exit 4)."""
    from conformance.inputs.targets import TargetSpecError, check_target

    try:
        check_target(spec, plugin_path, progress, version)
    except TargetSpecError as e:
        raise UsageError(str(e)) from None


def check_connector_version(version: str | None, flag: str = "--connector-version") -> None:
    """A version the model has no profile for is a usage error before anything starts."""
    if version is None:
        return
    from reference_impl.versions import VersionError, known_version

    try:
        known_version(version)
    except VersionError as e:
        raise UsageError(f"{flag} {version}: {e}") from None


def parse_budget(text: str | None) -> float | None:
    """'10m', '90s', '1h30m', '45' (seconds) -> seconds; None -> no budget."""
    if text is None:
        return None
    t = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        return float(t)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", t)
    if not parts or "".join(a + b for a, b in parts) != t:
        raise UsageError(f"--budget {text!r}: give a duration such as 90s, 10m or 1h30m")
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def decode_text(data: bytes, path: str, what: str) -> str:
    """A file's bytes as UTF-8 text; bytes that are not UTF-8 are a usage error naming the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise UsageError(f"{what} file {path}: line {line}: byte {data[e.start:e.start + 1]!r} is not UTF-8 text "
                         f"({e.reason}); give the file as UTF-8 text (JSON lines for records)") from None


def check_utf8(path: str, flag: str) -> None:
    """A records file Spark reads is UTF-8 text, or a usage error naming the line (Spark would
    fail in a Python worker, with its stack trace); read in chunks, whatever its size."""
    import codecs

    decoder, line = codecs.getincrementaldecoder("utf-8")(), 1
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as e:
                at = line + chunk.count(b"\n", 0, max(e.start, 0))
                raise UsageError(f"{flag} file {path}: line {at}: not UTF-8 text ({e.reason}); give the records "
                                 "as UTF-8 JSON lines") from None
            line += chunk.count(b"\n")
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as e:
        raise UsageError(f"{flag} file {path}: line {line}: ends inside a UTF-8 character ({e.reason})") from None


def out_dir(path: str, flag: str = "--out") -> Path:
    """The directory a command writes into, created; a path that is (or lies under) a file is a
    usage error."""
    p = Path(path)
    _no_file_on_the_way(p.parents, path, flag)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{flag} {path}: is a file; give a directory (it is created if missing)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot create the directory: {e.strerror}") from None
    return p


def out_file(path: str, flag: str = "--out") -> None:
    """The file a command writes ('-' is stdout): its directory is created; a directory in its
    place, or a file on its way, is a usage error."""
    if path == "-":
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {path}: is a directory; give a file name (e.g. {p / 'expected.json'})")
    _no_file_on_the_way(p.parents, path, flag)
    out_dir(str(p.parent), flag)


def _no_file_on_the_way(parents: Sequence[Path], path: str, flag: str) -> None:
    blocker = next((q for q in parents if q.exists() and not q.is_dir()), None)
    if blocker is not None:
        raise UsageError(f"{flag} {path}: lies under {blocker}, which is a file; give a path in a directory")


_WARNED: set[str] = set()


def warn_config(cfg: dict[str, str] | Any, source: str) -> None:
    """reference_impl.config.config_warnings on stderr, each once per process."""
    import sys

    from reference_impl.config import config_warnings

    for w in config_warnings(cfg):
        if w not in _WARNED:
            _WARNED.add(w)
            print(f"warning: {source}: {w}", file=sys.stderr)


def load_connector_config(path: str | None, flag: str = "--connector-config") -> dict[str, str] | None:
    if not path:
        return None
    from reference_impl.config import ConfigError, ConfigSyntaxError, load_config_text

    try:
        text = decode_text(Path(path).read_bytes(), path, flag)
    except FileNotFoundError:
        raise UsageError(f"{flag}: file not found: {path}") from None
    except OSError as e:
        raise UsageError(f"{flag}: cannot read {path}: {e.strerror}") from None
    try:
        _, cfg = load_config_text(text, path)
    except ConfigSyntaxError as e:
        raise UsageError(f"{flag} {path}: malformed JSON at line {e.line}, column {e.column}; fix the file so it is "
                         "one JSON object, either {\"name\":…,\"config\":{…}} or a flat map of strings") from None
    except ConfigError as e:
        raise UsageError(f"{flag} {path}: {e}") from None
    return cfg


def validate_for_target(cfg: dict[str, str], target: str, version: str | None,
                        what: str = "--connector-config") -> None:
    """A config the connector (or Kafka, or Kafka Connect) would reject is a usage error before
    anything starts; what Connect would only log is warned about, as it logs it (one check,
    conformance.playing.user_config.checked, which the pytest plugin asks too)."""
    import sys

    from conformance.playing.user_config import checked

    try:
        warnings = checked(cfg, target, version, what)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for w in warnings:
        if w not in _WARNED:
            _WARNED.add(w)
            print(f"warning: {w}", file=sys.stderr)


def refuse_unhonoured(cfg: dict[str, str], where: str, s3_sink: bool = True, converted: bool = True) -> None:
    """conformance.playing.user_config.refusal as a usage error (exit 4): what the config asks that
    sinkcheck cannot honour, one message before anything runs (`model`, `run`, `gate`, `replay`)."""
    from conformance.playing.user_config import refusal

    why = refusal(cfg, s3_sink, converted)
    if why:
        raise UsageError(f"{where}: {why}")


def load_preflight(path: str | None) -> list[dict[str, Any]] | None:
    if not path:
        return None
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"--preflight: file not found: {path} (write it with sinkcheck preflight --out FILE)") from None
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError(f"--preflight {path}: not a preflight result file: {e}") from None
    checks = doc.get("checks") if isinstance(doc, dict) else doc
    if not isinstance(checks, list):
        raise UsageError(f"--preflight {path}: expected {{\"checks\": [...]}} as written by sinkcheck preflight --out")
    return checks


def picked_only(args: Any) -> bool:
    """`--scenario NAME` plays the scenarios named and no generated ones, in `run` and `gate`
    alike, unless `--examples N` asks for them too."""
    return bool(getattr(args, "scenario", None)) and args.examples is None


def resolve_profile(args: Any) -> tuple[str, int, bool, int]:
    profile = args.profile or ("ci" if os.environ.get("CI") else "default")
    n, derandomize, max_records = PROFILES[profile]
    if picked_only(args):
        n = 0
    if args.examples is not None:
        if args.examples < 0:
            raise UsageError("--examples must be 0 or more")
        n = args.examples
    if args.seed is not None:
        derandomize = False
    return profile, n, derandomize, max_records


def examples_for(spec: str, profile: str, args: Any) -> int:
    """Generated scenarios for one target: the profile's, many more for a simulated target
    (`--examples` sets it for every target)."""
    from conformance.inputs.targets import simulated

    if args.examples is not None:
        return args.examples
    if picked_only(args):
        return 0
    return SIMULATED_EXAMPLES[profile] if simulated(spec) else PROFILES[profile][0]


def resolve_props(props: Sequence[str] | None) -> set[str] | None:
    if not props:
        return None
    from conformance.judging.claims import PROPERTIES

    bad = [p for p in props if p not in PROPERTIES]
    if bad:
        raise UsageError(f"--property {', '.join(bad)}: unknown property; choose from {', '.join(PROPERTIES)}")
    return set(props)
