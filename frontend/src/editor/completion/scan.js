// What completion reads from a project's sources: labels (with their line), and the commands and environments
// a LaTeX project defines. Plain functions of a text, so that they are tested without a browser
// (tests/frontend/test_completion_scanners.py).

function lineAt(text, index) {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line += 1;
  return line;
}

/** The text with LaTeX comments blanked (same length, so positions and lines still hold); `\%` is kept. */
function latexWithoutComments(text) {
  // A `%` starts a comment unless an odd number of backslashes precedes it.
  return text.replace(/((?:^|[^\\])(?:\\\\)*)(%[^\n]*)/gm, (_, before, comment) => before + " ".repeat(comment.length));
}

/** `[{name, line}]` of every `\label{…}` outside comments. */
export function latexLabels(text) {
  const source = latexWithoutComments(text);
  const labels = [];
  for (const match of source.matchAll(/\\label\s*\{([^{}]+)\}/g)) {
    labels.push({ name: match[1].trim(), line: lineAt(source, match.index) });
  }
  return labels;
}

/** The commands (`\newcommand`, `\renewcommand`, `\providecommand`, `\DeclareMathOperator`, `\def`,
 * `\NewDocumentCommand`, `\DeclareRobustCommand`, `\let`) and environments (`\newenvironment`,
 * `\NewDocumentEnvironment`, `\newtheorem`) a text defines: `{commands: [{name, arguments}], environments: [name]}`,
 * names without their backslash. */
export function latexDefinitions(text) {
  const source = latexWithoutComments(text);
  const commands = [];
  const definer = [
    "(?:re)?newcommand",
    "providecommand",
    "DeclareRobustCommand",
    "DeclareMathOperator",
    "(?:New|Renew|Provide|Declare)DocumentCommand",
  ].join("|");
  const command = new RegExp(String.raw`\\(?:${definer})\*?\s*\{?\s*\\([A-Za-z@]+)\s*\}?(?:\s*\[(\d)\])?`, "g");
  for (const match of source.matchAll(command)) commands.push({ name: match[1], arguments: Number(match[2] || 0) });
  for (const match of source.matchAll(/\\(?:[gex]?def|let)\s*\\([A-Za-z@]+)/g)) commands.push({ name: match[1], arguments: 0 });
  const environments = [];
  const environment = /\\(?:(?:re)?newenvironment|(?:New|Renew|Provide|Declare)DocumentEnvironment|newtheorem)\*?\s*\{([^{}\s]+)\}/g;
  for (const match of source.matchAll(environment)) environments.push(match[1]);
  return { commands, environments };
}

/** `[{name, line}]` of every Typst label `<name>` (outside comments and raw text). */
export function typstLabels(text) {
  const source = text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|```[\s\S]*?```|`[^`\n]*`/g, (skipped) =>
    skipped.replace(/[^\n]/g, " "),
  );
  const labels = [];
  for (const match of source.matchAll(/<([A-Za-z_][\w:.-]*)>/g)) {
    labels.push({ name: match[1], line: lineAt(source, match.index) });
  }
  return labels;
}
