// The History panel: the version list (list.js) on one side, the selected file's diff (diff.js) on the other,
// with the restore controls (restore.js) and the labels (labels.js). A selection shows the version against the
// one before it, or against the current files; side by side or unified.
import { comparisonLoad, sameFiles } from "./comparison.js";
import { fileDiffShow } from "./diff.js";
import { element } from "./elements.js";
import { Labels } from "./labels.js";
import { VersionList } from "./list.js";
import { HistoryApi } from "./requests.js";
import { RestoreControls, fileRestoreTarget } from "./restore.js";

export class HistoryPanel {
  constructor(root) {
    const api = new HistoryApi(root.dataset.projectId);
    const say = (text, isError) => this.say(text, isError);
    this.api = api;
    this.status = root.querySelector("[data-history-status]");
    this.diff = root.querySelector("[data-history-diff]");
    this.againstCurrent = root.querySelector("[data-history-against-current]");
    this.layoutButtons = [...root.querySelectorAll("[data-history-layout]")];
    this.layout = "split";
    this.selected = null; // {version, path}
    this.teardown = []; // what takes the shown diff's editors down
    this.diffRequest = 0;
    this.list = new VersionList(root, api, { select: (version, path) => this.select(version, path) });
    this.list.install(() => this.filtersChanged());
    this.restore = new RestoreControls(root, api, { restored: () => this.listReload(), say });
    this.labels = new Labels(root, api, {
      view: (number) => this.versionView(number),
      labelled: () => this.listReload(),
      say,
    });
    this.againstCurrent.addEventListener("change", () => this.selected && this.diffShow());
    this.againstVersion = root.querySelector("[data-history-against-version]");
    this.againstVersion?.addEventListener("change", () => this.selected && this.diffShow());
    for (const button of this.layoutButtons) {
      button.addEventListener("click", () => this.layoutSet(button.dataset.historyLayout));
    }
    root.querySelector("[data-history-refresh]").addEventListener("click", () => this.refresh());
  }

  say(text, isError = false) {
    this.status.textContent = text;
    this.status.classList.toggle("error", isError);
  }

  refresh() {
    return Promise.all([this.listReload(), this.labels.load()]);
  }

  /** The list from its start; the selection is kept while its version is listed, else the newest is shown. */
  async listReload(start) {
    try {
      if (!(await this.list.load(start))) return;
    } catch (error) {
      this.say(error.message || "The history could not be loaded.", true);
      return;
    }
    const kept = this.selected && this.list.versions.get(this.selected.version.id);
    const shown = kept || this.list.newest();
    if (shown) this.select(shown, kept ? this.selected.path : null);
    else this.diffReplace(element("p", { className: "muted" }, "No version to show."));
  }

  /** A file chosen in the filter is the one to show; clearing the filter keeps the file shown. */
  filtersChanged() {
    const { path } = this.list.filters();
    if (this.selected && path) this.selected.path = path;
    return this.listReload();
  }

  /** A label's version: the list starts there, unfiltered, with that version selected. */
  async versionView(number) {
    this.list.filtersClear();
    this.selected = null;
    await this.listReload(number + 1);
  }

  /** Show `path`'s diff in `version`; without a path, the filtered file's or the version's first file's. */
  select(version, path) {
    const paths = version.changes.map((change) => change.path);
    const filtered = this.list.filters().path;
    const chosen = path ?? (paths.includes(filtered) ? filtered : (paths[0] ?? null));
    this.selected = { version, path: chosen };
    this.list.mark(version, chosen);
    this.diffShow();
  }

  layoutSet(layout) {
    this.layout = layout;
    for (const button of this.layoutButtons) {
      button.setAttribute("aria-pressed", String(button.dataset.historyLayout === layout));
    }
    if (this.selected) this.diffShow();
  }

  diffReplace(...nodes) {
    this.teardown.forEach((destroy) => destroy());
    this.teardown = [];
    this.diff.replaceChildren(...nodes);
  }

  async diffShow() {
    const { version, path } = this.selected;
    const request = ++this.diffRequest;
    this.restore.show({ file: null, version });
    if (!path) {
      this.diffReplace(element("p", { className: "muted" }, "This version changed no files."));
      return;
    }
    let comparison;
    this.diff.setAttribute("aria-busy", "true");
    try {
      const other = Number.parseInt(this.againstVersion?.value || "", 10);
      comparison = await comparisonLoad(this.api, {
        version,
        path,
        againstCurrent: this.againstCurrent.checked,
        againstVersion: Number.isInteger(other) && other > 0 ? other : null,
      });
    } catch (error) {
      const message = error.message || "The diff could not be loaded.";
      if (request === this.diffRequest) this.diffReplace(element("p", { className: "error" }, message));
      return;
    } finally {
      if (request === this.diffRequest) this.diff.removeAttribute("aria-busy");
    }
    if (request !== this.diffRequest) return; // a later selection's diff is (or will be) shown instead
    this.diffReplace(
      element(
        "p",
        { className: "history-comparing small muted", "data-history-comparing": true },
        `${comparison.older} → ${comparison.newer}`,
      ),
    );
    if (comparison.files.length === 0) this.diff.append(sameFiles(comparison, path));
    const sides = { older: comparison.older, newer: comparison.newer };
    for (const file of comparison.files) {
      this.teardown.push(fileDiffShow(this.diff, file, { layout: this.layout, sides }));
    }
    const first = comparison.files[0];
    this.restore.show({ file: first ? fileRestoreTarget(comparison, first, version) : null, version });
  }
}
