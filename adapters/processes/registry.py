"""A Schema Registry on a free loopback port: Apicurio Registry (the jar set `apicurio`, its own
Quarkus build from Maven Central) speaking Confluent's REST API at /apis/ccompat/v7, storage in
memory (H2), started and stopped like the broker.

Apicurio runs on Java 21+ (its classes are class-file 65) while sinkcheck's default JDK is 17,
so the registry finds its own JDK: `$SINKCHECK_REGISTRY_JAVA_HOME`, else the newest JDK 21+
under /usr/lib/jvm, else the default `java` when that is new enough. None found is an
environment problem (`JavaUnavailable`), said with what to install or set.

Apicurio's defaults differ from Confluent's where a sink would notice; the flags below set them
back: the global compatibility (Apicurio: NONE; Confluent: BACKWARD) and the 1000-subject cap on
GET /subjects. Schema ids stay content ids (legacy-id-mode off): the same schema text has one id
in every subject, as in Confluent. What no flag changes (tests/test_registry.py pins each): ids
have gaps (Confluent's are dense); across subjects an id goes with the text as sent, not with
Confluent's canonical text, so a pretty-printed copy under another subject gets an id of its own
(within a subject a held schema is found canonically, docs aside, as Confluent does); a subject
at NONE refuses another schema type with 422 (Confluent accepts it); GET /config/{subject} of a
subject without a level of its own answers the configured default, not 40408 nor the global level
set since (the client asks with defaultToGlobal=true, which answers the level in force).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from adapters.processes import jars
from adapters.processes.managed import LOOPBACK, ManagedProcess, free_port, java, wait_until
from adapters.target import TargetError

if TYPE_CHECKING:
    from adapters.registry.client import RegistryClient

MIN_JAVA = 21
JAVA_HOME_ENV = "SINKCHECK_REGISTRY_JAVA_HOME"
JVM_ROOT = Path("/usr/lib/jvm")  # where Debian's and Temurin's packages put their JDKs
CCOMPAT_PATH = "/apis/ccompat/v7"

# Quick start and a small footprint on a 2-core machine (measured: ready in 4.5-5.5 s, RSS ~250 MB;
# 10-16 s without them): C1 only, the serial collector, small thread stacks. A dynamic CDS
# archive (-XX:+AutoCreateSharedArchive) saves another ~1.2 s a start but is a 79 MB file that two
# registries starting at once would write together: not used.
REGISTRY_JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k", "-Djava.awt.headless=true")


class JavaUnavailable(jars.JarFetchError, TargetError):
    """No Java 21+ to run the registry with. An environment problem: a JarFetchError, so that
    the target checks which turn a missing jar set into exit 4 do the same with it, and a
    TargetError for a run that meets it while starting."""


def java_major(java_home: Path) -> int | None:
    """The feature version (17, 21, 25) of the JDK or JRE at `java_home`: its `release` file,
    else what its `java -version` prints; None when neither says."""
    release = java_home / "release"
    text = ""
    try:
        text = release.read_text(errors="replace")
    except OSError:
        exe = java_home / "bin" / "java"
        if not exe.is_file():
            return None
        try:
            text = subprocess.run([str(exe), "-version"], capture_output=True, text=True, timeout=30).stderr
        except (OSError, subprocess.TimeoutExpired):
            return None
    m = re.search(r'(?:JAVA_VERSION=|version )"(\d+)(?:\.(\d+))?', text)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major  # "1.8.0_x" is Java 8


def registry_java() -> str:
    """The `java` executable to run Apicurio with (see the module's docstring for the order)."""
    given = os.environ.get(JAVA_HOME_ENV)
    if given:
        home = Path(given)
        major = java_major(home)
        if not (home / "bin" / "java").is_file() or major is None:
            raise JavaUnavailable(f"${JAVA_HOME_ENV}={given} is not a Java installation (no bin/java or "
                                  f"no version in its release file); point it at a JDK {MIN_JAVA}+")
        if major < MIN_JAVA:
            raise JavaUnavailable(f"${JAVA_HOME_ENV}={given} is Java {major}; Apicurio Registry needs "
                                  f"Java {MIN_JAVA}+: point it at a JDK {MIN_JAVA} or newer")
        return str(home / "bin" / "java")
    found: list[tuple[int, str]] = []
    try:
        homes = sorted(JVM_ROOT.iterdir())
    except OSError:
        homes = []
    for home in homes:
        major = java_major(home)
        if major is not None and major >= MIN_JAVA and (home / "bin" / "java").is_file():
            found.append((major, str(home / "bin" / "java")))
    if found:
        return max(found)[1]
    default = shutil.which(java())
    default_major = java_major(Path(default).resolve().parents[1]) if default else None
    if default and (default_major or 0) >= MIN_JAVA:
        return default
    what = f"Java {default_major}" if default_major else "of no version it says" if default else "not on PATH"
    raise JavaUnavailable(
        f"the Schema Registry (Apicurio Registry {jars.APICURIO_VERSION}) needs Java {MIN_JAVA}+, and none was "
        f"found: ${JAVA_HOME_ENV} is not set, {JVM_ROOT} holds no JDK {MIN_JAVA}+ and the default java is {what}. "
        f"Install one (an Eclipse Temurin 21 or 25 JDK, or openjdk-21-jdk-headless where the distribution "
        f"packages it: Debian 12 does not) or set ${JAVA_HOME_ENV} to its home")


class SchemaRegistryServer:
    """Apicurio Registry as a subprocess: the Confluent-compatible API on a free loopback port
    (`url`), its health on a second one (the management interface), global compatibility
    `compatibility` (Confluent's default, BACKWARD, unless told)."""

    def __init__(self, run_dir: Path | str, *, heap: str = "256m", compatibility: str = "BACKWARD",
                 log_level: str = "WARN", extra_props: Mapping[str, object] | None = None,
                 start_timeout_s: float = 90):
        self.dir = Path(run_dir) / "registry"
        self.port = free_port()
        self.management_port = free_port()
        self.heap = heap
        self.compatibility = compatibility
        self.log_level = log_level
        self.extra_props = dict(extra_props or {})
        self.start_timeout_s = start_timeout_s
        self.proc: ManagedProcess | None = None
        self.startup_s: float | None = None

    @property
    def url(self) -> str:
        """The base of the Confluent-compatible API, what a serializer's schema.registry.url names."""
        return f"http://{LOOPBACK}:{self.port}{CCOMPAT_PATH}"

    @property
    def health_url(self) -> str:
        return f"http://{LOOPBACK}:{self.management_port}/health/ready"

    @property
    def log_path(self) -> Path:
        return self.dir / "registry.log"

    def ports(self) -> set[int]:
        return {self.port, self.management_port}

    def properties(self) -> dict[str, object]:
        props: dict[str, object] = {
            "quarkus.http.host": LOOPBACK,
            "quarkus.http.port": self.port,
            "quarkus.management.host": LOOPBACK,
            "quarkus.management.port": self.management_port,
            "quarkus.http.cors.enabled": "false",
            "quarkus.banner.enabled": "false",
            "quarkus.http.access-log.enabled": "false",
            "quarkus.log.level": self.log_level,
            'quarkus.log.category."io.apicurio".level': self.log_level,
            "quarkus.otel.sdk.disabled": "true",
            # in-memory H2 (Apicurio's default storage), a connection pool sized for a test
            "apicurio.storage.kind": "sql",
            "apicurio.storage.sql.kind": "h2",
            "apicurio.datasource.jdbc.initial-size": 2,
            "apicurio.datasource.jdbc.min-size": 2,
            "apicurio.datasource.jdbc.max-size": 20,
            "apicurio.authn.basic-client-credentials.enabled": "false",
            "quarkus.oidc.tenant-enabled": "false",
            # Confluent's semantics where Apicurio's defaults differ
            "apicurio.rules.global.compatibility": self.compatibility,
            "apicurio.ccompat.max-subjects": 1_000_000,
            "apicurio.ccompat.legacy-id-mode.enabled": "false",
        }
        props.update(self.extra_props)
        return props

    def command(self, java_exe: str) -> list[str]:
        home = jars.ensure("apicurio")
        return [java_exe, f"-Xmx{self.heap}", *REGISTRY_JVM_FLAGS,
                *(f"-D{k}={v}" for k, v in self.properties().items()),
                "-jar", str(home / "quarkus-run.jar")]

    def start(self) -> "SchemaRegistryServer":
        java_exe = registry_java()  # before a first use's 152 MB fetch: said at once when it is missing
        jars.ensure("apicurio")
        t0 = time.monotonic()
        self.dir.mkdir(parents=True, exist_ok=True)
        # the app's working directory: anything it writes stays in the run directory
        self.proc = ManagedProcess("schema-registry", self.command(java_exe), self.log_path, cwd=self.dir).start()
        try:
            wait_until(self._ready, self.start_timeout_s,
                       f"the Schema Registry (Apicurio) at {self.url} to be ready ({self.health_url})",
                       log=self.log_path, proc=self.proc, interval_s=0.1)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def _ready(self) -> bool:
        return _status(self.health_url) == 200 and _status(self.url + "/config") == 200

    def client(self) -> "RegistryClient":
        """A RegistryClient of this server (adapters.registry.client)."""
        from adapters.registry.client import RegistryClient

        return RegistryClient(self.url)

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()

    def __enter__(self) -> "SchemaRegistryServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, OSError):
        return None
