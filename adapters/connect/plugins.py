"""Where a Kafka Connect connector plugin comes from, and which version it is.

In this order:
1. a user's plugin directory: `--plugin-path` / `SINKCHECK_PLUGIN_PATH` (os.pathsep-separated),
   as downloaded from Confluent Hub and unpacked (`confluentinc-kafka-connect-s3-<v>/lib/*.jar`)
   or a package archive unpacked (`camel-aws-s3-sink-kafka-connector-<v>/*.jar`,
   `s3-sink-connector-for-apache-kafka-<v>/*.jar`): the plugin's
   own directory or the directory holding it;
2. the project's shared layouts beside the checkout, `../shared/<connector>/assemble VERSION DIR`,
   which lays out the real connector built from its public source (Maven Central only), cached
   under `~/.cache/sinkcheck/plugins/` (`SINKCHECK_PLUGIN_CACHE`);
3. otherwise a `PluginUnavailable` that names every way to provide it.

A plugin's version is read from its main jar's name (`kafka-connect-s3-12.1.9.jar`). Each run
puts exactly one plugin directory on the worker's `plugin.path`, so a directory holding several
versions never makes the worker pick one by itself.

    python -m adapters.connect.plugins confluent@12.1.9     # resolve (assembling on first use) and print
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from adapters.target import TargetError

REPO = Path(__file__).resolve().parents[2]
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")


@dataclass(frozen=True)
class PluginKind:
    """How to recognise one connector's plugin and where its shared layout lives."""

    profile: str  # adapters.connect.profiles profile name
    title: str
    main_jar: re.Pattern[str]  # its main jar; group 1 is the version
    shared: str  # ../shared/<shared>/assemble
    default_version: str
    hub: str  # where users get it, for messages


KINDS: dict[str, PluginKind] = {
    k.profile: k for k in (
        PluginKind("confluent", "Confluent's S3 sink connector", re.compile(r"^kafka-connect-s3-(\d+\.\d+\.\d+)\.jar$"),
                   "confluent", "12.1.9",
                   "Confluent Hub (confluentinc/kafka-connect-s3), unpacked"),
        PluginKind("camel", "Apache Camel's AWS S3 sink connector",
                   re.compile(r"^camel-aws-s3-sink-kafka-connector-(\d+\.\d+\.\d+)\.jar$"), "camel", "4.18.0",
                   "the camel-kafka-connector package archive (camel-aws-s3-sink-kafka-connector-<v>-package.tar.gz), "
                   "unpacked"),
        PluginKind("aiven", "Aiven's S3 sink connector",
                   re.compile(r"^s3-sink-connector-for-apache-kafka-(\d+\.\d+\.\d+)\.jar$"), "aiven", "3.4.2",
                   "Aiven's release archive from GitHub (s3-sink-connector-for-apache-kafka-<v>.tar or .zip, "
                   "Aiven-Open/cloud-storage-connectors-for-apache-kafka), unpacked"),
        # Lenses' release archive holds one assembly jar; the shared layout flat jars
        PluginKind("lenses", "Lenses' S3 sink connector (stream-reactor)",
                   re.compile(r"^kafka-connect-aws-s3(?:-assembly)?-(\d+\.\d+\.\d+)\.jar$"), "lenses", "11.7.2",
                   "Lenses' release archive from GitHub (kafka-connect-aws-s3-<v>.zip, lensesio/stream-reactor), "
                   "unpacked"),
    )
}


class PluginUnavailable(TargetError):
    """The plugin cannot be had here: the message names what is missing and every way to
    provide it (a usage error: exit 4)."""


@dataclass(frozen=True)
class Plugin:
    profile: str
    version: str
    directory: Path  # the plugin's own directory (its jars inside, or under lib/)
    source: str  # where it came from, for messages and reports

    def describe(self) -> str:
        return f"{KINDS[self.profile].title} {self.version} ({self.source}: {self.directory})"


def user_plugin_paths(given: Sequence[str | Path] = ()) -> list[Path]:
    """--plugin-path values, else SINKCHECK_PLUGIN_PATH."""
    if given:
        return [Path(p) for p in given]
    raw = os.environ.get("SINKCHECK_PLUGIN_PATH", "")
    return [Path(p) for p in raw.split(os.pathsep) if p]


def cache_root() -> Path:
    env = os.environ.get("SINKCHECK_PLUGIN_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "sinkcheck" / "plugins"


def shared_root() -> Path | None:
    """The shared layouts beside the checkout (`SINKCHECK_SHARED` overrides): the nearest
    `shared/` next to the checkout or one of the directories above it, if any."""
    env = os.environ.get("SINKCHECK_SHARED")
    if env:
        return Path(env) if Path(env).is_dir() else None
    for d in REPO.parents:
        if (d / "shared").is_dir() and any((d / "shared" / k.shared / "assemble").is_file() for k in KINDS.values()):
            return d / "shared"
    return None


def shared_versions(kind: PluginKind) -> list[str]:
    root = shared_root()
    if root is None or not (root / kind.shared / "assemble").is_file():
        return []
    return sorted(d.name for d in (root / kind.shared).iterdir() if (d / "lib.txt").is_file())


def _version_of(directory: Path, kind: PluginKind) -> str | None:
    for d in (directory, directory / "lib"):
        if d.is_dir():
            for jar in d.iterdir():
                m = kind.main_jar.match(jar.name)
                if m:
                    return m.group(1)
    return None


def found_in(paths: Sequence[Path], kind: PluginKind) -> list[Plugin]:
    """The plugins of `kind` in user paths: each path is a plugin directory or holds some."""
    out: list[Plugin] = []
    for p in paths:
        if not p.is_dir():
            continue
        candidates = [p] + sorted(c for c in p.iterdir() if c.is_dir())
        for c in candidates:
            v = _version_of(c, kind)
            if v is not None and all(x.directory != c.resolve() for x in out):
                out.append(Plugin(kind.profile, v, c.resolve(), "--plugin-path"))
    return out


def _ways(kind: PluginKind) -> str:
    shared = shared_root()
    assemble = (f"{shared / kind.shared / 'assemble'} VERSION DIR (present: {', '.join(shared_versions(kind)) or 'none'})"
                if shared else f"../shared/{kind.shared}/assemble beside the checkout (not present here)")
    container = ("; or, on a host with a Docker engine, the container route "
                 "(adapters.connect.containers.container_target, `pytest -m kafka -k containers`)" if kind.profile == "confluent"
                 else "")
    return (f"give its plugin directory with --plugin-path DIR or SINKCHECK_PLUGIN_PATH=DIR ({kind.hub}); "
            f"or lay it out with {assemble}{container}")


def locate(profile: str, version: str | None, plugin_path: Sequence[str | Path] = ()) -> Plugin:
    """Where the plugin will come from, without building anything (seconds at most). The
    Plugin of a shared layout not yet assembled names its future directory. Raises
    PluginUnavailable (what is missing, and the ways to provide it)."""
    kind = KINDS.get(profile)
    if kind is None:
        raise PluginUnavailable(f"no plugin source is known for kafka-connect:{profile}")
    if version is not None and not VERSION_RE.match(version):
        raise PluginUnavailable(f"kafka-connect:{profile}@{version}: a version is MAJOR.MINOR.PATCH, e.g. "
                                f"{kind.default_version}")
    users = user_plugin_paths(plugin_path)
    if users:
        found = found_in(users, kind)
        matching = [p for p in found if version is None or p.version == version]
        if len({p.version for p in matching}) > 1:
            raise PluginUnavailable(
                f"{kind.title}: the plugin path holds versions {', '.join(sorted({p.version for p in matching}))}; "
                f"name one (kafka-connect:{profile}@VERSION) so that the worker loads exactly that one")
        if matching:
            return matching[0]
        have = f" (it holds {', '.join(sorted({p.version for p in found}))})" if found else ""
        missing = [str(p) for p in users if not p.is_dir()]
        why = (f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} no directory" if missing else
               f"no {_jar_hint(kind)} there or one directory below")
        ways = _ways(kind)
        raise PluginUnavailable(
            f"{kind.title}{' ' + version if version else ''} is not in the plugin path "
            f"{os.pathsep.join(map(str, users))}{have}: {why}. {ways[0].upper()}{ways[1:]}")
    available = shared_versions(kind)
    want = version or kind.default_version
    if available:
        if want not in available:
            raise PluginUnavailable(f"{kind.title} {want} is not among the shared layouts ({', '.join(available)}); "
                                    f"pick one of those, or {_ways(kind)}")
        directory = cache_root() / f"{profile}-{want}" / _plugin_dir_name(kind, want)
        return Plugin(profile, want, directory, f"../shared/{kind.shared}/assemble")
    raise PluginUnavailable(f"{kind.title}{' ' + version if version else ''} is not installed here and cannot be "
                            f"fetched from Maven Central: {_ways(kind)}")


def _jar_hint(kind: PluginKind) -> str:
    return kind.main_jar.pattern.strip("^$").replace(r"(\d+\.\d+\.\d+)", "<version>").replace("\\", "")


def _plugin_dir_name(kind: PluginKind, version: str) -> str:
    return {"confluent": f"confluentinc-kafka-connect-s3-{version}",
            "camel": f"camel-aws-s3-sink-kafka-connector-{version}",
            "aiven": f"s3-sink-connector-for-apache-kafka-{version}",
            "lenses": f"kafka-connect-aws-s3-{version}"}[kind.profile]


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def resolve(profile: str, version: str | None, plugin_path: Sequence[str | Path] = (), *,
            progress: Callable[[str], None] | None = None, timeout_s: float = 900) -> Plugin:
    """The plugin, ready on disk: a user's directory as it is, or a shared layout assembled on
    first use (about a minute; later calls return at once)."""
    plugin = locate(profile, version, plugin_path)
    if plugin.source == "--plugin-path" or _version_of(plugin.directory, KINDS[profile]) == plugin.version:
        return plugin
    kind = KINDS[profile]
    script = shared_root() / kind.shared / "assemble"  # type: ignore[operator]
    dest = plugin.directory.parent
    log = cache_root() / f"{profile}-{plugin.version}.assemble.log"
    with _lock(cache_root() / f".{profile}-{plugin.version}.lock"):
        if _version_of(plugin.directory, kind) == plugin.version:
            return plugin
        if progress:
            progress(f"sinkcheck: laying out {kind.title} {plugin.version} with {script} into {dest} "
                     f"(first use only: jars from Maven Central, about a minute)...")
        t0 = time.monotonic()
        try:
            with open(log, "w") as out:
                rc = subprocess.run([str(script), plugin.version, str(dest)], stdout=out, stderr=subprocess.STDOUT,
                                    timeout=timeout_s, start_new_session=True).returncode
        except subprocess.TimeoutExpired:
            raise PluginUnavailable(f"{script} {plugin.version} did not finish within {timeout_s:.0f}s; "
                                    f"see {log}") from None
        if rc != 0 or _version_of(plugin.directory, kind) != plugin.version:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-8:])
            raise PluginUnavailable(f"{script} {plugin.version} {dest} failed (exit {rc}); see {log}:\n{tail}")
        if progress:
            progress(f"sinkcheck: {kind.title} {plugin.version} ready in {plugin.directory} "
                     f"({time.monotonic() - t0:.0f}s)")
    return plugin


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 4
    for a in args:
        profile, _, version = a.partition("@")
        try:
            print(resolve(profile, version or None, progress=lambda m: print(m, file=sys.stderr)).describe())
        except PluginUnavailable as e:
            print(f"{a}: {e}", file=sys.stderr)
            return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
