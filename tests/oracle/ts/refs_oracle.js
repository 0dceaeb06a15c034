#!/usr/bin/env node
/*
 * The call-edge oracle of TypeScript and JavaScript (issue 47), on the TypeScript checker:
 * every call and construction of the given files, and the declaration the checker binds it
 * to (imports, re-exports and aliases followed), as JSON Lines:
 *
 *   {"file", "line", "col", "name", "kind": "call"|"new",
 *    "decl": {"file", "line", "name", "kind"} or null (a library's, or none)}
 *
 * A site is a call whose callee is a name or `a.name` (and `a?.name`), or `new Name` /
 * `new a.Name`; line and col are those of the name (1-based line, 0-based column). decl's
 * line is its name's line; kind is the checker's declaration kind (class, method, function,
 * constructor, property, variable, ...). Files are read as given (allowJs), with the
 * compiler options of the tsconfig.json at --root when there is one.
 *
 *   node refs_oracle.js --root DIR < files.txt     (one path a line, relative to DIR)
 *
 * TypeScript is found as ts_oracle.js finds it.
 */
'use strict';
const fs = require('fs');
const path = require('path');

function loadTypescript() {
  const tries = [];
  if (process.env.TS_ORACLE_TYPESCRIPT) tries.push(process.env.TS_ORACLE_TYPESCRIPT);
  tries.push('typescript');
  tries.push(path.resolve(__dirname, '..', '..', '..', '.cache', 'node', 'node_modules', 'typescript'));
  for (const t of tries) {
    try { return require(t); } catch (e) { /* next */ }
  }
  process.stderr.write('typescript not found: npm install typescript@5 in .cache/node\n');
  process.exit(2);
}

const ts = loadTypescript();
const args = process.argv.slice(2);
const root = path.resolve(args[args.indexOf('--root') + 1] || '.');
const files = fs.readFileSync(0, 'utf8').split('\n').filter(Boolean).map(f => path.resolve(root, f));

let options = { allowJs: true, checkJs: false, noEmit: true, skipLibCheck: true,
                target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
                moduleResolution: ts.ModuleResolutionKind.Bundler, jsx: ts.JsxEmit.Preserve,
                resolveJsonModule: true };
const configPath = path.join(root, 'tsconfig.json');
if (fs.existsSync(configPath)) {
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (!read.error) {
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
    options = Object.assign({}, parsed.options, { allowJs: true, noEmit: true, skipLibCheck: true });
  }
}
// a workspace's packages import each other by name, through node_modules links a checkout
// has not made: each package.json of the tree maps its name to its folder (src/ first)
const paths = Object.assign({}, options.paths || {});
const walk = (dir, depth) => {
  if (depth > 4) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) walk(full, depth + 1);
    else if (e.name === 'package.json' && dir !== root) {
      try {
        const name = JSON.parse(fs.readFileSync(full, 'utf8')).name;
        if (name && !paths[name]) {
          paths[name] = [path.join(dir, 'src', 'index.ts'), path.join(dir, 'index.ts'),
                         path.join(dir, 'src', 'index.js'), path.join(dir, 'index.js')];
          paths[name + '/*'] = [path.join(dir, 'src', '*', 'index.ts'), path.join(dir, 'src', '*'),
                                path.join(dir, '*', 'index.ts'), path.join(dir, '*')];
        }
      } catch (err) { /* not JSON */ }
    }
  }
};
walk(root, 0);
options.paths = paths;
if (!options.baseUrl) options.baseUrl = root;
// no node_modules here: resolve as a bundler would, through the paths above
options.module = ts.ModuleKind.ESNext;
options.moduleResolution = ts.ModuleResolutionKind.Bundler;
const program = ts.createProgram(files, options);
const checker = program.getTypeChecker();

function declOf(node) {
  let symbol = checker.getSymbolAtLocation(node), d = null;
  for (let hop = 0; symbol && hop < 4; hop++) {
    if (symbol.flags & ts.SymbolFlags.Alias) {
      try { symbol = checker.getAliasedSymbol(symbol); } catch (e) { return null; }
    }
    const decls = symbol.declarations || [];
    if (!decls.length) return null;
    // what a call calls is a value (not a type alias or interface of the same name), and of
    // a function with overloads its implementation
    d = decls.find(x => ts.isFunctionLike(x) && x.body) || symbol.valueDeclaration || decls[0];
    // module.exports = { f } or { g: f }: the f it names
    let next = null;
    if (ts.isShorthandPropertyAssignment(d)) next = checker.getShorthandAssignmentValueSymbol(d);
    else if (ts.isPropertyAssignment(d) && ts.isIdentifier(d.initializer)) next = checker.getSymbolAtLocation(d.initializer);
    if (!next) break;
    symbol = next;
  }
  if (!d) return null;
  const sf = d.getSourceFile();
  if (sf.isDeclarationFile) return null;
  const nameNode = d.name || d;
  const line = sf.getLineAndCharacterOfPosition(nameNode.getStart(sf)).line + 1;
  return { file: path.relative(root, sf.fileName).split(path.sep).join('/'), line,
           name: symbol.getName(), kind: ts.SyntaxKind[d.kind] };
}

for (const file of files) {
  const sf = program.getSourceFile(file);
  if (!sf) continue;
  const rel = path.relative(root, file).split(path.sep).join('/');
  const visit = (node) => {
    let callee = null, kind = null;
    if (ts.isCallExpression(node)) { callee = node.expression; kind = 'call'; }
    else if (ts.isNewExpression(node)) { callee = node.expression; kind = 'new'; }
    if (callee) {
      let name = null;
      if (ts.isIdentifier(callee)) name = callee;
      else if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.name)) name = callee.name;
      if (name) {
        const at = sf.getLineAndCharacterOfPosition(name.getStart(sf));
        let decl = null;
        try { decl = declOf(name); } catch (e) { decl = null; }
        process.stdout.write(JSON.stringify({ file: rel, line: at.line + 1, col: at.character,
                                              name: name.text, kind, decl }) + '\n');
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
