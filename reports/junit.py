"""junit.xml: one testcase per scenario × property. A claimed failure is a <failure> carrying
the witnesses, unless the run is accepted as a known bug of the release that ran (`run
--accept-known-bugs`): then it is <skipped type="accepted-known-bug">, its message "accepted known
bug <id> (<cite>): …" and the witnesses in its text, so a CI that fails on failures passes it
and its reader sees which bug; unknown is <skipped>; a property the target does not claim is <skipped> too,
saying what was measured. A scenario not applicable under the user's config (never run) is
<skipped> for each property its claim holds, its message "not applicable: <reason>". A
scenario that could not run is an <error>."""
from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from reports.context import (NOT_CLAIMED, ReportContext, claim_columns, entry, interruption_text, not_applicable_entries,
                             witness_text)


def _testsuite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=name)


def junit_tree(results: list[Any], ctx: ReportContext) -> ET.Element:
    red = ctx.redactor.text
    root = ET.Element("testsuites", name="sinkcheck")
    suites: dict[str, ET.Element] = {}
    stats: dict[str, dict[str, float]] = {}
    for r in results:
        e = entry(r, ctx)
        for t, claim, verdicts in claim_columns(e):  # one suite per target (per claim view when several)
            suite = suites.get(t)
            if suite is None:
                suite = suites[t] = _testsuite(root, f"sinkcheck {t}")
                stats[t] = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0, "time": 0.0}
            n = max(len(verdicts), 1)
            for v in verdicts:
                tc = ET.SubElement(suite, "testcase", classname=red(f"sinkcheck.{t}.{e['scenario']}"), name=v["property"],
                                   time=f"{e['wall_s'] / n:.3f}")
                stats[t]["tests"] += 1
                stats[t]["time"] += e["wall_s"] / n
                accepted = e.get("accepted_known_bug")
                if v["cell"] == "fail" and accepted:
                    stats[t]["skipped"] += 1
                    sk = ET.SubElement(tc, "skipped", message=red(f"{accepted['line']}: {v['property']} [{v['rule']}]: "
                                                                  f"{v['message']}"), type="accepted-known-bug")
                    sk.text = red("\n".join([f"{accepted['line']}: {accepted['title']}", f"witness: {accepted['witness']}", ""]
                                            + [witness_text(w) for w in v["witnesses"]]
                                            + ["", f"Reproduce with: {e['replay']}"]))
                elif v["cell"] == "fail":
                    stats[t]["failures"] += 1
                    anomaly = v["witnesses"][0]["anomaly"] if v["witnesses"] else "fail"
                    f = ET.SubElement(tc, "failure", message=red(f"{v['property']} [{v['rule']}]: {v['message']}"),
                                      type=anomaly)
                    body = [witness_text(w) for w in v["witnesses"]]
                    body += ["", f"claim: {claim['name']}", f"seed: {e['seed']}", "scenario:", e["steps"], "",
                             f"Reproduce with: {e['replay']}"]
                    f.text = red("\n".join(body))
                elif v["cell"] == "unknown":
                    stats[t]["skipped"] += 1
                    ET.SubElement(tc, "skipped", message=red(f"unknown: {v['message']}"))
                elif v["cell"] == NOT_CLAIMED:
                    stats[t]["skipped"] += 1
                    ET.SubElement(tc, "skipped", message=red(f"not claimed by {claim['name']} (measured: {v['status']}): "
                                                             f"{v['message']}"))
                out = ET.SubElement(tc, "system-out")
                out.text = red(f"{e['status']} {e['scenario']} on {t}; replay: {e['replay']}")
    for na in not_applicable_entries(ctx):
        t = na["target"]
        suite = suites.get(t)
        if suite is None:
            suite = suites[t] = _testsuite(root, f"sinkcheck {t}")
            stats[t] = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0, "time": 0.0}
        for prop in na["properties"] or ["n/a"]:
            tc = ET.SubElement(suite, "testcase", classname=red(f"sinkcheck.{t}.{na['scenario']}"), name=prop, time="0.000")
            ET.SubElement(tc, "skipped", message=red(f"not applicable: {na['reason']}"), type="not-applicable")
            stats[t]["tests"] += 1
            stats[t]["skipped"] += 1
    for err in ctx.errors:
        t = err.get("target", "?")
        suite = suites.get(t)
        if suite is None:
            suite = suites[t] = _testsuite(root, f"sinkcheck {t}")
            stats[t] = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0, "time": 0.0}
        tc = ET.SubElement(suite, "testcase", classname=red(f"sinkcheck.{t}.{err.get('scenario', '?')}"), name="run")
        er = ET.SubElement(tc, "error", message=red(str(err.get("error", "")).splitlines()[0] if err.get("error") else "error"))
        er.text = red(str(err.get("traceback") or err.get("error") or ""))
        stats[t]["tests"] += 1
        stats[t]["errors"] += 1
    stopped = interruption_text(ctx)
    if stopped:  # an error, so that no CI takes the runs that finished for the whole
        suite = suites.setdefault("(interrupted)", _testsuite(root, "sinkcheck (interrupted)"))
        stats.setdefault("(interrupted)", {"tests": 0, "failures": 0, "skipped": 0, "errors": 0, "time": 0.0})
        tc = ET.SubElement(suite, "testcase", classname="sinkcheck.interrupted", name="run")
        ET.SubElement(tc, "error", message=stopped, type="interrupted")
        stats["(interrupted)"]["tests"] += 1
        stats["(interrupted)"]["errors"] += 1
    total = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0, "time": 0.0}
    for t, suite in suites.items():
        for k, v in stats[t].items():
            suite.set(k, f"{v:.3f}" if k == "time" else str(int(v)))
            total[k] += v
    for k, v in total.items():
        root.set(k, f"{v:.3f}" if k == "time" else str(int(v)))
    return root


def write_junit(path: str | Path, results: list[Any], ctx: ReportContext) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    root = junit_tree(results, ctx)
    ET.indent(root)
    text = '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    p.write_text(ctx.redactor.text(text), encoding="utf-8")
    return p
