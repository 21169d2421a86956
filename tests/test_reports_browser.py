"""Open a generated report.html in real headless Chromium: it renders with no console errors
(no blocked network request, no script error), the matrix and the timelines are in the DOM,
and a screenshot is saved beside the report."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

CHROMIUM = "/usr/bin/chromium"


def _ensure_chromium() -> str:
    if not os.path.exists(CHROMIUM):
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            pytest.skip("chromium is not installed and apt-get is not usable here")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], check=False, env=env, capture_output=True, timeout=600)
        r = subprocess.run(["apt-get", "install", "-y", "chromium"], env=env, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0 or not os.path.exists(CHROMIUM):
            pytest.skip(f"could not install chromium: {r.stderr[-400:]}")
    return CHROMIUM


def _chromium(html: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [_ensure_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0", *extra, html.as_uri()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def console_errors(stderr: str) -> list[str]:
    """Console messages Chromium logged for the page (script errors, CSP violations, failed loads)."""
    return [ln for ln in stderr.splitlines()
            if "CONSOLE" in ln and re.search(r"error|uncaught|refused|failed|violat", ln, re.I)]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser")
    from test_cli_exit_codes import LosingTarget, spec

    assert main(["gate", "--baseline", spec(LosingTarget), "--candidate", "model@10.6.3",
                 "--scenario", "late-records-across-hour-edge", "--scenario", "rotate-interval-table",
                 "--examples", "2", "--out", str(out)]) in (Exit.OK, Exit.FAILED)
    return out / "report.html"


def test_report_renders_without_console_errors_and_has_matrix_and_timeline(report: Path, tmp_path: Path) -> None:
    dom = _chromium(report, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == [], "\n".join(console_errors(dom.stderr))
    assert 'id="matrix"' in dom.stdout and 'class="cell ' in dom.stdout
    assert '<svg class="timeline"' in dom.stdout and 'class="tl-object"' in dom.stdout
    assert 'id="changes"' in dom.stdout and 'id="environment"' in dom.stdout

    shot = Path(os.environ.get("SINKCHECK_TEST_OUTPUT", report.parent)) / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    r = _chromium(report, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", "--hide-scrollbars")
    assert r.returncode == 0 and shot.exists() and shot.stat().st_size > 10_000, r.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")


def test_console_error_detection_works(tmp_path: Path) -> None:
    """The check above would see a script error or a blocked network request."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                   "script-src 'unsafe-inline'\"></head><body><script>console.error('boom'); undefinedFn();</script>"
                   "<img src=\"http://127.0.0.1:9/x.png\"></body></html>")
    r = _chromium(bad, tmp_path, "--dump-dom")
    errs = console_errors(r.stderr)
    assert any("undefinedFn" in e or "boom" in e for e in errs), r.stderr[-2000:]
