#!/bin/bash
# A full first build by this checkout against the original scripts' pipeline
# (bench/naive_index.py), on fresh copies of a tree, in turn. Ours runs twice per round: with
# the machine's model export already made, and with a fresh CODEBASE_RAG_CACHE (the export
# made during the build, as on a machine's first use). One line per build:
#   TREE WHAT SECONDS PEAK_RSS_KB [MEMBERS_COVERED_AFTER WINDOWS CHUNKS] | its last line
#
#   bash bench/against_naive.sh TREE [ROUNDS]
#
# WHATS="ours@fp32 ours@int8-reduced naive" picks the builds and, after @, the precision of
# ours (default: auto).
set -u
TREE=$1 ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=$ROOT/.venv/bin/python
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
unset PYTHONDONTWRITEBYTECODE                 # as on a user's machine: .pyc files are kept
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
one() {
  rm -rf "$W/t" "$W/naive-db"; cp -r "$TREE" "$W/t"; rm -rf "$W/t/.git" "$W/t/.codebase-rag"
  local precision=auto
  [[ $1 == *@* ]] && precision=${1#*@}
  export CODEBASE_RAG_PRECISION=$precision
  case ${1%@*} in
    ours) /usr/bin/time -o "$W/tm" -f "%e %M" "$PY" "$ROOT/index.py" --source "$W/t" -q > "$W/out" 2>&1 ;;
    ours-fresh-cache) rm -rf "$W/cache"; CODEBASE_RAG_CACHE=$W/cache /usr/bin/time -o "$W/tm" -f "%e %M" \
        "$PY" "$ROOT/index.py" --source "$W/t" -q > "$W/out" 2>&1 ;;
    naive) /usr/bin/time -o "$W/tm" -f "%e %M" "$PY" "$ROOT/bench/naive_index.py" --source "$W/t" \
        --db "$W/naive-db" > "$W/out" 2>&1 ;;
  esac
  local built=""
  [ -f "$W/t/.codebase-rag/index.sqlite" ] && built=$("$PY" -c "
import sqlite3; db = sqlite3.connect('$W/t/.codebase-rag/index.sqlite')
meta = dict(db.execute('SELECT key, value FROM meta'))
print(meta.get('members_covered_after', ''), *(db.execute(f'SELECT COUNT(*) FROM {t}').fetchone()[0] for t in ('windows', 'chunks')))")
  echo "$(basename "$TREE") $1 $(cat "$W/tm") $built | $(tail -1 "$W/out")"
}
for round in $(seq 1 "$ROUNDS"); do
  for what in ${WHATS:-ours naive ours-fresh-cache}; do one "$what"; done
done
