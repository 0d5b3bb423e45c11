"""Start-up: OR-Tools' CP-SAT module loaded without pandas, for the command line.

`ortools.sat.python.cp_model` imports pandas at module level (for its `*_series` helpers, which karpplan never
calls) and evaluates `pd.Index` and `pd.Series` there. Loading pandas costs about 0.25 CPU seconds, a tenth of
the README quickstart's whole plan (design-notes, session 15). `install()` (called once by `cli/main.py`)
adds a finder that loads `cp_model` with a stand-in `pandas` module in `sys.modules` for the length of that one
import, then takes it out again, so a later `import pandas` gets the real one. The stand-in's `Index` and
`Series` answer `isinstance` and calls through the real pandas when it is (or then gets) imported, and any other
attribute imports it: the `*_series` helpers keep working, only paying for pandas when used.

Nothing changes when pandas is already imported, when OR-Tools' loader is not a plain source loader, or when
the finder is not installed (library use, tests that do not import the command line).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import Any

CP_MODEL = "ortools.sat.python.cp_model"


def _real_pandas() -> types.ModuleType:
    module = sys.modules.get("pandas")
    if module is None or isinstance(module, _PandasStandIn):
        sys.modules.pop("pandas", None)
        module = importlib.import_module("pandas")
    return module


class _Deferred(type):
    """A pandas class named at import time, resolved only when used."""

    def __instancecheck__(cls, instance: object) -> bool:
        module = sys.modules.get("pandas")
        if module is None or isinstance(module, _PandasStandIn):
            return False  # no pandas object can exist before pandas is imported
        return isinstance(instance, getattr(module, cls.__name__))

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return getattr(_real_pandas(), cls.__name__)(*args, **kwargs)


class Index(metaclass=_Deferred):
    """Stands for `pandas.Index`."""


class Series(metaclass=_Deferred):
    """Stands for `pandas.Series`."""


class _PandasStandIn(types.ModuleType):
    """The `pandas` module `cp_model` sees: `Index`, `Series`, and the real module for anything else."""

    Index = Index
    Series = Series

    def __getattr__(self, name: str) -> Any:
        return getattr(_real_pandas(), name)


class _LeanLoader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, ...: the real loader's
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        stand_in = None
        if "pandas" not in sys.modules:
            stand_in = sys.modules["pandas"] = _PandasStandIn("pandas")
        try:
            self._loader.exec_module(module)
        finally:
            if stand_in is not None and sys.modules.get("pandas") is stand_in:
                del sys.modules["pandas"]


class _LeanFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != CP_MODEL or "pandas" in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _LeanLoader(spec.loader)
        return spec


def install() -> None:
    """Load `cp_model` without pandas from now on in this process (once; idempotent)."""
    if CP_MODEL in sys.modules or any(isinstance(f, _LeanFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _LeanFinder())


__all__ = ["install"]
