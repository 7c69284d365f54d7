"""GTA's Calculator as a safe evaluator: one Python expression, ``math`` functions without import.

Only a whitelist of AST nodes is evaluated by our own walker (no ``eval``), so there is no way to
reach ``__import__``, attributes (other than ``math.<function>``), subscripts or comprehensions.
Exponents and factorials are bounded so ``9**9**9`` fails fast instead of hanging the process.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from evaluation.tools.result import ToolError, ToolOutput

MAX_EXPONENT = 10_000
MAX_INT_BITS = 100_000
MAX_FACTORIAL = 1_000
MAX_LENGTH = 2_000

_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _bounded_pow(base: Any, exp: Any, mod: Any = None) -> Any:
    if (
        isinstance(exp, (int, float))
        and abs(exp) > MAX_EXPONENT
        and not (isinstance(base, (int, float)) and abs(base) in (0, 1))
    ):
        raise ToolError(f"exponent {exp} is too large (limit {MAX_EXPONENT})")
    if isinstance(base, int) and isinstance(exp, int) and exp > 0 and base.bit_length() * exp > MAX_INT_BITS:
        raise ToolError(f"result of {base.bit_length()}-bit number to the power {exp} is too large")
    return pow(base, exp) if mod is None else pow(base, exp, mod)


def _bounded_factorial(n: Any) -> Any:
    if isinstance(n, (int, float)) and n > MAX_FACTORIAL:
        raise ToolError(f"factorial of {n} is too large (limit {MAX_FACTORIAL})")
    return math.factorial(n)


def _bounded(fn: Any, limit: int) -> Any:
    def guarded(*args: Any) -> Any:
        if any(isinstance(a, (int, float)) and abs(a) > limit for a in args):
            raise ToolError(f"{fn.__name__} arguments are too large (limit {limit})")
        return fn(*args)

    guarded.__name__ = fn.__name__
    return guarded


def _round(x: Any, ndigits: Any = None) -> Any:
    if ndigits is not None and (not isinstance(ndigits, int) or abs(ndigits) > 100):
        raise ToolError("round: ndigits must be an integer between -100 and 100")
    return round(x) if ndigits is None else round(x, ndigits)


def _functions() -> dict[str, Any]:
    funcs: dict[str, Any] = {k: v for k, v in vars(math).items() if not k.startswith("_")}
    funcs.update(comb=_bounded(math.comb, 100_000), perm=_bounded(math.perm, 100_000))
    funcs.update(
        pow=_bounded_pow,
        factorial=_bounded_factorial,
        abs=abs,
        round=_round,
        min=min,
        max=max,
        sum=sum,
        int=int,
        float=float,
        divmod=divmod,
        bool=bool,
    )
    return funcs


_NAMES = _functions()


def evaluate(expression: str) -> Any:
    """Evaluate one expression; raise ToolError with a reason for anything outside the whitelist."""
    if len(expression) > MAX_LENGTH:
        raise ToolError(f"expression is too long ({len(expression)} characters, limit {MAX_LENGTH})")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"not a single Python expression: {exc.msg}") from exc
    try:
        return _eval(tree.body)
    except ToolError:
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        if (
            isinstance(node.value, (int, float, complex))
            and not isinstance(node.value, bool)
            or node.value in (True, False)
        ):
            return node.value
        raise ToolError(f"only numbers are allowed, not {type(node.value).__name__} literals")
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _eval(node.left), _eval(node.right)
        if not all(isinstance(v, (int, float, complex)) for v in (left, right)):
            raise ToolError("arithmetic is only allowed on numbers")
        if isinstance(node.op, ast.Pow):
            return _check_size(_bounded_pow(left, right))
        if isinstance(node.op, (ast.Mult, ast.Add, ast.Sub)):
            _check_size(left), _check_size(right)
        return _check_size(_BIN[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Compare) and all(type(op) in _CMP for op in node.ops):
        left = _eval(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        values = [_eval(v) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.IfExp):
        return _eval(node.body) if _eval(node.test) else _eval(node.orelse)
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_eval(e) for e in node.elts]
    if isinstance(node, ast.Name):
        return _lookup(node.id)
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "math" and not node.attr.startswith("_"):
            return _lookup(node.attr)
        raise ToolError("attribute access is not allowed (only math.<function>)")
    if isinstance(node, ast.Call):
        if node.keywords:
            raise ToolError("keyword arguments are not allowed")
        func = _eval(node.func)
        if not callable(func):
            raise ToolError("only functions of the math module can be called")
        args = [_eval(a) for a in node.args]
        return _check_size(func(*args))
    raise ToolError(f"{type(node).__name__} is not allowed in a calculator expression")


def _lookup(name: str) -> Any:
    if name in _NAMES:
        return _NAMES[name]
    raise ToolError(f"unknown name {name!r}; use numbers and math functions")


def _check_size(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise ToolError(f"result is too large (more than {MAX_INT_BITS} bits)")
    return value


def format_number(value: Any) -> str:
    """Integral floats print as integers (290 / 5 → "58"), as the GTA reference chains show."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, list):
        return "(" + ", ".join(format_number(v) for v in value) + ")"
    return str(value)


def run_calculator(args: dict[str, Any], ctx: Any) -> ToolOutput:
    value = evaluate(args["expression"])
    text = format_number(value)
    return ToolOutput(text=text, data={"value": value if isinstance(value, (int, float, bool)) else text})
