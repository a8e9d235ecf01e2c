// Spell checking of prose by the browser's own checker. CodeMirror turns it off on its content; here it is on
// unless this user turned it off with the editor bar's *Spelling* switch (remembered in this browser, per user).
// Commands, math and names (labels, citation keys, paths) are marked spellcheck="false", so that only the
// words of the text get underlined.
import { Compartment, RangeSetBuilder } from "@codemirror/state";
import { Decoration, EditorView, ViewPlugin } from "@codemirror/view";

import { spellingExclusions } from "./spelling-exclusions.js";

const NOT_PROSE = Decoration.mark({ attributes: { spellcheck: "false" } });
// Math and environments may open above the visible lines, and close below them: the text is read from this far
// around them.
const LOOK_AROUND_CHARACTERS = 20_000;

/** Which sources are prose to check: LaTeX and Typst (with their exclusions), Markdown and plain text. A
 * bibliography or a program is names, not prose: its spell checking stays off. */
function languageOf(path) {
  if (/\.(tex|ltx|dtx)$/i.test(path)) return "latex";
  if (/\.typ$/i.test(path)) return "typst";
  if (/\.(md|markdown|txt)$/i.test(path)) return "plain";
  return null;
}

/** Where the paragraph that holds `position` starts (a blank line ends inline math: a scan from there does not
 * take the end of a formula for its start), looking back a few hundred lines at most. */
function paragraphStart(doc, position) {
  let line = doc.lineAt(position);
  for (let steps = 0; steps < 500 && line.number > 1 && line.text.trim() !== ""; steps += 1) line = doc.line(line.number - 1);
  return line.from;
}

function exclusionMarks(view, language) {
  const builder = new RangeSetBuilder();
  let done = 0; // visible ranges may share an exclusion: add each stretch once, in order
  for (const { from, to } of view.visibleRanges) {
    const start = paragraphStart(view.state.doc, Math.max(0, from - LOOK_AROUND_CHARACTERS));
    const text = view.state.sliceDoc(start, to + LOOK_AROUND_CHARACTERS);
    for (const [begin, end] of spellingExclusions(text, language)) {
      if (start + begin >= to) break;
      const markFrom = Math.max(start + begin, from, done);
      const markTo = Math.min(start + end, to);
      if (markTo <= markFrom) continue;
      builder.add(markFrom, markTo, NOT_PROSE);
      done = markTo;
    }
  }
  return builder.finish();
}

function notProseMarks(language) {
  return ViewPlugin.fromClass(
    class {
      constructor(view) {
        this.decorations = exclusionMarks(view, language);
      }

      update(update) {
        if (update.docChanged || update.viewportChanged) this.decorations = exclusionMarks(update.view, language);
      }
    },
    { decorations: (plugin) => plugin.decorations },
  );
}

function storageKey(userName) {
  return `quire:spellcheck:${userName}`;
}

function spellcheckWanted(userName) {
  try {
    return window.localStorage.getItem(storageKey(userName)) !== "off";
  } catch {
    return true; // storage refused (private mode, a policy): the default
  }
}

function spellcheckRemember(userName, on) {
  try {
    window.localStorage.setItem(storageKey(userName), on ? "on" : "off");
  } catch {
    // not remembered: the switch still works on this page
  }
}

function contentSpellcheck(on) {
  return EditorView.contentAttributes.of({ spellcheck: on ? "true" : "false" });
}

/** The spell-checking extension of the editor in `root`, and its switch (`[data-spellcheck-toggle]`, a checkbox
 * in the editor bar, shown once this runs). */
export function spellChecking(root) {
  const { userName } = root.dataset;
  const switched = new Compartment();
  const on = spellcheckWanted(userName);
  const toggle = root.querySelector("[data-spellcheck-toggle]");
  const language = languageOf(root.dataset.path);
  if (!language) return [];
  const connect = ViewPlugin.define((view) => {
    if (!toggle) return {};
    toggle.checked = on;
    toggle.closest("[hidden]")?.removeAttribute("hidden");
    const changed = () => {
      spellcheckRemember(userName, toggle.checked);
      view.dispatch({ effects: switched.reconfigure(contentSpellcheck(toggle.checked)) });
    };
    toggle.addEventListener("change", changed);
    return { destroy: () => toggle.removeEventListener("change", changed) };
  });
  return [switched.of(contentSpellcheck(on)), notProseMarks(language), connect];
}
