#!/bin/bash
# The dev repositories and corpora of bench/dev_evals.py, made from fetched snapshots.
#
#   bash bench/devsets/prepare.sh [MIRRORS]
#
# MIRRORS (default /work/.mirror) holds the bare git dirs that the search tool's `fetch`
# brings (MIRRORS/OWNER+NAME/repo): fetch github:OWNER/NAME for every row below first.
# Makes, for each row whose commit the snapshot has, the original tree at that commit in
# REPOS/NAME (with .commit), then the corpora, each only when it is not there yet (a
# tree or corpus made by someone else is reused, never overwritten):
#   DEVSETS/LANG-NAME/          bench/make_devset.py's doc-summary set (Go, Java, Rust, C, C++),
#                               bench/make_js_devset.py's (JavaScript) where the checkout has it
#   REPOS/CORPORA/networkx-py-dev   bench/make_py_devset.py's Python set
#   REPOS/CORPORA/ppy__osu      the C# kit's stripped corpus (make_corpus.py)
#   REPOS/CORPORA/typeorm-stripped, typeorm-nl   the TS kit's corpora (make_corpus_ts.py)
# Environment: REPOS (/work/repos), DEVSETS (/work/devsets), KIT (/work/shared/eval),
# PYTHON (this checkout's .venv/bin/python), ONLY (names to make, e.g. "caddy redis").
# Everything it writes derives from fetched code: keep it outside this repository.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
MIRRORS=${1:-/work/.mirror}
REPOS=${REPOS:-/work/repos} DEVSETS=${DEVSETS:-/work/devsets} KIT=${KIT:-/work/shared/eval}
PYTHON=${PYTHON:-$HERE/.venv/bin/python}
export PYTHONPATH=$HERE${PYTHONPATH:+:$PYTHONPATH}   # the bench scripts import this checkout
ONLY=${ONLY:-}

# name  owner/repo  commit  what is made from it (a make_devset.py language and --under,
# or py, cs, ts, js:under)  [the paths of the commit the tree holds; default all]
REPOS_TABLE="
caddy         caddyserver/caddy    0cf03d32f7d99cf160d5375e8a40fbe3d910d515  go
commons-lang  apache/commons-lang  d15939ef46f0bd4144994df8be95cf5a7f91eb52  java
ripgrep       BurntSushi/ripgrep   3fce3b5bb0236da2df6d99672afb8a719642eca7  rust
redis         redis/redis          4f8cdc2a1ea53e42955af758aabffee67cb455dd  c:src
rapidjson     Tencent/rapidjson    24b5e7a8b27f42fa16b96fc70aade9106cf7102f  cpp:include
networkx      networkx/networkx    cfc6b79fc53f583aa15a79b2187ae30bd4f480ed  py
osu           ppy/osu              e9451fe70b91292c482bab203ea87bd727eaa237  cs
typeorm       typeorm/typeorm      281bfba42a5813b106bcf5ba79bc7f7251bd1e73  ts
webpack       webpack/webpack      bc3e930f75e3f6ecbdf193a0dedf6067ea3a286b  js:lib  lib package.json README.md LICENSE
"

say() { echo "prepare: $*" >&2; }

absent() {  # pathspecs leaving out COMMIT's files whose blob the snapshot lacks (a snapshot
            # has no file of 4 MiB or more: osu's test archives); none of them is source
    git --git-dir="$1" ls-tree -r -z "$2" | "$PYTHON" -c '
import subprocess, sys
rows = [r.split("\t", 1) for r in sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
        .split("\0") if r]
blobs = [(meta.split()[2], path) for meta, path in rows if meta.split()[1] == "blob"]
check = subprocess.run(["git", "--git-dir", sys.argv[1], "cat-file", "--batch-check"],
                       input="".join(oid + "\n" for oid, _ in blobs), capture_output=True,
                       text=True, check=True).stdout.split("\n")
for (oid, path), line in zip(blobs, check):
    if line.endswith(" missing"):
        sys.stdout.buffer.write((":(exclude,literal)" + path + "\0")
                                .encode("utf-8", "surrogateescape"))
' "$1"
}

tree() {   # REPOS/NAME at COMMIT (those PATHS of it) from the mirror; 0 when it is there
    local name=$1 repo=$2 commit=$3 git="$MIRRORS/${2/\//+}/repo" dest="$REPOS/$1"
    shift 3
    if [[ -d "$dest" ]]; then
        local have; have=$(cat "$dest/.commit" 2>/dev/null || echo "unknown")
        [[ "$have" == "$commit" ]] || say "$dest is at $have, not $commit: reused as it is"
        return 0
    fi
    if ! git --git-dir="$git" cat-file -e "$commit^{commit}" 2>/dev/null; then
        say "$repo: no snapshot with $commit in $git (fetch github:$repo; the snapshot's" \
            "HEAD is $(git --git-dir="$git" rev-parse HEAD 2>/dev/null || echo none)): skipped"
        return 1
    fi
    mkdir -p "$REPOS"
    rm -rf "$dest.part" && mkdir "$dest.part"
    local skip; skip=$(absent "$git" "$commit" | tr '\0' '\n' | wc -l)
    [[ $skip == 0 ]] || say "$repo: $skip files absent from the snapshot (4 MiB or more): left out"
    # git archive still names each left-out blob as an invalid object: not an error here
    absent "$git" "$commit" | xargs -0 git --git-dir="$git" archive "$commit" -- "${@:-.}" \
        2> >(grep -v "^error: invalid object" >&2) | tar -x -C "$dest.part" || return 1
    echo "$commit" > "$dest.part/.commit"
    mv "$dest.part" "$dest"
    say "$dest at $commit"
}

made() { [[ -e "$1" ]] && say "$1 is there: reused"; }

corpus() {  # the sets and corpora of one tree
    local name=$1 repo=$2 commit=$3 what=$4 src="$REPOS/$1"
    local lang=${what%%:*} under=""
    [[ $what == *:* ]] && under=${what#*:}
    case $lang in
    go|java|rust|c|cpp)
        local out="$DEVSETS/$lang-$name"
        made "$out" && return
        rm -rf "$out.part"
        (cd "$HERE" && "$PYTHON" bench/make_devset.py --lang "$lang" "$src" "$out.part" \
            --repo "$repo" ${under:+--under "$under"}) || return 1
        mv "$out.part" "$out" ;;
    py)
        local out="$REPOS/CORPORA/networkx-py-dev"
        made "$out" && return
        rm -rf "$out.part"
        (cd "$HERE" && "$PYTHON" bench/make_py_devset.py "$src" "$out.part" --repo "$repo" \
            --commit "$commit" --verify "$KIT") || return 1
        mv "$out.part" "$out" ;;
    cs)
        local out="$REPOS/CORPORA/ppy__osu"
        made "$out" && return
        rm -rf "$out.part"
        "$PYTHON" "$KIT/make_corpus.py" "$src" "$out.part" --repo "$repo" || return 1
        mv "$out.part" "$out" ;;
    js)
        local out="$DEVSETS/javascript-$name"
        made "$out" && return
        [[ -f "$HERE/bench/make_js_devset.py" ]] || {
            say "$out: skipped, this checkout has no bench/make_js_devset.py"; return 0; }
        export TS_ORACLE_TYPESCRIPT=${TS_ORACLE_TYPESCRIPT:-$HERE/.cache/node/node_modules/typescript}
        rm -rf "$out.part"
        (cd "$HERE" && "$PYTHON" bench/make_js_devset.py "$src" "$out.part" --repo "$repo" \
            ${under:+--under "$under"} --verify "$KIT") || return 1
        mv "$out.part" "$out" ;;
    ts)
        # the kit's oracle needs TypeScript 5: this checkout's .cache/node has it
        export TS_ORACLE_TYPESCRIPT=${TS_ORACLE_TYPESCRIPT:-$HERE/.cache/node/node_modules/typescript}
        [[ -d $TS_ORACLE_TYPESCRIPT ]] || { say "no TypeScript at $TS_ORACLE_TYPESCRIPT: set" \
            "TS_ORACLE_TYPESCRIPT (npm install typescript@5 gives one)"; return 1; }
        for kind in stripped nl; do
            local out="$REPOS/CORPORA/typeorm-$kind"
            made "$out" && continue
            rm -rf "$out.part"
            "$PYTHON" "$KIT/ts/make_corpus_ts.py" "$src" "$out.part" --repo "$repo" \
                $([[ $kind == nl ]] && echo --keep-docs) || return 1
            mv "$out.part" "$out"
        done ;;
    esac
}

status=0
while read -r name repo commit what paths; do
    [[ -n "$name" ]] || continue
    [[ -z "$ONLY" || " $ONLY " == *" $name "* ]] || continue
    # shellcheck disable=SC2086  # the paths are words
    if tree "$name" "$repo" "$commit" $paths; then
        corpus "$name" "$repo" "$commit" "$what" || { say "$name: a corpus failed"; status=1; }
    else
        status=1
    fi
done <<< "$REPOS_TABLE"
exit $status
