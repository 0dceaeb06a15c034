"""Migrations: what an index of this schema made by an older version lacks, added in place, in
the order they are listed here, by the first process that may write the index (a change
that needs the tables made anew bumps store.SCHEMA_VERSION instead). Each one looks for
itself first, so the index records nothing of them: applied, or not needed, it writes
nothing and takes no lock. A new one goes at the end, with @migration."""

MIGRATIONS = []


def migration(fn):
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_vectors_team(db):
    """vectors.team: which cached vectors a team cache supplied (--check samples them)."""
    if not db.execute("SELECT 1 FROM pragma_table_info('vectors') WHERE name='team'").fetchone():
        db.execute("ALTER TABLE vectors ADD COLUMN team INTEGER")


@migration
def m002_windows_key(db):
    """An index on windows.key: the vectors of a chunk's windows found by their text."""
    db.execute("CREATE INDEX IF NOT EXISTS windows_key ON windows(key)")


@migration
def m003_files_parse_errors(db):
    """files.parse_errors: the files a parser read with errors, which --status names."""
    if not db.execute("SELECT 1 FROM pragma_table_info('files') WHERE name='parse_errors'"
                      ).fetchone():
        db.execute("ALTER TABLE files ADD COLUMN parse_errors INTEGER")


def migrate(db):
    """Apply every migration, in order, to the open connection db."""
    for fn in MIGRATIONS:
        fn(db)
