// One file's difference between two sides, shown by @codemirror/merge: side by side (MergeView) or unified
// (unifiedMergeView), read-only, the later side's changed lines in their authors' colours (authors.js). Created
// files are all added, deleted ones all removed; assets are only said to have changed.
import { MergeView, unifiedMergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import { EditorView, lineNumbers } from "@codemirror/view";

import { authorChip, authorLines, colourOf } from "./authors.js";
import { element } from "./elements.js";

// Long unchanged stretches fold away, as in a code review; a click unfolds them.
const COLLAPSE = { margin: 3, minSize: 6 };
const KIND_WORDS = { edit: "edited", create: "created", delete: "deleted", move: "moved" };

// CodeMirror puts its styles in a <style> element; the Content-Security-Policy admits it by the page's nonce.
function cspNonce() {
  return document.querySelector('meta[name="csp-nonce"]')?.content || "";
}

// No syntax highlighting: the colours of a diff are its changes and their authors (and the Typst grammar is
// too large to load on every project page for it).
function readOnlySide() {
  return [
    EditorView.cspNonce.of(cspNonce()),
    lineNumbers(),
    EditorState.readOnly.of(true),
    EditorView.lineWrapping,
  ];
}

function fileHeading(file) {
  const name = file.kind === "move" ? `${file.old_path} → ${file.path}` : file.path;
  const counts =
    file.file_kind === "text"
      ? [
          element("span", { className: "history-added" }, `+${file.added}`),
          element("span", { className: "history-removed" }, `−${file.removed}`),
        ]
      : [];
  return element(
    "div",
    { className: "history-file-head row" },
    element("h3", {}, element("code", {}, name)),
    element("span", { className: `history-kind history-kind-${file.kind}` }, KIND_WORDS[file.kind] || file.kind),
    ...counts,
  );
}

/** Who wrote the marked lines, each in their colour. */
function legend(file) {
  const names = [...new Set((file.line_authors || []).flat().filter(Boolean))];
  if (names.length === 0) return null;
  return element(
    "p",
    { className: "history-legend small" },
    "Changed lines by ",
    ...names.map((name) => authorChip(name, colourOf(file.colours, name))),
  );
}

function sideCaptions(sides) {
  return element(
    "div",
    { className: "history-sides small muted" },
    element("span", {}, sides.older),
    element("span", {}, sides.newer),
  );
}

function mergeShow(surface, file, layout) {
  const oldText = file.old_text ?? "";
  const newText = file.new_text ?? "";
  const newSide = [readOnlySide(), authorLines(file.line_authors, file.colours)];
  if (layout === "unified") {
    const merge = unifiedMergeView({ original: oldText, mergeControls: false, collapseUnchanged: COLLAPSE });
    const state = EditorState.create({ doc: newText, extensions: [...newSide, merge] });
    const view = new EditorView({ parent: surface, state });
    return () => view.destroy();
  }
  const view = new MergeView({
    parent: surface,
    a: { doc: oldText, extensions: readOnlySide() },
    b: { doc: newText, extensions: newSide },
    collapseUnchanged: COLLAPSE,
  });
  return () => view.destroy();
}

/** Show `file` (one of the diff API's `files`) in `parent`; returns what takes the editors down again. */
export function fileDiffShow(parent, file, { layout, sides }) {
  const box = element("article", { className: "history-file", "data-history-file": file.path }, fileHeading(file));
  parent.append(box);
  if (file.file_kind !== "text") {
    box.append(element("p", { className: "notice" }, "Binary file changed: its content is not shown here."));
    return () => {};
  }
  box.append(legend(file) || "", layout === "unified" ? "" : sideCaptions(sides));
  const surface = element("div", { className: `history-merge history-merge-${layout}`, "data-history-merge": layout });
  box.append(surface);
  return mergeShow(surface, file, layout);
}
