// Parses each file named on the command line as one Mermaid diagram with the
// real Mermaid parser (mermaid.parse), and exits 1 naming every file it
// refuses. mermaid's parse needs a DOM for DOMPurify: linkedom gives one.
// Used by render's TestMermaidParser; the packages are installed here by
// .ci/run (README.md).
import { readFileSync } from "node:fs";
import { parseHTML } from "linkedom";

const { window } = parseHTML("<!doctype html><html><body></body></html>");
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });

// A broken chart must be refused, or the parser checks nothing.
try {
  await mermaid.parse('xychart-beta\n    title "a"b"\n    line [1, 2,');
  console.log("the parser accepts a broken xychart");
  process.exit(1);
} catch {}

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const r = await mermaid.parse(readFileSync(file, "utf8"));
    if (r.diagramType !== "xychart") {
      console.log(`${file}: parsed as ${r.diagramType}, want xychart`);
      failed++;
    }
  } catch (e) {
    console.log(`${file}: ${String(e).slice(0, 500)}`);
    failed++;
  }
}
console.log(`parsed ${process.argv.length - 2 - failed} of ${process.argv.length - 2} diagrams`);
process.exit(failed ? 1 : 0);
