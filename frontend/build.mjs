// Bundles Quire's browser code into static/bundles/ (served by Django, no CDN).
//   node build.mjs           build (minified, with source maps)
//   node build.mjs --check   build into a temporary directory only: does the bundle still build?
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
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
  // The task center on every signed-in page: the drawer, its keyboard, the badge's "seen", announcements.
  "task-center": join(here, "src", "task-center", "main.js"),
  // The operators' Overview in Django admin (uPlot); its stylesheet comes out beside it.
  "operator-charts": join(here, "src", "operators", "charts.js"),
  // PDF.js parses PDFs in a worker of its own; the pane points it here (same directory as the pane).
  "pdf.worker": join(here, "node_modules", "pdfjs-dist", "build", "pdf.worker.mjs"),
  // Typst projects' live preview (typst.ts); its two WebAssembly files are copied beside it, below.
  "typst-preview": join(here, "src", "preview", "main.js"),
  // …and its compiler, in a Web Worker of its own (src/preview/worker.js says why).
  "typst-compiler": join(here, "src", "preview", "worker.js"),
};

// typst.ts's compiler (~30 MB) and renderer as files of their own, fetched and compiled by the browser as a
// stream, rather than base64 inside a bundle. The page names them (workspace/project_detail.html).
const typstWasm = [
  join(here, "node_modules", "@myriaddreamin", "typst-ts-web-compiler", "pkg", "typst_ts_web_compiler_bg.wasm"),
  join(here, "node_modules", "@myriaddreamin", "typst-ts-renderer", "pkg", "typst_ts_renderer_bg.wasm"),
];

// Chunk names carry their content's hash: a rebuild would leave the previous build's beside them.
if (!check) rmSync(join(outdir, "chunks"), { recursive: true, force: true });

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
    // Modules two entries share (CodeMirror's state and view above all) come out once, in chunks both import:
    // the preview's diagnostics must be made by the same @codemirror/state as the editor's EditorView.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    // The Typst grammar is Rust compiled to WebAssembly, imported as an ES module.
    plugins: [wasmLoader({ mode: "embedded" })],
  });
  mkdirSync(outdir, { recursive: true });
  for (const wasm of typstWasm) copyFileSync(wasm, join(outdir, wasm.split("/").pop()));
} finally {
  if (check) rmSync(outdir, { recursive: true, force: true });
}
