"""Chroma: one vector per window, under the window's id (its chunk's id, a dot, its
ordinal). This is the only module that talks to Chroma."""
from pathlib import Path

from .config import CHROMA, COLLECTION, HNSW_CONFIG
from .errors import DamagedIndex, damaged, warn


class Vectors:
    """The Chroma collection. `import chromadb` alone takes 1.5 s, three times a whole
    query's budget, so this talks to chromadb's own Rust bindings (the engine under its
    PersistentClient) and uses the public client only to create the collection, or when
    the bindings change shape. Any failure inside Chroma becomes one DamagedIndex line."""
    TENANT, DATABASE = "default_tenant", "default_database"

    def __init__(self, folder, create=False, nothing_stored=False):
        self.folder = Path(folder)
        self.public = None
        self.rust = None
        exists = (self.folder / "chroma.sqlite3").is_file()
        if not exists and not create:
            raise DamagedIndex(self.folder.parent, "chroma/chroma.sqlite3 is missing")
        if exists and CHROMA != "public":
            try:
                import chromadb_rust_bindings as rust
                config = rust.SqliteDBConfig(url=str(self.folder / "chroma.sqlite3"),
                                             hash_type=rust.MigrationHash.MD5,
                                             migration_mode=rust.MigrationMode.Apply)
                bindings = self.guard("opening it", lambda: rust.Bindings(
                    allow_reset=False, sqlite_db_config=config, persist_path=str(self.folder),
                    hnsw_cache_size=100))
            except (ImportError, AttributeError, TypeError) as e:     # the bindings changed
                warn(f"chromadb's engine bindings differ from what this tool knows ({e}); "
                     f"using its slower public client")
            else:
                try:
                    found = self.guard("opening the collection", bindings.get_collection,
                                       COLLECTION, self.TENANT, self.DATABASE)
                    self.rust, self.id, self.config = bindings, str(found.id), found.configuration
                except DamagedIndex as e:
                    # a first build killed after chromadb made its database, before the
                    # collection: no vector is lost, and a writer makes the collection below
                    if not (create and nothing_stored and "does not exist" in str(e)):
                        raise
        if self.rust is None:
            self.public = self.guard("opening the collection", self.open_public)
            self.config = self.public.configuration

    def guard(self, doing, call, *args):
        """Chroma's Rust engine reports damage as exceptions, and panics as BaseException."""
        try:
            return call(*args)
        except (KeyboardInterrupt, SystemExit, MemoryError, TypeError, AttributeError):
            raise
        except BaseException as e:
            raise damaged(self.folder.parent, f"chroma, {doing}", e) from None

    def open_public(self):
        import chromadb
        from chromadb.api.shared_system_client import SharedSystemClient
        from chromadb.config import Settings
        SharedSystemClient.clear_system_cache()  # chromadb keeps one per path, even if deleted
        client = chromadb.PersistentClient(
            path=str(self.folder), settings=Settings(anonymized_telemetry=False))
        return client.get_or_create_collection(
            COLLECTION, configuration={"hnsw": HNSW_CONFIG}, embedding_function=None)

    def tune(self):
        """Give an index made before HNSW_CONFIG its settings (writers only)."""
        have = (self.config or {}).get("hnsw") or {}
        wanted = {k: v for k, v in HNSW_CONFIG.items() if k != "space" and have.get(k) != v}
        if have and wanted:
            public = self.public or self.guard("opening the collection", self.open_public)
            self.guard("tuning", public.modify, None, None, {"hnsw": wanted})
            self.config = {"hnsw": {**have, **wanted}}

    def upsert(self, ids, embeddings, metadatas):
        if self.rust is None:
            return self.guard("writing", lambda: self.public.upsert(
                ids=ids, embeddings=embeddings, metadatas=metadatas))
        self.guard("writing", self.rust.upsert, self.id, ids, embeddings, metadatas, None, None,
                   self.TENANT, self.DATABASE)

    def delete(self, ids):
        if self.rust is None:
            return self.guard("deleting", lambda: self.public.delete(ids=ids))
        self.guard("deleting", self.rust.delete, self.id, ids, None, None, None, self.TENANT,
                   self.DATABASE)

    def count(self):
        if self.rust is None:
            return self.guard("counting", self.public.count)
        return self.guard("counting", self.rust.count, self.id, self.TENANT, self.DATABASE)

    def query(self, vector, n):
        """(ids, distances) of the n nearest windows."""
        if self.rust is None:
            found = self.guard("searching", lambda: self.public.query(
                query_embeddings=[vector], n_results=n, include=["distances"]))
        else:
            r = self.guard("searching", self.rust.query, self.id, None, [vector], n, None, None,
                           ["distances"], self.TENANT, self.DATABASE)
            found = {"ids": r.ids, "distances": r.distances}
        return found["ids"][0], found["distances"][0]

    def load(self, dim):
        """Read the HNSW index into memory now, not at the first real search: a reader does
        it while the model loads (10% off a cold query on ppy/osu). A problem shows in the
        real search."""
        try:
            self.query([1.0] + [0.0] * (dim - 1), 1)
        except Exception:             # noqa: BLE001 (damage: reported by the real search)
            pass

    def get(self, ids=None, embeddings=True):
        """(ids, embeddings or None) of the given windows, or of all of them."""
        include = ["embeddings"] if embeddings else []
        if self.rust is None:
            got = self.guard("reading", lambda: self.public.get(ids=ids, include=include))
            return got["ids"], list(got["embeddings"]) if embeddings else None
        r = self.guard("reading", self.rust.get, self.id, ids, None, None, 0, None, include,
                       self.TENANT, self.DATABASE)
        return r.ids, r.embeddings if embeddings else None
