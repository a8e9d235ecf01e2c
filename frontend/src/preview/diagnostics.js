// The preview's errors and warnings in the editor, at their lines, through @codemirror/lint. The bundles share
// one @codemirror/state and @codemirror/view (esbuild splitting, frontend/build.mjs), so the diagnostics made
// here are understood by the editor bundle's EditorView.
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { StateEffect } from "@codemirror/state";

const installed = new WeakSet();

function offsetOf(doc, line, character) {
  const number = Math.min(Math.max(line, 1), doc.lines);
  const text = doc.line(number);
  return Math.min(text.from + Math.max(character, 0), text.to);
}

// `line` is 1-based, `character` 0-based, as the editor counts them.
export function diagnosticAt(view, { line, character, endLine, endCharacter, severity, message }) {
  const doc = view.state.doc;
  const from = offsetOf(doc, line, character);
  const to = Math.max(from, offsetOf(doc, endLine ?? line, endCharacter ?? character));
  return { from, to, severity: severity === "warning" ? "warning" : "error", message, source: "Typst preview" };
}

export function diagnosticsShow(view, diagnostics) {
  if (!installed.has(view)) {
    installed.add(view);
    view.dispatch({ effects: StateEffect.appendConfig.of(lintGutter()) });
  }
  view.dispatch(setDiagnostics(view.state, diagnostics.map((found) => diagnosticAt(view, found))));
}

// typst.ts's "full" diagnostics: {path, severity, range: "startLine:startChar-endLine:endChar" (0-based), message}.
export function fromTypst(diagnostic) {
  const match = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(diagnostic.range || "");
  const [startLine, character, endLine, endCharacter] = match ? match.slice(1).map(Number) : [0, 0, 0, 0];
  return {
    path: (diagnostic.path || "").replace(/^\/+/, ""),
    line: startLine + 1,
    character,
    endLine: endLine + 1,
    endCharacter,
    severity: String(diagnostic.severity || "error").toLowerCase(),
    message: diagnostic.message,
  };
}
