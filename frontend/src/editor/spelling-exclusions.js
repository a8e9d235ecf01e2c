// Where a source is not prose, so the browser's spell checker should leave it alone: LaTeX commands, math, and
// the arguments that are names rather than words (\ref, \cite, \label, \begin, \usepackage, file paths…);
// in Typst, code after #, math, raw text, labels and references. A plain function of a text, so that it is
// tested without a browser (tests/frontend/test_completion_scanners.py).

const NAME_ARGUMENT_COMMANDS = [
  "[a-zA-Z]*ref",
  "[cC]ref",
  "[a-zA-Z]*cite[a-zA-Z]*",
  "label",
  "begin",
  "end",
  "usepackage",
  "RequirePackage",
  "documentclass",
  "input",
  "include",
  "includeonly",
  "includegraphics",
  "bibliography",
  "bibliographystyle",
  "addbibresource",
  "url",
  "href",
  "newcommand",
  "renewcommand",
  "newenvironment",
  "DeclareMathOperator",
  "setlength",
  "hypersetup",
  "pagestyle",
  "thispagestyle",
].join("|");

const MATH_ENVIRONMENTS = "equation|align|alignat|gather|multline|flalign|eqnarray|math|displaymath|verbatim|lstlisting|minted|tikzpicture";

// Alternatives in order of precedence; group 1 is a comment (prose: left to the spell checker, but consumed so
// that a `$` in it starts no math).
const LATEX_TOKENS = new RegExp(
  [
    String.raw`(%[^\n]*)`,
    String.raw`\\verb\*?([^a-zA-Z\s])[^\n]*?\2`,
    String.raw`\\begin\{(${MATH_ENVIRONMENTS})(\*?)\}[\s\S]*?\\end\{\3\4\}`,
    String.raw`\$\$[\s\S]*?\$\$`,
    String.raw`\\\[[\s\S]*?\\\]`,
    String.raw`\\\([\s\S]*?\\\)`,
    String.raw`\$(?:\\.|[^$\\\n]|\n(?![ \t]*\n))+\$`, // inline math ends with its paragraph
    String.raw`\\(?:${NAME_ARGUMENT_COMMANDS})\*?(?:\s*\[[^\]\n]*\])*(?:\s*\{[^{}]*\})+`,
    String.raw`\\(?:[a-zA-Z@]+\*?|.)`,
  ].join("|"),
  "g",
);

const TYPST_TOKENS = new RegExp(
  [
    String.raw`(\/\/[^\n]*|\/\*[\s\S]*?\*\/)`,
    "```[\\s\\S]*?```",
    "`[^`\\n]*`",
    String.raw`\$(?:\\.|[^$\\])*\$`,
    String.raw`#[a-zA-Z_][\w-]*(?:\.[\w-]+)*(?:\((?:[^()]|\([^()]*\))*\))?`,
    String.raw`<[\w:.-]+>`,
    String.raw`(?<!\w)@[\w-]+(?:[:.][\w-]+)*`,
    String.raw`\\.`,
  ].join("|"),
  "g",
);

/** `[[from, to], …]` (ascending, not overlapping) of the parts of `text` that are not prose. `language` is
 * "latex" or "typst"; anything else has none. */
export function spellingExclusions(text, language) {
  const tokens = language === "latex" ? LATEX_TOKENS : language === "typst" ? TYPST_TOKENS : null;
  if (!tokens) return [];
  const ranges = [];
  for (const match of text.matchAll(tokens)) {
    if (match[1] !== undefined) continue; // a comment
    ranges.push([match.index, match.index + match[0].length]);
  }
  return ranges;
}
