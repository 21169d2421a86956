"""report.html: one self-contained file (inline CSS, JS and SVG; nothing fetched) that a
person reads at a glance: the verdict banner, changes since the baseline, the compliance
matrix, every failure with witnesses, steps and the replay command, a timeline per run, and
the environment with the S3 server's preflight results."""
from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from reports.context import (NOT_APPLICABLE, NOT_CLAIMED, ReportContext, accepted_entries, cell_status, claim_columns,
                             counts, entry, fault_coverage, interruption_text, known_bugs_section, matrix,
                             not_applicable_entries, overall_status)
from reports.timeline import timeline_svg

CSS = """
:root{--pass:#1f8a3b;--fail:#c62828;--unknown:#b7791f;--nc:#8a8f98;--bg:#fafafa;--ink:#1d1f23}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:var(--bg);color:var(--ink)}
main{max-width:1200px;margin:0 auto;padding:16px 24px 64px}h2{margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.banner{padding:18px 24px;color:#fff}.banner h1{margin:0 0 6px;font-size:26px}.banner .sub{opacity:.92}
.banner.pass{background:var(--pass)}.banner.fail{background:var(--fail)}.banner.unknown{background:var(--unknown)}
.banner.error,.banner.nothing,.banner.interrupted{background:#444}
.tgt{display:inline-block;margin:6px 10px 0 0;padding:6px 10px;border-radius:6px;background:rgba(255,255,255,.16)}
table{border-collapse:collapse;margin:8px 0;background:#fff}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f1f3}td.cell{text-align:center;min-width:120px;font-weight:600}
.cell.pass{background:#d7f0dd;color:var(--pass)}.cell.fail{background:#f8d7d7;color:var(--fail)}
.cell.unknown{background:#fbecc8;color:var(--unknown)}.cell.not-claimed{background:#eef0f2;color:var(--nc)}
.cell.na{background:#f4f4f4;color:#777}
.cell small{display:block;font-weight:400;color:#555}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-size:12px;font-weight:600}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.unknown{background:var(--unknown)}
.badge.not-claimed,.badge.allowed{background:var(--nc)}.badge.documented{background:#3b6fb6}.badge.unexplained,.badge.regression,.badge.behaviour-change{background:var(--fail)}
.badge.fixed{background:var(--pass)}.badge.verdict-change{background:#6b5bb6}.badge.accepted{background:#8a6d1f}
.failure.accepted{border-left-color:#8a6d1f}
pre{background:#f4f5f7;padding:8px;overflow:auto;max-height:360px;margin:4px 0}pre.steps{white-space:pre-wrap;word-break:break-all}code{background:#f4f5f7;padding:1px 4px}
.failure{border-left:4px solid var(--fail);background:#fff;padding:8px 14px;margin:14px 0}
.replay{display:flex;gap:8px;align-items:center}.replay button{cursor:pointer}
details{margin:6px 0;background:#fff;border:1px solid #e3e3e3;padding:4px 10px}summary{cursor:pointer}
.filters button{margin-right:6px;cursor:pointer}.hidden{display:none}
svg.timeline{background:#fff;border:1px solid #e3e3e3;display:block;margin:6px 0}
.tl-lane{font-size:11px;fill:#444}.tl-axis{stroke:#ccc}.tl-produce{stroke:#3b6fb6;stroke-width:1.5}
.tl-fault{fill:#c62828;fill-opacity:.15;stroke:#c62828;stroke-opacity:.4}.tl-unfired{fill:#888;stroke:#888}
.tl-commit{fill:#6b5bb6}.tl-object{fill:#1f8a3b;fill-opacity:.8}.tl-label{font-size:10px;fill:#c62828}.tl-note{font-size:10px;fill:#777}
.muted{color:#666}
"""

JS = """
function copyText(id){var t=document.getElementById(id).textContent;
 if(navigator.clipboard){navigator.clipboard.writeText(t).catch(function(){});}}
function filterRuns(s){document.querySelectorAll('[data-status]').forEach(function(el){
 el.classList.toggle('hidden', s!=='all' && el.getAttribute('data-status')!==s);});}
"""


def _badge(s: str) -> str:
    return f'<span class="badge {escape(s)}">{escape(s.upper() if s in ("pass", "fail", "unknown") else s)}</span>'


def _banner(entries: list[dict[str, Any]], ctx: ReportContext) -> str:
    """The verdict over the runs that applied; the scenarios not applicable are counted beside them."""
    runs_status = overall_status(entries, ctx.errors, accepting=False)
    # a failure accepted as a known bug of its release (`run --accept-known-bugs`) fails no verdict
    status = ctx.verdict or overall_status(entries, ctx.errors)
    c = counts(entries, not_applicable_entries(ctx))
    n_accepted = len(accepted_entries(entries))
    title = {"pass": "PASS", "fail": "FAIL", "unknown": "UNKNOWN", "error": "ERROR", "nothing": "NOTHING RAN"}[status]
    stopped = interruption_text(ctx)
    if stopped:
        status, title = "interrupted", f"INTERRUPTED ({title} so far)"
    tgts = []
    for t in sorted({e["target"] for e in entries}):
        es = [e for e in entries if e["target"] == t]
        ts = overall_status(es)
        versions = sorted({str(e["connector_version"] or "default") for e in es})
        claims = sorted({f'{c["name"]}' + (f' ({c["view"]})' if c.get("view") and len(claim_columns(e)) > 1 else "")
                         for e in es for _, c, _ in claim_columns(e)})
        configs = sorted({e["config_summary"] for e in es})
        cfg = configs[0] + (f" (+{len(configs) - 1} more configs)" if len(configs) > 1 else "")
        tgts.append(f'<div class="tgt"><b>{escape(t)}</b> {escape(", ".join(versions))} · {escape(cfg)} · '
                    f'claim: {escape(" / ".join(claims))}: <b>{ts.upper()}</b></div>')
    pf = ""
    if ctx.preflight:
        ok = sum(1 for p in ctx.preflight if p["status"] == "pass")
        pf = f" · S3 preflight {ok}/{len(ctx.preflight)}"
    return (f'<header class="banner {status}" id="banner" data-status-overall="{status}"><h1>{title}: sinkcheck {escape(ctx.command)}</h1>'
            f'<div class="sub">{len(entries)} runs ({runs_status}): {c["pass"]} pass, {c["fail"]} fail'
            f'{f" ({n_accepted} accepted as known bugs)" if n_accepted else ""}, {c["unknown"]} unknown'
            f'{", " + str(len(ctx.errors)) + " errors" if ctx.errors else ""}'
            f'{f" · {c[NOT_APPLICABLE]} not applicable under the given config" if c[NOT_APPLICABLE] else ""} · seed {escape(str(ctx.seed))} · '
            f'profile {escape(str(ctx.profile))}{pf}</div>'
            + (f'<div class="sub" id="interrupted">{escape(stopped)}</div>' if stopped else "")
            + f'{"".join(tgts)}</header>')


def _matrix(entries: list[dict[str, Any]], nas: list[dict[str, Any]] | None = None) -> str:
    m = matrix(entries, nas)
    targets = sorted({c for by_t in m.values() for c in by_t})  # a column per target and claim view
    if not targets:
        return "<p>No runs.</p>"
    rows = ['<table class="matrix" id="matrix"><tr><th>property</th>' +
            "".join(f"<th>{escape(t)}</th>" for t in targets) + "</tr>"]
    for prop, by_t in m.items():
        cells = []
        for t in targets:
            c = by_t[t]
            s = cell_status(c)
            detail = f'{c["pass"]} pass · {c["fail"]} fail · {c["unknown"]} unknown'
            if c[NOT_CLAIMED]:
                detail += f' · {c[NOT_CLAIMED]} not claimed' + (f' ({c["measured-fail"]} measured fail)' if c["measured-fail"] else "")
            if c[NOT_APPLICABLE]:
                detail += f' · {c[NOT_APPLICABLE]} n/a'
            label = {"not-claimed": "not claimed", NOT_APPLICABLE: "n/a"}.get(s, s.upper())
            cells.append(f'<td class="cell {"na" if s == NOT_APPLICABLE else s}" data-property="{escape(prop)}" data-target="{escape(t)}">{label}<small>{detail}</small></td>')
        rows.append(f"<tr><th>{escape(prop)}</th>{''.join(cells)}</tr>")
    rows.append("</table>")
    # the same properties by fault class (what the scenarios did to the sink)
    classes = sorted({_fault_class(e) for e in entries})
    rows.append('<details><summary>by fault class</summary><table class="matrix-faults"><tr><th>property</th>' +
                "".join(f"<th>{escape(c)}</th>" for c in classes) + "</tr>")
    for prop in m:
        cells = []
        for fc in classes:
            cnt = {"pass": 0, "fail": 0, "unknown": 0, NOT_CLAIMED: 0, "measured-fail": 0}
            for e in entries:
                if _fault_class(e) != fc:
                    continue
                for v in e["verdicts"]:
                    if v["property"] == prop:
                        cnt[v["cell"]] += 1
            s = cell_status(cnt)
            cells.append(f'<td class="cell {s}">{cnt["pass"]}/{cnt["fail"]}/{cnt["unknown"]}<small>pass/fail/unknown</small></td>')
        rows.append(f"<tr><th>{escape(prop)}</th>{''.join(cells)}</tr>")
    rows.append("</table></details>")
    return "".join(rows)


def _fault_class(e: dict[str, Any]) -> str:
    kinds = sorted({f["kind"] if f["kind"] != "s3" else f"s3 {f['params'].get('action', '')}".strip()
                    for f in e["faults_scheduled"] if f["kind"] not in ("wait", "wait-fired", "release")})
    return " + ".join(kinds) or "none"


def _witness_table(ws: list[dict[str, Any]]) -> str:
    if not ws:
        return ""
    rows = ["<table class='witnesses'><tr><th>anomaly</th><th>offsets</th><th>keys</th><th>expected</th><th>observed</th><th>explanation</th></tr>"]
    for w in ws:
        rows.append("<tr>" + "".join(f"<td>{escape(x)}</td>" for x in (
            w["anomaly"], ", ".join(w.get("offsets") or []), ", ".join(w.get("keys") or []),
            "" if w.get("expected") is None else json.dumps(w["expected"], default=str)[:400],
            "" if w.get("observed") is None else json.dumps(w["observed"], default=str)[:400],
            w.get("explanation", ""))) + "</tr>")
    rows.append("</table>")
    return "".join(rows)


def _replay(cmd: str, ident: str) -> str:
    return (f'<div class="replay"><code id="{ident}">{escape(cmd)}</code>'
            f'<button type="button" onclick="copyText(\'{ident}\')">copy</button></div>')


def _failures(entries: list[dict[str, Any]]) -> str:
    out = []
    n = 0
    for i, e in enumerate(entries):
        failed = [v for v in e["verdicts"] if v["cell"] == "fail"]
        if not failed:
            continue
        n += 1
        accepted = e.get("accepted_known_bug")
        parts = [f'<section class="failure{" accepted" if accepted else ""}" id="failure-{i}"><h3>{escape(e["scenario"])} '
                 f'on {escape(e["target"])} {_badge("fail")}{" " + _badge("accepted") if accepted else ""}</h3>',
                 _accepted(accepted),
                 f'<p>claim <b>{escape(e["claim"]["name"])}</b>: {escape("; ".join(e["claim"]["reasons"]))}<br>'
                 f'seed {escape(str(e["seed"]))} · {e["records"]} records · {len(e["faults_scheduled"])} faults · '
                 f'connector {escape(str(e["connector_version"] or "default"))}</p>']
        for v in failed:
            parts.append(f'<h4>✗ {escape(v["property"])} [{escape(v["rule"])}]: {escape(v["message"])}</h4>')
            parts.append(_witness_table(v["witnesses"]))
        fired = [f for f in e["faults"]]
        if fired:
            parts.append("<p>faults: " + "; ".join(escape(f"{f['kind']} {'fired' if f['fired'] else 'NEVER FIRED'} {f['detail']}") for f in fired) + "</p>")
        parts.append(f'<details open><summary>shrunk scenario: steps</summary><pre class="steps">{escape(e["steps"])}</pre></details>')
        if e.get("flaky"):
            fl = e["flaky"]
            parts.append(f'<p class="flaky"><b>FLAKY</b>: reproduced {fl["reproduced"]} of {fl["replays"]} replays '
                         f'({escape(fl.get("note", ""))}); the replay below may pass.</p>')
        parts.append("<p>Reproduce with:</p>" + _replay(e["replay"], f"replay-{i}"))
        if e.get("expected_objects") is not None:
            parts.append(_objects_table(e))
        parts.append("</section>")
        out.append("".join(parts))
    return "".join(out) if n else "<p>No claimed property failed.</p>"


def _accepted(accepted: dict[str, Any] | None) -> str:
    """What a run accepted as a known bug of its release says of it (`run --accept-known-bugs`)."""
    if not accepted:
        return ""
    link = f' <code>{escape(accepted["url"])}</code>' if accepted.get("url") else ""
    return (f'<p class="accepted" data-known-bug="{escape(accepted["id"])}"><b>{escape(accepted["line"])}</b>{link}: '
            f'{escape(accepted["title"])}; of {escape(str(accepted.get("version") or "a version not known"))}, '
            f'{escape(", ".join(accepted["failed"]))} failed: {escape(accepted["witness"])}</p>')


def _objects_table(e: dict[str, Any]) -> str:
    exp = {o["key"]: o for o in e.get("expected_objects") or []}
    obs = {o["key"]: o for o in e.get("objects") or []}
    rows = ["<details><summary>expected (model) vs observed (bucket) objects</summary><table class='objects'>"
            "<tr><th>key</th><th>expected offsets</th><th>observed offsets</th><th>rotation</th></tr>"]
    for k in sorted(set(exp) | set(obs)):
        eo, oo = exp.get(k), obs.get(k)
        rows.append(f"<tr><td>{escape(k)}</td><td>{escape(', '.join(eo['offsets']) if eo else '—')}</td>"
                    f"<td>{escape(', '.join(oo['offsets'] or ['(undecoded)']) if oo else '—')}</td>"
                    f"<td>{escape(eo['rotation'] if eo else '')}</td></tr>")
    rows.append("</table></details>")
    return "".join(rows)


def _baseline(diff: dict[str, Any] | None) -> str:
    if not diff:
        return ""
    out = ['<h2 id="changes">Changes since baseline</h2>',
           f'<p>baseline {escape(", ".join(diff["baseline_targets"]))} → candidate {escape(", ".join(diff["candidate_targets"]))}: '
           f'{diff["compared"]} scenarios compared, {len(diff["regressions"])} regressions, {len(diff["fixed"])} fixed, '
           f'{len(diff["behaviour_changes"])} behaviour changes, {len(diff["verdict_changes"])} other verdict changes, '
           f'{diff["unchanged"]} unchanged.</p>']
    items = diff["regressions"] + diff["fixed"] + diff["verdict_changes"]
    if items:
        out.append("<table class='changes'><tr><th>kind</th><th>scenario</th><th>property</th><th>baseline</th><th>candidate</th><th>message</th></tr>")
        for it in items:
            out.append(f"<tr><td>{_badge(it['kind'])}</td><td>{escape(it['scenario'])}</td><td>{escape(it['property'])}</td>"
                       f"<td>{escape(str(it['baseline']))}</td><td>{escape(str(it['candidate']))}</td><td>{escape(it['message'])}</td></tr>")
        out.append("</table>")
    for j, ch in enumerate(diff["behaviour_changes"]):
        od = ch["objects"]
        unit = od.get("unit", "objects")
        out.append(f'<section class="change" id="change-{j}"><h3>{_badge(ch["kind"])} {unit} differ on {escape(ch["scenario"])}</h3>'
                   f'<p>{escape(ch["why"])}</p><p>{escape(od.get("summary", ""))}</p>')
        head = "object" if unit == "objects" else "reader"
        rows = [f"<table class='witnesses'><tr><th>offset</th><th>baseline {head}</th><th>candidate {head}</th></tr>"]
        for m in od["moved_offsets"]:
            rows.append(f"<tr><td>{escape(m['offset'])}</td><td>{escape(str(m['baseline']))}</td><td>{escape(str(m['candidate']))}</td></tr>")
        rows.append("</table>")
        out.append("".join(rows))
        for side in ("baseline", "candidate"):
            rot = ch["rotations"][side]
            if rot:
                out.append(f"<details><summary>{side}: the model's objects and why each closed</summary><pre>" +
                           escape("\n".join(f"{o['key']}  {', '.join(o['offsets'])}  ({o['rotation']})" for o in rot)) + "</pre></details>")
        out.append(f'<details><summary>scenario steps</summary><pre class="steps">{escape(ch["steps"])}</pre></details>')
        out.append("<p>Reproduce with:</p>" + _replay(ch["replay_baseline"], f"chg-b-{j}") + _replay(ch["replay_candidate"], f"chg-c-{j}"))
        out.append("</section>")
    return "".join(out)


def _link(cite: str | None, url: str | None) -> str:
    # the address as text: the report references nothing outside itself
    if not cite:
        return "no upstream issue"
    return escape(cite) + (f" <code>{escape(url)}</code>" if url else "")


def _known_bugs(bugs: list[dict[str, Any]], changes: list[dict[str, Any]]) -> str:
    """The known bugs that touch this run's configs and versions, reproduced or not, and (gate)
    the ones the upgrade fixes or introduces."""
    if not bugs and not changes:
        return ""
    out = ['<h2 id="known-bugs">Known bugs</h2><p class="muted">public bugs of these sinks whose condition a played '
           'scenario meets (its config, and the fault that sets the bug off where one does) on the version that ran '
           '(conformance.catalog.known_bugs); the model does not imitate them, so a scenario that shows one fails on an '
           'affected version.</p>']
    for c in changes:
        out.append(f'<p>{_badge("fixed" if c["change"] == "fixed" else "regression")} known bug <b>{escape(c["id"])}</b> '
                   f'({_link(c.get("cite"), c.get("url"))}) {escape(c["change"])}: {escape(c["witness"])}</p>')
    for b in bugs:
        seen = "reproduced" if b["reproduced"] else "not reproduced by this run"
        affected = {True: "has it", False: "does not have it", None: "version not known"}[b["version_affected"]]
        upstream = " · ".join(_link(c["cite"], c["url"]) for c in [{"cite": b["cite"], "url": b["url"]}, *b["also"]])
        rows = [("target", escape(f'{b["target"]} (version {b["version"] or "?"}: {affected})')), ("upstream", upstream)]
        rows += [(k, escape(v)) for k, v in (
            ("affected", "; ".join(b["affected"])), ("fixed in", ", ".join(b["fixed_in"]) or "no release yet"),
            ("needs", b["needs"]), ("what a user sees", b["symptom"]), ("workaround", b["workaround"] or "none known"),
            ("scenarios", ", ".join(b["scenarios"])),
            ("runs here that meet it (config and fault)",
             ", ".join(b["configs"][:8]) + (" …" if len(b["configs"]) > 8 else "") or "none (found by its trace)"),
            ("why a bug", b.get("why") or "")) if v]
        table = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
        wit = "".join(f"<li>{escape(w['witness'])}</li>" for w in b["witnesses"][:5])
        out.append(f'<section class="known-bug" id="bug-{escape(b["id"])}"><h3>{_badge("fail" if b["reproduced"] else "unknown")} '
                   f'{escape(b["title"])} <small>({escape(b["id"])}, {seen})</small></h3>'
                   f"<table class='env'>{table}</table>" + (f"<ul>{wit}</ul>" if wit else "") + "</section>")
    return "".join(out)


def _translation(e: dict[str, Any]) -> str:
    """How the scenario was put to this target's connector: what was sent, what each mapped
    property stands for, what was dropped and why, and fault steps changed for it."""
    t = e.get("translation")
    changes = e.get("fault_changes") or []
    if not t and not changes:
        return ""
    lines = []
    if t:
        lines.append(f"sent to {t['profile']}'s connector:")
        lines += [f"  {k}={v}" + (f"    ← {t['mapped'][k]}" if k in t["mapped"] else "") for k, v in sorted(t["sent"].items())]
        if t["dropped"]:
            lines.append(f"dropped ({len(t['dropped'])}, never sent):")
            lines += [f"  {k}: {why}" for k, why in sorted(t["dropped"].items())]
    if changes:
        lines.append("fault steps for this target:")
        lines += [f"  {c}" for c in changes]
    n = len(t["dropped"]) if t else 0
    return (f'<details class="translation"><summary>translated for {escape(e["target"])}: {n} properties dropped'
            f'{f", {len(changes)} fault steps changed" if changes else ""}</summary>'
            f'<pre class="steps">{escape(chr(10).join(lines))}</pre></details>')


def _startup(startup: dict[str, Any] | None) -> str:
    """The run's start-up verdict (R1.3), where a rule answered the task's bucket check: what its
    release's start() does with the answer, and whether the sink did the same."""
    if not startup:
        return ""
    line = startup["line"].removeprefix("start-up: ")
    return (f'<p class="startup">{_badge("pass" if startup["ok"] else "fail")} <b>start-up</b>: {escape(line)}'
            f'<br><small class="muted">{escape(startup["why"])}</small></p>')


def _phases(timings: dict[str, float] | None) -> str:
    """Where the run's time went, phase by phase (conformance.playing.runner.PHASES), the ones
    that took a tenth of a second or more."""
    shown = [(p, t) for p, t in (timings or {}).items() if t >= 0.1]
    if not shown:
        return ""
    return '<p class="muted">time: ' + " · ".join(f"{escape(p)} {t:.1f}s" for p, t in shown) + "</p>"


def _runs(entries: list[dict[str, Any]]) -> str:
    out = ['<div class="filters">show: ' + "".join(
        f'<button type="button" onclick="filterRuns(\'{s}\')">{s}</button>' for s in ("all", "fail", "unknown", "pass")) + "</div>"]
    for i, e in enumerate(entries):
        vs = " ".join(_badge(v["cell"]) + f"<small> {escape(v['property'])}</small>" for v in e["verdicts"])
        out.append(f'<details class="run" data-status="{escape(e["status"])}"{" open" if e["status"] == "fail" else ""}>'
                   f'<summary>{_badge(e["status"])}{" " + _badge("accepted") if e.get("accepted_known_bug") else ""} '
                   f'<b>{escape(e["scenario"])}</b> on {escape(e["target"])} · {e["records"]} records · '
                   f'{e["wall_s"]:.2f}s · {escape(e["origin"])}</summary>{_accepted(e.get("accepted_known_bug"))}<p>{vs}</p>'
                   + (f'<p><b>tested nothing</b>: {escape(e["untested"])}</p>' if e.get("untested") else "")
                   + _startup(e.get("startup"))
                   + (f'<p class="muted">{escape(e["topic_mapping"])}</p>' if e.get("topic_mapping") else "") +
                   f'{timeline_svg(e["timeline"], f"timeline-{i}")}{_phases(e.get("timings"))}'
                   f'<p class="muted">config: {escape(e["config_summary"])}</p>{_translation(e)}'
                   f'<details><summary>verdict messages</summary><pre>' +
                   escape("\n".join(f"{v['status']:<8} {'claimed' if v['claimed'] else 'measured'} {v['property']}: {v['message']}" for v in e["verdicts"])) +
                   f'</pre></details>{_replay(e["replay"], f"run-replay-{i}")}</details>')
    return "".join(out)


def _fault_coverage(entries: list[dict[str, Any]]) -> str:
    cov = fault_coverage(entries)
    if not cov:
        return ""
    targets = sorted({t for row in cov.values() for t in row})
    out = ['<h2 id="fault-coverage">Fault coverage</h2><p class="muted">each kind of fault: fired / scheduled, per '
           'target; a run whose fault never fired is unknown, never a pass.</p><table class="coverage"><tr><th>fault</th>'
           + "".join(f"<th>{escape(t)}</th>" for t in targets) + "</tr>"]
    for label, row in cov.items():
        cells = []
        for t in targets:
            c = row.get(t)
            if c is None:
                cells.append("<td></td>")
                continue
            status = "pass" if c["fired"] == c["scheduled"] else "unknown"
            cells.append(f'<td class="cell {status}">{c["fired"]} / {c["scheduled"]}</td>')
        out.append(f"<tr><th>{escape(label)}</th>{''.join(cells)}</tr>")
    out.append("</table>")
    return "".join(out)


def _environment(ctx: ReportContext) -> str:
    rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>" for k, v in ctx.environment.items())
    out = [f'<h2 id="environment">Environment</h2><table class="env">{rows}'
           f'<tr><th>seed</th><td>{escape(str(ctx.seed))}</td></tr><tr><th>profile</th><td>{escape(str(ctx.profile))}</td></tr>'
           f'<tr><th>duration</th><td>{"" if ctx.duration_s is None else f"{ctx.duration_s:.1f}s"}</td></tr></table>']
    if ctx.preflight is not None:
        out.append('<h3>S3 server preflight</h3><table class="preflight" id="preflight"><tr><th>check</th><th>result</th><th>detail</th></tr>')
        for p in ctx.preflight:
            out.append(f"<tr><td>{escape(p['check'])}</td><td>{_badge(p['status'] if p['status'] in ('pass', 'fail') else 'unknown')}</td>"
                       f"<td>{escape(p.get('detail', ''))}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p class='muted'>No S3 preflight results given (run <code>sinkcheck preflight --s3-endpoint URL --out preflight.json</code> "
                   "and pass <code>--preflight preflight.json</code>).</p>")
    if ctx.notes:
        out.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in ctx.notes) + "</ul>")
    return "".join(out)


def _not_applicable(nas: list[dict[str, Any]]) -> str:
    if not nas:
        return ""
    rows = "".join(f"<tr><td>{escape(n['scenario'])}</td><td>{escape(n['target'])}</td><td>{escape(n['reason'])}</td></tr>"
                   for n in nas)
    return ('<h2 id="not-applicable">Not applicable under the given config</h2><p class="muted">scenarios not run: '
            "the connector config leaves nothing of what each is about. They are neither passes nor unknowns, and "
            'the verdict above is over the runs that applied.</p><table class="not-applicable" id="not-applicable-table">'
            f"<tr><th>scenario</th><th>target</th><th>why</th></tr>{rows}</table>")


def _errors(ctx: ReportContext) -> str:
    if not ctx.errors:
        return ""
    out = ['<h2 id="errors">Errors (runs that could not complete)</h2>']
    for e in ctx.errors:
        out.append(f"<details open><summary>{escape(str(e.get('scenario')))} on {escape(str(e.get('target')))}: "
                   f"{escape(str(e.get('error')))}</summary><pre>{escape(str(e.get('traceback') or ''))}</pre></details>")
    return "".join(out)


def render_html(results: list[Any], ctx: ReportContext) -> str:
    entries = [entry(r, ctx) for r in results]
    nas = not_applicable_entries(ctx)
    body = [
        _banner(entries, ctx), "<main>",
        _baseline(ctx.baseline),
        _known_bugs(known_bugs_section(results, ctx), ctx.known_bug_changes),
        '<h2 id="compliance">Compliance matrix</h2><p class="muted">claimed properties count; '
        '"not claimed" ones are measured and reported only; n/a counts scenarios not run under the given config.</p>',
        _matrix(entries, nas), _not_applicable(nas),
        '<h2 id="failures">Failures</h2>', _failures(entries),
        _errors(ctx),
        '<h2 id="runs">Runs and timelines</h2><p class="muted">lanes: produce (ticks), faults (shaded windows), '
        'offset commits (diamonds), objects becoming visible (dots); hover for details.</p>', _runs(entries),
        _fault_coverage(entries),
        _environment(ctx), "</main>",
    ]
    doc = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "script-src 'unsafe-inline'; img-src data:\">"
           f"<title>sinkcheck {escape(ctx.command)}: {escape(overall_status(entries, ctx.errors).upper())}</title>"
           f"<style>{CSS}</style><script>{JS}</script></head><body>" + "".join(body) + "</body></html>\n")
    return ctx.redactor.text(doc)


def write_html(path: str | Path, results: list[Any], ctx: ReportContext) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_html(results, ctx), encoding="utf-8")
    return p
