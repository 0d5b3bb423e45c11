"""Text generated from the registry: `--list-rules`, `--explain-rule` and docs/lint-rules.md."""

from __future__ import annotations

import textwrap

from karpplan.lint.core import Rule
from karpplan.lint.registry import RULES


def list_rules() -> str:
    width = max(len(r.name) for r in RULES)
    lines = [f"{r.code}  {r.name.ljust(width)}  {r.severity.value:<7}  {r.summary}" for r in RULES]
    return "\n".join(lines) + "\n"


def explain_rule(rule: Rule) -> str:
    wrapped = textwrap.fill(rule.rationale, width=100)
    return (
        f"{rule.name} ({rule.code}, {rule.severity.value}){' - needs NodePools, Fargate profiles or nodes' if rule.needs_pools else ''}\n\n"
        f"{rule.summary}\n\n{wrapped}\n\nFix: {rule.fix}\n\n"
        f"Bad:\n{textwrap.indent(rule.bad, '  ')}\nGood:\n{textwrap.indent(rule.good, '  ')}"
    )


def markdown() -> str:
    """docs/lint-rules.md (regenerate with scripts/gen_lint_docs.py; a test fails when it is stale)."""
    out = [
        "# karpplan lint rules",
        "",
        "<!-- Generated from karpplan/lint/registry.py by scripts/gen_lint_docs.py; do not edit. -->",
        "",
        "`karpplan lint PATH... [--catalog F] [--region R] [--fargate-profile SELECTOR]... "
        "[-o table|json|sarif|github|junit] [--select RULES] [--ignore RULES]`.",
        "Exit codes: 0 no error findings, 1 error findings, 2 bad input or usage. Suppress a rule with the",
        "annotation `karpplan.io/lint-ignore: \"rule-a,rule-b\"` on the object, with `--select`/`--ignore`,",
        "or with a `.karpplan.yaml` (`lint: {select: [...], ignore: [...]}`) found upward from the current",
        "directory. Rules marked *pools* run when the inputs hold NodePools, Fargate profiles or nodes;",
        "the Fargate profiles are those `plan` sees: eksctl ClusterConfigs among the inputs and",
        "`--fargate-profile` flags. The rules that read a pod template also read the template of a workload",
        "that makes no pod (`replicas: 0`, a suspended Job or CronJob); the rules that count pods skip it.",
        "",
        "| code | rule | severity | what it catches |",
        "|---|---|---|---|",
    ]
    out += [f"| {r.code} | [`{r.name}`](#{r.name}) | {r.severity.value}{' (pools)' if r.needs_pools else ''} | "
            f"{r.summary} |" for r in RULES]
    for r in RULES:
        out += [
            "", f"## {r.name}", "", f"`{r.code}` · {r.severity.value}" + (" · pools" if r.needs_pools else ""), "",
            r.summary, "", r.rationale, "", f"**Fix:** {r.fix}", "",
            "Bad:", "", "```yaml", r.bad.rstrip("\n"), "```", "", "Good:", "", "```yaml", r.good.rstrip("\n"), "```",
        ]
    return "\n".join(out) + "\n"
