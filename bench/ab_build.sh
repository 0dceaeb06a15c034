#!/bin/bash
# Two checkouts in turn on one machine, in one run: a tree's full first build (a fresh copy
# each time; the machine's model export already made) and then cold query.py on the built
# index. Prints one line per run: "build|query ROUND NAME SECONDS PEAK_RSS_KB"; round 0 of
# the builds is a warm-up. The medians: bench/ab_build.sh ... | python bench/ab_build.py
#
#   bash bench/ab_build.sh CODE_A CODE_B TREE [BUILDS [QUERIES]]
#
# CODE_A, CODE_B: checkouts (git archive of each commit); TREE: a source tree (BossRoom).
set -u
A=$1 B=$2 TREE=$3 BUILDS=${4:-4} QUERIES=${5:-30}
PY=$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
cp -r "$A" "$W/a"; cp -r "$B" "$W/b"
$PY -m compileall -q "$W/a" "$W/b" >/dev/null    # as an install has them, whatever PYTHONDONTWRITEBYTECODE says
Q="how does the client connect to the relay server"
for run in $(seq 0 $((BUILDS - 1))); do
  for name in a b; do
    [ $((run % 2)) = 1 ] && name=$([ $name = a ] && echo b || echo a)
    rm -rf "$W/tree-$name"; cp -r "$TREE" "$W/tree-$name"; rm -rf "$W/tree-$name/.git" "$W/tree-$name/.codebase-rag"
    /usr/bin/time -o "$W/t" -f "%e %M" $PY "$W/$name/index.py" --source "$W/tree-$name" -q >/dev/null 2>"$W/err" \
      || { echo "FAIL build $name: $(tail -1 "$W/err")"; exit 1; }
    echo "build $run $name $(cat "$W/t")"
  done
done
for run in $(seq 0 $((QUERIES - 1))); do
  for name in a b; do
    [ $((run % 2)) = 1 ] && name=$([ $name = a ] && echo b || echo a)
    /usr/bin/time -o "$W/t" -f "%e %M" $PY "$W/$name/query.py" --db "$W/tree-$name/.codebase-rag" -k 5 "$Q" >/dev/null 2>"$W/err" \
      || { echo "FAIL query $name: $(tail -1 "$W/err")"; exit 1; }
    echo "query $run $name $(cat "$W/t")"
  done
done
