"""GTA: the 14 tools of ``toolmeta.json`` with their input/output metas (seed_formats.md §1.2).

The metas (names, types, optional flags, defaults, descriptions) are the benchmark's model-facing
interface, so they are kept as GTA publishes them; ``parameters`` is derived from the inputs.
"""

from __future__ import annotations

from typing import Any

from evaluation.tools.toolset import Tool, ToolSet

VERSION = "1"

_JSON_TYPE = {"text": "string", "image": "string", "int": "integer", "bool": "boolean", "float": "number"}

_BBOX = "The bbox coordinate in the format of `(x1, y1, x2, y2)`"
_OBJECT = "The object description in English."
_CODE = "Markdown format Python code"

_SOLVER_EXAMPLE = """```python
# import packages
from sympy import symbols, Eq, solve
def solution():
    # Define symbols
    x, y = symbols('x y')

    # Define equations
    equation1 = Eq(x**2 + y**2, 20)
    equation2 = Eq(x**2 - 5*x*y + 6*y**2, 0)

    # Solve the system of equations
    solutions = solve((equation1, equation2), (x, y), dict=True)

    # Return solutions as strings
    return str(solutions)
```"""

_PLOT_EXAMPLE = """```python
# import packages
import matplotlib.pyplot as plt
def solution():
    # labels and data
    cars = ['AUDI', 'BMW', 'FORD', 'TESLA', 'JAGUAR', 'MERCEDES']
    data = [23, 17, 35, 29, 12, 41]

    # draw diagrams
    figure = plt.figure(figsize=(8, 6))
    plt.pie(data, labels=cars, autopct='%1.1f%%', startangle=140)
    plt.axis('equal')
    plt.title('Car Distribution')
    return figure
```"""


def _p(
    kind: str, name: str | None = None, description: str | None = None, optional: bool = False, default: Any = None
) -> dict[str, Any]:
    return {
        "type": kind,
        "name": name,
        "description": description,
        "optional": optional,
        "default": default,
        "filetype": None,
    }


def _tool(
    name: str,
    description: str,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    category: str,
    kind: str,
    impl: str,
) -> Tool:
    props: dict[str, Any] = {}
    for p in inputs:
        prop: dict[str, Any] = {"type": _JSON_TYPE.get(p["type"], "string")}
        if p["type"] == "image":
            prop["description"] = "Path of the input image" + (f". {p['description']}" if p["description"] else "")
        elif p["description"]:
            prop["description"] = p["description"]
        if p["optional"] and p["default"] is not None:
            prop["default"] = p["default"]
        props[p["name"]] = prop
    schema = {"type": "object", "properties": props, "required": [p["name"] for p in inputs if not p["optional"]]}
    return Tool(name, description, schema, category, kind, impl, meta={"inputs": inputs, "outputs": outputs})


def tools() -> list[Tool]:
    img = _p("image", "image")
    text_out = [_p("text")]
    return [
        _tool(
            "OCR",
            "This tool can recognize all text on the input image.",
            [img],
            [_p("text", description="OCR results, include bbox in x1, y1, x2, y2 format and the recognized text.")],
            "perception",
            "offline",
            "evaluation.tools.ocr:run_ocr",
        ),
        _tool(
            "ImageDescription",
            "A useful tool that returns a brief description of the input image.",
            [img],
            text_out,
            "perception",
            "service",
            "evaluation.tools.vision:image_description",
        ),
        _tool(
            "RegionAttributeDescription",
            "Describe the attribute of a region of the input image.",
            [img, _p("text", "bbox", _BBOX), _p("text", "attribute", "The attribute to describe")],
            text_out,
            "perception",
            "service",
            "evaluation.tools.vision:region_attribute_description",
        ),
        _tool(
            "TextToBbox",
            "The tool can detect the object location according to description.",
            [
                img,
                _p("text", "text", _OBJECT),
                _p(
                    "bool",
                    "top1",
                    "If true, return the object with highest score. If false, return all detected objects.",
                    optional=True,
                    default=True,
                ),
            ],
            [_p("text", description="Detected objects, include bbox in (x1, y1, x2, y2) format, and detection score.")],
            "perception",
            "service",
            "evaluation.tools.vision:text_to_bbox",
        ),
        _tool(
            "CountGivenObject",
            "The tool can count the number of a certain object in the image.",
            [img, _p("text", "text", _OBJECT)],
            [_p("int")],
            "logic",
            "service",
            "evaluation.tools.vision:count_given_object",
        ),
        _tool(
            "MathOCR",
            "This tool can recognize math expressions from an image and return the latex style expression.",
            [img],
            text_out,
            "logic",
            "service",
            "evaluation.tools.vision:math_ocr",
        ),
        _tool(
            "Calculator",
            "A calculator tool. The input must be a single Python expression and you cannot import "
            "packages. You can use functions in the `math` package without import.",
            [_p("text", "expression")],
            text_out,
            "logic",
            "offline",
            "evaluation.tools.calculator:run_calculator",
        ),
        _tool(
            "Solver",
            "This tool can execute Python code to solve math equations. The code should include a "
            "function named 'solution'. You should use the `sympy` library in your code to solve the "
            "equations. The function should return its answer in str format. Avoid printing the answer. "
            "The code instance format is as follows:\n\n" + _SOLVER_EXAMPLE,
            [_p("text", "command", _CODE)],
            text_out,
            "logic",
            "offline",
            "evaluation.tools.sandbox:run_solver",
        ),
        _tool(
            "Plot",
            "This tool can execute Python code to plot diagrams. The code should include a function named "
            "'solution'. The function should return the matplotlib figure directly. Avoid printing the "
            "answer. The code instance format is as follows:\n\n" + _PLOT_EXAMPLE,
            [_p("text", "command", _CODE)],
            [_p("image")],
            "logic",
            "offline",
            "evaluation.tools.sandbox:run_plot",
        ),
        _tool(
            "GoogleSearch",
            "The tool can search the input query text from Google and return the related results.",
            [_p("text", "query"), _p("int", "k", "Select the first k results", optional=True, default=10)],
            text_out,
            "operation",
            "service",
            "evaluation.tools.web:gta_google_search",
        ),
        _tool(
            "DrawBox",
            "A tool to draw a box on a certain region of the input image.",
            [
                img,
                _p("text", "bbox", _BBOX),
                _p("text", "annotation", "The extra annotation text of the bbox", optional=True),
            ],
            [_p("image")],
            "operation",
            "offline",
            "evaluation.tools.drawing:draw_box",
        ),
        _tool(
            "AddText",
            "A tool to draw a box on a certain region of the input image.",
            [
                img,
                _p("text", "text"),
                _p(
                    "text",
                    "position",
                    "The left-bottom corner coordinate in the format of `(x, y)`, or a combination "
                    'of ["l"(left), "m"(middle), "r"(right)] and ["t"(top), "m"(middle), '
                    '"b"(bottom)] like "mt" for middle-top',
                ),
                _p("text", "color", optional=True, default="red"),
            ],
            [_p("image")],
            "operation",
            "offline",
            "evaluation.tools.drawing:add_text",
        ),
        _tool(
            "TextToImage",
            "This tool can generate an image according to the input text.",
            [_p("text", "keywords", "A series of keywords separated by comma.")],
            [_p("image")],
            "creativity",
            "service",
            "evaluation.tools.vision:text_to_image",
        ),
        _tool(
            "ImageStylization",
            "This tool can modify the input image according to the input instruction. Here are "
            'some example instructions: "turn him into cyborg", "add fireworks to the sky", '
            '"make his jacket out of leather".',
            [img, _p("text", "instruction")],
            [_p("image")],
            "creativity",
            "service",
            "evaluation.tools.vision:image_stylization",
        ),
    ]


def build() -> ToolSet:
    return ToolSet(
        "gta",
        VERSION,
        "GTA (General Tool Agents): the 14 AgentLego tools of toolmeta.json",
        {t.name: t for t in tools()},
    )
