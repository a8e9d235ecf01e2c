// The live editor: enhances the project page's `[data-live-editor]` element (its text is shown as plain,
// read-only text without this script). Typing is saving: every change is a Yjs update the server stores
// and relays to everyone with the document open (see connection.js).
import { Compartment, EditorState } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { yCollab } from "y-codemirror.next";
import * as Y from "yjs";

import { buildGateInstall, buildGateRegister, buildNow } from "./build-gate.js";
import { commentMarks } from "./comment-marks.js";
import { CommentsPanel, projectIdOf } from "./comments.js";
import { LiveDocument } from "./connection.js";
import { languageFor } from "./languages.js";
import { presenceShow } from "./presence.js";
import { editorSetup } from "./setup.js";
import { statusShow } from "./status.js";
import { writingAids } from "./writing-aids.js";

function showInPdf(file, line) {
  document.dispatchEvent(new CustomEvent("quire:show-in-pdf", { detail: { file, line } }));
  return true;
}

function socketBase(path) {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}${path}`;
}

/** Put the caret at the start of a line (1-based, clamped) and bring it into view. */
function goToLine(view, line) {
  const target = view.state.doc.line(Math.max(1, Math.min(line, view.state.doc.lines)));
  view.dispatch({ selection: { anchor: target.from }, effects: EditorView.scrollIntoView(target.from, { y: "center" }) });
  view.focus();
}

function cursorLine(view) {
  return view.state.doc.lineAt(view.state.selection.main.head).number;
}

function editable(on) {
  return [EditorState.readOnly.of(!on), EditorView.editable.of(on)];
}

/** A document renamed or moved (by anyone) stays open here, its live session untouched (its socket names the
 * file's id, which a move keeps): the page shows its new path, and the address names it. */
function pathFollow(root) {
  document.addEventListener("quire:tree-updated", ({ detail }) => {
    const path = detail.paths.get(root.dataset.room);
    if (!path || path === root.dataset.path) return;
    const old = root.dataset.path;
    root.dataset.path = path;
    const header = document.querySelector("[data-file-path]");
    if (header) header.textContent = path;
    const download = document.querySelector("[data-file-download]");
    if (download) download.href = download.href.replace(encodeURI(old), encodeURI(path));
    const url = new URL(window.location.href);
    url.searchParams.set("file", path);
    window.history.replaceState(window.history.state, "", url);
  });
}

function editorStart(root) {
  const { socketPath, room, path, mayEdit, userName, userColour } = root.dataset;
  const currentPath = () => root.dataset.path;
  const live = new LiveDocument({ socketUrl: socketBase(socketPath), room });
  live.awareness.setLocalStateField("user", { name: userName, color: userColour, colorLight: `${userColour}33` });
  const undoManager = new Y.UndoManager(live.text);
  const access = new Compartment();
  let mayEditNow = mayEdit === "true";
  let synced = false; // nothing is typed into the document before it holds the server's text

  const view = new EditorView({
    parent: root.querySelector("[data-editor-surface]"),
    state: EditorState.create({
      doc: "",
      extensions: [
        keymap.of([
          { key: "Mod-Enter", run: buildNow, preventDefault: true },
          { key: "Mod-s", run: buildNow, preventDefault: true },
          { key: "Mod-Alt-j", run: (view) => showInPdf(currentPath(), cursorLine(view)), preventDefault: true },
        ]),
        editorSetup(),
        languageFor(path),
        access.of(editable(false)),
        yCollab(live.text, live.awareness, { undoManager }),
        commentMarks,
        writingAids(root),
        EditorView.contentAttributes.of({ "aria-label": `Content of ${path}` }),
      ],
    }),
  });
  const applyAccess = () => view.dispatch({ effects: access.reconfigure(editable(synced && mayEditNow)) });

  live.provider.on("sync", (isSynced) => {
    if (!isSynced || synced) return;
    synced = true;
    root.classList.add("live-editor-ready");
    applyAccess();
    const line = Number(new URLSearchParams(window.location.search).get("line"));
    if (line) goToLine(view, line); // opened from a diagnostic or a click in the PDF
  });
  document.addEventListener("quire:open-location", (event) => {
    if (event.detail.file !== currentPath() || !synced) return;
    event.preventDefault(); // this editor has the file: no navigation
    goToLine(view, event.detail.line);
  });
  root.querySelector("[data-show-in-pdf]")?.addEventListener("click", () => showInPdf(currentPath(), cursorLine(view)));
  live.text.observe((event) => {
    if (!event.transaction.local) return;
    document.dispatchEvent(new CustomEvent("quire:document-typed", { detail: { path: currentPath() } }));
  });
  const badge = root.querySelector("[data-read-only-badge]");
  live.addEventListener("refused", ({ detail }) => {
    if (detail.code === "read_only") mayEditNow = false;
    if (detail.code === "editable") mayEditNow = true;
    if (badge && ["read_only", "editable"].includes(detail.code)) badge.hidden = mayEditNow;
    applyAccess();
  });
  pathFollow(root);
  live.addEventListener("change", () => {
    if (live.state === "closed" && mayEditNow) {
      mayEditNow = false;
      applyAccess();
    }
  });

  statusShow(live, root.querySelector("[data-sync-status]"));
  presenceShow(live.awareness, root.querySelector("[data-presence]"));
  buildGateRegister(live);
  live.provider.once("sync", () => {
    const comments = new CommentsPanel({
      root,
      view,
      live,
      projectId: projectIdOf(socketPath),
      userName,
      isOwner: root.dataset.userRole === "owner",
      currentPath,
    });
    window.quireComments = comments; // tests reach the panel here
  });
  // Tests and the build controls reach the page's documents here.
  window.quireEditors = [...(window.quireEditors || []), { live, view }];
}

function start() {
  const roots = document.querySelectorAll("[data-live-editor]");
  if (roots.length === 0) return;
  buildGateInstall();
  roots.forEach(editorStart);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
