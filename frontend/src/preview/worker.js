// The Typst compiler of the live preview, in a Web Worker of its own (bundle `typst-compiler`): compiling never
// holds up typing, and typst.ts's compiler runs where it can. Its WebAssembly builder makes its default
// file-access callbacks with `new Function("return 0")` and the like (typst.ts packages/compiler/src/builder.rs),
// which the page's Content-Security-Policy (no 'unsafe-eval', config/settings.py) refuses; a worker script has
// the policy of its own response, and this one runs only this bundle: no page, no user's markup as script.
//
// Messages in:  {type: "start", compilerWasmUrl, fontsUrl}
//               {type: "files", files: [{path, text} | {path, bytes}], replace: bool}
//               {type: "compile", id, entryPath, path, text}      (path/text: the open file's live text, if any)
// Messages out: {type: "ready"} | {type: "compiled", id, vector, diagnostics} | {type: "failed", id, message}
import { createTypstCompiler } from "@myriaddreamin/typst.ts/compiler";

// Typst's default text fonts, under typst-assets' names: scripts/typst_fonts.py copies them out of the worker's
// typst wheel into static/bundles/typst-fonts/, so the preview sets type with the very bytes the server uses.
const FONT_FILES = [
  "DejaVuSansMono-Bold.ttf",
  "DejaVuSansMono-BoldOblique.ttf",
  "DejaVuSansMono-Oblique.ttf",
  "DejaVuSansMono.ttf",
  "LibertinusSerif-Bold.otf",
  "LibertinusSerif-BoldItalic.otf",
  "LibertinusSerif-Italic.otf",
  "LibertinusSerif-Regular.otf",
  "LibertinusSerif-Semibold.otf",
  "LibertinusSerif-SemiboldItalic.otf",
  "NewCM10-Bold.otf",
  "NewCM10-BoldItalic.otf",
  "NewCM10-Italic.otf",
  "NewCM10-Regular.otf",
  "NewCMMath-Bold.otf",
  "NewCMMath-Book.otf",
  "NewCMMath-Regular.otf",
];

let compiler = null;
let mapped = new Set(); // paths given as files, so that a new listing can take away those that went
const encoder = new TextEncoder();

async function fetchBytes(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${url}: the server answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// The fonts Quire serves, handed to the font builder as bytes. typst.ts's own loadFonts() would do the same
// but first builds a `new Function` to reach Node's modules; and its init() adds remote (CDN) default fonts
// unless a font loader says it brings its own: the two marks are what init() looks for.
function servedFonts(fontsUrl) {
  const loader = async (_, { builder }) => {
    const fonts = await Promise.all(FONT_FILES.map((name) => fetchBytes(fontsUrl + name)));
    for (const font of fonts) await builder.add_raw_font(font);
  };
  loader._kind = "fontLoader";
  loader._preloadRemoteFontOptions = { assets: false };
  return loader;
}

// The compiler's virtual file system is "/"-rooted: Typst sources as text, everything else as bytes.
function rooted(path) {
  return "/" + path.replace(/^\/+/, "");
}

function put(path, file) {
  if (path.endsWith(".typ")) compiler.addSource(rooted(path), file.text ?? new TextDecoder().decode(file.bytes));
  else compiler.mapShadow(rooted(path), file.bytes ?? encoder.encode(file.text));
}

const handlers = {
  async start({ compilerWasmUrl, fontsUrl }) {
    compiler = createTypstCompiler();
    await compiler.init({ beforeBuild: [servedFonts(fontsUrl)], getModule: () => compilerWasmUrl });
    self.postMessage({ type: "ready" });
  },
  files({ files, replace }) {
    if (replace) {
      for (const path of mapped) compiler.unmapShadow(rooted(path));
      mapped = new Set();
    }
    for (const file of files) {
      put(file.path, file);
      mapped.add(file.path);
    }
  },
  async compile({ id, entryPath, path, text }) {
    if (path) put(path, { text });
    const compiled = await compiler.compile({ mainFilePath: rooted(entryPath), root: "/", diagnostics: "full" });
    const vector = compiled.result || null;
    self.postMessage({ type: "compiled", id, vector, diagnostics: compiled.diagnostics || [] }, vector ? [vector.buffer] : []);
  },
};

// Messages are handled one at a time, in order: a compile sees every file sent before it.
let queue = Promise.resolve();
self.addEventListener("message", ({ data }) => {
  queue = queue
    .then(() => handlers[data.type](data))
    .catch((error) => self.postMessage({ type: "failed", id: data.id, message: String(error?.message || error) }));
});
