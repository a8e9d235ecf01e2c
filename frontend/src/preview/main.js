// The Typst live preview (issue 43): the project compiled in the page from the live text of the open file and
// the project's other files, rendered beside the source as you type, its errors and warnings at their lines in
// the editor. The PDF pane toggles between *Live preview* and the last build's PDF; Build (Ctrl+Enter) still
// makes the durable PDF. Only Typst projects' pages carry [data-typst-preview] (workspace/project_detail.html).
//
// For tests and `make bench-author`: every render dispatches `quire:preview-rendered` on document, with
// {revision, typedAt, renderedAt, milliseconds, errors, warnings}, and `window.quirePreview` holds the latest
// (with `rendered`, the renders so far, and `edits`: once `revision` equals it, the preview shows every edit).
//
// Preview ↔ source (mapping.js says how, and why by text): a click on a page opens the line that made that place
// (`quire:open-location`, and `quire:preview-clicked` {page, x, y, place} on document); *Show in PDF* (Ctrl+Alt+J)
// with the live preview shown marks the cursor line's place on its page ([data-typst-preview-mark]).
import { pathUrl } from "../project/api.js";
import { openLocation } from "../shared/locations.js";
import { TypstCompilerClient, rendererStart } from "./compiler.js";
import { diagnosticsShow, fromTypst } from "./diagnostics.js";
import { PreviewMap, runsOf } from "./mapping.js";
import { registryPackageUses } from "./registry.js";

const decoder = new TextDecoder();

class TypstPreview {
  constructor(config, pane) {
    this.config = config;
    this.pane = pane;
    this.editor = null; // the live editor of the open file, once it is there (see start)
    this.files = new Map(); // path → {text} or {bytes}: the project's files other than the open one
    this.revision = 0; // counts edits of the open file
    this.typedAt = null; // when the oldest edit not yet rendered was made (performance.now())
    this.running = false;
    this.pending = true;
    // `edits` counts the edits seen, `revision` those the latest render included: equal, the preview is current.
    this.state = { rendered: 0, edits: 0, revision: 0, errors: [], warnings: [] };
    window.quirePreview = this.state;
    this.pageInfos = []; // the rendered pages: {pageOffset, width, height} in points
    this.generation = 0; // counts renders: the text map below is of one of them
    this.textMap = null; // {generation, runs}: the shown pages' text runs (mapping.js), read when first asked
    this.sessionTurn = Promise.resolve(); // the render session does one thing at a time (render, text layer)
  }

  async start() {
    this.buildPane();
    this.status("Loading the Typst compiler…");
    this.compiler = new TypstCompilerClient(this.config);
    [this.renderer] = await Promise.all([rendererStart(this.config.rendererWasmUrl), this.compiler.ready]);
    await this.loadFiles();
    // The editor bundle publishes its editors when it starts (frontend/src/editor/main.js); by now, with the
    // compiler loaded, it has, whichever script ran first.
    this.editor = (window.quireEditors || [])[0] || null;
    this.editor?.live.text.observe(() => this.edited());
    document.body.addEventListener("quire:project-changed", (event) => {
      if (["tree", "all"].includes(event.detail?.what)) this.loadFiles().then(() => this.schedule());
    });
    this.schedule();
  }

  buildPane() {
    const bar = this.pane.querySelector(".pdf-bar");
    this.pdfPages = this.pane.querySelector("[data-pdf-pages]");
    this.toggle = document.createElement("span");
    this.toggle.className = "preview-toggle";
    this.toggle.setAttribute("role", "group");
    this.toggle.setAttribute("aria-label", "Show");
    this.liveButton = this.button("Live preview", "live");
    this.pdfButton = this.button("Last build's PDF", "pdf");
    this.toggle.append(this.liveButton, this.pdfButton);
    bar.prepend(this.toggle);
    this.message = document.createElement("p");
    this.message.className = "pdf-message muted small";
    this.message.dataset.typstPreviewStatus = "";
    this.message.setAttribute("role", "status");
    this.pages = document.createElement("div");
    this.pages.className = "pdf-pages typst-preview-pages";
    this.pages.dataset.typstPreviewPages = "";
    this.pages.setAttribute("aria-label", "Live preview");
    this.pdfPages.after(this.message, this.pages);
    // A page open on a file the pane previews itself (an Office file) starts on the pane's PDF; and whatever
    // asks the pane for a PDF place (a library hit, *Show in PDF*) is answered with the PDF shown.
    this.show(document.querySelector("[data-live-editor]") ? "live" : "pdf");
    for (const name of ["quire:show-pdf", "quire:show-in-pdf"]) document.addEventListener(name, () => this.show("pdf"));
    // …but *Show in PDF* (Ctrl+Alt+J) while the live preview shows (and has rendered) is the preview's: it marks
    // the cursor line's place itself, and neither the listener above nor the PDF pane's SyncTeX (both on
    // document) hear it. With the PDF shown, SyncTeX answers, as before.
    window.addEventListener(
      "quire:show-in-pdf",
      (event) => {
        if (this.pane.dataset.previewShowing !== "live" || !this.renderer) return;
        event.stopImmediatePropagation();
        this.showInPreview(event.detail).catch((error) => this.status(`The preview could not find that line: ${error.message}`));
      },
      { capture: true },
    );
    // A click on a page opens the source line that made that place, as Ctrl+click does in the PDF.
    this.pages.addEventListener("click", (event) => {
      const canvas = event.target.closest?.("canvas[data-page]");
      if (!canvas) return;
      this.openSourceAt(canvas, event).catch((error) => this.status(`The preview could not find that place: ${error.message}`));
    });
  }

  button(label, showing) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "small";
    button.textContent = label;
    button.dataset.previewShow = showing;
    button.addEventListener("click", () => this.show(showing));
    return button;
  }

  show(showing) {
    const live = showing === "live";
    this.pages.hidden = this.message.hidden = !live;
    this.pdfPages.hidden = live;
    this.liveButton.setAttribute("aria-pressed", String(live));
    this.pdfButton.setAttribute("aria-pressed", String(!live));
    this.pane.dataset.previewShowing = showing;
  }

  status(text) {
    this.message.textContent = text;
  }

  openPath() {
    return this.editor ? document.querySelector("[data-live-editor]")?.dataset.path || null : null;
  }

  // Every file of the project but the open one, as the server has it now.
  async loadFiles() {
    const response = await fetch(this.config.filesUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`the file list: the server answered ${response.status}`);
    const entries = (await response.json()).filter((entry) => entry.kind !== "folder");
    const loaded = await Promise.all(
      entries.map(async (entry) => {
        const file = await fetch(`${this.config.filesUrl}/${pathUrl(entry.path)}`, { credentials: "same-origin" });
        return [entry.path, new Uint8Array(await file.arrayBuffer())];
      }),
    );
    this.files = new Map(loaded.map(([path, bytes]) => [path, path.endsWith(".typ") ? { text: decoder.decode(bytes) } : { bytes }]));
    this.compiler.files(
      [...this.files].map(([path, file]) => ({ path, ...file })),
      { replace: true },
    );
  }

  edited() {
    this.revision += 1;
    this.state.edits = this.revision;
    this.typedAt ??= performance.now();
    this.schedule();
  }

  // One compile at a time; edits made meanwhile are compiled together right after it. An edit is announced
  // from inside the editor's update (Yjs observers run synchronously), when the editor takes no new
  // transaction: the run starts once that update is over.
  schedule() {
    this.pending = true;
    if (this.running) return;
    this.running = true;
    queueMicrotask(() => this.run());
  }

  async run() {
    try {
      while (this.pending) {
        this.pending = false;
        await this.compileAndRender();
      }
    } catch (error) {
      this.status(`The preview stopped: ${error.message}`);
      throw error;
    } finally {
      this.running = false;
    }
  }

  async compileAndRender() {
    const revision = this.revision;
    const typedAt = this.typedAt;
    this.typedAt = null;
    const openPath = this.openPath();
    const text = openPath ? this.editor.live.text.toString() : null;
    const refused = this.registryRefusals(openPath, text);
    let diagnostics = refused;
    if (refused.length === 0) {
      const compiled = await this.compiler.compile({ entryPath: this.config.entryPath, path: openPath, text });
      diagnostics = compiled.diagnostics.map(fromTypst);
      if (compiled.vector) await this.render(compiled.vector);
    }
    this.report(diagnostics, openPath, { revision, typedAt });
  }

  // As the build: a project naming a registry package is refused before compiling, with the build's words.
  registryRefusals(openPath, openText) {
    const uses = [];
    for (const [path, file] of this.files) {
      if (path === openPath || !path.endsWith(".typ")) continue;
      uses.push(...registryPackageUses(path, file.text));
    }
    if (openPath?.endsWith(".typ")) uses.push(...registryPackageUses(openPath, openText));
    return uses.map((use) => ({
      path: use.path,
      line: use.line,
      character: use.column,
      endCharacter: use.column + use.length,
      severity: "error",
      message: use.message,
    }));
  }

  // One render session for the page's life: each compile resets it to the new document, and a page whose
  // content did not change keeps its canvas (the renderer's cache key says so).
  async session() {
    this.renderSession ??= await new Promise((resolve) => {
      this.renderer.runWithSession((session) => new Promise(() => resolve(session)));
    });
    return this.renderSession;
  }

  // One at a time on the render session: a render, or reading the text layer for the map.
  exclusive(work) {
    const turn = this.sessionTurn.then(work);
    this.sessionTurn = turn.catch(() => {});
    return turn;
  }

  render(vector) {
    return this.exclusive(() => this.renderNow(vector));
  }

  async renderNow(vector) {
    const session = await this.session();
    session.manipulateData({ action: "reset", data: vector });
    const pages = session.retrievePagesInfo();
    this.pageInfos = pages.map(({ pageOffset, width, height }) => ({ pageOffset, width, height }));
    this.generation += 1;
    this.mark?.remove();
    const canvases = [...this.pages.querySelectorAll("canvas")];
    while (canvases.length < pages.length) canvases.push(this.pages.appendChild(this.pageCanvas()));
    canvases.splice(pages.length).forEach((canvas) => canvas.remove());
    const paneWidth = this.pages.clientWidth || 800;
    for (const [index, page] of pages.entries()) {
      const canvas = canvases[index];
      // Sharp at the pane's width on this screen, whatever the zoom.
      const pixelPerPt = Math.min(4, Math.max(1, (paneWidth * (window.devicePixelRatio || 1)) / page.width));
      const width = Math.ceil(page.width * pixelPerPt);
      const height = Math.ceil(page.height * pixelPerPt);
      if (canvas.width !== width || canvas.height !== height) {
        canvas.width = width;
        canvas.height = height;
        delete canvas.dataset.cacheKey;
      }
      const result = await session.renderCanvas({
        canvas: canvas.getContext("2d"),
        pageOffset: page.pageOffset,
        pixelPerPt,
        backgroundColor: "#ffffff",
        cacheKey: canvas.dataset.cacheKey,
        dataSelection: { body: true, semantics: false },
      });
      canvas.dataset.cacheKey = result.cacheKey;
      canvas.dataset.page = String(index + 1);
    }
  }

  // Where the shown pages' text came from, made from the renderer's semantic layer once per render, when asked.
  textMapNow() {
    return this.exclusive(async () => {
      if (this.textMap?.generation === this.generation) return this.textMap.runs;
      const generation = this.generation;
      const session = await this.session();
      const runs = [];
      for (const [index, page] of this.pageInfos.entries()) {
        const result = await session.renderCanvas({
          pageOffset: page.pageOffset,
          dataSelection: { body: false, semantics: true },
        });
        runs.push(...runsOf((result.htmlSemantics || []).join(""), index + 1));
      }
      this.textMap = { generation, runs };
      return runs;
    }).then((runs) => new PreviewMap(runs.map((run) => ({ ...run })), this.sources()));
  }

  // The project's Typst sources as they are now: the open file's live text first.
  sources() {
    const sources = new Map();
    const openPath = this.openPath();
    if (openPath) sources.set(openPath, this.editor.live.text.toString());
    for (const [path, file] of this.files) if (path !== openPath && path.endsWith(".typ")) sources.set(path, file.text);
    return sources;
  }

  async openSourceAt(canvas, event) {
    const page = this.pageInfos[Number(canvas.dataset.page) - 1];
    if (!page) return;
    const box = canvas.getBoundingClientRect();
    const scale = box.width / page.width;
    const point = { page: Number(canvas.dataset.page), x: (event.clientX - box.left) / scale, y: (event.clientY - box.top) / scale };
    const map = await this.textMapNow();
    const place = map.sourceAt(point);
    document.dispatchEvent(new CustomEvent("quire:preview-clicked", { detail: { ...point, place } }));
    if (place) openLocation(place.file, place.line);
  }

  async showInPreview({ file, line }) {
    const map = await this.textMapNow();
    const place = map.placeOf(file, line);
    this.mark?.remove();
    if (!place) {
      this.status(`No place in the preview comes from ${file}:${line}.`);
      this.message.hidden = false;
      return;
    }
    const canvas = this.pages.querySelector(`canvas[data-page="${place.page}"]`);
    if (!canvas) return;
    const scale = canvas.clientWidth / this.pageInfos[place.page - 1].width;
    const mark = document.createElement("div");
    mark.className = "pdf-highlight typst-preview-mark";
    mark.dataset.typstPreviewMark = "";
    mark.dataset.page = String(place.page);
    mark.dataset.line = String(line);
    const pad = 2;
    Object.assign(mark.style, {
      left: `${canvas.offsetLeft + (place.x - pad) * scale}px`,
      top: `${canvas.offsetTop + (place.y - pad) * scale}px`,
      width: `${Math.max(place.width + 2 * pad, 20) * scale}px`,
      height: `${Math.max(place.height + 2 * pad, 8) * scale}px`,
    });
    this.pages.append(mark);
    this.mark = mark;
    this.pages.scrollTop = canvas.offsetTop + place.y * scale - this.pages.clientHeight / 3;
  }

  pageCanvas() {
    const canvas = document.createElement("canvas");
    canvas.className = "typst-preview-page";
    // Styles set through the CSSOM, which the page's Content-Security-Policy allows (style attributes it refuses).
    Object.assign(canvas.style, { display: "block", width: "100%", height: "auto", margin: "0 auto 12px", boxShadow: "0 1px 4px rgba(0,0,0,.25)" });
    return canvas;
  }

  report(diagnostics, openPath, { revision, typedAt }) {
    const errors = diagnostics.filter((found) => found.severity !== "warning");
    const warnings = diagnostics.filter((found) => found.severity === "warning");
    if (this.editor) diagnosticsShow(this.editor.view, diagnostics.filter((found) => found.path === openPath));
    const first = errors[0];
    this.status(
      first
        ? `${errors.length} error${errors.length === 1 ? "" : "s"}: ${first.path}:${first.line}: ${first.message}`
        : warnings.length
          ? `${warnings.length} warning${warnings.length === 1 ? "" : "s"}`
          : "",
    );
    this.message.hidden = this.pages.hidden || !this.message.textContent;
    const renderedAt = performance.now();
    const detail = {
      revision,
      typedAt,
      renderedAt,
      milliseconds: typedAt === null ? null : renderedAt - typedAt,
      errors,
      warnings,
    };
    Object.assign(this.state, detail, { rendered: this.state.rendered + 1 });
    document.dispatchEvent(new CustomEvent("quire:preview-rendered", { detail }));
  }
}

function start() {
  const root = document.querySelector("[data-typst-preview]");
  const pane = document.querySelector("[data-pdf-pane]");
  if (!root || !pane) return;
  const { entryPath, filesUrl, compilerWorker, compilerWasm, rendererWasm, fontsUrl } = root.dataset;
  const config = {
    entryPath,
    filesUrl,
    workerUrl: compilerWorker,
    compilerWasmUrl: compilerWasm,
    rendererWasmUrl: rendererWasm,
    fontsUrl,
  };
  new TypstPreview(config, pane).start();
}

start();
