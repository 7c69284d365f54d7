"""Run VTC-Bench's own scorer (``VTCBenchDataset.evaluate``) from the user's checkout, as a subprocess.

The export directory holds the run export (``results_*.jsonl``) and the dataset export
(``VTC-Bench_GTToolChain.tsv`` and/or ``VTC-Bench.tsv``), or the dataset export is its sibling
``dataset/`` (the layout of ``chainmark conformance``). The scorer runs in the user's Python
(pandas, openpyxl, xlsxwriter, math-verify and the checkout's VLMEvalKit requirements), in a
scratch folder inside the export directory. With ``CHAINMARK_VTC_JUDGE_BASE`` (a chat completions
URL) set, the reference's LLM judge is used too (key from ``CHAINMARK_VTC_JUDGE_KEY``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

DRIVER = Path(__file__).with_name("vtc_reference_driver.py")
TSV_NAMES = ("VTC-Bench_GTToolChain.tsv", "VTC-Bench.tsv")
DATASET_DIR = "dataset"  # next to the run export in ``chainmark conformance``'s work folder


class ReferenceRunError(RuntimeError):
    """The reference scorer could not be run or did not answer."""


def _find(export_dir: Path, pattern: str) -> list[Path]:
    return sorted(p for p in export_dir.rglob(pattern) if p.is_file())


def run_reference(export_dir: Path, reference: Path, python: str, timeout: float = 3600) -> dict[str, Any]:
    export_dir, reference = Path(export_dir), Path(reference)
    scorer = reference / "eval" / "eval" / "VLMEvalKit" / "vlmeval" / "dataset" / "image_vqa.py"
    if not scorer.is_file():
        raise ReferenceRunError(f"{reference} is not a VTC-Bench checkout ({scorer} is missing)")
    # The task table is in the run export or, in ``chainmark conformance``'s layout, the sibling ``dataset/``.
    tables = [d for d in (export_dir, export_dir.parent / DATASET_DIR) if d.is_dir()]
    tsv = next((p for name in TSV_NAMES for d in tables for p in _find(d, name)), None)
    results = _find(export_dir, "results_*.jsonl")
    if tsv is None or len(results) != 1:
        raise ReferenceRunError(
            f"{export_dir}: needs one task table ({' or '.join(TSV_NAMES)}) and one "
            f"results_*.jsonl; found {tsv or 'no table'} and {len(results)} results file(s)"
        )
    judge = None
    if os.environ.get("CHAINMARK_VTC_JUDGE_BASE"):
        judge = {
            "api_base": os.environ["CHAINMARK_VTC_JUDGE_BASE"],
            "key": os.environ.get("CHAINMARK_VTC_JUDGE_KEY", "sk-chainmark-conformance"),
            "model": os.environ.get("CHAINMARK_VTC_JUDGE_MODEL", "gpt-4o-mini"),
        }
    work = export_dir / "reference_vtc"
    if work.exists():
        shutil.rmtree(work)  # the reference reuses judge results it finds next to the sheet
    args = {
        "reference": str(reference.resolve()),
        "tsv": str(tsv),
        "results": str(results[0]),
        "work": str(work),
        "judge": judge,
    }
    try:
        proc = subprocess.run(
            [python, str(DRIVER), json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(export_dir),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReferenceRunError(f"could not run the reference scorer with {python}: {exc}") from None
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if proc.returncode != 0 or not last.startswith("{"):
        raise ReferenceRunError(
            f"the reference scorer failed (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-2000:]}"
        )
    out = json.loads(last)
    metrics = {("APR" if k == "Overall" else f"APR[{k}]"): v for k, v in out["metrics"].items()}
    return {"metrics": metrics, "items": out["items"]}
