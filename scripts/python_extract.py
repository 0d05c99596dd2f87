"""Message templates from Python source: what a Python program of the stack raises, logs or
prints as an error or a warning, as (level, template, function, False) like
message_extract.py's other extractors.

Pure, used by scripts/gen_upstream_messages.py (run by hand on upstream snapshots). Read with
the standard library's parser (`ast`), so a message is found by what the code does, not by
how it is spelt on the line:

- `raise SomeError("text")` (its first argument), and `sys.exit("text")`;
- a logger's or a module's error and warning calls: `log.error(...)`, `logging.warning(...)`,
  `logger.exception(...)`, `printing.log_error(...)` (Lemonade's), `warnings.warn(...)`,
  `parser.error(...)` (argparse's usage error);
- `print(...)` of a text that says itself it is an error, a failure or a warning
  ("Error: ...", "❌ FAILED ..."), and any `print(..., file=sys.stderr)` followed at once
  by an exit with a failing status (`exit(-3)`, `sys.exit(1)`, `raise SystemExit(2)`).

A template keeps the literal text: an f-string's or a `+`'s computed pieces, a `%`
conversion and a `.format` field become "\x00" ("\x01" where the piece is the text of the
exception being handled: a caller passing its callee's failure up). A file this Python
cannot parse (a release written for Python 2) gives nothing.
"""

from __future__ import annotations

import ast
import itertools
import re

_ERROR_CALLS = {"error", "critical", "exception", "fatal", "log_error", "print_error"}
_WARNING_CALLS = {"warning", "warn", "log_warning", "print_warning"}
# a print's own word that it reports a failure, first on its line after any marks
_PRINTED_RE = re.compile(r"^\W*(?:\[?\s*(?:error|fatal|failed|failure|fail)\b|\u274c|\u2717)", re.I)
_PRINTED_WARNING_RE = re.compile(r"^\W*\[?\s*warning\b", re.I)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")
_FIELD_RE = re.compile(r"\{[^{}]*\}")


def _pieces(node: ast.expr, caught: frozenset[str]) -> str | None:
    """The template of an expression that builds a text; None when none of it is literal."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):  # f"..."
        return "".join(
            part.value
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
            else _computed(part, caught)
            for part in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left, caught), _pieces(node.right, caught)
        if left is None and right is None:
            return None
        return (left if left is not None else _computed(node.left, caught)) + (
            right if right is not None else _computed(node.right, caught)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):  # "text %s" % value
        text = _pieces(node.left, caught)
        return _PERCENT_RE.sub("\x00", text.replace("%%", "%")) if text is not None else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        text = _pieces(node.func.value, caught)
        if text is None:
            return None
        return _FIELD_RE.sub("\x00", text).replace("{{", "{").replace("}}", "}")
    return None


def _computed(node: ast.AST, caught: frozenset[str]) -> str:
    """ "\x01" for the exception being handled (`e`, `str(e)`, `{e}`), "\x00" else."""
    if isinstance(node, ast.FormattedValue):
        node = node.value
    named = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    if named and node.args and node.func.id in ("str", "repr"):  # type: ignore[attr-defined]
        node = node.args[0]  # type: ignore[attr-defined]
    return "\x01" if isinstance(node, ast.Name) and node.id in caught else "\x00"


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _receiver(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        inner = func.value
        while isinstance(inner, ast.Attribute):
            inner = inner.value
        return inner.id if isinstance(inner, ast.Name) else ""
    return ""


def _exits_failing(statement: ast.stmt) -> bool:
    """`exit(N)`, `sys.exit(N)`, `os._exit(N)` with a literal status other than 0, or `raise
    SystemExit(N)` likewise."""
    if isinstance(statement, ast.Raise) and isinstance(statement.exc, ast.Call):
        call: ast.expr = statement.exc
        if _called(statement.exc) != "SystemExit":
            return False
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        if _called(call) not in ("exit", "_exit") or _receiver(call) not in ("", "sys", "os"):
            return False
    else:
        return False
    assert isinstance(call, ast.Call)
    if not call.args:
        return False
    status = call.args[0]
    if isinstance(status, ast.UnaryOp) and isinstance(status.op, ast.USub):
        status = status.operand
    return isinstance(status, ast.Constant) and isinstance(status.value, int) and status.value != 0


class _Messages(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[str, str, str, bool]] = []
        self.scope: list[str] = []
        self.caught: list[str] = []

    def _add(self, level: str, node: ast.expr | None) -> None:
        if node is None:
            return
        template = _pieces(node, frozenset(self.caught))
        if template is None:
            return
        # a message of several lines is printed as lines: a log line shows its first
        lines = [line for line in template.split("\n") if line.strip()]
        template = " ".join(lines[0].split()) if lines else ""
        if re.search(r"[A-Za-z]{3}", template.replace("\x00", "").replace("\x01", "")):
            self.found.append((level, template, ".".join(self.scope), False))

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.caught.append(node.name or "")
        self.generic_visit(node)
        self.caught.pop()

    def generic_visit(self, node: ast.AST) -> None:
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list):
                self._printed_then_exited(statements)
        super().generic_visit(node)

    def _printed_then_exited(self, statements: list[ast.stmt]) -> None:
        """A print to standard error followed at once by an exit with a failing status
        ("Unexpected target %s. Exiting..." then `exit(-3)`: aiecc.py): the program's own
        error message, whatever its words (a print that says "error" is read already)."""
        for printed, after in itertools.pairwise(statements):
            call = printed.value if isinstance(printed, ast.Expr) else None
            if not (
                isinstance(call, ast.Call)
                and _called(call) == "print"
                and call.args
                and any(
                    k.arg == "file" and ast.unparse(k.value) == "sys.stderr" for k in call.keywords
                )
                and _exits_failing(after)
            ):
                continue
            text = _pieces(call.args[0], frozenset(self.caught)) or ""
            if not (_PRINTED_RE.match(text) or _PRINTED_WARNING_RE.match(text)):
                self._add("error", call.args[0])

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            self._add("error", exc.args[0])
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name, receiver = _called(node), _receiver(node)
        first = node.args[0] if node.args else None
        exits = name == "exit" and receiver == "sys"
        if exits or (name in _ERROR_CALLS and receiver not in ("", "self", "np", "math")):
            self._add("error", first)
        elif name == "error" and receiver == "self":
            pass  # an object's own method, not a logger's
        elif name in _WARNING_CALLS and receiver not in ("", "self"):
            self._add("warning", first)
        elif name == "print" and first is not None:
            text = _pieces(first, frozenset(self.caught)) or ""
            if _PRINTED_RE.match(text):
                self._add("error", first)
            elif _PRINTED_WARNING_RE.match(text):
                self._add("warning", first)
        self.generic_visit(node)


def extract_python(text: str) -> list[tuple[str, str, str, bool]]:
    """(level, template, function, False) of every message a Python file raises, logs or
    prints as an error or a warning; the function is "Class.method" or "" at module level."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    visitor = _Messages()
    visitor.visit(tree)
    return visitor.found
