"""What an agent file may import: exactly what the sandbox can satisfy.

The sandbox holds the interpreter's standard library, the SDK (``arena.sdk``)
and the dependency closure of ``ALLOWED_ROOTS`` (arena/runner/runtime.py), copied
file by file into its runtime. This check derives its list from that same
closure, so the intake and the sandbox cannot disagree: an import refused here
would fail in every episode, and an import accepted here resolves there.

An import inside ``try`` whose handler catches ImportError (or a base of it)
is the agent's own fallback and is allowed. ``__import__("x")`` and
``importlib.import_module("x")`` with a literal name are checked like an
``import`` statement.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import PurePosixPath

from arena.runner.runtime import ALLOWED_ROOTS, dependency_closure

SDK_MODULE = "arena.sdk"
_HANDLED = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@functools.cache
def sandbox_modules() -> frozenset[str]:
    """Top-level module names importable inside the sandbox (besides ``arena.sdk``)."""
    names = set(sys.stdlib_module_names)
    for dist in dependency_closure(ALLOWED_ROOTS):
        for file in dist.files or []:
            parts = PurePosixPath(str(file)).parts
            if not parts or parts[0] == ".." or parts[0].endswith((".dist-info", ".data")) or parts[0] == "__pycache__":
                continue
            head = parts[0]
            if len(parts) == 1:
                if not head.endswith((".py", ".so", ".pyd")):
                    continue  # a .pth, a licence file, ...
                head = head.split(".", 1)[0]
            names.add(head)
    return frozenset(names)


def unsatisfied_import(tree: ast.Module) -> tuple[str, int] | None:
    """The first import the sandbox cannot satisfy, as (module, line), or None."""
    allowed = sandbox_modules()
    for node, guarded in _walk(tree, guarded=False):
        if guarded:
            continue
        for module in _imported(node):
            if not _satisfied(module, allowed):
                return module, node.lineno
    return None


def _satisfied(module: str, allowed: frozenset[str]) -> bool:
    root = module.split(".", 1)[0]
    if root == "arena":  # only the SDK is in the sandbox, not the validator's package
        return module in ("arena", SDK_MODULE) or module.startswith(SDK_MODULE + ".")
    return root in allowed


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            return ["." * node.level + (node.module or "")]  # the agent is one file: nothing is beside it
        if node.module == "arena":
            return [f"arena.{alias.name}" for alias in node.names]
        return [node.module or ""]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = node.args[0].value
        func = node.func
        dynamic = (isinstance(func, ast.Name) and func.id in ("__import__", "import_module")) or (
            isinstance(func, ast.Attribute) and func.attr == "import_module"
        )
        if dynamic and isinstance(name, str):
            return [name]
    return []


def _walk(node: ast.AST, guarded: bool):
    """Every node with whether an ImportError handler around it catches a failed import."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Try | ast.TryStar):
            catches = any(_catches_import_error(h) for h in child.handlers)
            for stmt in child.body:
                yield stmt, guarded or catches
                yield from _walk(stmt, guarded or catches)
            for part in (*child.handlers, *child.orelse, *child.finalbody):
                yield part, guarded
                yield from _walk(part, guarded)
            continue
        yield child, guarded
        yield from _walk(child, guarded)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in _HANDLED for t in types)
