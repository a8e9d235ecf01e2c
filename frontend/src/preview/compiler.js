// The page's side of the preview's compiler (worker.js, in a Web Worker) and the renderer, which draws the
// compiled pages here. Every file is served by Quire: the WebAssembly, the fonts, the scripts.
import { createTypstRenderer } from "@myriaddreamin/typst.ts/renderer";

export class TypstCompilerClient {
  constructor({ workerUrl, compilerWasmUrl, fontsUrl }) {
    this.worker = new Worker(workerUrl, { type: "module", name: "typst-compiler" });
    this.waiting = new Map(); // compile id → {resolve, reject}
    this.nextId = 1;
    this.ready = new Promise((resolve, reject) => {
      this.worker.addEventListener("message", ({ data }) => {
        if (data.type === "ready") resolve();
        else if (data.type === "failed" && data.id === undefined) reject(new Error(data.message));
        else this.answered(data);
      });
      this.worker.addEventListener("error", (event) => reject(new Error(event.message || "the compiler did not start")));
    });
    this.worker.postMessage({ type: "start", compilerWasmUrl, fontsUrl });
  }

  answered(data) {
    const waiting = this.waiting.get(data.id);
    if (!waiting) return;
    this.waiting.delete(data.id);
    if (data.type === "failed") waiting.reject(new Error(data.message));
    else waiting.resolve({ vector: data.vector, diagnostics: data.diagnostics });
  }

  // files: [{path, text} | {path, bytes}]; `replace` drops the files sent before.
  files(files, { replace = false } = {}) {
    this.worker.postMessage({ type: "files", files, replace });
  }

  compile({ entryPath, path, text }) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ type: "compile", id, entryPath, path, text });
    });
  }
}

export async function rendererStart(rendererWasmUrl) {
  const renderer = createTypstRenderer();
  await renderer.init({ getModule: () => rendererWasmUrl });
  return renderer;
}
