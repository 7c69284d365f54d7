"""Build the demo project: one small benchmark per benchmark plugin that brings a demo (``demo-<name>``);
chainmark's own are in the style of each seed, with images drawn here.

Idempotent: tasks are keyed by source id, so running it again adds nothing and changes nothing.
Reference steps that transform images carry the real transformed image (computed with Pillow) as an
artifact; text results are the values the drawings were made from.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from PIL import Image, ImageEnhance, ImageOps
from sqlmodel import Session, select

from annotation import tasks as authoring
from annotation.demo import images
from store.blobs import BlobStore
from store.models import Benchmark, Task, TaskAsset
from store.plugins import BenchmarkPlugin, benchmark_plugins, resolve, resource_path


@dataclass
class DemoReport:
    created: dict[str, int] = field(default_factory=dict)
    existing: dict[str, int] = field(default_factory=dict)

    @property
    def total_created(self) -> int:
        return sum(self.created.values())


def _guidelines(plugin: BenchmarkPlugin) -> str | None:
    """The guidelines file the plugin names, or None."""
    return resource_path(plugin.guidelines).read_text(encoding="utf-8") if plugin.guidelines else None


def _open(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def _crop(data: bytes, bbox: list[int], zoom: float = 1.0) -> bytes:
    """Agentic-MME crop: bbox in 0–1000 normalised coordinates, optional LANCZOS zoom."""
    im = _open(data)
    w, h = im.size
    box = (bbox[0] * w // 1000, bbox[1] * h // 1000, bbox[2] * w // 1000, bbox[3] * h // 1000)
    out = im.crop(box)
    if zoom > 1:
        out = out.resize((int(out.width * zoom), int(out.height * zoom)), Image.Resampling.LANCZOS)
    return images.png(out)


def _brighten(data: bytes, factor: float) -> bytes:
    return images.png(ImageEnhance.Brightness(_open(data)).enhance(factor))


def _rotate(data: bytes, angle: float) -> bytes:
    return images.png(_open(data).rotate(angle, expand=True, fillcolor="white"))


def _mirror(data: bytes) -> bytes:
    return images.png(ImageOps.mirror(_open(data)))


class DemoBuilder:
    """Adds one task with its image, steps and checkpoints, unless its source id already exists.

    What a benchmark plugin's ``demo`` function receives: it calls ``exists`` before each task it
    adds, so building the demo again adds nothing (``docs/plugins.md``)."""

    def __init__(self, session: Session, blobs: BlobStore, bench: Benchmark, report: DemoReport):
        self.s, self.blobs, self.bench, self.report = session, blobs, bench, report

    def exists(self, source_id: str) -> bool:
        found = self.s.exec(
            select(Task.id).where(Task.benchmark_id == self.bench.id, Task.source_id == source_id)
        ).first()
        if found is not None:
            self.report.existing[self.bench.name] = self.report.existing.get(self.bench.name, 0) + 1
        return found is not None

    def task(
        self,
        source_id: str,
        query: str,
        answer: dict[str, Any],
        *,
        image: bytes | None = None,
        image_path: str | None = None,
        **fields: Any,
    ) -> Task:
        t = authoring.create_task(
            self.s, self.bench, query, answer_spec=answer, source_id=source_id, author="demo", **fields
        )
        if image is not None:
            authoring.attach_asset(self.s, self.blobs, t.id or 0, image, role="query_image", original_path=image_path)
        self.report.created[self.bench.name] = self.report.created.get(self.bench.name, 0) + 1
        return t

    def step(
        self,
        task: Task,
        tool: str,
        args: dict[str, Any],
        result_text: str,
        *,
        thought: str,
        artifact: bytes | None = None,
        result: Any = None,
    ) -> int:
        st = authoring.add_step(
            self.s,
            task.id or 0,
            thought=thought,
            tool_name=tool,
            tool_args=args,
            result_text=result_text,
            result=result,
            meta={"recorded": "demo"},
        )
        if artifact is not None:
            link = authoring.attach_asset(self.s, self.blobs, task.id or 0, artifact, role="artifact", step_id=st.id)
            st.result = {**(st.result or {}), "asset_ids": [link.asset_id]}
        return st.id or 0

    def answer(self, task: Task, text: str, thought: str = "I have everything I need.") -> None:
        authoring.add_step(self.s, task.id or 0, thought=thought, final_answer=text)


# ----------------------------------------------------------------------------------- benchmarks


def fill_chainmark(b: DemoBuilder) -> None:
    """A benchmark authored in chainmark: one answer kind per task (numeric with a tolerance, a
    whitelist, an open answer for the rubric judge), reference chains over the GTA tool set, and
    checkpoints on the first task (a tool step, then the answer, in that order)."""
    if not b.exists("receipt-split"):
        ocr = "\n".join(f"{label} {price}" if price else label for label, price in images.RECEIPT_LINES)
        t = b.task(
            "receipt-split",
            "Three friends split this bill evenly. How much does each of them pay?",
            {"kind": "numeric", "value": 5.27, "tolerance": 0.01},
            image=images.receipt(),
            image_path="images/receipt.png",
            category="receipts",
            level="2",
            tools_offered=["OCR", "Calculator"],
        )
        read = b.step(t, "OCR", {"image": "images/receipt.png"}, ocr, thought="Read the total from the receipt.")
        split = b.step(
            t, "Calculator", {"expression": "round(15.80 / 3, 2)"}, "5.27", thought="Split the total three ways."
        )
        b.answer(t, "Each pays 5.27.")
        authoring.add_checkpoint(
            b.s, t.id or 0, "read", axis="V", step_id=read, tools=["OCR"], description="Read the receipt's total."
        )
        authoring.add_checkpoint(
            b.s, t.id or 0, "split", axis="S", step_id=split, tools=["Calculator"], description="Divide it by three."
        )
        authoring.add_checkpoint(
            b.s,
            t.id or 0,
            "answer",
            axis="R",
            description="The share, to the cent.",
            answer_check={"match_type": "contains", "target": "5.27"},
        )
        authoring.add_ordering_constraint(b.s, t.id or 0, ["read", "split"], max_gap=1)
    if not b.exists("shape-count"):
        t = b.task(
            "shape-count",
            "How many circles are in the picture?",
            {"kind": "whitelist", "groups": [["5", "five"]], "blacklist": None},
            image=images.shapes(),
            image_path="images/shapes.png",
            category="counting",
            level="1",
            tools_offered=["CountGivenObject"],
        )
        b.step(t, "CountGivenObject", {"image": "images/shapes.png", "text": "circle"}, "5", thought="Count them.")
        b.answer(t, "5")
    if not b.exists("chart-trend"):
        t = b.task(
            "chart-trend",
            "Describe in one sentence how the parcel deliveries change over the week.",
            {
                "kind": "interleaved",
                "golden": [{"type": "text", "content": "Deliveries rise and fall from day to day, peaking on Friday."}],
            },
            image=images.bar_chart(),
            image_path="images/chart.png",
            category="charts",
            level="1",
            tools_offered=["OCR"],
        )
        labels = " ".join(f"{d} {v}" for d, v in images.BAR_CHART_DATA.items())
        b.step(t, "OCR", {"image": "images/chart.png"}, labels, thought="Read the bar labels.")
        b.answer(t, "Deliveries rise and fall from day to day, with the most on Friday (23).")


def fill_gta(b: DemoBuilder) -> None:
    receipt = images.receipt()
    if not b.exists("0"):
        ocr = "\n".join(f"{label} {price}" if price else label for label, price in images.RECEIPT_LINES)
        t = b.task(
            "0",
            "Three friends shared this breakfast and split the bill evenly. How much does each "
            "of them pay, to the cent?",
            {"kind": "whitelist", "groups": [["5.27"]], "blacklist": None},
            image=receipt,
            image_path="image/image_0.png",
            category="perception+logic",
            tools_offered=["OCR", "Calculator"],
        )
        b.step(t, "OCR", {"image": "image/image_0.png"}, ocr, thought="Read the total from the receipt.")
        b.step(t, "Calculator", {"expression": "round(15.80 / 3, 2)"}, "5.27", thought="Split the total three ways.")
        b.answer(t, "5.27")
    if not b.exists("1"):
        t = b.task(
            "1",
            "How many more circles than squares are there in the picture?",
            {"kind": "whitelist", "groups": [["2", "two"]], "blacklist": None},
            image=images.shapes(),
            image_path="image/image_1.png",
            category="perception+logic",
            tools_offered=["CountGivenObject", "Calculator"],
        )
        b.step(
            t,
            "CountGivenObject",
            {"image": "image/image_1.png", "text": "circle"},
            "5",
            thought="Count the circles first.",
        )
        b.step(
            t, "CountGivenObject", {"image": "image/image_1.png", "text": "square"}, "3", thought="Then the squares."
        )
        b.step(t, "Calculator", {"expression": "5 - 3"}, "2", thought="Take the difference.")
        b.answer(t, "2")
    if not b.exists("2"):
        t = b.task(
            "2",
            "On which day were the most parcels delivered, and how many more than on the quietest day?",
            {"kind": "whitelist", "groups": [["Fri", "Friday"], ["16", "sixteen"]], "blacklist": [["Tue", "Tuesday"]]},
            image=images.bar_chart(),
            image_path="image/image_2.png",
            category="perception+logic",
            tools_offered=["OCR", "Calculator"],
        )
        labels = " ".join(f"{d} {v}" for d, v in images.BAR_CHART_DATA.items())
        b.step(
            t,
            "OCR",
            {"image": "image/image_2.png"},
            f"Parcels delivered per day {labels}",
            thought="Read the bar labels.",
        )
        b.step(t, "Calculator", {"expression": "23 - 7"}, "16", thought="Friday minus Wednesday.")
        b.answer(t, "Friday, with 16 more parcels than Wednesday.")


def fill_agentic_mme(b: DemoBuilder) -> None:
    scene = images.low_light_scene()
    if not b.exists("0001"):
        t = b.task(
            "0001",
            "What is the house number shown on the plate next to the door?",
            {"kind": "contains", "value": "27"},
            image=scene,
            image_path="images/image_0001.png",
            level="1",
            domain="Life",
            category="Life",
            reference_tool_calls=2,
            max_tool_calls=6,
            penalty_per_extra_call=0.1,
        )
        bright = _brighten(scene, 4.0)
        s1 = b.step(
            t,
            "enhance",
            {"image_index": 0, "brightness": 4.0},
            "new_image_index=1",
            thought="The photo is too dark; brighten it.",
            artifact=bright,
        )
        crop = _crop(bright, [440, 340, 640, 520], 2.0)
        s2 = b.step(
            t,
            "crop",
            {"image_index": 1, "bbox_2d": [440, 340, 640, 520], "zoom_scale": 2.0},
            "new_image_index=2",
            thought="Zoom into the number plate.",
            artifact=crop,
        )
        b.answer(t, "<answer>27</answer>")
        crop_asset = b.s.exec(select(TaskAsset.asset_id).where(TaskAsset.step_id == s2)).first()
        authoring.add_checkpoint(
            b.s,
            t.id or 0,
            "cp1",
            axis="V",
            step_id=s1,
            tools=["enhance"],
            description="Brighten the dark photo before reading it.",
            code_check={"tool": "enhance", "verifier": "require_op:enhance"},
        )
        authoring.add_checkpoint(
            b.s,
            t.id or 0,
            "cp2",
            axis="V",
            step_id=s2,
            tools=["crop"],
            description="Crop and zoom into the number plate.",
            code_check={"tool": "crop", "verifier": "verify_crop_ast"},
            visual_check={"question": "What number is written on the plate?", "expected_answer": "27"},
            gt_asset_id=crop_asset,
        )
        authoring.add_checkpoint(
            b.s,
            t.id or 0,
            "cp3",
            axis="R",
            description="Final answer.",
            answer_check={"match_type": "contains", "target": "27"},
        )
        authoring.add_ordering_constraint(b.s, t.id or 0, ["cp1", "cp2"], max_gap=2)
    if not b.exists("0002"):
        label = images.rotated_label()
        t = b.task(
            "0002",
            "What is the lot number printed on this label?",
            {"kind": "exact", "value": "4471"},
            image=label,
            image_path="images/image_0002.png",
            level="1",
            domain="Life",
            category="Life",
            reference_tool_calls=1,
            max_tool_calls=4,
            penalty_per_extra_call=0.1,
        )
        s1 = b.step(
            t,
            "rotate",
            {"image_index": 0, "angle": -90, "expand": True},
            "new_image_index=1",
            thought="The text runs bottom to top; rotate it upright.",
            artifact=_rotate(label, -90),
        )
        b.answer(t, "<answer>4471</answer>")
        authoring.add_checkpoint(
            b.s,
            t.id or 0,
            "cp1",
            axis="V",
            step_id=s1,
            tools=["rotate"],
            description="Rotate the label upright.",
            code_check={"tool": "rotate", "verifier": "require_op:rotate"},
            visual_check={"question": "What is the lot number?", "expected_answer": "4471"},
        )
        authoring.add_checkpoint(
            b.s,
            t.id or 0,
            "cp2",
            axis="R",
            description="Final answer.",
            answer_check={"match_type": "exact", "target": "4471"},
        )


def fill_vtc(b: DemoBuilder) -> None:
    sign = images.mirrored_sign()
    if not b.exists("ocr_1"):
        t = b.task(
            "ocr_1",
            "The text on this sign is mirrored. What does the sign say?",
            {"kind": "mcq", "options": {"A": "EXIT 21", "B": "EXIT 12", "C": "TIXE 12", "D": "EXIT 2"}, "letter": "B"},
            image=sign,
            image_path="images/ocr/ocr_1.jpg",
            category="ocr",
            meta={"gt_chain": ["Flip"]},
        )
        b.step(
            t,
            "opencv_flip",
            {"image": "images/ocr/ocr_1.jpg", "param": {"direction": "horizontal"}},
            "Flipped the image horizontally.",
            thought="Undo the mirroring.",
            artifact=_mirror(sign),
        )
        b.answer(t, "<answer>B</answer>")
    if not b.exists("counting_1"):
        t = b.task(
            "counting_1",
            "How many red circles are in the image?",
            {"kind": "exact", "value": "5"},
            image=images.shapes(),
            image_path="images/counting/counting_1.jpg",
            category="counting",
            meta={"gt_chain": ["Color Filter", "Circle Detect"]},
        )
        b.step(
            t,
            "opencv_inrange_color",
            {
                "image": "images/counting/counting_1.jpg",
                "param": {"colorspace": "hsv", "lower": [0, 120, 70], "upper": [10, 255, 255], "output_format": "mask"},
            },
            "Mask of red pixels.",
            thought="Keep only the red shapes.",
        )
        b.step(
            t,
            "opencv_hough_circles",
            {"image": "images/counting/counting_1.jpg", "param": {"minDist": 40, "minRadius": 20, "maxRadius": 40}},
            'Detected circles. INFO: {"count": 5}',
            thought="Detect the circles and count them.",
        )
        b.answer(t, "<answer>5</answer>")


def fill_isg(b: DemoBuilder) -> None:
    if not b.exists("0000"):
        golden = [
            {"type": "text", "content": "Wash and dry the fruit."},
            {"type": "image", "content": "images/0000_g1.png"},
            {"type": "text", "content": "Cut it into bite-sized pieces."},
            {"type": "image", "content": "images/0000_g2.png"},
            {"type": "text", "content": "Toss everything in a bowl."},
            {"type": "image", "content": "images/0000_g3.png"},
        ]
        t = b.task(
            "0000",
            "Show how to make a fruit bowl in three steps, with one picture per step.",
            {"kind": "interleaved", "golden": golden},
            category="Image-Text Complementation",
            subcategory="HowTo",
            meta={
                "structure": {
                    "Query": ["<query_text1>"],
                    "Answer": ["<gen_text1>", "<gen_img1>", "<gen_text2>", "<gen_img2>", "<gen_text3>", "<gen_img3>"],
                }
            },
        )
        for i, colour in enumerate([(200, 60, 60), (230, 170, 40), (120, 170, 60)], start=1):
            authoring.attach_asset(
                b.s,
                b.blobs,
                t.id or 0,
                images.recipe_step(i, colour),
                role="golden",
                original_path=f"images/0000_g{i}.png",
            )
    if not b.exists("0001"):
        golden = [
            {"type": "text", "content": "Deliveries rise towards the end of the week; Friday is the peak."},
            {"type": "image", "content": "images/0001_g1.png"},
        ]
        t = b.task(
            "0001",
            "Describe the trend in this chart, then draw it again with Wednesday's value doubled.",
            {"kind": "interleaved", "golden": golden},
            image=images.bar_chart(),
            image_path="images/0001_q1.png",
            category="Visual Story Telling",
            subcategory="Scientific",
            meta={"structure": {"Query": ["<query_img1>", "<query_text1>"], "Answer": ["<gen_text1>", "<gen_img1>"]}},
        )
        authoring.attach_asset(
            b.s, b.blobs, t.id or 0, images.bar_chart(), role="golden", original_path="images/0001_g1.png"
        )


def fill_atp(b: DemoBuilder) -> None:
    if not b.exists("trace-0001"):
        gt = (
            "Start by washing the fruit. "
            '<tool>{"tool_name": "Reference", "description": "Show the washed fruit from the recipe", '
            '"params": {"image_id": "doc1_img1"}}</tool> '
            "Then cut it into pieces and arrange it in a bowl. "
            '<tool>{"tool_name": "Diffusion", "description": "A colourful fruit bowl seen from above", '
            '"params": {"prompt": "a colourful fruit bowl, top view, natural light"}}</tool>'
        )
        t = b.task(
            "trace-0001",
            "How do I make a simple fruit bowl for four people?",
            {"kind": "none"},
            category="Recipe",
            intent="step-by-step guide",
            meta={"gt": gt},
        )
        doc = authoring.add_document(
            b.s,
            t.id or 0,
            "Fruit bowl: wash apples, oranges and grapes; cut them into bite-sized pieces; serve in a chilled bowl.",
            title="Recipe card",
        )
        authoring.attach_asset(
            b.s,
            b.blobs,
            t.id or 0,
            images.recipe_step(1, (200, 60, 60)),
            role="document_image",
            document_id=doc.id,
            original_path="images/doc1_img1.png",
        )
        for call in _plan_calls(gt):
            b.step(t, call["tool_name"], call["params"], call["description"], thought="planned call (not executed)")
        b.answer(t, gt)


def _plan_calls(text: str) -> list[dict[str, Any]]:
    out = []
    for chunk in text.split("<tool>")[1:]:
        out.append(json.loads(chunk.split("</tool>")[0]))
    return out


def demo_plugins() -> list[BenchmarkPlugin]:
    """The benchmark plugins that bring a demo, in listing order: one demo benchmark each."""
    return [p for p in benchmark_plugins() if p.demo and p.formats]


def demo_name(plugin: BenchmarkPlugin) -> str:
    return f"demo-{plugin.name}"


def build_demo(session: Session, blobs: BlobStore) -> DemoReport:
    """Create (or complete) the demo benchmarks in the given session."""
    report = DemoReport()
    for plugin in demo_plugins():
        name = demo_name(plugin)
        known = session.exec(select(Benchmark).where(Benchmark.name == name)).first()
        # Guidelines are editable by the team; a rebuild must not overwrite their edits.
        guidelines = None if known is not None and known.guidelines else _guidelines(plugin)
        bench = authoring.ensure_benchmark(
            session,
            name,
            plugin.formats[0],
            tool_set=plugin.tool_set or plugin.demo_tool_set,
            description=plugin.demo_description or plugin.summary,
            guidelines=guidelines,
        )
        report.created.setdefault(name, 0)
        fill: Callable[[DemoBuilder], None] = resolve(str(plugin.demo))
        fill(DemoBuilder(session, blobs, bench, report))
    return report
