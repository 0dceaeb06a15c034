#!/usr/bin/env node
/*
 * TypeScript/JavaScript chunk oracle, built on the TypeScript compiler API.
 *
 * It lists, per file, every "unit" a code-search user wants as its own chunk,
 * with 1-based inclusive line spans, and it can strip JSDoc blocks for the
 * eval corpora.  The rules are in README.md ("Oracle rules"); in short:
 *
 *   function     function declaration with a body; a const/let/var, an
 *                `export default`, or a module-level assignment (`a.b = ...`)
 *                whose value is an arrow function / function expression, or a
 *                call that wraps one (memo(forwardRef(function X() {})),
 *                styled('div')(() => ...), an IIFE); a function passed to a
 *                call that is a whole module-level statement, directly or through
 *                a call chain (form "callback", named after the callee)
 *   method       class method with a body; class property whose value is a
 *                function (or wraps one); object-literal method; object-literal
 *                property whose value is a function (or wraps one)
 *   constructor  class constructor with a body
 *   getter/setter  get/set accessor with a body (class or object literal)
 *   class        every class declaration/expression (leaf = no unit inside)
 *   interface, type, enum   interface, type alias, enum declarations
 *   namespace    namespace / module / `declare global` with a body (leaf = no
 *                unit inside)
 *
 *   Not units: anything inside a function body (nested functions, inner
 *   classes, object literals built in a body); declarations without a body
 *   (overload signatures, abstract methods, `declare function`, interface
 *   members); class fields and variables whose value is not a function; class
 *   static blocks; functions nested in module-level data expressions (JSX
 *   attributes, arrays, non-function property values) other than
 *   object-literal members.
 *
 * Span fields (1-based lines):
 *   start_line  first line of the unit incl. its attached JSDoc and decorators
 *               (a JSDoc is attached when it is the last JSDoc comment before
 *               the declaration and no blank line separates them)
 *   decl_line   first line of the declaration incl. decorators, excl. comments
 *   sig_line    first line after the decorators (modifiers / keyword / name)
 *   name_line   line of the name (= sig_line when there is no name)
 *   body_line   line where the body starts ({ or the arrow's expression);
 *               null for non-function units
 *   end_line    last line of the declaration (incl. a closing `;`)
 *   overloads_start  for an implementation preceded by overload signatures:
 *               start_line of the first signature (else null)
 *
 * Usage:
 *   node ts_oracle.js [--doc] [--root DIR] FILE...      JSON Lines, one unit a line
 *   node ts_oracle.js --tsv FILE...                     TSV (quick reading)
 *   node ts_oracle.js --strip FILE                      the file with JSDoc stripped
 *   node ts_oracle.js --serve                           JSON request/response loop on
 *                                                       stdin/stdout (used by tsoracle.py)
 *
 * TypeScript is loaded from $TS_ORACLE_TYPESCRIPT, then the normal module
 * path, then .cache/node/node_modules/typescript under the project root (this copy sits in tests/oracle/ts).
 */
'use strict';
const fs = require('fs');
const path = require('path');

function loadTs() {
  const tries = [];
  if (process.env.TS_ORACLE_TYPESCRIPT) tries.push(process.env.TS_ORACLE_TYPESCRIPT);
  tries.push('typescript');
  tries.push(path.join(__dirname, '..', '..', '..', '.cache', 'node', 'node_modules', 'typescript'));
  for (const t of tries) {
    try { return require(t); } catch (e) { /* next */ }
  }
  process.stderr.write('ts_oracle: cannot load typescript; run `npm install typescript@5` in ' +
    '.cache/node (under the project root) or set TS_ORACLE_TYPESCRIPT\n');
  process.exit(2);
}
const ts = loadTs();
const SK = ts.SyntaxKind;

const EXT_KIND = {
  '.ts': ts.ScriptKind.TS, '.mts': ts.ScriptKind.TS, '.cts': ts.ScriptKind.TS,
  '.tsx': ts.ScriptKind.TSX,
  '.js': ts.ScriptKind.JS, '.mjs': ts.ScriptKind.JS, '.cjs': ts.ScriptKind.JS,
  '.jsx': ts.ScriptKind.JSX,
};

function scriptKindFor(fileName) {
  const ext = path.extname(fileName).toLowerCase();
  return EXT_KIND[ext] !== undefined ? EXT_KIND[ext] : ts.ScriptKind.TS;
}

function parse(fileName, text) {
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKindFor(fileName));
}

// ------------------------------------------------------------------ comments
function isJSDocNode(n) {
  return n.kind >= SK.FirstJSDocNode && n.kind <= SK.LastJSDocNode;
}

/* Every comment in the file, from the leading trivia of every token.  JSX text
 * is not trivia, so tokens that follow JSX text (and JSX text itself) are
 * skipped: `<p>/** x *\/</p>` holds no comment. */
function collectComments(sf) {
  const text = sf.text;
  const seen = new Map();
  let prevWasJsxText = false;
  function leaf(tok) {
    if (tok.kind === SK.JsxText || prevWasJsxText) {
      prevWasJsxText = tok.kind === SK.JsxText;
      return;
    }
    prevWasJsxText = false;
    // same-line comments are "trailing" ranges of the previous token, the rest "leading"
    for (const rs of [ts.getTrailingCommentRanges(text, tok.pos), ts.getLeadingCommentRanges(text, tok.pos)]) {
      if (rs) for (const r of rs) if (!seen.has(r.pos)) seen.set(r.pos, r);
    }
  }
  function walk(n) {
    // JSDoc nodes are attached as children (even to the EndOfFileToken): skip them
    const kids = n.getChildren(sf).filter(k => !isJSDocNode(k));
    if (kids.length === 0) { leaf(n); return; }
    for (const k of kids) walk(k);
  }
  walk(sf);  // includes the EndOfFileToken
  const out = [...seen.values()].sort((a, b) => a.pos - b.pos);
  for (const c of out) {
    c.jsdoc = c.kind === SK.MultiLineCommentTrivia && text.startsWith('/**', c.pos) &&
      !text.startsWith('/**/', c.pos);
  }
  return out;
}

/* Remove every JSDoc comment.  A line that held nothing but JSDoc text and
 * whitespace is deleted; a line that keeps other text keeps it (with trailing
 * whitespace trimmed).  Lines never merge.  Returns the new text and, for each
 * original 0-based row, its new 0-based row or -1 when deleted. */
function stripJsdoc(fileName, text) {
  const sf = parse(fileName, text);
  const docs = collectComments(sf).filter(c => c.jsdoc);
  const lines = text.split('\n');
  const starts = [];
  let p = 0;
  for (const l of lines) { starts.push(p); p += l.length + 1; }
  // per-line removal ranges
  const cut = new Map();
  for (const d of docs) {
    const r0 = sf.getLineAndCharacterOfPosition(d.pos).line;
    const r1 = sf.getLineAndCharacterOfPosition(d.end).line;
    for (let r = r0; r <= r1; r++) {
      const a = Math.max(d.pos, starts[r]) - starts[r];
      const b = Math.min(d.end, starts[r] + lines[r].length) - starts[r];
      if (!cut.has(r)) cut.set(r, []);
      cut.get(r).push([a, b]);
    }
  }
  const out = [];
  const map = [];
  for (let r = 0; r < lines.length; r++) {
    const l = lines[r];
    if (!cut.has(r)) { map.push(out.length); out.push(l); continue; }
    let s = '';
    let at = 0;
    for (const [a, b] of cut.get(r).sort((x, y) => x[0] - y[0])) {
      s += l.slice(at, a);
      at = Math.max(at, b);
    }
    s += l.slice(at);
    if (s.trim() === '' && l.trim() !== '') { map.push(-1); continue; }
    map.push(out.length);
    out.push(s.replace(/\s+$/, ''));
  }
  return { text: out.join('\n'), map, jsdoc_blocks: docs.length };
}

// ------------------------------------------------------------------ units
function analyse(fileName, text, opts) {
  opts = opts || {};
  const sf = parse(fileName, text);
  const comments = collectComments(sf);
  const diags = sf.parseDiagnostics || [];
  const units = [];
  const records = [];   // documented function-like declarations without a body (ambiguity)
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, sf.languageVariant, text);

  const line = pos => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const lineStarts = sf.getLineStarts();
  const lineText = r => text.slice(lineStarts[r - 1], r < lineStarts.length ? lineStarts[r] : text.length);

  function nextTokenStart(pos) {
    if (scanner.resetTokenState) scanner.resetTokenState(pos); else scanner.setTextPos(pos);
    scanner.scan();
    return scanner.getTokenStart ? scanner.getTokenStart() : scanner.getTokenPos();
  }

  // comments are sorted by pos: binary search for those inside [lo, hi)
  function commentsIn(lo, hi) {
    let a = 0, b = comments.length;
    while (a < b) { const m = (a + b) >> 1; if (comments[m].pos < lo) a = m + 1; else b = m; }
    const res = [];
    for (let i = a; i < comments.length && comments[i].pos < hi; i++) res.push(comments[i]);
    return res;
  }

  /* The JSDoc attached to a declaration whose leading trivia starts at
   * `fullStart` and whose first token starts at `start`. */
  function attachedDoc(fullStart, start) {
    const cs = commentsIn(fullStart, start);
    for (let i = cs.length - 1; i >= 0; i--) {
      if (!cs[i].jsdoc) continue;
      // every line between the JSDoc and the declaration must hold something (a comment)
      const r0 = line(cs[i].end), r1 = line(start);
      for (let r = r0 + 1; r < r1; r++) {
        if (lineText(r).trim() === '') return null;
      }
      return cs[i];
    }
    return null;
  }

  function hasParseError(lo, hi) {
    for (const d of diags) if (d.start >= lo && d.start <= hi) return true;
    return false;
  }

  function decoratorsOf(n) {
    if (!n.modifiers) return [];
    return n.modifiers.filter(m => m.kind === SK.Decorator);
  }

  function propName(nameNode) {
    if (!nameNode) return '';
    switch (nameNode.kind) {
      case SK.Identifier: case SK.PrivateIdentifier: return nameNode.text;
      case SK.StringLiteral: case SK.NumericLiteral: case SK.NoSubstitutionTemplateLiteral:
        return nameNode.text;
      case SK.ComputedPropertyName: return '[' + nameNode.expression.getText(sf) + ']';
      default: return nameNode.getText(sf);
    }
  }

  function unwrap(e) {
    while (e && (e.kind === SK.ParenthesizedExpression || e.kind === SK.AsExpression ||
      e.kind === SK.SatisfiesExpression || e.kind === SK.TypeAssertionExpression ||
      e.kind === SK.NonNullExpression)) e = e.expression;
    return e;
  }

  const isFn = e => e && (e.kind === SK.ArrowFunction || e.kind === SK.FunctionExpression);

  /* Is the expression a function, or a call that wraps one?  -> {form, fn} */
  function functionForm(e0) {
    const e = unwrap(e0);
    if (!e) return null;
    if (e.kind === SK.ArrowFunction) return { form: 'arrow', fn: e };
    if (e.kind === SK.FunctionExpression) return { form: 'function_expression', fn: e };
    if (e.kind === SK.CallExpression || e.kind === SK.NewExpression) {
      // the call itself and every call in its callee chain: a.b(x).c(fn), f(g)(fn), IIFE
      let c = e;
      while (c) {
        c = unwrap(c);
        if (!c) break;
        if (c.kind === SK.CallExpression || c.kind === SK.NewExpression) {
          if (isFn(unwrap(c.expression))) return { form: 'wrapped', fn: unwrap(c.expression) };
          for (const a of c.arguments || []) {
            const f = functionForm(a);
            if (f) return { form: 'wrapped', fn: f.fn };
          }
          c = c.expression;
        } else if (c.kind === SK.PropertyAccessExpression || c.kind === SK.ElementAccessExpression) {
          c = c.expression;
        } else break;
      }
    }
    return null;
  }

  function containsJsx(n) {
    let found = false;
    (function w(x) {
      if (found) return;
      if (x.kind === SK.JsxElement || x.kind === SK.JsxSelfClosingElement || x.kind === SK.JsxFragment) {
        found = true; return;
      }
      ts.forEachChild(x, w);
    })(n);
    return found;
  }

  /* Non-blank lines of a body, not counting comment-only lines or lines that
   * hold only brackets, braces, parentheses, `;` and `,`. */
  function bodyLines(body) {
    const s = body.getStart(sf), e = body.end;
    let seg = text.slice(s, e).split('');
    for (const c of commentsIn(s, e)) {
      for (let i = c.pos; i < Math.min(c.end, e); i++) if (seg[i - s] !== '\n') seg[i - s] = ' ';
    }
    let n = 0;
    for (const l of seg.join('').split('\n')) if (l.replace(/[\s{}()\[\];,]/g, '') !== '') n++;
    return n;
  }

  function chainNames(chain) { return chain.map(c => c.name); }

  /* overload signatures directly before an implementation */
  function overloadStart(node) {
    const p = node.parent;
    const list = p && (p.statements || p.members);
    if (!list) return null;
    const i = list.indexOf(node);
    if (i <= 0) return null;
    const nm = propName(node.name);
    let j = i - 1, first = null;
    while (j >= 0) {
      const s = list[j];
      if (s.kind !== node.kind || s.body || propName(s.name) !== nm) break;
      first = s; j--;
    }
    return first ? spanOf(first, first).start_line : null;
  }

  /* span fields for a unit whose declaration is `node` and whose leading
   * trivia (JSDoc) belongs to `docNode` */
  function spanOf(node, docNode, endPos) {
    const declPos = node.getStart(sf);
    const doc = attachedDoc(docNode.pos, docNode.getStart(sf));
    const decs = decoratorsOf(node);
    const sigPos = decs.length ? nextTokenStart(decs[decs.length - 1].end) : declPos;
    const end = endPos !== undefined ? endPos : node.end;
    const startPos = doc ? Math.min(doc.pos, declPos) : declPos;
    return {
      start_line: line(startPos), decl_line: line(declPos), sig_line: line(sigPos),
      end_line: line(end), _doc: doc, _lo: startPos, _hi: end,
    };
  }

  function emit(u, node, docNode, chain, endPos, extra) {
    const sp = spanOf(node, docNode, endPos);
    const rec = Object.assign({
      kind: u.kind, form: u.form, name: u.name,
      container: chainNames(chain), container_kinds: chain.map(c => c.kind),
      start_line: sp.start_line, decl_line: sp.decl_line, sig_line: sp.sig_line,
      name_line: u.nameNode ? line(u.nameNode.getStart(sf)) : sp.sig_line,
      body_line: u.body ? line(u.body.getStart(sf)) : null,
      end_line: sp.end_line,
      overloads_start: u.overloads ? overloadStart(node) : null,
      body_lines: u.body ? bodyLines(u.body) : null,
      jsx: u.fn ? containsJsx(u.fn) : false,
      parse_error: hasParseError(sp._lo, sp._hi),
      jsdoc: sp._doc ? { start_line: line(sp._doc.pos), end_line: line(sp._doc.end) } : null,
    }, extra || {});
    if (opts.doc && sp._doc) rec.jsdoc.text = text.slice(sp._doc.pos, sp._doc.end);
    units.push(rec);
    return rec;
  }

  function record(node, kind, name, chain) {  // documented declaration without a body
    if (!opts.doc) return;
    const doc = attachedDoc(node.pos, node.getStart(sf));
    if (!doc) return;
    records.push({ kind, name, container: chainNames(chain), line: line(node.getStart(sf)),
      text: text.slice(doc.pos, doc.end) });
  }

  function emitFn(kind, form, name, nameNode, node, docNode, chain, fn, endPos, overloads, callee) {
    return emit({ kind, form, name, nameNode, body: fn.body, fn, overloads }, node, docNode, chain, endPos,
      form === 'wrapped' ? { callee: callee || null } : undefined);
  }

  /* the rightmost name of the outermost call's callee: memo(forwardRef(...)) -> memo */
  function calleeName(e) {
    e = unwrap(e);
    while (e && (e.kind === SK.CallExpression || e.kind === SK.NewExpression)) {
      let c = unwrap(e.expression);
      if (c.kind === SK.PropertyAccessExpression) return c.name.text;
      if (c.kind === SK.Identifier) return c.text;
      if (isFn(c)) return '(iife)';
      e = c;
    }
    return null;
  }

  // -------------------------------------------------------------- walkers
  function visitChildren(node, chain, binding) {
    ts.forEachChild(node, c => visit(c, chain, passBinding(node, c, binding)));
  }

  // a binding name flows into parens, casts, call/new arguments, arrays, ?: branches
  function passBinding(parent, child, binding) {
    switch (parent.kind) {
      case SK.ParenthesizedExpression: case SK.AsExpression: case SK.SatisfiesExpression:
      case SK.TypeAssertionExpression: case SK.NonNullExpression: case SK.ArrayLiteralExpression:
        return binding;
      case SK.CallExpression: case SK.NewExpression:
        return (parent.arguments && parent.arguments.includes(child)) ? binding : '';
      case SK.ConditionalExpression:
        return child === parent.condition ? '' : binding;
      default: return '';
    }
  }

  function visit(node, chain, binding) {
    switch (node.kind) {
      case SK.FunctionDeclaration: {
        const name = node.name ? node.name.text : 'default';
        if (node.body) emitFn('function', 'declaration', name, node.name, node, node, chain, node, undefined, true);
        else record(node, 'function', name, chain);
        return;
      }
      case SK.ClassDeclaration: case SK.ClassExpression:
        return visitClass(node, chain, binding);
      case SK.InterfaceDeclaration: {
        emit({ kind: 'interface', form: 'declaration', name: node.name.text, nameNode: node.name }, node, node, chain);
        const ch = chain.concat([{ name: node.name.text, kind: 'interface' }]);
        for (const m of node.members) recordSignature(m, ch);
        return;
      }
      case SK.TypeAliasDeclaration: {
        emit({ kind: 'type', form: 'declaration', name: node.name.text, nameNode: node.name }, node, node, chain);
        if (node.type && node.type.kind === SK.TypeLiteral) {
          const ch = chain.concat([{ name: node.name.text, kind: 'type' }]);
          for (const m of node.type.members) recordSignature(m, ch);
        }
        return;
      }
      case SK.EnumDeclaration:
        emit({ kind: 'enum', form: 'declaration', name: node.name.text, nameNode: node.name }, node, node, chain);
        return;
      case SK.ModuleDeclaration:
        return visitModule(node, chain);
      case SK.VariableStatement:
        return visitVariableStatement(node, chain);
      case SK.ExpressionStatement:
        return visitExpressionStatement(node, chain);
      case SK.ExportAssignment: {
        const f = functionForm(node.expression);
        if (f) emitFn('function', f.form, 'default', null, node, node, chain, f.fn, undefined, false, calleeName(node.expression));
        else visit(node.expression, chain, 'default');
        return;
      }
      case SK.ObjectLiteralExpression:
        return visitObject(node, chain, binding);
      case SK.ArrowFunction: case SK.FunctionExpression:
        return visitLooseFunction(node, chain);
      case SK.ClassStaticBlockDeclaration:
        return;
      default:
        if (isJSDocNode(node)) return;
        return visitChildren(node, chain, binding);
    }
  }

  function recordSignature(m, chain) {
    if (m.kind === SK.MethodSignature || m.kind === SK.CallSignature || m.kind === SK.ConstructSignature) {
      record(m, 'method', m.name ? propName(m.name) : '', chain);
    } else if (m.kind === SK.PropertySignature && m.type && m.type.kind === SK.FunctionType) {
      record(m, 'method', propName(m.name), chain);
    }
  }

  function visitClass(node, chain, binding) {
    const isDefault = node.modifiers && node.modifiers.some(m => m.kind === SK.DefaultKeyword);
    const name = node.name ? node.name.text : (binding || (isDefault ? 'default' : ''));
    const ch = chain.concat([{ name, kind: 'class' }]);
    const before = units.length;
    // decorators and heritage clauses may hold code too (rare): not walked
    for (const m of node.members) {
      switch (m.kind) {
        case SK.MethodDeclaration:
          if (m.body) emitFn('method', 'method', propName(m.name), m.name, m, m, ch, m, undefined, true);
          else record(m, 'method', propName(m.name), ch);
          break;
        case SK.Constructor:
          if (m.body) emitFn('constructor', 'method', 'constructor', null, m, m, ch, m, undefined, true);
          else record(m, 'constructor', 'constructor', ch);
          break;
        case SK.GetAccessor: case SK.SetAccessor:
          if (m.body) emitFn(m.kind === SK.GetAccessor ? 'getter' : 'setter', 'method', propName(m.name), m.name, m, m, ch, m);
          break;
        case SK.PropertyDeclaration: {
          if (!m.initializer) {
            if (m.type && m.type.kind === SK.FunctionType) record(m, 'method', propName(m.name), ch);
            break;
          }
          const f = functionForm(m.initializer);
          if (f) emitFn('method', f.form, propName(m.name), m.name, m, m, ch, f.fn, undefined, false, calleeName(m.initializer));
          else visit(m.initializer, ch, propName(m.name));
          break;
        }
        default: break;  // index signatures, `;`, static blocks
      }
    }
    const leaf = units.length === before;
    emit({ kind: 'class', form: node.kind === SK.ClassDeclaration ? 'declaration' : 'expression', name,
      nameNode: node.name, fn: node }, node, node, chain, undefined, { leaf });
  }

  function visitModule(node, chain) {
    const names = [];
    let m = node;
    const outer = node;
    while (true) {
      names.push(m.name.kind === SK.Identifier ? m.name.text : m.name.text);
      if (m.body && m.body.kind === SK.ModuleDeclaration) { m = m.body; continue; }
      break;
    }
    if (!m.body) return;   // `declare module 'x';`
    const name = names.join('.');
    const ch = chain.concat([{ name, kind: 'namespace' }]);
    const before = units.length;
    for (const s of m.body.statements) visit(s, ch, '');
    const leaf = units.length === before;
    emit({ kind: 'namespace', form: outer.flags & ts.NodeFlags.GlobalAugmentation ? 'global' :
      (outer.name.kind === SK.StringLiteral ? 'module' : 'namespace'), name, nameNode: outer.name },
      outer, outer, chain, undefined, { leaf });
  }

  function visitVariableStatement(stmt, chain) {
    const decls = stmt.declarationList.declarations;
    decls.forEach((d, i) => {
      if (!d.initializer) return;
      const name = d.name.kind === SK.Identifier ? d.name.text : null;
      const f = name ? functionForm(d.initializer) : null;
      if (f) {
        const cn = calleeName(d.initializer);
        if (decls.length === 1) emitFn('function', f.form, name, d.name, stmt, stmt, chain, f.fn, undefined, false, cn);
        else emitFn('function', f.form, name, d.name, i === 0 ? stmt : d, i === 0 ? stmt : d, chain, f.fn, d.end, false, cn);
      } else {
        visit(d.initializer, chain, name || '');
      }
    });
  }

  function entityText(e) {
    e = unwrap(e);
    if (!e) return null;
    if (e.kind === SK.Identifier || e.kind === SK.ThisKeyword) return e.getText(sf);
    if (e.kind === SK.PropertyAccessExpression) {
      const l = entityText(e.expression);
      return l === null ? null : l + '.' + e.name.text;
    }
    return null;
  }

  function visitExpressionStatement(stmt, chain) {
    const e = stmt.expression;
    if (e.kind === SK.BinaryExpression && e.operatorToken.kind === SK.EqualsToken) {
      const lhs = e.left;
      let name = null, owner = null;
      if (lhs.kind === SK.PropertyAccessExpression) { name = lhs.name.text; owner = entityText(lhs.expression); }
      else if (lhs.kind === SK.ElementAccessExpression && ts.isStringLiteralLike(lhs.argumentExpression)) {
        name = lhs.argumentExpression.text; owner = entityText(lhs.expression);
      } else if (lhs.kind === SK.Identifier) { name = lhs.text; }
      if (name !== null) {
        const f = functionForm(e.right);
        const ch = owner ? chain.concat([{ name: owner, kind: 'assignment' }]) : chain;
        if (f) { emitFn('function', f.form, name, null, stmt, stmt, ch, f.fn, undefined, false, calleeName(e.right)); return; }
        visit(e.right, chain, owner ? owner + '.' + name : name);
        return;
      }
    }
    visitChildren(stmt, chain, '');
  }

  function visitObject(node, chain, binding) {
    const ch = chain.concat([{ name: binding || '', kind: 'object' }]);
    for (const p of node.properties) {
      switch (p.kind) {
        case SK.MethodDeclaration:
          if (p.body) emitFn('method', 'method', propName(p.name), p.name, p, p, ch, p);
          break;
        case SK.GetAccessor: case SK.SetAccessor:
          if (p.body) emitFn(p.kind === SK.GetAccessor ? 'getter' : 'setter', 'method', propName(p.name), p.name, p, p, ch, p);
          break;
        case SK.PropertyAssignment: {
          const f = functionForm(p.initializer);
          if (f) emitFn('method', f.form, propName(p.name), p.name, p, p, ch, f.fn, undefined, false, calleeName(p.initializer));
          else visit(p.initializer, ch, propName(p.name));
          break;
        }
        case SK.SpreadAssignment:
          visit(p.expression, ch, '');
          break;
        default: break;
      }
    }
  }

  /* A function at module level that is bound to no name.  It is a unit
   * (form "callback") only when it is an argument of a call that is a whole
   * statement, directly or through a call chain (`addEventListener('x', () =>
   * {...})`, `foo(cb).then(cb2)`, an IIFE); it is then named after the callee
   * (its last identifier; '' for an IIFE).  Functions nested anywhere else in
   * module-level expressions (inside JSX, arrays, data objects) are not units. */
  function visitLooseFunction(fn, chain) {
    let call = null;
    let x = fn, p = fn.parent;
    while (p) {
      if (p.kind === SK.ParenthesizedExpression || p.kind === SK.AsExpression ||
        p.kind === SK.NonNullExpression || p.kind === SK.AwaitExpression || p.kind === SK.VoidExpression) {
        x = p; p = p.parent; continue;
      }
      if ((p.kind === SK.CallExpression || p.kind === SK.NewExpression) &&
        (p.expression === x || (p.arguments && p.arguments.includes(x)))) {
        if (!call) call = p;
        x = p; p = p.parent; continue;
      }
      if (p.kind === SK.PropertyAccessExpression && p.expression === x) { x = p; p = p.parent; continue; }
      break;
    }
    if (!call || !p || p.kind !== SK.ExpressionStatement) return;
    const callee = unwrap(call.expression);
    let name = '';
    if (callee === fn) name = '';   // IIFE
    else if (callee.kind === SK.PropertyAccessExpression) name = callee.name.text;
    else if (callee.kind === SK.Identifier) name = callee.text;
    emit({ kind: 'function', form: 'callback', name, nameNode: null, body: fn.body, fn }, fn, fn, chain);
  }

  for (const s of sf.statements) visit(s, [], '');
  const statements = [];
  (function outline(list, depth) {
    for (const st of list) {
      statements.push({ kind: SK[st.kind], start_line: line(st.getStart(sf)), end_line: line(st.end), depth });
      if (st.kind === SK.ModuleDeclaration) {
        let m = st;
        while (m.body && m.body.kind === SK.ModuleDeclaration) m = m.body;
        if (m.body && m.body.statements) outline(m.body.statements, depth + 1);
      }
    }
  })(sf.statements, 0);
  units.sort((a, b) => a.start_line - b.start_line || b.end_line - a.end_line);
  const res = { units, statements, lines: text.split('\n').length, parse_errors: diags.length,
    jsdoc_blocks: comments.filter(c => c.jsdoc).length };
  if (opts.doc) res.records = records;
  return res;
}

// ------------------------------------------------------------------ CLI
function readNormalised(p) {
  let t = fs.readFileSync(p, 'utf8');
  if (t.charCodeAt(0) === 0xfeff) t = t.slice(1);
  return t.replace(/\r\n?/g, '\n');
}

function serve() {
  const rl = require('readline').createInterface({ input: process.stdin, terminal: false });
  rl.on('line', l => {
    if (!l.trim()) return;
    let req, res;
    try {
      req = JSON.parse(l);
      const text = req.text !== undefined ? req.text : readNormalised(req.path);
      const name = req.file || req.path || 'x.ts';
      if (req.op === 'strip') res = stripJsdoc(name, text);
      else if (req.op === 'analyse') res = analyse(name, text, { doc: !!req.doc });
      else throw new Error('unknown op ' + req.op);
      res.ok = true;
    } catch (e) {
      res = { ok: false, error: String(e && e.stack || e) };
    }
    if (req && req.id !== undefined) res.id = req.id;
    process.stdout.write(JSON.stringify(res) + '\n');
  });
}

function main(argv) {
  process.stdout.on('error', e => { if (e.code === 'EPIPE') process.exit(0); throw e; });
  if (argv.includes('--serve')) return serve();
  const doc = argv.includes('--doc');
  const tsv = argv.includes('--tsv');
  let root = null;
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--root') { root = argv[++i]; continue; }
    if (a === '--strip') { const p = argv[++i]; process.stdout.write(stripJsdoc(p, readNormalised(p)).text); return; }
    if (a.startsWith('--')) continue;
    files.push(a);
  }
  for (const f of files) {
    const rel = root ? path.relative(root, f).split(path.sep).join('/') : f;
    const r = analyse(f, readNormalised(f), { doc });
    if (r.parse_errors) process.stderr.write(`# ${rel}: ${r.parse_errors} parse errors\n`);
    for (const u of r.units) {
      if (tsv) {
        process.stdout.write([rel, u.start_line, u.decl_line, u.sig_line, u.end_line, u.kind, u.form,
          u.container.join('.'), u.name].join('\t') + '\n');
      } else {
        process.stdout.write(JSON.stringify(Object.assign({ file: rel }, u)) + '\n');
      }
    }
  }
}

module.exports = { analyse, stripJsdoc, parse };
if (require.main === module) main(process.argv.slice(2));
