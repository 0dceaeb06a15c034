"""Print: results as numbered source for a person or an agent, or as JSON."""
import json
import sys

from .config import CONFIDENT
from .errors import printable


def qualified_name(c):
    return printable(".".join(p for p in (c.cls, c.member) if p) or c.file)


def print_results(hits, show_lines, out=sys.stdout):
    if not hits:
        print("no results", file=out)
        return
    # every hit counts: one with no vector (just written, or a <rest> chunk: found by its
    # keywords) may well be the answer, so the line is only said when each hit's distance
    # is known
    known = [h.distance for h in hits if h.distance is not None]
    if len(known) == len(hits) and not any(h.confident for h in hits):
        print(f"no confident match: the nearest in meaning is at cosine distance "
              f"{min(known):.4f}, above {CONFIDENT}; best guesses:", file=out)
    for i, h in enumerate(hits, 1):
        c = h.chunk
        # ranked by meaning and keywords together: this is the meaning part alone
        dist = f"{h.distance:.4f}" if h.distance is not None else \
            "- (no vector yet)" if h.pending else "- (keywords only)"
        print(f"#{i} | {printable(c.file)}:{c.start_line}-{c.end_line} | {qualified_name(c)} | "
              f"cosine dist: {dist}", file=out)
        lines = c.text.split("\n")
        shown = len(lines) if show_lines < 0 else show_lines
        width = len(str(c.start_line + min(len(lines), shown)))
        for n, line in enumerate(lines[:shown], c.start_line):
            print(f"{n:>{width}}  {line}", file=out)
        if 0 < shown < len(lines):
            print(f"{'':>{width}}  ... ({len(lines) - shown} more lines)", file=out)
        if shown:
            print(file=out)


def as_dict(hit, show_lines, **extra):
    """A hit as JSON results give it; its text cut like print's (show_lines < 0: whole)."""
    c = hit.chunk
    text = c.text if show_lines < 0 else "\n".join(c.text.split("\n")[:show_lines])
    return {"file": c.file, "start_line": c.start_line, "end_line": c.end_line,
            "language": c.language, "namespace": c.namespace, "class": c.cls,
            "member": c.member, "method": c.member, "kind": c.kind, "signature": c.signature,
            "distance": hit.distance, "confident": hit.confident, "stale": hit.stale,
            "text": text, **extra}


def to_json(hits, show_lines, **extra):
    """One JSON array of the hits."""
    return json.dumps([as_dict(h, show_lines, **extra) for h in hits])
