"""Identity: what an index is of and how its vectors were made (the model, their precision,
the tree, whether the index moves with it, the globs left out). It is read once, from
index.sqlite's meta, when a Store opens, and written by one writer, build_runs.open_for_write
(build_runs.writer_for only records where a tree that moved with its index is now). An upgrade to
a new format keeps it (store.salvage). Pure: a value made from meta, and meta made from it."""
import json
from dataclasses import dataclass
from pathlib import Path

KEYS = ("model", "precision", "source", "in_tree", "excludes")    # its rows of meta
PRECISION_BEFORE_RECORDED = "fp32"    # an index that records none holds fp32 vectors: only
                                      # fp32 existed before the precision was recorded


@dataclass(frozen=True)
class Identity:
    model: str = None                 # None: nothing built yet
    recorded_precision: str = None    # None: none chosen yet (a new index picks the setting)
    source: str = ""                  # the tree, as it was indexed
    in_tree: bool = False             # the index is SOURCE/.codebase-rag: it moves with it
    excludes: tuple = ()              # the --exclude globs, remembered for later runs

    @classmethod
    def from_meta(cls, meta):
        """The identity of an index whose meta is {key: value}."""
        return cls(meta.get("model"), meta.get("precision"), meta.get("source") or "",
                   meta.get("in_tree") == "1", tuple(json.loads(meta.get("excludes") or "[]")))

    def to_meta(self):
        """{key: value} for meta (a key without a value is left out)."""
        meta = dict(model=self.model, precision=self.recorded_precision, source=self.source,
                    in_tree="1" if self.in_tree else "0", excludes=json.dumps(list(self.excludes)))
        return {k: v for k, v in meta.items() if v is not None}

    @property
    def precision(self):
        """The precision of the index's vectors (and of its cache keys)."""
        return self.recorded_precision or PRECISION_BEFORE_RECORDED

    def root(self, folder):
        """The source tree of the index at folder: where it was indexed, or wherever it moved
        with its index."""
        return Path(folder).absolute().parent if self.in_tree else Path(self.source)
