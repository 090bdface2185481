"""Text embedders for semantic search: one small interface, one offline implementation.

:class:`Embedder` is the interface the catalog codes against (a ``name``, a
``version``, a ``dimension`` and ``embed(texts)`` returning unit-length
float32 rows). :class:`WordLlamaEmbedder` is the default: the static
256-dimension word embeddings (``l2_supercat``) bundled inside the
``wordllama`` wheel, average-pooled over the tokens of a text. It is
deterministic, needs no network and no generative model, and embeds ~1,400
abstracts/s on one core. Its ``version`` is a hash of the weights file, so
vectors built with other weights are detected as a mismatch.

The weights ship in the MIT-licensed ``wordllama`` wheel (wheel metadata:
``License: MIT``); its README says they were trained from the token-embedding
codebooks of LLaMA 2 70B and Phi-3 medium over the LLaMA 2 tokenizer's
vocabulary.

Another embedder plugs in by implementing :class:`Embedder` and adding a
factory to :data:`EMBEDDERS` (vectors record the embedder's name and version;
the server loads the same one for queries).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["ABSTRACT_CHARS", "DEFAULT_EMBEDDER", "EMBEDDERS", "Embedder", "WordLlamaEmbedder", "document_text", "get_embedder"]

DEFAULT_EMBEDDER = "wordllama-l2_supercat-256"
ABSTRACT_CHARS = 1200  # title + the first 1,200 characters of the abstract (most of a typical abstract)
TITLE_CHARS = 1000  # real titles stay under 400; bounds the tokenizer's input whatever the database holds

Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Maps texts to unit-length float32 vectors; deterministic and offline."""

    @property
    def name(self) -> str:
        """Stable identifier recorded with the vectors (e.g. ``wordllama-l2_supercat-256``)."""
        ...

    @property
    def version(self) -> str:
        """Identifies the exact weights; vectors of another version are not comparable."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Return a ``(len(texts), dimension)`` float32 matrix of unit rows (zero rows for empty texts)."""
        ...


def document_text(title: str | None, abstract: str | None) -> str:
    """The text embedded for one paper: title, then the start of the abstract.

    At most ``TITLE_CHARS + ABSTRACT_CHARS + 2`` characters, so the tokenizer's
    memory stays small whatever a database holds.
    """
    head = (abstract or "")[:ABSTRACT_CHARS]
    title = (title or "")[:TITLE_CHARS]
    return f"{title}. {head}" if head else title


class WordLlamaEmbedder:
    """The ``l2_supercat`` 256-d static embeddings bundled in the ``wordllama`` wheel."""

    dimension = 256

    def __init__(self) -> None:
        # wordllama calls logging.basicConfig(level=INFO) on import; a root handler present
        # at that moment makes it a no-op, so the process's own logging setup stands.
        root, guard = logging.getLogger(), logging.NullHandler()
        root.addHandler(guard)
        try:
            import wordllama
            from wordllama import WordLlama
        finally:
            root.removeHandler(guard)

        folder = Path(wordllama.__file__).resolve().parent
        weights = folder / "weights" / "l2_supercat_256.safetensors"
        # Its default cache folder is not where the wheel puts the files; point it at the package.
        self._model = WordLlama.load(config="l2_supercat", cache_dir=folder, dim=self.dimension,
                                     disable_download=True)
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
        self._version = f"{wordllama.__version__}+{digest}"
        self._lock = threading.Lock()  # one tokenizer object; serialise its (brief) use

    @property
    def name(self) -> str:
        """See :class:`Embedder`."""
        return DEFAULT_EMBEDDER

    @property
    def version(self) -> str:
        """See :class:`Embedder`."""
        return self._version

    def embed(self, texts: Sequence[str]) -> Matrix:
        """See :class:`Embedder`; texts are embedded in batches of 64."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            raw = self._model.embed(list(texts), norm=False, batch_size=64)
        matrix = np.asarray(raw, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        matrix[~np.isfinite(matrix).all(axis=1)] = 0.0
        return matrix


EMBEDDERS: dict[str, Callable[[], Embedder]] = {DEFAULT_EMBEDDER: WordLlamaEmbedder}

_loaded: dict[str, Embedder] = {}
_load_lock = threading.Lock()


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The process-wide embedder called ``name`` (loaded once).

    Raises:
        KeyError: no embedder has that name.
    """
    with _load_lock:
        embedder = _loaded.get(name)
        if embedder is None:
            embedder = _loaded[name] = EMBEDDERS[name]()
        return embedder
