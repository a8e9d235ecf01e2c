// Where comment threads sit in the editor's text. Each thread's anchors are Yjs relative positions
// (collaboration/anchors.py); this editor resolves them against its own Y.Doc, so a highlight follows its
// text through every edit, local or remote, before the server is asked again.
import { StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView } from "@codemirror/view";
import * as Y from "yjs";

const threadsSet = StateEffect.define();

function base64Bytes(text) {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/** Where each thread's text is now in the Y.Doc (UTF-16 offsets, as CodeMirror's), or null once deleted. */
export function threadRanges(threads, ydoc) {
  const ranges = new Map();
  for (const thread of threads) {
    const start = Y.createAbsolutePositionFromRelativePosition(
      Y.decodeRelativePosition(base64Bytes(thread.anchor.start)),
      ydoc,
    );
    const end = Y.createAbsolutePositionFromRelativePosition(Y.decodeRelativePosition(base64Bytes(thread.anchor.end)), ydoc);
    ranges.set(thread.id, start && end && end.index > start.index ? { from: start.index, to: end.index } : null);
  }
  return ranges;
}

const marks = StateField.define({
  create: () => Decoration.none,
  update(decorations, transaction) {
    for (const effect of transaction.effects) if (effect.is(threadsSet)) return effect.value;
    return decorations.map(transaction.changes);
  },
  provide: (field) => EditorView.decorations.from(field),
});

export const commentMarks = [
  marks,
  EditorView.baseTheme({
    ".cm-comment": { backgroundColor: "#f7d54a55", borderBottom: "2px solid #e0b400" },
    ".cm-comment-active": { backgroundColor: "#f7b32b99" },
  }),
];

/** Highlight the open threads' ranges (the active one more strongly). */
export function commentMarksShow(view, threads, ranges, activeId) {
  const length = view.state.doc.length;
  const decorations = [];
  for (const thread of threads) {
    const range = ranges.get(thread.id);
    if (!range || thread.resolved || range.to > length) continue;
    const className = thread.id === activeId ? "cm-comment cm-comment-active" : "cm-comment";
    decorations.push(
      Decoration.mark({ class: className, attributes: { "data-thread": thread.id } }).range(range.from, range.to),
    );
  }
  decorations.sort((a, b) => a.from - b.from || a.to - b.to);
  view.dispatch({ effects: threadsSet.of(Decoration.set(decorations)) });
}
