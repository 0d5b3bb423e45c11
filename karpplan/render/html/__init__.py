"""Self-contained HTML reports (inline CSS and SVG, no script, nothing fetched): `render_html` for a Plan
document (`plan -o html`), `render_diff_html` for a PlanDiff document (`diff -o html`)."""

from karpplan.render.html.diff_report import render_diff_html
from karpplan.render.html.plan_report import render_html

__all__ = ["render_diff_html", "render_html"]
