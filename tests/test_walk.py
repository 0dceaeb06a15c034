"""Which files a build reads: ignore rules, symlinks, special files and odd encodings.
Each test lays out a small tree and lists what the walk yields."""
import os

import pytest

from codebase_rag.walk import Ignore, read_source, walk


def tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def walked(root, excludes=()):
    return sorted(rel for rel, _, _ in walk(root, Ignore(root, excludes)))


def test_build_output_and_tool_folders_are_skipped(tmp_path):
    tree(tmp_path, {f"{d}/X.cs": "class X {}" for d in
                    ("bin", "obj", ".git", "node_modules", "packages", ".codebase-rag", "src")})
    tree(tmp_path, {"src/bin/Y.cs": "", "src/Readme.md": "", "Top.cs": ""})
    assert walked(tmp_path) == ["Top.cs", "src/X.cs"]


def test_nested_gitignore_files_apply_below_them_and_the_deeper_one_wins(tmp_path):
    tree(tmp_path, {
        ".gitignore": "*.Generated.cs\nscratch/\n",
        "A.Generated.cs": "", "A.cs": "", "scratch/S.cs": "",
        "lib/.gitignore": "!Keep.Generated.cs\nOld.cs\n",
        "lib/Keep.Generated.cs": "", "lib/Drop.Generated.cs": "", "lib/Old.cs": "",
        "Old.cs": "",
    })
    assert walked(tmp_path) == ["A.cs", "Old.cs", "lib/Keep.Generated.cs"]


def test_unity_library_and_temp_are_skipped_only_beside_project_settings(tmp_path):
    tree(tmp_path, {"Game/ProjectSettings/p.asset": "", "Game/Library/L.cs": "",
                    "Game/Temp/T.cs": "", "Game/Assets/A.cs": "",
                    "Server/Library/Keep.cs": ""})          # jellyfin has code in */Library/
    assert walked(tmp_path) == ["Game/Assets/A.cs", "Server/Library/Keep.cs"]


def test_exclude_globs_add_to_the_rules(tmp_path):
    tree(tmp_path, {"src/A.cs": "", "src/Migrations/M.cs": "", "tests/T.cs": ""})
    assert walked(tmp_path, ["Migrations/", "tests/"]) == ["src/A.cs"]


def test_a_single_file_is_included_exactly_when_the_walk_would_yield_it(tmp_path):
    tree(tmp_path, {".gitignore": "gen/\n", "gen/G.cs": "", "src/A.cs": "", "src/A.txt": "",
                    "bin/B.cs": ""})
    ignore = Ignore(tmp_path)
    assert [rel for rel in ("gen/G.cs", "src/A.cs", "src/A.txt", "bin/B.cs")
            if ignore.included(rel)] == walked(tmp_path)


def test_symlinks_are_followed_only_inside_the_tree(tmp_path, capsys):
    root = tree(tmp_path / "root", {"Real.cs": "class R {}", "dir/D.cs": "class D {}"})
    outside = tree(tmp_path / "outside", {"Secret.cs": "class S {}"})
    (root / "Alias.cs").symlink_to(root / "Real.cs")
    (root / "dirlink").symlink_to(root / "dir", target_is_directory=True)
    (root / "Leak.cs").symlink_to(outside / "Secret.cs")
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    (root / "Zero.cs").symlink_to("/dev/zero")
    os.mkfifo(root / "Pipe.cs")
    assert walked(root) == ["Alias.cs", "Real.cs", "dir/D.cs", "dirlink/D.cs"]
    err = capsys.readouterr().err
    for name in ("Leak.cs", "leakdir", "Zero.cs", "Pipe.cs"):
        assert sum(name in line for line in err.splitlines()) == 1, err


def test_read_source_never_blocks_and_never_reads_past_the_cap(tmp_path, capsys):
    os.mkfifo(tmp_path / "Pipe.cs")
    assert read_source(tmp_path / "Pipe.cs") is None                 # returns at once
    assert read_source("/dev/zero") is None
    big = tmp_path / "Big.cs"
    big.write_text("x" * 1_000_001)
    assert read_source(big) is None
    assert "cap" in capsys.readouterr().err


@pytest.mark.parametrize("data, text", [
    ("class Café { }".encode("utf-16"), "class Café { }"),
    (b"\xef\xbb\xbfclass A { }\r\n", "class A { }\n"),              # BOM and CRLF
    ("class Café { }".encode("cp1252"), "class Café { }"),          # with a warning
])
def test_read_source_decodes_what_editors_write(tmp_path, data, text):
    path = tmp_path / "F.cs"
    path.write_bytes(data)
    assert read_source(path) == text


def test_binary_content_is_skipped(tmp_path):
    path = tmp_path / "B.cs"
    path.write_bytes(b"\x00\x01binary\x00" * 10)
    assert read_source(path) is None


def test_a_name_that_is_not_utf8_is_skipped_by_name_and_the_rest_is_walked(tmp_path, capsys):
    root = os.fsencode(tmp_path)
    os.mkdir(root + b"/Caf\xe9")                         # a Latin-1 checkout
    for name in (b"/Caf\xe9/Menu.cs", b"/R\xe9sum\xe9.cs", b"/Good.cs", b"/notes-\xe9.txt"):
        with open(root + name, "w") as f:
            f.write("class A { void M() { } }")
    assert walked(tmp_path) == ["Good.cs"]
    err = capsys.readouterr().err
    assert "skipping Caf\\xe9: its name is not valid UTF-8" in err
    assert "skipping R\\xe9sum\\xe9.cs: its name is not valid UTF-8" in err
    assert "notes" not in err                             # not source: nothing to say


def test_a_deep_tree_costs_no_more_per_file_than_a_flat_one(tmp_path, monkeypatch):
    """Each directory's .gitignore chain is handed to its children: no path is split into all
    its ancestors, and no directory's real path is asked of the system (it would be once per
    level, quadratic in the depth: 37 s for a no-op refresh at 1,200 levels)."""
    deep = tmp_path
    for level in range(300):
        deep = deep / "d"
        deep.mkdir()
    (deep / "Deep.cs").write_text("class D { }")
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, **kw: calls.append(p) or real(p, **kw))
    from codebase_rag import walk as walk_module
    checks = []
    chain = walk_module.Ignore.chain
    monkeypatch.setattr(walk_module.Ignore, "chain",
                        lambda self, rel, parent: checks.append(rel) or chain(self, rel, parent))
    assert walked(tmp_path) == ["d/" * 300 + "Deep.cs"]
    assert len(calls) <= 2                                # the root's, not one per level
    assert len(checks) == 301                             # one chain per directory
    assert Ignore(tmp_path).included("d/" * 300 + "Deep.cs")    # as a hook asks it


# ----------------------------------------------------------------- one rule for symlinks
def linked_tree(tmp_path):
    """A tree with every kind of folder link: out of the tree, to the root, to a parent,
    around a cycle, to a sibling; and a file link out."""
    root = tree(tmp_path / "root", {"Real.cs": "class R {}", "a/b/B.cs": "class B {}",
                                    "d1/One.cs": "class One {}", "d2/Two.cs": "class Two {}"})
    tree(tmp_path / "outside", {"Secret.cs": "class S {}"})
    (root / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "parent").symlink_to(tmp_path, target_is_directory=True)
    (root / "a" / "top").symlink_to(root, target_is_directory=True)
    (root / "a" / "b" / "up").symlink_to("..", target_is_directory=True)
    (root / "d1" / "to2").symlink_to("../d2", target_is_directory=True)
    (root / "d2" / "to1").symlink_to("../d1", target_is_directory=True)
    (root / "Leak.cs").symlink_to(tmp_path / "outside" / "Secret.cs")
    return root


def test_a_link_out_of_the_tree_or_to_a_folder_that_holds_it_is_never_entered(tmp_path,
                                                                               capsys):
    root = linked_tree(tmp_path)
    assert walked(root) == ["Real.cs", "a/b/B.cs", "d1/One.cs", "d2/Two.cs",
                            "d2/to1/One.cs"]            # a folder once through links
    err = capsys.readouterr().err
    for link in ("out", "parent", "Leak.cs"):
        assert f"skipping {link}: a symlink to outside the tree" in err, err
    for link in ("a/top", "a/b/up", "d2/to1/to2"):
        assert f"skipping {link}: a symlink to a folder that holds it (a loop)" in err, err


def test_a_walk_from_a_folder_applies_the_rule_to_the_folder_itself(tmp_path, capsys):
    """A search's sweep walks a new folder by itself: a link out of the tree, or back up it,
    must not be entered because the walk started there (before: a link to / was listed
    whole by one search, a link to the tree's parent indexed the tree again)."""
    root = linked_tree(tmp_path)
    ignore = Ignore(root)
    for start in ("out", "parent", "a/top", "a/b/up", "parent/root", "a/top/d1"):
        assert list(walk(root, ignore, start=start)) == [], start
    assert [r for r, _, _ in walk(root, ignore, start="d2")] == ["d2/Two.cs", "d2/to1/One.cs"]
    from codebase_rag.walk import OutOfTime, entered, in_tree, listed
    for start in ("out", "parent", "a/top", "a/b/up", "parent/root", "a/top/d1"):
        assert entered(root, start)[0] is None
    folders, memo = sorted(["", "a", "a/b", "a/b/up", "a/b/up/b", "a/top", "a/top/d1", "d1",
                            "d1/to2", "d1/to2/to1", "out", "out/x"]), {}
    assert [entered(root, f, memo=memo) for f in folders] == [entered(root, f) for f in folders]
    for rel in ("Real.cs", "a/b/B.cs", "d1/to2/Two.cs", "New.cs", "a/b/New.cs"):
        assert listed(root, rel), rel
    for rel in ("Leak.cs", "out/Secret.cs", "parent/root/Real.cs", "a/top/Real.cs",
                "a/b/up/b/B.cs", "../root/Real.cs"):
        assert not listed(root, rel), rel
    # what a hook names: an alias is the file it reaches, a path out of the tree nothing
    assert in_tree(str(root / "a" / "b" / "up" / "b" / "B.cs"), root) == "a/b/B.cs"
    assert in_tree(str(root / "parent" / "root" / "Real.cs"), root) == "Real.cs"
    assert in_tree(str(root / "out" / "Secret.cs"), root) is None
    assert in_tree(str(tmp_path / "outside" / "Secret.cs"), root) is None
    assert in_tree(str(root / "Real.cs"), root) == "Real.cs"
    with pytest.raises(OutOfTime):                # a deadline gone: it stops, and says so
        list(walk(root, ignore, deadline=0))


def test_skip_lines_name_files_as_results_do(tmp_path, capsys):
    """Before: the walk's lines named a file by its path in the tree, read_source's by its
    absolute path, within one run."""
    (tmp_path / "Binary.cs").write_bytes(b"\x00\x01binary\x00" * 10)
    (tmp_path / "Latin.cs").write_bytes("class Caf\xe9 { }".encode("cp1252"))
    assert read_source(tmp_path / "Binary.cs", "Binary.cs") is None
    assert read_source(tmp_path / "Latin.cs", "Latin.cs") == "class Café { }"
    err = capsys.readouterr().err
    assert "skipping Binary.cs: binary content" in err
    assert "Latin.cs: not valid UTF-8, read as Windows-1252" in err
    assert str(tmp_path) not in err
