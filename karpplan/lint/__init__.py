"""`karpplan lint`: API-server validation and satisfiability checks of manifests, for CI.

    documents -> LintContext (builder problems, inventory, the planner's problem) -> rules -> findings
    -> suppression -> LintReport -> renderers (table, json, sarif, github, junit)

Every rule is one `Rule` object in `karpplan/lint/rules/`; `registry.RULES` lists them, and the table,
`--list-rules`, `--explain-rule`, SARIF's `tool.driver.rules` and docs/lint-rules.md are all generated
from it.
"""
