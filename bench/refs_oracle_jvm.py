"""The call-edge oracles of Java (javac's attribution, tests/oracle/java/RefsOracle.java)
and Go (go/types, tests/oracle/go/refs_oracle.go) for bench/refs_oracle.py: each runs its
resolver over a tree and maps every call site's binding to the index's key (a member whose
chunk holds the declaration's line and bears its name; for a construction with no
constructor of its own, or a Go conversion, the type declared on that line)."""
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAVA_EXPORTS = [f"--add-exports=jdk.compiler/com.sun.tools.javac.{p}=ALL-UNNAMED"
                for p in ("tree", "code")]


def read(lines, keys):
    """(sites, {site: key, "external" or "unbound"}) of the oracle's JSON Lines."""
    sites, truth = [], {}
    for line in lines:
        r = json.loads(line)
        site = (r["file"], r["line"], r["col"], r["name"])
        sites.append(site)
        d = r["decl"]
        if not d:
            key = "unbound"
        elif not d["file"]:
            key = "external"
        elif d["kind"] in ("class", "type"):
            key = keys.of_place(d["file"], d["line"]) or "external"
            key = key if key != "external" and key[0] == "type" else "external"
        else:
            key = keys.of_place(d["file"], d["line"], d["name"]) or "external"
        truth[site] = key
    return sites, truth


def java(tree, files, keys):
    if shutil.which("java") is None:
        raise RuntimeError("java is not on PATH: the Java oracle cannot run")
    done = subprocess.run(["java", "-Xmx3g", *JAVA_EXPORTS,
                           str(ROOT / "tests" / "oracle" / "java" / "RefsOracle.java"),
                           "--root", str(tree)], input="\n".join(files), text=True,
                          capture_output=True, check=True)
    return read(done.stdout.splitlines(), keys)


def go(tree, files, keys):
    if shutil.which("go") is None:
        raise RuntimeError("go is not on PATH: the Go oracle cannot run")
    env = dict(os.environ, GOFLAGS="", GO111MODULE="off", GOCACHE=os.environ.get(
        "GOCACHE", str(Path(tempfile.gettempdir()) / "refs-oracle-gocache")))
    done = subprocess.run(["go", "run", str(ROOT / "tests" / "oracle" / "go" / "refs_oracle.go"),
                           "-root", str(tree)], input="\n".join(files), text=True,
                          capture_output=True, check=True, env=env)
    return read(done.stdout.splitlines(), keys)
