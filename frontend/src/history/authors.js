// Authors in their colours: a name chip for the version list, and, in a diff, each changed line of the later
// text marked in the colour of who wrote it (the API's `line_authors`, like `git blame` since the earlier side).
import { RangeSetBuilder, StateField } from "@codemirror/state";
import { Decoration, EditorView } from "@codemirror/view";

import { element } from "./elements.js";

const FALLBACK = "#9aa3b5";

/** The server's colour when it is one (`#rrggbb`): it ends up in CSS, so nothing else gets through. */
export function colourOf(colours, name) {
  const colour = colours?.[name];
  return /^#[0-9a-f]{6}$/i.test(colour || "") ? colour : FALLBACK;
}

export function authorChip(name, colour) {
  const chip = element(
    "span",
    { className: "history-author", "data-author": name },
    element("span", { className: "history-author-dot", "aria-hidden": "true" }),
    name,
  );
  chip.style.setProperty("--author-colour", colour); // CSSOM, which the Content-Security-Policy allows
  return chip;
}

/** The decorations of each line that has authors: its first author's class, every author in its tooltip. */
function decorated(doc, lineAuthors, classOf) {
  const builder = new RangeSetBuilder();
  const lines = Math.min(doc.lines, lineAuthors.length);
  for (let number = 1; number <= lines; number += 1) {
    const authors = lineAuthors[number - 1].filter(Boolean);
    if (authors.length === 0) continue; // unchanged since the earlier side
    const decoration = Decoration.line({
      class: `cm-history-line ${classOf(authors[0])}`,
      attributes: { title: `Written by ${authors.join(", ")}` },
    });
    builder.add(doc.line(number).from, doc.line(number).from, decoration);
  }
  return builder.finish();
}

/** The extension colouring the later text's lines by author. A line's colour comes from a class of a theme made
 * for this diff, not a style attribute, which the page's Content-Security-Policy refuses. */
export function authorLines(lineAuthors, colours) {
  const names = Object.keys(colours || {});
  const classOf = (name) =>
    names.includes(name) ? `cm-history-author-${names.indexOf(name)}` : "cm-history-author-other";
  const rule = (colour) => ({ borderLeft: `3px solid ${colour}`, backgroundColor: `${colour}1f` });
  const theme = EditorView.theme({
    ".cm-history-author-other": rule(FALLBACK),
    ...Object.fromEntries(names.map((name) => [`.${classOf(name)}`, rule(colourOf(colours, name))])),
  });
  const lines = StateField.define({
    create: (state) => decorated(state.doc, lineAuthors || [], classOf),
    update: (decorations, transaction) => decorations.map(transaction.changes),
    provide: (field) => EditorView.decorations.from(field),
  });
  return [theme, lines];
}
