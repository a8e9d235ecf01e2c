// The file tree (workspace/tree.html): made, renamed, moved and deleted by menu or by drag and drop; files and
// zips dropped (or picked) are uploaded into the folder they land on. Every change goes through the API and
// the tree is asked for again, as it is whenever the project's events say someone changed it.
import { call, pathUrl } from "./api.js";

const DRAGGED = "application/x-quire-path";

function basename(path) {
  return path.slice(path.lastIndexOf("/") + 1);
}

function folderOf(path) {
  return path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
}

function joined(folder, name) {
  return folder ? `${folder}/${name}` : name;
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** A question in the page's dialog: resolves to the text typed (or "" when there is no field), null if cancelled. */
function ask(dialog, { title, text = "", label = "", value = null, ok = "OK" }) {
  dialog.querySelector("[data-tree-dialog-title]").textContent = title;
  dialog.querySelector("[data-tree-dialog-text]").textContent = text;
  dialog.querySelector("[data-tree-dialog-ok]").textContent = ok;
  const field = dialog.querySelector("[data-tree-dialog-field]");
  const input = dialog.querySelector("[data-tree-dialog-input]");
  field.hidden = value === null;
  dialog.querySelector("[data-tree-dialog-label]").textContent = label;
  input.value = value ?? "";
  input.required = value !== null;
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "ok" ? (value === null ? "" : input.value.trim()) : null),
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    if (value !== null) {
      input.focus();
      const stem = input.value.lastIndexOf(".");
      input.setSelectionRange(input.value.lastIndexOf("/") + 1, stem > 0 ? stem : input.value.length);
    }
  });
}

export class FileTree {
  constructor(page) {
    this.page = page;
    this.project = page.dataset.projectId;
    this.slot = page.querySelector("[data-tree-slot]");
    this.status = page.querySelector("[data-tree-status]");
    this.dialog = document.querySelector("[data-tree-dialog]");
    this.api = `/v1/projects/${this.project}`;
    this.menu = null;
  }

  install() {
    document.body.addEventListener("quire:project-changed", (event) => {
      if (["tree", "all"].includes(event.detail.what)) this.refresh();
    });
    this.slot.addEventListener("click", (event) => {
      const button = event.target.closest("[data-tree-menu]");
      if (button) this.menuOpen(button.closest(".tree-row"), button);
    });
    document.addEventListener("click", (event) => {
      if (this.menu && !event.target.closest(".tree-menu, [data-tree-menu]")) this.menuClose();
    });
    document.addEventListener("keydown", (event) => event.key === "Escape" && this.menuClose());
    this.page.querySelector("[data-tree-new-file]")?.addEventListener("click", () => this.fileNew(""));
    this.page.querySelector("[data-tree-new-folder]")?.addEventListener("click", () => this.folderNew(""));
    const picker = this.page.querySelector("[data-tree-upload-input]");
    picker?.addEventListener("change", () => {
      this.upload([...picker.files], picker.dataset.into || "");
      picker.value = "";
      delete picker.dataset.into;
    });
    this.dragAndDrop();
  }

  mayEdit() {
    return this.slot.querySelector("[data-tree]")?.dataset.mayEdit === "true";
  }

  say(text, isError = false) {
    if (!this.status) return;
    this.status.textContent = text;
    this.status.hidden = !text;
    this.status.classList.toggle("error", isError);
  }

  /** Show the tree as it is now. While a row is dragged the redraw waits for the drop: Chromium ends a drag
   * without a drop when its source row leaves the page, as a co-author's change would make it. */
  async refresh() {
    if (this.dragging) {
      this.slot.dataset.stale = "true";
      return;
    }
    const selected = this.page.dataset.selectedFileId || "";
    const response = await fetch(`${this.page.dataset.treeUrl}?selected=${selected}`, {
      credentials: "same-origin",
      headers: { "HX-Request": "true" },
    });
    if (!response.ok) return;
    const html = await response.text();
    if (this.dragging) {
      this.slot.dataset.stale = "true";
      return;
    }
    this.menuClose();
    if (html !== this.shown) this.slot.innerHTML = html;
    this.shown = html;
    const paths = new Map(
      [...this.slot.querySelectorAll("[data-file-id]")].map((row) => [row.dataset.fileId, row.dataset.path]),
    );
    document.dispatchEvent(new CustomEvent("quire:tree-updated", { detail: { paths } }));
  }

  /** Run a change, say what went wrong if it did, and show the tree as it is now. */
  async change(action, done = "") {
    try {
      const result = await action();
      this.say(done);
      await this.refresh();
      return result;
    } catch (error) {
      this.say(error.message || "That did not work.", true);
      return undefined;
    }
  }

  // --- the row menu ------------------------------------------------------------------------------------

  menuOpen(row, button) {
    this.menuClose();
    const { path, kind } = row.dataset;
    const folder = kind === "folder";
    const items = folder
      ? [
          ["New file here…", () => this.fileNew(path)],
          ["New folder here…", () => this.folderNew(path)],
          ["Upload here…", () => this.pick(path)],
          ["Rename…", () => this.rename(row)],
          ["Move to…", () => this.moveAsk(row)],
          ["Delete…", () => this.remove(row)],
        ]
      : [
          ["Rename…", () => this.rename(row)],
          ["Move to…", () => this.moveAsk(row)],
          ["Delete…", () => this.remove(row)],
        ];
    if (row.querySelector(".badge")) items.unshift(["Convert to UTF-8", () => this.convert(path)]);
    const menu = document.createElement("div");
    menu.className = "tree-menu";
    menu.setAttribute("role", "menu");
    for (const [label, run] of items) {
      const item = document.createElement("button");
      item.type = "button";
      item.setAttribute("role", "menuitem");
      item.textContent = label;
      item.addEventListener("click", () => {
        this.menuClose();
        run();
      });
      menu.append(item);
    }
    row.append(menu);
    this.menu = menu;
    menu.querySelector("button")?.focus();
    button.setAttribute("aria-expanded", "true");
  }

  menuClose() {
    this.menu?.parentElement?.querySelector("[data-tree-menu]")?.setAttribute("aria-expanded", "false");
    this.menu?.remove();
    this.menu = null;
  }

  // --- the changes -------------------------------------------------------------------------------------

  async fileNew(folder) {
    const path = await ask(this.dialog, { title: "New text file", label: "Path", value: joined(folder, "untitled.tex"), ok: "Create" });
    if (!path) return;
    const made = await this.change(() =>
      call("PUT", `${this.api}/files/${pathUrl(path)}?kind=text`, { body: "", headers: { "Content-Type": "text/plain" } }),
    );
    if (made) window.location.assign(`?file=${encodeURIComponent(made.path)}`);
  }

  async folderNew(folder) {
    const path = await ask(this.dialog, { title: "New folder", label: "Path", value: joined(folder, "new folder"), ok: "Create" });
    if (path) await this.change(() => call("POST", `${this.api}/folders`, { json: { path } }), `Made ${path}/.`);
  }

  async rename(row) {
    const { path, kind } = row.dataset;
    const name = await ask(this.dialog, { title: `Rename ${basename(path)}`, label: "New name", value: basename(path), ok: "Rename" });
    if (name && name !== basename(path)) await this.move(path, kind, joined(folderOf(path), name));
  }

  async moveAsk(row) {
    const { path, kind } = row.dataset;
    const target = await ask(this.dialog, {
      title: `Move ${basename(path)}`,
      text: "Type the folder to move it into (empty: the project's top).",
      label: "Folder",
      value: folderOf(path),
      ok: "Move",
    });
    if (target !== null && target.replace(/\/+$/, "") !== folderOf(path)) {
      await this.move(path, kind, joined(target.replace(/^\/+|\/+$/g, ""), basename(path)));
    }
  }

  move(path, kind, newPath) {
    const route = kind === "folder" ? "folders" : "files";
    return this.change(
      () => call("PATCH", `${this.api}/${route}/${pathUrl(path)}`, { json: { path: newPath } }),
      `Moved to ${newPath}.`,
    );
  }

  async remove(row) {
    const { path, kind } = row.dataset;
    const files = Number(row.dataset.files || 0);
    const text =
      kind === "folder"
        ? files
          ? `${plural(files, "file")} in it will be deleted with it.`
          : "It is empty."
        : "Its history stays in the log; the file goes from the project.";
    const sure = await ask(this.dialog, { title: `Delete ${path}${kind === "folder" ? "/" : ""}?`, text, ok: "Delete" });
    if (sure === null) return;
    const url = kind === "folder" ? `${this.api}/folders/${pathUrl(path)}?recursive=true` : `${this.api}/files/${pathUrl(path)}`;
    await this.change(() => call("DELETE", url), `Deleted ${path}.`);
  }

  async convert(path) {
    const converted = await this.change(() => call("PATCH", `${this.api}/files/${pathUrl(path)}`, { json: { encoding: "utf-8" } }));
    if (converted) window.location.assign(`?file=${encodeURIComponent(converted.path)}`);
  }

  pick(folder) {
    const picker = this.page.querySelector("[data-tree-upload-input]");
    if (!picker) return;
    picker.dataset.into = folder;
    picker.click();
  }

  /** Upload dropped or picked files into `folder`: zips are unpacked there, the rest written as they are. */
  async upload(files, folder, overwrite = false) {
    if (!files.length) return;
    this.say(`Uploading ${plural(files.length, "file")}…`);
    const zips = files.filter((file) => file.name.toLowerCase().endsWith(".zip"));
    const plain = files.filter((file) => !zips.includes(file));
    try {
      const written = [];
      if (plain.length) written.push(...(await this.uploadPlain(plain, folder, overwrite)).written);
      for (const zip of zips) {
        const query = new URLSearchParams({ into: folder, ...(overwrite ? { overwrite: "true" } : {}) });
        const unpacked = await call("POST", `${this.api}/archive?${query}`, {
          body: zip,
          headers: { "Content-Type": "application/zip" },
        });
        written.push(...unpacked.files.map((file) => file.path));
      }
      this.say(`Uploaded ${plural(written.length, "file")}.`);
      await this.refresh();
    } catch (error) {
      if (error.code === "archive_conflicts" && !overwrite) {
        const paths = error.details.paths || [];
        const sure = await ask(this.dialog, {
          title: `Replace ${plural(paths.length, "file")}?`,
          text: `${paths.slice(0, 8).join(", ")}${paths.length > 8 ? ", …" : ""} exist already. Text open in an editor gets the new text as an edit.`,
          ok: "Replace",
        });
        if (sure !== null) await this.upload(files, folder, true);
        else this.say("");
        return;
      }
      this.say(error.message || "The upload did not work.", true);
    }
  }

  async uploadPlain(files, folder, overwrite) {
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    form.append("folder", folder);
    if (overwrite) form.append("overwrite", "1");
    return call("POST", this.page.dataset.uploadUrl, { body: form });
  }

  // --- drag and drop -----------------------------------------------------------------------------------

  dropFolder(event) {
    const row = event.target.closest?.(".tree-row");
    if (!row) return "";
    return row.dataset.kind === "folder" ? row.dataset.path : folderOf(row.dataset.path);
  }

  dragAndDrop() {
    const zone = this.page.querySelector(".files-pane") || this.slot;
    zone.addEventListener("dragstart", (event) => {
      const row = event.target.closest?.(".tree-row[draggable=true]");
      if (!row) return;
      event.dataTransfer.setData(DRAGGED, JSON.stringify({ path: row.dataset.path, kind: row.dataset.kind }));
      event.dataTransfer.effectAllowed = "move";
      this.dragging = true;
    });
    zone.addEventListener("dragend", () => this.dragEnded());
    zone.addEventListener("dragover", (event) => {
      if (!this.mayEdit()) return;
      const types = [...event.dataTransfer.types];
      if (!types.includes(DRAGGED) && !types.includes("Files")) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = types.includes(DRAGGED) ? "move" : "copy";
      this.highlight(event);
    });
    zone.addEventListener("dragleave", (event) => {
      if (!zone.contains(event.relatedTarget)) this.highlight(null);
    });
    zone.addEventListener("drop", (event) => {
      this.dragEnded();
      if (!this.mayEdit()) return;
      event.preventDefault();
      const folder = this.dropFolder(event);
      this.highlight(null);
      const dragged = event.dataTransfer.getData(DRAGGED);
      if (dragged) {
        const { path, kind } = JSON.parse(dragged);
        const target = joined(folder, basename(path));
        if (target !== path && !(kind === "folder" && (folder === path || folder.startsWith(`${path}/`)))) {
          this.move(path, kind, target);
        }
      } else if (event.dataTransfer.files.length) {
        this.upload([...event.dataTransfer.files], folder);
      }
    });
  }

  dragEnded() {
    this.dragging = false;
    if (this.slot.dataset.stale) {
      delete this.slot.dataset.stale;
      this.refresh();
    }
  }

  highlight(event) {
    this.slot.querySelectorAll(".drop-target").forEach((row) => row.classList.remove("drop-target"));
    if (!event) return;
    const folder = this.dropFolder(event);
    const row = [...this.slot.querySelectorAll(".tree-row")].find(
      (each) => each.dataset.kind === "folder" && each.dataset.path === folder,
    );
    row?.classList.add("drop-target");
  }
}
