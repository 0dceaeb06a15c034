"""References: definitions, callers, callees, references, impact and outlines, answered
from the index as it is when asked. The index holds, beside each file's chunks and in the
same transaction, what each member names (uses/) and what each file imports and declares;
resolve.py resolves each use at query time. So no stored edge can go stale when another
file changes: there are none, only names, and the definitions are the chunks themselves.
Callers list the ambiguous uses apart, and count the unknown ones that bear the name.
"""
import json
import re
from dataclasses import dataclass, field

from .chunkers import REST_MEMBER
from .definitions import DEF_COLUMNS, Def, Index, Type
from .errors import UsageError, printable
from .resolve import CALLS, Resolver
from .uses.scoping import scoping

MAX_IMPACT = 200              # members an impact answer lists at most
MAX_LISTED = 20               # unknown-receiver uses named one by one
MAX_NAME = 1000               # a NAME or FILE asked about, in characters


# ----------------------------------------------------------------------------- questions
@dataclass
class Site:
    """One use at one place, resolved."""
    line: int
    kind: str
    status: str
    candidates: list = field(default_factory=list)   # the other Defs it may denote


@dataclass
class Entry:
    """A member in an answer, with the uses that put it there."""
    member: Def
    sites: list = field(default_factory=list)
    depth: int = 0


@dataclass
class RefAnswer:
    question: str
    targets: list                 # Defs the name denotes
    entries: list                 # Entries
    notes: list = field(default_factory=list)
    unresolved: list = field(default_factory=list)   # (file, line, name) of unknown receivers
    external: list = field(default_factory=list)     # names a member uses that the index lacks


class Questions:
    """The structural questions over one store, answered from one Index."""

    def __init__(self, store):
        self.store = store
        self.ix = Index(store.db)
        self.resolver = Resolver(self.ix)

    # -- what a name denotes
    def targets(self, name):
        """The Defs a NAME denotes: `Member`, `Class.Member` (any tail of the namespace and
        class chain), a type, or `file:line`."""
        name = name.strip()
        file, colon, line = name.rpartition(":")       # file:line
        at_line = colon and file and line.isascii() and line.isdigit() and len(line) < 10
        if at_line and ("/" in file or "." in file and self.store.manifest([file])):
            file, line = file.replace("\\", "/").removeprefix("./"), int(line)
            c = self.store.chunk_at(file, line)
            if c is None or c.member == REST_MEMBER:        # lines no member holds
                raise UsageError(f"no indexed member at {printable(file)}:{line}; give a line "
                                 f"inside a method, function or type of an indexed file")
            row = self.store.db.execute("SELECT rowid FROM chunks WHERE id=?", (c.id,)).fetchone()
            return [self.ix.def_of(row[0])]
        parts = [p for p in re.split(r"\.|::", name) if p] if name not in self.exact(name) \
            else [name]
        if not parts:
            raise UsageError("give a name: Member, Class.Member or file:line")
        last, prefix = parts[-1], ".".join(parts[:-1])
        defs = [d for d in self.ix.defs_named(last) if matches(d, prefix)]
        types = [self.ix.type_def(t) for t in self.ix.types_named(last) if matches_type(t, prefix)]
        return types + [d for d in defs if d not in types]

    def exact(self, name):
        return {name} if self.ix.defs_named(name) else set()

    def suggest(self, name):
        last = re.split(r"\.|::", name.strip())[-1]
        rows = self.store.db.execute(
            "SELECT DISTINCT member FROM chunks WHERE member LIKE ? AND member != ? LIMIT 5",
            (f"%{last[:40]}%", REST_MEMBER)).fetchall()
        near = [r[0] for r in rows if r[0] != last]
        return f" (did you mean: {', '.join(near)}?)" if near else ""

    def require(self, name):
        found = self.targets(name)
        if not found:
            raise UsageError(f"no member or type named {printable(name)!r} in the index"
                             f"{self.suggest(name)}")
        return found

    # -- the questions
    def definition(self, name):
        targets = self.require(name)
        return RefAnswer(name, targets, [Entry(d) for d in targets])

    def outline(self, file):
        file = file.replace("\\", "/").removeprefix("./")
        if not self.store.manifest([file]):
            raise UsageError(f"{printable(file)} is not a file of the index (give its path "
                             f"relative to the repository root)")
        defs = [Def(*r) for r in self.store.db.execute(     # members, not the lines between
            f"SELECT {DEF_COLUMNS} FROM chunks WHERE file=? AND member != ? ORDER BY start_line",
            (file, REST_MEMBER))]
        lang = self.ix.language_of(file)
        types = [Type(name, ".".join(p for p in (scope, name) if p), target, (file,), lang,
                      line, end).as_def()
                 for kind, scope, name, target, line, end in self.ix.decls(file) if kind == "type"]
        have = {(d.cls, d.member) for d in defs}
        types = [t for t in types if (t.cls, t.member) not in have]
        entries = sorted(types + defs, key=lambda d: (d.start_line, -d.end_line))
        return RefAnswer(file, [], [Entry(d) for d in entries])

    def callers(self, name, kinds=CALLS):
        targets = self.require(name)
        return self.users(name, targets, kinds)

    def references(self, name):
        return self.callers(name, kinds=("call", "new", "type", "ref"))

    def users(self, question, targets, kinds):
        """Entries of the members whose uses (of these kinds) resolve to one of targets."""
        wanted = set(targets)
        names = set()
        for t in targets:
            names.add(t.member)
            s = scoping(t.language)
            if t.kind == "constructor" or t.member == s.constructor:
                names.add(t.cls.rpartition(".")[2])
        names.discard("")
        entries, unknown = {}, []
        rows = self.store.db.execute(
            f"SELECT chunk, file, lines, name, kind, qualifier FROM uses WHERE name IN "
            f"({','.join('?' * len(names))}) AND kind IN ({','.join('?' * len(kinds))})",
            (*names, *kinds)).fetchall() if names else []
        self.ix.load(r[0] for r in rows)
        for chunk, file, lines, used, kind, qualifier in rows:
            lines = [int(x) for x in lines.split(",")]
            ctx = self.ix.context(chunk, file) if chunk is not None else \
                self.ix.context_at(file, lines[0])
            res = self.resolver.resolve(used, kind, qualifier, ctx)
            hit = [d for d in res.targets if d in wanted]
            if not hit:
                if res.status == "unknown" and used in {t.member for t in targets}:
                    unknown += [(ctx.file, line, used) for line in lines]
                continue
            caller = self.ix.def_of(chunk) if chunk is not None else \
                Def(None, file, ctx.language, ctx.namespace, ctx.chain, "", "outside members",
                    lines[0], lines[0], "")
            entry = entries.setdefault((caller.file, caller.start_line, caller.name),
                                       Entry(caller))
            entry.sites += [Site(line, kind, res.status,
                                 [d for d in res.targets if d not in wanted]) for line in lines]
        found = sorted(entries.values(), key=lambda e: (e.member.file, e.member.start_line))
        for e in found:
            e.sites = sorted({(s.line, s.kind): s for s in e.sites}.values(),
                             key=lambda s: s.line)
        return RefAnswer(question, targets, found, unresolved=sorted(unknown))

    def callees(self, name):
        targets = [t for t in self.require(name) if not t.is_type]
        if not targets:
            raise UsageError(f"{printable(name)} is a type: ask for the callees of one of its "
                             f"members (--outline shows them)")
        entries, external = {}, set()
        for t in targets:
            ctx = self.ix.member_context(t)
            for lines, used, kind, qualifier in self.store.db.execute(
                    "SELECT lines, name, kind, qualifier FROM uses WHERE chunk=? AND kind IN "
                    "('call', 'new')", (t.rowid,)):
                res = self.resolver.resolve(used, kind, qualifier, ctx)
                if res.status in ("resolved", "ambiguous"):
                    for d in res.targets:
                        entry = entries.setdefault(d, Entry(d))
                        entry.sites += [Site(int(line), kind, res.status,
                                             [o for o in res.targets if o != d])
                                        for line in lines.split(",")]
                else:
                    external.add(used if res.status == "external" else f"{used} (receiver "
                                 f"of unknown type)")
        for e in entries.values():
            e.sites.sort(key=lambda s: s.line)
        found = sorted(entries.values(), key=lambda e: (e.sites[0].line, e.member.name))
        return RefAnswer(name, targets, found, external=sorted(external))

    def impact(self, name, depth):
        """Callers, their callers, ... up to depth levels, each member once, at its
        nearest level."""
        targets = self.require(name)
        seen = set(targets)
        frontier, found, notes = targets, [], []
        for level in range(1, depth + 1):
            answer = self.users(name, frontier, CALLS)
            nxt = []
            for e in answer.entries:
                if e.member in seen:
                    continue
                seen.add(e.member)
                e.depth = level
                found.append(e)
                if not e.member.is_type and e.member.rowid is not None:
                    nxt.append(e.member)
            if len(found) >= MAX_IMPACT:
                notes.append(f"stopped at {MAX_IMPACT} members (level {level})")
                break
            if not nxt:
                break
            frontier = nxt
        return RefAnswer(name, targets, found[:MAX_IMPACT], notes)


def matches(d, prefix):
    """Whether a Def's namespace, module or class chain ends with prefix."""
    if not prefix:
        return True
    for scope in (d.cls, ".".join(p for p in (d.namespace, d.cls) if p),
                  ".".join(p for p in (module_of(d.file), d.cls) if p)):
        if scope == prefix or scope.endswith("." + prefix):
            return True
    return False


def matches_type(t, prefix):
    outer = t.chain.rpartition(".")[0]
    return matches(Def(None, t.files[0], t.language, t.namespace, outer, t.name, "type", 0, 0,
                       ""), prefix)


def module_of(file):
    """A file's path as a dotted module name: pkg/mod.py -> pkg.mod."""
    stem = file.rsplit(".", 1)[0]
    stem = stem.removesuffix("/__init__").removesuffix("/index")
    return stem.replace("/", ".")


_last = (None, None, None)    # (store, its version, Questions): a long-lived reader's lookups
                              # hold until the index changes


def ask(store, mode, name, depth=2):
    """The RefAnswer of one question (mode: definition, references, callers, callees,
    impact, outline)."""
    global _last
    if not name or not name.strip():
        raise UsageError(f"--{mode} needs a {'file' if mode == 'outline' else 'name'}")
    if len(name) > MAX_NAME:
        raise UsageError(f"the name is {len(name):,} characters long; the limit is {MAX_NAME}")
    version = store.version()
    if _last[0] is not store or _last[1] != version:
        _last = (store, version, Questions(store))     # what it read still holds
    q = _last[2]
    if mode == "impact":
        return q.impact(name, depth)
    return getattr(q, mode)(name)


# ----------------------------------------------------------------------------- printing
def text_of(store, defs):
    """{rowid: its chunk's text} for the answer's members (each use's line is shown)."""
    ids = [d.rowid for d in defs if d.rowid is not None]
    out = {}
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        out.update(store.db.execute(f"SELECT rowid, text FROM chunks WHERE rowid IN "
                                    f"({','.join('?' * len(part))})", part).fetchall())
    return out


def line_of(texts, d, line):
    text = texts.get(d.rowid)
    if text is None:
        return None
    lines = text.split("\n")
    at = line - d.start_line
    return lines[at].strip() if 0 <= at < len(lines) else None


def location(d):
    return f"{printable(d.file)}:{d.start_line}-{d.end_line}"


def render_text(store, mode, answer, out):
    """An answer as search_code's format: `#n | file:start-end | Class.Member | kind`, then
    the signature, then each use's line."""
    def say(*lines):
        for line in lines:
            print(line, file=out)
    for note in answer.notes:
        say(note)
    if mode not in ("outline", "definition") and answer.targets:
        shown = ", ".join(f"{printable(t.name)} ({location(t)})" for t in answer.targets[:5])
        more = f" and {len(answer.targets) - 5} more" if len(answer.targets) > 5 else ""
        say(f"{mode} of {shown}{more}:")
    if not answer.entries:
        say("none found in the index")
    texts = text_of(store, [e.member for e in answer.entries])
    for n, e in enumerate(answer.entries, 1):
        d = e.member
        what = d.kind + (f", level {e.depth}" if e.depth else "")
        say(f"#{n} | {location(d)} | {printable(d.name)} | {what}")
        if d.signature and mode in ("definition", "outline", "callees"):
            say(f"    {printable(d.signature)}")
        for s in e.sites:
            text = line_of(texts, d, s.line) if mode != "callees" else None
            status = "" if s.status == "resolved" else \
                f"  [ambiguous: also {', '.join(printable(o.name) for o in s.candidates[:4])}]"
            say(f"  {s.line}  {printable(text) if text is not None else s.kind}{status}")
    if answer.unresolved:
        listed = ", ".join(f"{printable(f)}:{line}" for f, line, _ in answer.unresolved[:MAX_LISTED])
        more = f" and {len(answer.unresolved) - MAX_LISTED} more" \
            if len(answer.unresolved) > MAX_LISTED else ""
        say(f"not counted: {len(answer.unresolved)} uses of the name on a receiver whose "
            f"type is unknown: {listed}{more}")
    if answer.external:
        say(f"calls outside the index: {', '.join(map(printable, answer.external[:40]))}")


def as_json(store, mode, answer):
    texts = text_of(store, [e.member for e in answer.entries])
    results = []
    for e in answer.entries:
        d = e.member
        item = {"file": d.file, "start_line": d.start_line, "end_line": d.end_line,
                "language": d.language, "namespace": d.namespace, "class": d.cls,
                "member": d.member, "kind": d.kind, "signature": d.signature}
        if mode not in ("definition", "outline"):
            item["uses"] = [{"line": s.line, "kind": s.kind, "status": s.status,
                             **({"text": line_of(texts, d, s.line)} if mode != "callees" else {}),
                             **({"candidates": [c.name for c in s.candidates]}
                                if s.candidates else {})} for s in e.sites]
        if e.depth:
            item["level"] = e.depth
        results.append(item)
    return json.dumps(results)
