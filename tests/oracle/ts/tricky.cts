/** A CommonJS module in TypeScript. */
import fs = require("fs");
function read(p: string): string { return fs.readFileSync(p, "utf8"); }
export = { read, write(p: string, s: string) { fs.writeFileSync(p, s); } };
