// Syntax by file name: LaTeX (and its packages, classes, bibliographies) through CodeMirror's legacy
// stex mode, Typst through its own grammar; anything else is plain text.
import { StreamLanguage } from "@codemirror/language";
import { stex } from "@codemirror/legacy-modes/mode/stex";
import { typst } from "codemirror-lang-typst";

const LATEX = [".tex", ".sty", ".cls", ".bib", ".ltx", ".dtx", ".ins", ".bbx", ".cbx"];

export function languageFor(path) {
  const name = path.toLowerCase();
  if (LATEX.some((suffix) => name.endsWith(suffix))) return StreamLanguage.define(stex);
  if (name.endsWith(".typ")) return typst();
  return [];
}
