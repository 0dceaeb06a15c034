"""--model FOLDER: the folder's own sentence-transformers configuration is honoured (pooling,
prompts, maximum length, lower-casing) or the folder is refused in one line, and an index
knows its model by path and hash, refusing the folder once its weights or settings change.
The folders are the packaged MiniLM copied with one setting changed; the reference vectors
are sentence-transformers' own."""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from codebase_rag.errors import UsageError
from codebase_rag.export import CONFIG_FILE, DEFAULT_CONFIG, export_dir, export_onnx, \
    model_config, onnx_file, resolve_model, write_model_manifest

TEXTS = ["Refills the player's energy timers when a new day starts",
         "public void RefillTimers(DateTime now) { foreach (var t in timers) t.Reset(now); }"]


def variant(tmp_path, name, edits=None, weights="link"):
    """The packaged model in tmp_path/name with its JSON files edited: edits maps a file to
    a function that changes its parsed JSON in place (or returns the new value)."""
    base = Path(resolve_model()[0])
    folder = tmp_path / name
    shutil.copytree(base, folder, ignore=shutil.ignore_patterns("model.safetensors"))
    if weights == "link":
        os.symlink(base / "model.safetensors", folder / "model.safetensors")
    else:
        shutil.copy(base / "model.safetensors", folder / "model.safetensors")
    for file, edit in (edits or {}).items():
        path = folder / file
        data = json.loads(path.read_text()) if path.exists() else {}
        data = edit(data) or data
        path.write_text(json.dumps(data))
    return folder


def pooled_by(mode):
    def edit(config):
        for key in list(config):
            if key.startswith("pooling_mode_"):
                config[key] = False
        config[{"cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens",
                "weightedmean": "pooling_mode_weightedmean_tokens"}[mode]] = True
    return edit


def onnx_embedder(onnx_export, folder, tmp_path, tokenizer_from=None):
    """The OnnxEmbedder of an export of folder: the session's ONNX graph (the same
    transformer), with the embedding.json an export of folder writes."""
    from codebase_rag.embed import OnnxEmbedder
    export = tmp_path / f"export-{folder.name}"
    shutil.copytree(onnx_export, export)
    if tokenizer_from:
        shutil.copy(tokenizer_from / "tokenizer.json", export / "tokenizer.json")
    (export / CONFIG_FILE).write_text(json.dumps(model_config(folder)))
    return OnnxEmbedder(export)


def st_model(folder):
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(folder), device="cpu")


def close(a, b):
    return np.allclose(a, b, atol=2e-5)


def test_the_packaged_model_is_read_as_the_tool_always_embedded():
    """Its configuration is the default, so its export (and every index of it) stays valid."""
    assert model_config(resolve_model()[0]) == DEFAULT_CONFIG


@pytest.mark.parametrize("mode", ["cls", "max"])
def test_pooling_is_the_folders_own(onnx_export, tmp_path, mode):
    folder = variant(tmp_path, mode, {"1_Pooling/config.json": pooled_by(mode)})
    ours = onnx_embedder(onnx_export, folder, tmp_path)(TEXTS)
    theirs = st_model(folder).encode(TEXTS, normalize_embeddings=True)
    stock = st_model(resolve_model()[0]).encode(TEXTS, normalize_embeddings=True)
    assert close(ours, theirs) and not close(ours, stock)


def test_an_export_carries_the_folders_way_of_embedding(tmp_path):
    """The real exporter writes the folder's configuration beside the graph, and the
    export's embedder makes sentence-transformers' vectors of the folder."""
    from codebase_rag.embed import OnnxEmbedder
    folder = variant(tmp_path, "cls", {"1_Pooling/config.json": pooled_by("cls")})
    export_onnx(str(folder), tmp_path / "export")
    assert json.loads((tmp_path / "export" / CONFIG_FILE).read_text()) == model_config(folder)
    assert close(OnnxEmbedder(tmp_path / "export")(TEXTS),
                 st_model(folder).encode(TEXTS, normalize_embeddings=True))


def test_half_precision_weights_are_exported_and_embed_in_fp32(tmp_path):
    """A folder whose weights are stored as fp16 (a model shipped at half the size) exports
    an fp32 graph whose vectors are the fp32 weights' within fp16's rounding."""
    import torch
    from safetensors.torch import load_file, save_file
    from codebase_rag.embed import OnnxEmbedder
    folder = variant(tmp_path, "half", weights="copy")
    weights = folder / "model.safetensors"
    save_file({k: v.half() for k, v in load_file(str(weights)).items()}, str(weights))
    export_onnx(str(folder), tmp_path / "export")
    ours = OnnxEmbedder(tmp_path / "export")(TEXTS)
    stock = st_model(resolve_model()[0]).encode(TEXTS, normalize_embeddings=True)
    assert ours.dtype == np.float32 and torch.get_default_dtype() == torch.float32
    assert (ours * stock).sum(axis=1).min() > 0.999 and not close(ours, stock)


def test_query_and_document_prompts_are_applied(onnx_export, tmp_path):
    prompts = {"query": "query: ", "document": "passage: "}
    folder = variant(tmp_path, "prompted", {
        "config_sentence_transformers.json": lambda c: c.update(prompts=prompts)})
    model, ours = st_model(folder), onnx_embedder(onnx_export, folder, tmp_path)
    assert close(ours.queries(TEXTS[:1]), model.encode_query(TEXTS[:1], normalize_embeddings=True))
    assert close(ours(TEXTS), model.encode_document(TEXTS, normalize_embeddings=True))
    assert not close(ours.queries(TEXTS[:1]), ours(TEXTS[:1]))


def test_the_maximum_length_is_the_folders_own(onnx_export, tmp_path):
    folder = variant(tmp_path, "short", {
        "sentence_bert_config.json": lambda c: c.update(max_seq_length=16)})
    long_text = [" ".join(TEXTS * 6)]
    model = st_model(folder)
    assert model.max_seq_length == 16
    ours = onnx_embedder(onnx_export, folder, tmp_path)(long_text)
    assert close(ours, model.encode(long_text, normalize_embeddings=True))


def test_a_folder_that_lower_cases_its_input_is_read_lower_cased(onnx_export, tmp_path):
    """A cased tokenizer (its normaliser keeps case) under do_lower_case."""
    def cased(tokenizer):
        tokenizer["normalizer"]["lowercase"] = False
    folder = variant(tmp_path, "lower", {
        "tokenizer.json": cased,
        "sentence_bert_config.json": lambda c: c.update(do_lower_case=True)})
    text = ["REFILLS THE Energy TIMERS"]
    ours = onnx_embedder(onnx_export, folder, tmp_path, tokenizer_from=folder)(text)
    assert close(ours, st_model(folder).encode(text, normalize_embeddings=True))
    assert close(ours, st_model(folder).encode([text[0].lower()], normalize_embeddings=True))


def with_module(kind):
    def edit(modules):
        return modules + [{"idx": len(modules), "name": str(len(modules)), "path": "3_Dense",
                           "type": f"sentence_transformers.models.{kind}"}]
    return edit


@pytest.mark.parametrize("edits, said", [
    ({"modules.json": with_module("Dense")}, "made of Transformer + Pooling + Normalize + Dense"),
    ({"1_Pooling/config.json": pooled_by("weightedmean")}, "pools by weightedmean"),
    ({"1_Pooling/config.json": lambda c: c.update(word_embedding_dimension=768)},
     "vectors of 768 dimensions"),
    ({"modules.json": lambda m: m[:2],
      "config_sentence_transformers.json": lambda c: c.update(similarity_fn_name="dot")},
     "ranks by dot"),
    ({"config_sentence_transformers.json": lambda c: c.update(prompts={"query": "q: "}),
      "1_Pooling/config.json": lambda c: c.update(include_prompt=False)},
     "pools without its prompt"),
])
def test_a_folder_the_tool_cannot_honour_is_refused(tmp_path, edits, said):
    folder = variant(tmp_path, "odd", edits)
    with pytest.raises(UsageError) as refused:
        resolve_model(str(folder))
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_folder_without_modules_is_refused_by_the_cli_in_one_line(cli, sample_tree, tmp_path):
    folder = tmp_path / "plain"
    shutil.copytree(resolve_model()[0], folder)
    (folder / "modules.json").unlink()
    proc = cli.index(sample_tree, tmp_path / "db", "--model", folder, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"the model in {folder} is not a sentence-transformers folder" \
        in lines[0]


def test_a_folder_model_is_known_by_its_weights_and_settings(tmp_path):
    folder = variant(tmp_path, "mine", weights="copy")
    path, model_id = resolve_model(str(folder))
    assert model_id.startswith(f"{folder}#sha256=") and path == str(folder)
    assert resolve_model(model_id) == (path, model_id)          # what an index recorded
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1                                               # one bit of one weight
    weights.write_bytes(bytes(data))
    with pytest.raises(UsageError, match="other weights or settings than when the index"):
        resolve_model(model_id)
    assert resolve_model(str(folder))[1] != model_id


def seed_export(onnx_export, folder, cache):
    """This machine's export of folder, as if it had made it (the session's ONNX graph)."""
    path, model_id = resolve_model(str(folder))
    target = export_dir(path, model_id, cache)
    shutil.copytree(onnx_export, target)
    (target / CONFIG_FILE).write_text(json.dumps(model_config(folder)))
    write_model_manifest(target)
    return target


def test_an_index_embeds_with_its_folder_and_refuses_the_folder_changed(
        cli, onnx_export, sample_tree, tmp_path):
    """Built with the stock model, then rebuilt with a cls folder: every stored vector is the
    folder's (none kept from the stock model's cache), the index records the folder's hash,
    and once the folder's pooling changes a query refuses in one line."""
    import sqlite3
    from codebase_rag.embed import OnnxEmbedder
    folder = variant(tmp_path, "cls", {"1_Pooling/config.json": pooled_by("cls")})
    cache = cli.fresh_cache(tmp_path / "cache")
    export = seed_export(onnx_export, folder, cache)
    stock_path, stock_id = resolve_model()
    shutil.copytree(onnx_export, export_dir(stock_path, stock_id, cache))
    db = tmp_path / "db"
    cli.index(sample_tree, db)
    cli.index(sample_tree, db, "--rebuild", "--model", folder)
    from codebase_rag.identity import Identity
    from codebase_rag.indexer import build_file
    from codebase_rag.text import cache_key
    with sqlite3.connect(db / "index.sqlite") as con:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        vectors = dict(con.execute("SELECT key, vec FROM vectors").fetchall())
    assert meta["model"] == resolve_model(str(folder))[1]
    precision = Identity.from_meta(meta).precision  # this machine's default precision
    exported = OnnxEmbedder(export, file=onnx_file(precision))
    rel = next(p for p in sorted(sample_tree.rglob("*.cs"))).relative_to(sample_tree).as_posix()
    texts = [w[3] for w in build_file(rel, (sample_tree / rel).read_text(),
                                      exported.count_tokens)[1]]
    stored = np.stack([np.frombuffer(vectors[cache_key(t, precision)], dtype=np.float32)
                       for t in texts])
    assert close(stored, exported(texts))
    assert not close(stored[:1], OnnxEmbedder(onnx_export, file=onnx_file(precision))(texts[:1]))
    assert cli.run("query.py", "--db", db, "energy").returncode == 0
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_max_tokens": True}))
    proc = cli.run("query.py", "--db", db, "energy", check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "other weights or settings than when the index was built" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_windows_are_cut_to_the_folders_maximum_length(cli, onnx_export, sample_tree, tmp_path):
    """A folder that reads 64 word pieces gets windows of at most 64, more of them than the
    stock model's 256, so that no window's end is cut off unread."""
    import sqlite3
    from codebase_rag.embed import OnnxEmbedder
    from codebase_rag.indexer import build_file
    folder = variant(tmp_path, "short", {
        "sentence_bert_config.json": lambda c: c.update(max_seq_length=64)})
    cache = cli.fresh_cache(tmp_path / "cache")
    export = seed_export(onnx_export, folder, cache)
    shutil.copytree(onnx_export, export_dir(*resolve_model(), cache))
    counts = {}
    for name, model in (("stock", None), ("short", folder)):
        db = tmp_path / f"db-{name}"
        cli.index(sample_tree, db, *(("--model", model) if model else ()))
        with sqlite3.connect(db / "index.sqlite") as con:
            counts[name] = con.execute("SELECT COUNT(*) FROM windows").fetchone()[0]
    tokens = OnnxEmbedder(export).count_tokens
    longest = max(n for p in sample_tree.rglob("*.cs")
                  for n in tokens([w[3] for w in build_file(
                      p.relative_to(sample_tree).as_posix(), p.read_text(), tokens, 64)[1]]))
    assert counts["short"] > counts["stock"] and longest <= 62


def test_the_tuned_model_in_the_repository_is_a_folder_the_tool_reads_as_it_is():
    """models/minilm-code-run1: MiniLM's way of embedding (mean pooling, no prompts, 256
    word pieces), fp16 weights, known by its path and the hash of its weights."""
    from conftest import ROOT
    folder = ROOT / "models" / "minilm-code-run1"
    assert model_config(folder) == DEFAULT_CONFIG
    path, identity = resolve_model(str(folder))
    assert path == str(folder.resolve()) and "#sha256=" in identity
    from safetensors import safe_open
    with safe_open(str(folder / "model.safetensors"), "np") as f:
        assert {str(f.get_tensor(k).dtype) for k in f.keys()} == {"float16"}


def test_an_index_of_the_shipped_model_refuses_the_stock_model_and_the_reverse(
        cli, onnx_export, sample_tree, tmp_path):
    """Vectors of two models never mix: an index built with models/minilm-code-run1 refuses
    a query or an update with the stock model in one line, and a stock index the shipped
    model; each answers with its own model when none is named. (The exports are the
    session's graph under each model's identity: what is tested is who refuses whom.)"""
    from conftest import ROOT
    from codebase_rag.export import HUB_MODEL
    shipped = ROOT / "models" / "minilm-code-run1"
    cache = cli.fresh_cache(tmp_path / "cache")
    seed_export(onnx_export, shipped, cache)
    stock_path, stock_id = resolve_model()
    shutil.copytree(onnx_export, export_dir(stock_path, stock_id, cache))
    tuned_db, stock_db = tmp_path / "tuned", tmp_path / "stock"
    cli.index(sample_tree, tuned_db, "--model", shipped)
    cli.index(sample_tree, stock_db)
    for db, other in ((tuned_db, HUB_MODEL), (stock_db, shipped)):
        assert cli.query(db, "energy")
        for proc in (cli.run("query.py", "--db", db, "--model", other, "energy", check=False),
                     cli.index(sample_tree, db, "--model", other, check=False)):
            assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
            assert "was built with" in proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert "--rebuild" not in proc.stderr       # it would throw the index away
        # the remedy names the index's own model, and asking with it answers
        own = str(shipped) if db == tuned_db else HUB_MODEL
        assert f"--model {own}" in proc.stderr, proc.stderr
        assert cli.query(db, "energy", "--model", own)
