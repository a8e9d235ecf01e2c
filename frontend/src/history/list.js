// The History panel's list of versions, newest first: a page at a time ("Load more" asks for the next), filtered
// by file and by author, or starting at a label's version. The filters offer every file and author the list has
// shown, besides the current files and members the page was rendered with.
import { element } from "./elements.js";
import { versionItem } from "./versions.js";

function optionsAdd(select, values) {
  const known = new Set([...select.options].map((option) => option.value));
  for (const value of values) {
    if (!value || known.has(value)) continue;
    known.add(value);
    select.append(element("option", { value }, value));
  }
}

export class VersionList {
  constructor(root, api, { select }) {
    this.api = api;
    this.select = select;
    this.items = root.querySelector("[data-history-versions]");
    this.more = root.querySelector("[data-history-more]");
    this.pathFilter = root.querySelector("[data-history-path]");
    this.authorFilter = root.querySelector("[data-history-author]");
    this.from = root.querySelector("[data-history-from]");
    this.versions = new Map();
    this.next = null;
    this.start = null; // the `before` of the first page: null for the newest versions
    this.request = 0;
  }

  /** Calls `changed()` when the reader changes the filters or goes back to the newest versions. */
  install(changed) {
    for (const filter of [this.pathFilter, this.authorFilter]) filter.addEventListener("change", () => changed());
    this.from.querySelector("button").addEventListener("click", () => {
      this.start = null;
      changed();
    });
    this.more.addEventListener("click", () => this.loadMore());
  }

  filters() {
    return { path: this.pathFilter.value, author: this.authorFilter.value };
  }

  filtersClear() {
    this.pathFilter.value = "";
    this.authorFilter.value = "";
  }

  /** The first page again (from version `start - 1` down when given); false when a newer load overtook it. */
  async load(start = this.start) {
    this.start = start;
    const request = ++this.request;
    const page = await this.api.versions({ ...this.filters(), before: start });
    if (request !== this.request) return false;
    this.versions.clear();
    this.items.replaceChildren();
    this.from.hidden = start === null;
    this.from.querySelector("[data-history-from-version]").textContent = String(start - 1);
    this.append(page);
    if (this.versions.size === 0) this.items.append(element("li", { className: "muted" }, "No versions match."));
    return true;
  }

  async loadMore() {
    const request = this.request;
    this.more.disabled = true;
    try {
      const page = await this.api.versions({ ...this.filters(), before: this.next });
      if (request === this.request) this.append(page);
    } finally {
      this.more.disabled = false;
    }
  }

  append({ versions, next }) {
    for (const version of versions) {
      this.versions.set(version.id, version);
      this.items.append(versionItem(version, this.select));
      optionsAdd(this.authorFilter, version.authors);
      optionsAdd(this.pathFilter, version.changes.flatMap((change) => [change.path, change.old_path]));
    }
    this.next = next;
    this.more.hidden = next === null;
  }

  newest() {
    return this.versions.values().next().value ?? null;
  }

  /** Show which version and file are selected. */
  mark(version, path) {
    for (const item of this.items.querySelectorAll(".history-version")) {
      const chosen = item.dataset.version === String(version.id);
      if (chosen) item.setAttribute("aria-current", "true");
      else item.removeAttribute("aria-current");
      for (const button of item.querySelectorAll(".history-change")) {
        button.setAttribute("aria-pressed", String(chosen && button.dataset.path === path));
      }
    }
  }
}
