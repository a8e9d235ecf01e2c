// Bundles Quire's browser code into static/bundles/ (served by Django, no CDN).
//   node build.mjs           build (minified, with source maps)
//   node build.mjs --check   build into a temporary directory only: does the bundle still build?
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { wasmLoader } from "esbuild-plugin-wasm";

const here = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes("--check");
const outdir = check ? mkdtempSync(join(tmpdir(), "quire-bundle-")) : join(here, "..", "static", "bundles");

// One entry per feature; each enhances the element it finds and does nothing elsewhere.
const entryPoints = {
  editor: join(here, "src", "editor", "main.js"),
  "pdf-pane": join(here, "src", "pdf", "main.js"),
  "build-panel": join(here, "src", "build", "main.js"),
  // The project page shared by its members: its events socket, the file tree.
  project: join(here, "src", "project", "main.js"),
  // The project page's History panel: versions, diffs (@codemirror/merge), restores and labels.
  history: join(here, "src", "history", "main.js"),
  // The operators' Overview in Django admin (uPlot); its stylesheet comes out beside it.
  "operator-charts": join(here, "src", "operators", "charts.js"),
  // PDF.js parses PDFs in a worker of its own; the pane points it here (same directory as the pane).
  "pdf.worker": join(here, "node_modules", "pdfjs-dist", "build", "pdf.worker.mjs"),
};

try {
  await esbuild.build({
    entryPoints,
    outdir,
    bundle: true,
    format: "esm",
    target: ["es2022"],
    minify: true,
    sourcemap: true,
    logLevel: "warning",
    // The Typst grammar is Rust compiled to WebAssembly, imported as an ES module.
    plugins: [wasmLoader({ mode: "embedded" })],
  });
} finally {
  if (check) rmSync(outdir, { recursive: true, force: true });
}
