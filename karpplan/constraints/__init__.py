"""Constraint kinds: one module per scheduling rule, each the single home of its semantics (see base.py)."""
