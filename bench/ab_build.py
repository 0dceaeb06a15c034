"""Medians of bench/ab_build.sh's lines (stdin): time and peak RSS of A and B, and A / B."""
import statistics
import sys

rows = [line.split() for line in sys.stdin if line.startswith(("build ", "query "))]
for kind in ("build", "query"):
    got = {}
    for name in ("a", "b"):
        runs = [r for r in rows if r[0] == kind and r[2] == name and (kind, r[1]) != ("build", "0")]
        if runs:
            got[name] = (statistics.median(float(r[3]) for r in runs),
                         statistics.median(int(r[4]) for r in runs) / 1024, len(runs))
    if len(got) == 2:
        (ta, ma, n), (tb, mb, _) = got["a"], got["b"]
        print(f"{kind}: A {ta:.3f} s, {ma:.0f} MB; B {tb:.3f} s, {mb:.0f} MB; A/B time "
              f"{ta / tb:.3f}, memory {ma / mb:.3f} ({n} runs each)")
