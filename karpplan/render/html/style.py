"""The report's one stylesheet, inlined in every page (no network at view time).

Light and dark colours from `prefers-color-scheme`, text and bars that keep their meaning without colour
(every bar also prints its percentage), a print layout without backgrounds that keeps table rows whole.
"""

from __future__ import annotations

STYLESHEET = """
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --card: #f6f8fa;
  --accent: #0550ae; --cpu: #0969da; --mem: #8250df; --over: #cf222e; --track: #e6e9ed;
  --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #30363d; --card: #161b22;
    --accent: #58a6ff; --cpu: #4493f8; --mem: #ab7df8; --over: #f85149; --track: #262c36;
    --ok: #3fb950; --warn: #d29922; --bad: #f85149;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .6rem; padding-bottom: .25rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
p { margin: .4rem 0; }
a { color: var(--accent); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.muted { color: var(--muted); }
.ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
.skip { position: absolute; left: -10000px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; }
.totals { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: .75rem;
  margin: 1rem 0 0; padding: 0; }
.totals div { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; }
.totals dt { color: var(--muted); font-size: .85rem; }
.totals dd { margin: .1rem 0 0; font-size: 1.25rem; font-weight: 600; }
.caveats { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .8rem 0 0;
  font-size: .9rem; }
.caveats dt { color: var(--muted); } .caveats dd { margin: 0; }
.totals dd small { display: block; font-size: .8rem; font-weight: 400; color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: .3rem 0 .8rem; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); }
thead th { font-size: .85rem; color: var(--muted); font-weight: 600; border-bottom: 2px solid var(--line); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: var(--card); }
table.nodes { table-layout: fixed; }
table.nodes th:nth-child(1) { width: 27%; } table.nodes th:nth-child(2) { width: 7%; }
table.nodes th:nth-child(3) { width: 10%; } table.nodes th:nth-child(4) { width: 11%; }
table.nodes th:nth-child(5) { width: 10%; } table.nodes th:nth-child(6) { width: 9%; }
table.nodes th:nth-child(7), table.nodes th:nth-child(8) { width: 13%; }
@media (max-width: 800px) { table.nodes { table-layout: auto; } }
table.unschedulable, table.findings { table-layout: fixed; }
table.unschedulable th:nth-child(1) { width: 24%; } table.unschedulable th:nth-child(2) { width: 16%; }
table.unschedulable th:nth-child(3) { width: 32%; }
table.findings th:nth-child(1) { width: 9%; } table.findings th:nth-child(2) { width: 17%; }
table.findings th:nth-child(3) { width: 22%; } table.findings th:nth-child(4) { width: 17%; }
td { overflow-wrap: break-word; }
.node-name { font-weight: 600; word-break: break-all; }
.workloads { color: var(--muted); font-size: .85rem; }
.tag { display: inline-block; font-size: .75rem; padding: 0 .4rem; border-radius: 999px;
  border: 1px solid var(--line); color: var(--muted); white-space: nowrap; }
.tag.new { color: var(--ok); border-color: var(--ok); }
.usage { display: flex; align-items: center; gap: .4rem; white-space: nowrap; }
.usage svg { flex: 0 1 auto; min-width: 30px; }
.bar-track { fill: var(--track); }
.bar-cpu { fill: var(--cpu); } .bar-mem { fill: var(--mem); } .bar-over { fill: var(--over); }
.bar-opt { fill: var(--ok); } .bar-karp { fill: var(--muted); }
.usage span { font-size: .8rem; font-variant-numeric: tabular-nums; min-width: 3.2em; text-align: right; }
.compare { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 1rem; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
.panel h3 { margin-top: 0; }
.panel dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
.panel dt { color: var(--muted); }
.panel dd { margin: 0; font-variant-numeric: tabular-nums; }
ul.reasons, ul.fixes { margin: .2rem 0; padding-left: 1.2rem; }
.sev-error { color: var(--bad); font-weight: 600; } .sev-warning { color: var(--warn); font-weight: 600; }
.sev-info { color: var(--muted); }
.change-added { color: var(--ok); } .change-removed { color: var(--bad); } .change-changed { color: var(--warn); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .8rem; }
@media print {
  :root { --bg: #fff; --fg: #000; --card: #fff; --muted: #444; --line: #999; }
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  .skip { display: none; }
  tr, .panel, .totals div { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"""

__all__ = ["STYLESHEET"]
