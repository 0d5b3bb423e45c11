"""The lint rules, one `Rule` object each (see `karpplan.lint.registry`)."""
