"""Print: results as numbered source for a person or an agent, or as JSON."""
import json
import sys

from .config import CONFIDENT


def qualified_name(r):
    return ".".join(p for p in (r["class"], r["member"]) if p) or r["file"]


def print_results(results, show_lines, out=sys.stdout):
    if not results:
        print("no results", file=out)
        return
    if not results[0]["confident"] and results[0]["distance"] is not None:
        print(f"no confident match (best distance {results[0]['distance']:.2f} > "
              f"{CONFIDENT}); best guesses:", file=out)
    for i, r in enumerate(results, 1):
        dist = "-" if r["distance"] is None else f"{r['distance']:.4f}"
        print(f"#{i} | {r['file']}:{r['start_line']}-{r['end_line']} | {qualified_name(r)} | "
              f"dist: {dist}", file=out)
        lines = r["text"].split("\n")
        shown = len(lines) if show_lines < 0 else show_lines
        width = len(str(r["start_line"] + min(len(lines), shown)))
        for n, line in enumerate(lines[:shown], r["start_line"]):
            print(f"{n:>{width}}  {line}", file=out)
        if len(lines) > shown:
            print(f"{'':>{width}}  ... ({len(lines) - shown} more lines)", file=out)
        print(file=out)


def to_json(results, show_lines):
    """One JSON array; each result's text cut like print's (show_lines < 0: whole)."""
    if show_lines >= 0:
        for r in results:
            r["text"] = "\n".join(r["text"].split("\n")[:show_lines])
    return json.dumps(results)
