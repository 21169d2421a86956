"""JVM jar sets, resolved from Maven Central by the pom kept in `adapters/jvm/pom.xml`.

Each set is one Maven profile, copied into its own directory
(`~/.cache/sinkcheck/jars/<set>/`, or `$SINKCHECK_JAR_CACHE/<set>/`) so that connector plugins
stay isolated from each other and from the worker. A set is fetched once: a stamp file holding
the hash of the pom and the set name marks it complete, and a later call returns at once. Most
sets are jar lists (`dependency:copy-dependencies`); an application published as one archive
(Apicurio Registry's Quarkus build) is unpacked whole (`dependency:unpack`) and proven complete
by a file it must hold.

    python -m adapters.processes.jars                 # fetch the default sets (kafka, filesink)
    python -m adapters.processes.jars kafka iceberg   # fetch named sets
    python -m adapters.processes.jars apicurio        # the Schema Registry (an unpacked archive)
    python -m adapters.processes.jars --all           # every set the pom knows
    python -m adapters.processes.jars --list          # show sets and whether they are cached
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

POM = Path(__file__).resolve().parents[1] / "jvm" / "pom.xml"
STAMP = ".sinkcheck-stamp"


# the pom's kafka.version: the broker and Connect worker every JVM target runs
KAFKA_VERSION = "4.1.1"
KAFKA_DESCRIPTION = f"Apache Kafka {KAFKA_VERSION} (KRaft, Maven jars)"
# the pom's apicurio.version: the Schema Registry adapters.processes.registry starts
APICURIO_VERSION = "3.3.3"


@dataclass(frozen=True)
class JarSet:
    name: str
    description: str
    coordinates: str  # the main artifact, for messages
    plugin: bool  # True: a Kafka Connect plugin directory (goes under plugin.path)
    # an archive unpacked whole (the profile's artifactItems) instead of a jar list: the file,
    # relative to the set's directory, whose presence proves the unpack complete
    unpacked: str | None = None


JAR_SETS: dict[str, JarSet] = {
    s.name: s
    for s in (
        JarSet("kafka", "Kafka broker (KRaft) + Kafka Connect runtime + log4j2 backend",
               f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}, org.apache.kafka:connect-runtime:{KAFKA_VERSION}", False),
        JarSet("filesink", "Apache Kafka FileStreamSink connector",
               f"org.apache.kafka:connect-file:{KAFKA_VERSION}", True),
        JarSet("iceberg", "Apache Iceberg's Kafka Connect sink (S3FileIO, JDBC catalog on SQLite, ~150 MB)",
               "org.apache.iceberg:iceberg-kafka-connect:1.12.0, iceberg-aws-bundle:1.12.0", True),
        JarSet("spark-s3a", "Spark's S3A filesystem (hadoop-aws + AWS SDK v2 bundle, ~660 MB)",
               "org.apache.hadoop:hadoop-aws:3.5.0", False),
        JarSet("spark-kafka", "Spark's Kafka source for Structured Streaming",
               "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0", False),
        JarSet("apicurio", "Apicurio Registry, a Confluent-compatible Schema Registry (Quarkus app, "
               "152 MB download, runs on Java 21+)",
               f"io.apicurio:apicurio-registry-app:{APICURIO_VERSION}:tar.gz:all", False,
               unpacked="quarkus-run.jar"),
    )
}
DEFAULT_SETS = ("kafka", "filesink")


class JarFetchError(RuntimeError):
    """A jar set could not be resolved; the message names the set, the artifact and the log."""


def cache_root() -> Path:
    env = os.environ.get("SINKCHECK_JAR_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "sinkcheck" / "jars"


def pom_hash(set_name: str, pom: Path = POM) -> str:
    h = hashlib.sha256()
    h.update(pom.read_bytes())
    h.update(b"\0" + set_name.encode())
    return h.hexdigest()


def set_dir(set_name: str) -> Path:
    return cache_root() / set_name


def is_cached(set_name: str) -> bool:
    stamp = set_dir(set_name) / STAMP
    return stamp.is_file() and stamp.read_text().strip() == pom_hash(set_name)


@contextlib.contextmanager
def _lock(root: Path):
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure(set_name: str, *, quiet: bool = False, timeout_s: float = 900) -> Path:
    """Return the directory holding the jars of `set_name`, fetching them on first use."""
    if set_name not in JAR_SETS:
        raise JarFetchError(f"unknown jar set {set_name!r}; known: {', '.join(JAR_SETS)}")
    if is_cached(set_name):
        return set_dir(set_name)
    root = cache_root()
    with _lock(root):
        if is_cached(set_name):
            return set_dir(set_name)
        js = JAR_SETS[set_name]
        if not quiet:
            print(f"sinkcheck: fetching JVM jars for '{set_name}' ({js.description}) from Maven "
                  f"into {set_dir(set_name)} (first use only; `python -m adapters.processes.jars` does it "
                  f"explicitly)...", file=sys.stderr, flush=True)
        if shutil.which("mvn") is None:
            raise JarFetchError(f"cannot fetch jar set '{set_name}': `mvn` (Apache Maven) is not "
                                f"on PATH. Install Maven 3.8+ and a JDK 17, then run "
                                f"`python -m adapters.processes.jars {set_name}`.")
        tmp = Path(tempfile.mkdtemp(prefix=f".{set_name}-", dir=root))
        log = root / f"{set_name}.fetch.log"
        cmd = _maven_command(js, tmp)
        try:
            with open(log, "w") as out:
                rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=timeout_s, start_new_session=True).returncode
        except subprocess.TimeoutExpired:
            shutil.rmtree(tmp, ignore_errors=True)
            raise JarFetchError(f"fetching jar set '{set_name}' ({js.coordinates}) did not finish "
                                f"within {timeout_s:.0f}s; see {log}") from None
        _drop_markers(tmp)
        jars = _fetched(js, tmp)
        if rc != 0 or not jars:
            shutil.rmtree(tmp, ignore_errors=True)
            reason = _maven_reason(log)
            otherwise = ("" if js.unpacked else
                         "; otherwise give the plugin directory yourself (--plugin-path)")
            raise JarFetchError(
                f"could not resolve jar set '{set_name}' ({js.coordinates}) with "
                f"`{' '.join(cmd[:-1])}`: {reason}. The Maven repository this machine reaches "
                f"must serve that artifact{otherwise}. Full Maven output: {log}")
        dest = set_dir(set_name)
        if dest.exists():
            shutil.rmtree(dest)
        (tmp / STAMP).write_text(pom_hash(set_name) + "\n")
        tmp.rename(dest)
        if not quiet:
            what = f"{js.coordinates} unpacked" if js.unpacked else f"{len(jars)} jars"
            print(f"sinkcheck: {what} for '{set_name}' ready in {dest}", file=sys.stderr, flush=True)
        return dest


MARKERS = ".unpack-markers"  # where dependency:unpack records its work, removed once it is done


def _maven_command(js: JarSet, out: Path) -> list[str]:
    """The Maven call that fetches `js` into `out`: a jar list copied, or an archive unpacked
    (the unpack goal keeps marker files, by default under the pom's target/; sent into `out`
    and removed after, so no fetch writes next to the pom)."""
    base = ["mvn", "-B", "-q", "-f", str(POM), "-P", js.name]
    if js.unpacked:
        return [*base, "dependency:unpack", f"-Dsinkcheck.markers={out / MARKERS}", f"-DoutputDirectory={out}"]
    return [*base, "dependency:copy-dependencies", f"-DoutputDirectory={out}"]


def _drop_markers(out: Path) -> None:
    shutil.rmtree(out / MARKERS, ignore_errors=True)


def _fetched(js: JarSet, out: Path) -> list[Path]:
    """What proves a fetch complete: the jars of a list, the named file of an unpacked archive."""
    if js.unpacked:
        return [out / js.unpacked] if (out / js.unpacked).is_file() else []
    return list(out.glob("*.jar"))


def _maven_reason(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "no Maven output"
    for line in lines:
        if "Could not" in line or "Failed to" in line:
            # strip ANSI colours Maven may print even in batch mode
            import re

            line = re.sub(r"\x1b\[[0-9;]*m", "", line).replace("[ERROR]", "").strip()
            line = re.sub(r"https?://\S+", "the configured Maven repository", line)
            return line.split(" during a previous attempt")[0][:400]
    return (lines[-1].strip() if lines else "Maven failed without output")[:400]


def classpath(set_name: str) -> str:
    """A `-cp` value for the jars of `set_name` (fetched on first use)."""
    return str(ensure(set_name) / "*")


def jar_files(set_name: str) -> list[str]:
    """The jar files of `set_name` as paths (fetched on first use), e.g. for `spark.jars`."""
    return sorted(str(p) for p in ensure(set_name).glob("*.jar"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m adapters.processes.jars", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="*", help=f"jar sets (default: {' '.join(DEFAULT_SETS)})")
    ap.add_argument("--all", action="store_true", help="every set in the pom")
    ap.add_argument("--list", action="store_true", help="list sets and their cache state")
    args = ap.parse_args(argv)
    if args.list:
        for js in JAR_SETS.values():
            state = "cached" if is_cached(js.name) else "not fetched"
            print(f"{js.name:9} {state:12} {js.coordinates}  -> {set_dir(js.name)}")
        return 0
    names = list(JAR_SETS) if args.all else (args.sets or list(DEFAULT_SETS))
    failed = 0
    for name in names:
        try:
            print(f"{name}: {ensure(name)}")
        except JarFetchError as e:
            print(f"{name}: FAILED: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
