"""A tree on a real case-insensitive file system (exFAT, as macOS's and Windows' defaults
match names): a file spelled in another case by a hook is one manifest key, spelled as on
disk, and .gitignore rules match as git matches them there (core.ignorecase). The volume is
an exFAT image on a loop device, mounted through FUSE (the kernel here may have no vfat);
it needs root and those tools, and is skipped with the reason otherwise."""
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import SAMPLE

TOOLS = ("losetup", "mkfs.exfat", "mount.exfat-fuse", "umount")


@pytest.fixture
def volume(tmp_path):
    missing = [t for t in TOOLS if not shutil.which(t)]
    if os.name != "posix" or os.geteuid() != 0 or missing or not os.path.exists("/dev/fuse"):
        pytest.skip(f"a case-insensitive volume needs root, /dev/fuse and {', '.join(TOOLS)} "
                    f"(missing: {', '.join(missing) or 'root or /dev/fuse'}); apt-get "
                    f"install exfatprogs exfat-fuse")
    image, mount = tmp_path / "exfat.img", tmp_path / "mnt"
    mount.mkdir()
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    subprocess.run(["mkfs.exfat", str(image)], check=True, capture_output=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                          text=True)
    if loop.returncode != 0:
        pytest.skip(f"no loop device here: {loop.stderr.strip()}")
    device = loop.stdout.strip()
    try:
        mounted = subprocess.run(["mount.exfat-fuse", device, str(mount)], capture_output=True,
                                 text=True)
        if mounted.returncode != 0:
            pytest.skip(f"exFAT cannot be mounted here: {mounted.stderr.strip()}")
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)


def manifest(db):
    con = sqlite3.connect(db / "index.sqlite")
    paths = sorted(p for (p,) in con.execute("SELECT path FROM files"))
    con.close()
    return paths


def test_one_key_per_file_and_ignore_rules_as_git_matches_them(cli, volume, tmp_path):
    tree, db = volume / "src", tmp_path / "db"
    shutil.copytree(SAMPLE, tree, ignore=shutil.ignore_patterns(".codebase-rag"))
    assert (tree / "ENERGY" / "energysystem.CS").is_file()          # the volume's way
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[core]\n\tignorecase = true\n")
    (tree / ".gitignore").write_text("generated/\n")
    (tree / "Generated").mkdir()
    (tree / "Generated" / "Made.cs").write_text(
        "namespace Gen;\npublic class Made\n{\n    public int Twice(int x) { return 2 * x; }\n}\n")
    cli.index(tree, db)
    before = manifest(db)
    assert "Energy/EnergySystem.cs" in before
    assert not [p for p in before if p.lower().startswith("generated/")]     # as git: ignored
    energy = tree / "Energy" / "EnergySystem.cs"
    energy.write_text(energy.read_text().replace("RefillTimers", "RechargeTimers"))
    cli.hook(db, tree / "energy" / "ENERGYSYSTEM.cs")              # the agent's spelling
    assert manifest(db) == before                                  # the same one key
    hits = cli.query(db, "how does the energy system recharge timers?", "-k", "3")
    assert hits[0]["file"] == "Energy/EnergySystem.cs" and hits[0]["member"] == "RechargeTimers"
    cli.index(tree, db)
    assert manifest(db) == before
