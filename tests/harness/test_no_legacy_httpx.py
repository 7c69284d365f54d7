"""Nothing chainmark calls while a run is under way loads the legacy ``httpx`` package.

The openai client looked ``httpx`` up in ``sys.modules`` on every request; a first import of it on a
service tool's thread, while other requests were in flight, handed them the half-initialised module
and failed whole trajectories ("partially initialized module 'httpx' has no attribute 'Timeout'").
The blocking client, the VLM tools, the web tools, judges and drafting all post through ``httpx2``
instead (and the image tools' openai client uses it too); a fresh interpreter proves it after a real
blocking call, which loads no openai either (a judge or VLM call posts through httpx2 itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.scripted_openai import ScriptedOpenAI, text

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, sys
import evaluation.drafting, evaluation.judges.client, evaluation.tools.vision, evaluation.tools.web
from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.modelcall.sync_client import chat
reply = chat(EndpointSpec(1, "vlm", sys.argv[1], "scripted-model", None), [{"role": "user", "content": "hi"}])
print(json.dumps({"text": reply.content, "httpx": "httpx" in sys.modules, "openai": "openai" in sys.modules}))
"""


def test_a_blocking_model_call_never_loads_legacy_httpx() -> None:
    with ScriptedOpenAI(handler=lambda req: text("a red square")) as server:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        out = subprocess.run(
            [sys.executable, "-c", CHILD, server.base_url], env=env, capture_output=True, text=True, timeout=120
        )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"text": "a red square", "httpx": False, "openai": False}
