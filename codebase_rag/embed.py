"""Embed: the model on onnxruntime, from the machine's export of it (export.py), so neither
a query nor a build loads torch.

An Embedder is anything with
    dim                  the vector size
    __call__(texts)      float32 unit vectors, one row per text (a document: code)
    queries(texts)       the same for questions, where the model has its own query prompt
                         (optional: an embedder without it embeds questions as documents)
    count_tokens(texts)  word pieces per text (the indexer cuts windows to fit the model)
OnnxEmbedder is the real one (and export.TorchEmbedder its reference); tests and bench/
may pass their own.
"""
import os
from pathlib import Path

from .config import BATCH, DIM, INDEX_COMMAND, PRECISION
from .errors import UsageError, warn
from .identity import Identity
from .export import CONFIG_FILE, export_dir, export_onnx, exported_config, \
    model_config, model_problem, onnx_file, resolve_model
from .oslayer import cpu_flags


SMOKE_TEXT = "does the model load and embed"   # embedded to prove a model works
def load_embedder(folder, file="model.onnx"):
    """A function returning the OnnxEmbedder for folder, loading meanwhile in a thread
    (onnxruntime lets go of the GIL) so the caller can open the index. Every module is
    imported here, in the caller's thread: two threads importing numpy at once can see it
    half-initialised."""
    import threading
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401
    loaded = {}

    def load():
        try:
            loaded["model"] = OnnxEmbedder(folder, file=file)
        except Exception as e:           # raised in the caller's thread, on first use
            loaded["error"] = e
    # not a daemon: exiting while onnxruntime builds its session aborts the process
    thread = threading.Thread(target=load)
    thread.start()

    def get():
        thread.join()
        if "error" in loaded:
            raise loaded["error"]
        return loaded["model"]
    return get


class OnnxEmbedder:
    """The model through onnxruntime: the vectors sentence-transformers makes, without torch.
    Files: model.onnx, tokenizer.json and embedding.json (how the model pools, its prompts
    and maximum length: export.model_config), exported by export.py."""
    dim = DIM

    def __init__(self, folder, batch=BATCH, file="model.onnx"):
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer
        self.np, self.ort, self.batch, self.counter = np, ort, batch, None
        self.path = str(Path(folder) / file)
        self.config = exported_config(folder)
        self.tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.config["max_tokens"])
        self.tokenizer.enable_padding()
        ort.disable_telemetry_events()
        self.cores = min(os.cpu_count() or 1, 4)
        self.session = self.new_session(self.cores)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.workers = []             # (session, tokenizer) per core, made for long calls

    def new_session(self, threads):
        opts = self.ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.log_severity_level = 3
        # idle threads sleep instead of spinning: a question's embedding is a few ms, and a
        # spinning thread took a core from the search after it (p50 -25%, bench/RESULTS-speed)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return self.ort.InferenceSession(self.path, opts, providers=["CPUExecutionProvider"])

    def __call__(self, texts):
        return self.embed(texts, self.config["document_prompt"])

    def queries(self, texts):
        return self.embed(texts, self.config["query_prompt"])

    def embed(self, texts, prompt=""):
        texts = [prompt + t for t in texts]
        if self.config["lower_case"]:
            texts = [t.lower() for t in texts]
        out = self.np.empty((len(texts), DIM), dtype=self.np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))   # little padding
        if self.cores == 1 or len(texts) < 8 * self.cores:
            self.embed_into(out, texts, order, self.session, self.tokenizer)
            return out
        # one text at a time is too small to keep two threads busy: one single-threaded
        # session per core, side by side, is 1.3-1.7x faster, with the same vectors
        if not self.workers:
            self.workers = [(self.new_session(1), self.tokenizer.from_str(self.tokenizer.to_str()))
                            for _ in range(self.cores)]
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(len(self.workers)) as pool:
            list(pool.map(lambda n: self.embed_into(out, texts, order[n::len(self.workers)],
                                                    *self.workers[n]), range(len(self.workers))))
        return out

    def embed_into(self, out, texts, order, session, tokenizer):
        np = self.np
        for start in range(0, len(order), self.batch):
            part = order[start:start + self.batch]
            enc = tokenizer.encode_batch([texts[i] for i in part])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask,
                    "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            out[part] = unit(self.pool(hidden, mask))

    def pool(self, hidden, mask):
        """One vector per text from its word pieces' vectors, as the model's Pooling does."""
        np = self.np
        if self.config["pooling"] == "cls":
            return hidden[:, 0]
        if self.config["pooling"] == "max":
            return np.where(mask[:, :, None] > 0, hidden, -1e9).max(1)
        summed = (hidden * mask[:, :, None]).sum(1)
        return summed / np.clip(mask.sum(1, keepdims=True), 1e-9, None)

    @property
    def max_tokens(self):
        return self.config["max_tokens"]

    def count_tokens(self, texts):
        if self.counter is None:             # the embedding tokenizer truncates and pads
            self.counter = self.tokenizer.from_str(self.tokenizer.to_str())
        return count_tokens(self.counter, texts)


def unit(vectors):
    """Rows scaled to length 1: an index ranks by cosine, the same ranking as the model's
    own similarity (refused otherwise: export.model_config), normalised or not."""
    import numpy as np
    return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)


# the precision auto picks for a new index, by the first CPU kind whose flags
# (oslayer.cpu_flags, as Linux names them) the CPU has any of; else fp32. Each is the fastest whose vectors and
# dev sets hold on that kind (bench/RESULTS-speed.md, "Precision per CPU kind").
AUTO_PRECISION = (
    ({"avx512_vnni", "avx_vnni", "amx_int8"}, "int8"),     # int8 products in one instruction
    ({"avx2"}, "int8-reduced"),                             # u8 x s8 pairs summed in 16 bits
)


def auto_precision(flags):
    return next((precision for kind, precision in AUTO_PRECISION if kind & flags), "fp32")


def resolve_precision(recorded=None, requested=PRECISION):
    """The precision of an index: the one it was built with; for a new index the setting,
    auto picking by the CPU's kind."""
    if recorded:
        return recorded
    if requested == "auto":
        return auto_precision(cpu_flags())
    return requested


def index_model(index, model_id, precision):
    """The ExportedModel an index embeds with: the machine's export of its model, or the
    index's own where the machine's cache cannot be written."""
    warm = _WARMING.pop((str(Path(index)), model_id, precision), None)
    if warm is not None:
        return warm
    model_path, _ = resolve_model(model_id)
    folder = export_dir(model_path, model_id) or Path(index) / "model"
    return ExportedModel(folder, precision, model_path)


_WARMING = {}                 # (index, model id, precision): its model, loading (warm_up)


def warm_up(index):
    """Start loading the model of the index folder, its meta read by sqlite alone, before a
    search's heavy imports (numpy, Chroma: about 0.1 s) rather than after them: the model's
    own 0.15 s then overlaps them, and index_model hands it on. Anything amiss is left for
    the search to report."""
    import sqlite3
    from contextlib import closing
    try:
        uri = f"{(Path(index) / 'index.sqlite').as_uri()}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            identity = Identity.from_meta(dict(db.execute(
                "SELECT key, value FROM meta WHERE key IN ('model', 'precision')")))
        exported = index_model(index, identity.model, identity.precision)
        if exported.problem() is None:
            exported.preload()
            _WARMING[str(Path(index)), identity.model, identity.precision] = exported
    except Exception:                 # noqa: BLE001 (the search says what is wrong)
        pass


class ExportedModel:
    """The model's export (export.py) at an index's precision: what indexing and queries
    embed with. It starts loading in a thread as soon as it is asked to
    (onnxruntime lets go of the GIL), so the caller can open the index meanwhile."""

    def __init__(self, folder, precision="fp32", source=None):
        self.folder, self.precision = Path(folder), precision
        self.file = onnx_file(precision)
        self.source = source          # the model it is exported from (a folder, or a hub name)
        self._get = self._counter = self.loaded = None

    def problem(self, full=False):
        problem = model_problem(self.folder, full)
        if problem is None and not (self.folder / self.file).is_file():
            problem = f"{self.file} is missing"
        return problem

    def ensure(self, progress=False):
        """Export the model if it is missing or damaged (writers), in a child process that
        dies with its parent. Returns a future; its result() is the export done."""
        import concurrent.futures
        import multiprocessing
        problem = self.problem()
        done = concurrent.futures.Future()
        if problem is None:
            done.set_result(None)
            return done
        if problem == f"{self.file} is missing":        # a new precision for a sound export
            if progress:
                warn(f"quantizing the model to {self.precision} (once per machine)...")
        elif problem != "not exported":
            warn(f"the exported model in {self.folder} is damaged ({problem}); exporting it again")
        elif progress:
            warn("exporting the model to ONNX for fast queries (once per machine)...")
        self._get = self._counter = self.loaded = None
        pool = concurrent.futures.ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"))
        export = pool.submit(export_onnx, self.source, str(self.folder), self.precision)
        pool.shutdown(wait=False)
        return export

    def preload(self):
        if self._get is None and self.problem() is None:
            self._get = load_embedder(self.folder, self.file)

    def embedder(self):
        """The OnnxEmbedder, or a UsageError that says how to repair the export."""
        if self.loaded:
            return self.loaded        # in memory: what happens to its files no longer matters
        problem = self.problem()
        if problem:
            raise UsageError(f"the index's exported model in {self.folder} is unusable "
                             f"({problem}); run: {INDEX_COMMAND} (it exports it again)")
        self.preload()
        try:
            self.loaded = self._get()
            return self.loaded
        except Exception as e:
            raise UsageError(f"the index's exported model in {self.folder} does not load "
                             f"({str(e).splitlines()[0][:160]}); run: {INDEX_COMMAND} "
                             f"(it exports it again)") from None

    @property
    def max_tokens(self):
        """The most word pieces the model reads at once: the export's setting, or while it
        is being made, the source folder's own (the same, model_config)."""
        if (self.folder / CONFIG_FILE).is_file() or not self.source or \
                not Path(self.source).is_dir():
            return exported_config(self.folder)["max_tokens"]
        return model_config(self.source)["max_tokens"]

    def count_tokens(self, texts):
        """Word pieces per text, with the model's tokenizer and no model: the export's, or
        while it is being made, the source model's own."""
        if self._counter is None:
            from tokenizers import Tokenizer
            path = self.folder / "tokenizer.json"
            if not path.is_file() and self.source and (Path(self.source) / "tokenizer.json").is_file():
                path = Path(self.source) / "tokenizer.json"
            self._counter = Tokenizer.from_file(str(path))
        return count_tokens(self._counter, texts)


def count_tokens(tokenizer, texts):
    """Word pieces per text, without special tokens, never truncated."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
