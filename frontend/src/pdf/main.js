// The PDF pane: the project's PDF beside the editor (its newest build, whoever built it), a library document
// or an Office file's preview, rendered with PDF.js. It enhances `[data-pdf-pane]`; without this script the
// page keeps its download links.
//
// What it shows comes from the build status the page polls and asks for again whenever the project's events
// say the output changed (`#build-status`, processing/build_panel.html): a newer PDF replaces the shown one at
// the same page and place. A library document is shown on a `quire:show-pdf` event ({url, page, title}), an
// Office file's preview when the page has one (`[data-office-preview]`). The bytes are fetched with the
// session, under the same per-request authorization as the download: a member who lost access gets nothing.
import * as pdfjs from "pdfjs-dist";

import { synctexInstall } from "./synctex.js";
import { PageView } from "./pages.js";

pdfjs.GlobalWorkerOptions.workerSrc = new URL("pdf.worker.js", import.meta.url).href;

const ZOOM_STEP = 1.2;

class PdfPane {
  constructor(root) {
    this.root = root;
    this.pages = root.querySelector("[data-pdf-pages]");
    this.message = root.querySelector("[data-pdf-message]");
    this.pageInput = root.querySelector("[data-pdf-page]");
    this.countLabel = root.querySelector("[data-pdf-count]");
    this.title = root.querySelector("[data-pdf-title]");
    this.back = root.querySelector("[data-pdf-back]");
    this.view = new PageView(this.pages);
    this.source = null; // {url, jobId, synctexUrl, kind}
    this.loading = null;
    this.refused = false;
    this.controlsWire();
  }

  controlsWire() {
    const on = (selector, handler) => this.root.querySelector(selector)?.addEventListener("click", handler);
    on("[data-pdf-prev]", () => this.view.goTo(this.view.currentPage() - 1));
    on("[data-pdf-next]", () => this.view.goTo(this.view.currentPage() + 1));
    on("[data-pdf-zoom-in]", () => this.view.zoomBy(ZOOM_STEP));
    on("[data-pdf-zoom-out]", () => this.view.zoomBy(1 / ZOOM_STEP));
    on("[data-pdf-fit]", () => this.view.fitWidth());
    this.pageInput?.addEventListener("change", () => this.view.goTo(Number(this.pageInput.value)));
    this.view.onPageChange = (page) => {
      if (this.pageInput) this.pageInput.value = String(page);
      this.root.dataset.page = String(page);
    };
  }

  /** Show the PDF at `url` (a newer build's replaces the shown one in place). */
  async show({ url, jobId = "", synctexUrl = "", kind = "build", page = null, title = "" }) {
    if (!url || this.refused) return;
    if (this.source && this.source.url === url) {
      if (page) this.view.goTo(page);
      return;
    }
    const keep = this.source && this.source.kind === kind && kind === "build" ? this.view.position() : null;
    this.source = { url, jobId, synctexUrl, kind };
    this.root.dataset.jobId = jobId;
    this.root.dataset.kind = kind;
    if (this.title) this.title.textContent = title;
    if (this.back) this.back.hidden = kind === "build" || !buildStatusSource();
    if (kind !== "build") this.say("Loading…");
    const loading = (this.loading = pdfjs.getDocument({ url, withCredentials: true, isEvalSupported: false }).promise);
    let document_;
    try {
      document_ = await loading;
    } catch (error) {
      if (loading === this.loading) this.fail(error);
      return;
    }
    if (loading !== this.loading) return; // a newer one was asked for meanwhile
    this.say("");
    try {
      await this.view.load(document_, keep);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (this.countLabel) this.countLabel.textContent = String(document_.numPages);
    if (page) this.view.goTo(page);
    this.root.dataset.loadedUrl = url;
    this.root.dispatchEvent(new CustomEvent("quire:pdf-shown", { bubbles: true, detail: { url, jobId } }));
  }

  /** The status no longer names a PDF this author may see: let the shown one go. */
  withdraw() {
    this.refused = true;
    this.source = null;
    this.loading = null;
    this.view.clear();
    delete this.root.dataset.loadedUrl;
    this.say("This PDF is no longer available to you.");
  }

  fail(error) {
    const status = error && (error.status || (error.name === "ResponseException" && error.status));
    if (status === 404 || status === 403 || status === 401) {
      this.refused = true; // access is gone: stop asking
      this.view.clear();
      this.say("This PDF is no longer available to you.");
    } else {
      this.say("The PDF could not be shown; it is still in Tasks.");
    }
  }

  say(text) {
    if (!this.message) return;
    this.message.textContent = text;
    this.message.hidden = !text;
  }
}

function buildStatusSource() {
  const status = document.getElementById("build-status");
  if (!status || !status.dataset.pdfUrl) return null;
  const { pdfUrl, pdfJobId, synctexUrl } = status.dataset;
  return { url: pdfUrl, jobId: pdfJobId, synctexUrl: synctexUrl || "", kind: "build" };
}

function start() {
  const root = document.querySelector("[data-pdf-pane]");
  if (!root) return;
  const pane = new PdfPane(root);
  const follow = () => {
    if (pane.source && pane.source.kind !== "build") {
      if (pane.back) pane.back.hidden = !buildStatusSource(); // a library document or a preview is being read
      return;
    }
    const source = buildStatusSource();
    if (source) pane.show(source);
    else if (pane.source && document.getElementById("build-status")) pane.withdraw(); // access is gone
  };
  document.body.addEventListener("htmx:afterSettle", follow);
  document.addEventListener("quire:show-pdf", (event) => pane.show({ kind: "library", ...event.detail }));
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-show-pdf]"); // a library document, or a search hit's page
    if (!button) return;
    const page = Number(button.dataset.page) || null;
    pane.show({ kind: "library", url: button.dataset.showPdf, page, title: button.dataset.title || "" });
    root.scrollIntoView({ block: "nearest" });
  });
  document.addEventListener("quire:show-build-pdf", () => {
    pane.source = null;
    follow();
  });
  pane.back?.addEventListener("click", () => document.dispatchEvent(new CustomEvent("quire:show-build-pdf")));
  document.body.addEventListener("quire:access-lost", () => pane.withdraw());
  document.body.addEventListener("quire:signed-out", () => pane.withdraw());
  synctexInstall(pane);
  const preview = document.querySelector("[data-office-preview]");
  if (preview) pane.show({ kind: "preview", url: preview.dataset.src, title: preview.dataset.title });
  else follow();
  window.quirePdf = pane; // tests read the shown document here
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
