"""Static map from model-written image code to canonical operations, following Agentic-MME's rules
(seed_formats.md §3.3): PRIMITIVES crop / rotate / resize / flip / enhance, each op tied to the next
save (``.save(...)`` / ``cv2.imwrite(...)``) after it; statically resolvable ``for`` loops are
unrolled (at most 50 iterations). Faithful limits: NumPy slicing crops are not detected, and a PIL
``.resize`` counts only while no crop has been seen.
"""

from __future__ import annotations

import ast
from typing import Any

PRIMITIVES = ("crop", "rotate", "resize", "enhance", "flip")
LOOP_CAP = 50

_CV2_ROTATE = {"warpAffine", "getRotationMatrix2D", "warpPerspective", "rotate"}
_CV2_ENHANCE = {
    "cvtColor",
    "threshold",
    "adaptiveThreshold",
    "GaussianBlur",
    "blur",
    "medianBlur",
    "bilateralFilter",
    "Canny",
    "Sobel",
    "Scharr",
    "Laplacian",
    "erode",
    "dilate",
    "morphologyEx",
    "equalizeHist",
    "createCLAHE",
    "filter2D",
    "convertScaleAbs",
    "addWeighted",
    "normalize",
    "LUT",
    "inRange",
    "bitwise_and",
    "bitwise_or",
    "bitwise_not",
    "bitwise_xor",
    "fastNlMeansDenoising",
    "fastNlMeansDenoisingColored",
    "rectangle",
    "circle",
    "line",
    "putText",
    "drawContours",
    "polylines",
    "fillPoly",
    "arrowedLine",
    "ellipse",
    "inpaint",
    "floodFill",
    "watershed",
    "grabCut",
    "pyrUp",
    "pyrDown",
    "detailEnhance",
    "edgePreservingFilter",
    "stylization",
    "boxFilter",
    "copyMakeBorder",
    "applyColorMap",
}
_PIL_ENHANCE_METHODS = {
    "filter",
    "convert",
    "point",
    "paste",
    "putalpha",
    "quantize",
    "enhance",
    "alpha_composite",
    "putpixel",
    "draw",
    "rectangle",
    "ellipse",
    "line",
    "text",
    "polygon",
}
_PIL_ENHANCE_MODULES = {"ImageEnhance", "ImageDraw", "ImageFilter", "ImageOps", "ImageChops"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _const_str(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"  # type: ignore[attr-defined]
            for v in node.values
        )
    if isinstance(node, ast.Call) and _dotted(node.func).endswith("path.join") and node.args:
        return _const_str(node.args[-1]) or ast.unparse(node.args[-1])
    return ast.unparse(node)


class _Walker:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []  # {"op"|"save", "line"}
        self.seen_crop = False

    def classify(self, call: ast.Call) -> tuple[str, str | None] | None:
        name = _dotted(call.func)
        head, _, last = name.rpartition(".")
        if head.split(".")[0] == "cv2" or name.startswith("cv2."):
            if last == "imwrite":
                return "save", _const_str(call.args[0] if call.args else None)
            if last == "resize":
                return "op", "resize"
            if last == "flip":
                return "op", "flip"
            if last in _CV2_ROTATE:
                return "op", "rotate"
            if last in _CV2_ENHANCE:
                return "op", "enhance"
            return None
        if not isinstance(call.func, ast.Attribute):
            return None
        if last == "save":
            return "save", _const_str(call.args[0] if call.args else None)
        if last == "crop":
            self.seen_crop = True
            return "op", "crop"
        if last == "rotate":
            return "op", "rotate"
        if last == "resize":
            return ("op", "resize") if not self.seen_crop else None
        if last == "transpose":
            arg = ast.unparse(call.args[0]) if call.args else ""
            return ("op", "flip") if "FLIP" in arg.upper() else ("op", "rotate")
        root = name.split(".")[0]
        if name.endswith("ImageDraw.Draw"):
            return None  # making a drawing context changes no pixel; its drawing calls do
        if (
            last == "enhance"
            and isinstance(call.func.value, ast.Call)
            and _dotted(call.func.value.func).split(".")[0] in _PIL_ENHANCE_MODULES
        ):
            return None  # ImageEnhance.X(img).enhance(f) is one operation, counted at the constructor
        if root in _PIL_ENHANCE_MODULES or head.split(".")[-1] in _PIL_ENHANCE_MODULES:
            return "op", "enhance"
        if last in _PIL_ENHANCE_METHODS:
            return "op", "enhance"
        return None

    def visit_expr(self, node: ast.AST) -> None:
        calls = sorted((n for n in ast.walk(node) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        # inner calls first, as they run first: sort by end position
        calls.sort(key=lambda n: (getattr(n, "end_lineno", n.lineno), getattr(n, "end_col_offset", n.col_offset)))
        for call in calls:
            kind = self.classify(call)
            if kind is None:
                continue
            what, value = kind
            if what == "op":
                self.events.append({"op": value, "line": call.lineno})
            else:
                self.events.append({"save": value, "line": call.lineno})

    def visit_block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.visit_stmt(stmt)

    def visit_stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return self.visit_block(stmt.body)  # bodies counted once, where they are defined
        if isinstance(stmt, ast.For):
            n = _static_len(stmt.iter)
            self.visit_expr(stmt.iter)
            for _ in range(min(n, LOOP_CAP) if n is not None else 1):
                self.visit_block(stmt.body)
            return self.visit_block(stmt.orelse)
        if isinstance(stmt, (ast.While, ast.If)):
            self.visit_expr(stmt.test)
            self.visit_block(stmt.body)
            return self.visit_block(stmt.orelse)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.visit_expr(item.context_expr)
            return self.visit_block(stmt.body)
        if isinstance(stmt, ast.Try):
            for block in (stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody):
                self.visit_block(block)
            return None
        self.visit_expr(stmt)
        return None


def _static_len(node: ast.AST) -> int | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return len(node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "range" and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in node.args):
            try:
                return len(range(*[a.value for a in node.args]))  # type: ignore[attr-defined]
            except (TypeError, ValueError):
                return None
        if node.func.id == "enumerate" and node.args:
            return _static_len(node.args[0])
    return None


def trace_ops(code: str) -> list[dict[str, Any]]:
    """``[{"op", "save", "line"}]`` in execution order; ``save`` is the file the op ends up in (or None).
    Code that does not parse yields no ops (the run itself reports the SyntaxError); so does code built
    to exhaust the parser or the walker (deep nesting): it is model output, parsed in the harness."""
    try:
        tree = ast.parse(code)
        w = _Walker()
        w.visit_block(tree.body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    ops: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for e in w.events:
        if "op" in e:
            item = {"op": e["op"], "save": None, "line": e["line"]}
            pending.append(item)
            ops.append(item)
        else:
            for item in pending:
                item["save"] = e["save"]
            pending = []
    return ops
