// The pages of one PDF in a scrolling column: a placeholder per page at its size, rendered into a canvas
// when it comes into view, re-rendered at a new zoom. Positions are kept as (page, fraction of the page)
// so that a newer build of the same document opens where the author was reading.
const RENDER_MARGIN = "600px"; // pages this close to the view are rendered before they scroll in

export class PageView {
  constructor(container) {
    this.container = container;
    this.document = null;
    this.sizes = []; // [width, height] in PDF points, per page
    this.elements = [];
    this.rendered = new Map(); // page → scale it was drawn at
    this.scale = null; // CSS pixels per PDF point; null: fit the width
    this.onPageChange = () => {};
    this.observer = new IntersectionObserver((entries) => this.visible(entries), {
      root: container,
      rootMargin: RENDER_MARGIN,
    });
    container.addEventListener("scroll", () => this.onPageChange(this.currentPage()), { passive: true });
    new ResizeObserver(() => this.scale === null && this.layout()).observe(container);
  }

  async load(document_, keep) {
    const old = this.document;
    const sizes = [];
    for (let number = 1; number <= document_.numPages; number += 1) {
      const page = await document_.getPage(number);
      const { width, height } = page.getViewport({ scale: 1 });
      sizes.push([width, height]);
    }
    // Only now, all at once: until here the old document stays shown and answers (a test, the page input).
    this.document = document_;
    this.sizes = sizes;
    this.build();
    if (keep) this.restore(keep);
    this.onPageChange(this.currentPage());
    if (old) old.loadingTask.destroy(); // PDF.js frees a document through the task that loaded it
  }

  build() {
    this.observer.disconnect();
    this.container.replaceChildren();
    this.rendered.clear();
    this.elements = this.sizes.map((_, index) => {
      const element = document.createElement("div");
      element.className = "pdf-page";
      element.dataset.page = String(index + 1);
      this.container.append(element);
      this.observer.observe(element);
      return element;
    });
    this.layout();
  }

  effectiveScale(page = 1) {
    if (this.scale !== null) return this.scale;
    const width = this.sizes[page - 1]?.[0] || 612;
    return Math.max(0.25, (this.container.clientWidth - 24) / width);
  }

  layout() {
    this.elements.forEach((element, index) => {
      const [width, height] = this.sizes[index];
      const scale = this.effectiveScale(index + 1);
      element.style.width = `${Math.floor(width * scale)}px`;
      element.style.height = `${Math.floor(height * scale)}px`;
    });
    for (const [page, scale] of this.rendered) {
      if (Math.abs(scale - this.effectiveScale(page)) > 0.01) this.render(page);
    }
  }

  visible(entries) {
    for (const entry of entries) {
      const page = Number(entry.target.dataset.page);
      if (entry.isIntersecting && !this.rendered.has(page)) this.render(page);
    }
  }

  async render(number) {
    const scale = this.effectiveScale(number);
    this.rendered.set(number, scale);
    const page = await this.document.getPage(number);
    const viewport = page.getViewport({ scale: scale * window.devicePixelRatio });
    const canvas = document.createElement("canvas");
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    await page.render({ canvasContext: canvas.getContext("2d"), viewport }).promise;
    const element = this.elements[number - 1];
    element.querySelector("canvas")?.remove();
    element.prepend(canvas);
  }

  zoomBy(factor) {
    const keep = this.position();
    this.scale = Math.min(6, Math.max(0.2, this.effectiveScale(this.currentPage()) * factor));
    this.layout();
    this.restore(keep);
  }

  fitWidth() {
    const keep = this.position();
    this.scale = null;
    this.layout();
    this.restore(keep);
  }

  currentPage() {
    const middle = this.container.scrollTop + this.container.clientHeight / 3;
    if (this.elements.length === 0) return 1;
    const index = this.elements.findIndex((element) => element.offsetTop + element.offsetHeight > middle);
    return index === -1 ? this.elements.length : index + 1;
  }

  position() {
    const page = this.currentPage();
    const element = this.elements[page - 1];
    if (!element) return null;
    return { page, fraction: (this.container.scrollTop - element.offsetTop) / element.offsetHeight };
  }

  restore({ page, fraction }) {
    const element = this.elements[Math.min(page, this.elements.length) - 1];
    if (element) this.container.scrollTop = element.offsetTop + fraction * element.offsetHeight;
  }

  goTo(page) {
    const element = this.elements[Math.max(1, Math.min(page, this.elements.length)) - 1];
    if (element) this.container.scrollTop = element.offsetTop - 8;
    this.onPageChange(this.currentPage());
  }

  /** Mark a rectangle (PDF points from the page's top left) and scroll it into view. */
  highlight(page, { x, y, width, height }) {
    const element = this.elements[page - 1];
    if (!element) return;
    const scale = this.effectiveScale(page);
    const mark = document.createElement("div");
    mark.className = "pdf-highlight";
    Object.assign(mark.style, {
      left: `${x * scale}px`,
      top: `${y * scale}px`,
      width: `${Math.max(width, 20) * scale}px`,
      height: `${Math.max(height, 8) * scale}px`,
    });
    element.append(mark);
    this.container.scrollTop = element.offsetTop + y * scale - this.container.clientHeight / 3;
    setTimeout(() => mark.remove(), 2500);
  }

  /** The point of a click, in PDF points from the page's top left. */
  pointOf(event) {
    const element = event.target.closest(".pdf-page");
    if (!element) return null;
    const page = Number(element.dataset.page);
    const box = element.getBoundingClientRect();
    const scale = this.effectiveScale(page);
    return { page, x: (event.clientX - box.left) / scale, y: (event.clientY - box.top) / scale };
  }

  async pageText(number) {
    const page = await this.document.getPage(number);
    const content = await page.getTextContent();
    return content.items.map((item) => item.str).join(" ");
  }

  clear() {
    this.observer.disconnect();
    this.container.replaceChildren();
    this.elements = [];
    if (this.document) this.document.loadingTask.destroy();
    this.document = null;
  }
}
