"""Renderers: a plan or an inventory as rich tables, JSON or YAML, and the optimal engine's progress on stderr."""
