// LaTeX completion, one source per context before the cursor:
//   \ref{ \eqref{ \autoref{ \cref{ \pageref{ …   the labels of every file of the project (this one live)
//   \cite{ \citep{ \parencite{ … (after a comma too)   the keys of the project's .bib files, with author and title
//   \input{ \include{ \includegraphics{ \bibliography{ \addbibresource{   the project's files of that kind
//   \begin{ \end{                                 environments; after \begin the choice brings its \end
//   \                                             commands: the curated ones and those the project defines
import { snippet, snippetCompletion } from "@codemirror/autocomplete";

import { authorsShort, bibEntries } from "./bibtex.js";
import { DEFINITIONS_MAX_AGE } from "./project-index.js";
import { latexDefinitions, latexLabels } from "./scan.js";
import { LATEX_COMMANDS, LATEX_ENVIRONMENTS } from "./vocabulary.js";

const SOURCE = /\.(tex|ltx|sty|cls)$/i;
const BIB = /\.bib$/i;
const REFERENCE = /\\(?!href)(?:[a-zA-Z]*ref|[cC]ref(?:range)?|labelcref)\*?\{(?:[^{}]*,)?\s*([^{},\s]*)$/;
const CITATION = /\\(?:[a-zA-Z]*cite[a-zA-Z]*|bibentry)\*?(?:\[[^\]]*\]){0,2}\{(?:[^{}]*,)?\s*([^{},\s]*)$/;
const FILE_COMMANDS = [
  "input",
  "include",
  "includeonly",
  "subfile",
  "includegraphics",
  "includesvg",
  "includepdf",
  "bibliography",
  "addbibresource",
  "lstinputlisting",
  "import",
];
const FILE_ARGUMENT = new RegExp(String.raw`\\(${FILE_COMMANDS.join("|")})\*?(?:\[[^\]]*\])?\{(?:[^{}]*,)?([^{},]*)$`);
const ENVIRONMENT = /\\(begin|end)\{([^{}\s]*)$/;
const COMMAND = /\\[a-zA-Z@]*$/;
const KEY_CHARACTERS = /^[^{},\s]*$/;

const FILE_KINDS = {
  graphics: { pattern: /\.(pdf|png|jpe?g|eps|svg)$/i, dropExtension: false },
  tex: { pattern: /\.tex$/i, dropExtension: true }, // \include never takes `.tex`; \input is happy without it
  bib: { pattern: /\.bib$/i, dropExtension: true }, // \bibliography{refs}, without `.bib`
  bibresource: { pattern: /\.bib$/i, dropExtension: false }, // \addbibresource{refs.bib}, with it
  any: { pattern: /./, dropExtension: false },
};
const KIND_OF_COMMAND = {
  input: "tex",
  include: "tex",
  includeonly: "tex",
  subfile: "tex",
  import: "tex",
  includegraphics: "graphics",
  includesvg: "graphics",
  includepdf: "graphics",
  bibliography: "bib",
  addbibresource: "bibresource",
  lstinputlisting: "any",
};

/** What a label completion shows: the label, and where it is. */
function labelOptions(labels) {
  return labels.map(({ name, path, line }) => ({ label: name, type: "variable", detail: `${path}:${line}` }));
}

async function referenceSource(context, project) {
  const match = context.matchBefore(REFERENCE);
  if (!match) return null;
  const key = /[^{},\s]*$/.exec(match.text)[0];
  const here = latexLabels(context.state.doc.toString()).map((label) => ({ ...label, path: project.openPath() }));
  const others = (await project.textsOf((path) => SOURCE.test(path))).flatMap(({ path, text }) =>
    latexLabels(text).map((label) => ({ ...label, path })),
  );
  return { from: context.pos - key.length, options: labelOptions([...here, ...others]), validFor: KEY_CHARACTERS };
}

async function citationSource(context, project) {
  const match = context.matchBefore(CITATION);
  if (!match) return null;
  const key = /[^{},\s]*$/.exec(match.text)[0];
  // Keys this \cite{a, b, …} already has are not offered again.
  const cited = new Set(match.text.slice(match.text.lastIndexOf("{") + 1).split(",").map((each) => each.trim()));
  const bibliographies = await project.textsOf((path) => BIB.test(path));
  const options = bibliographies.flatMap(({ path, text }) =>
    bibEntries(text)
      .filter((entry) => !cited.has(entry.key) || entry.key === key)
      .map((entry) => ({
        label: entry.key,
        type: "text",
        detail: [authorsShort(entry.author), entry.title].filter(Boolean).join(" · "),
        info: `${entry.author || "(no author)"}\n${entry.title || "(no title)"}\n${path}:${entry.line}`,
      })),
  );
  return { from: context.pos - key.length, options, validFor: KEY_CHARACTERS };
}

async function fileSource(context, project) {
  const match = context.matchBefore(FILE_ARGUMENT);
  if (!match) return null;
  const [, command, typed] = FILE_ARGUMENT.exec(match.text);
  const kind = FILE_KINDS[KIND_OF_COMMAND[command]];
  const options = (await project.fileList())
    .filter((file) => kind.pattern.test(file.path) && file.path !== project.openPath())
    .map((file) => ({
      label: kind.dropExtension ? file.path.replace(/\.[^./]+$/, "") : file.path,
      type: "constant",
      detail: kind.dropExtension ? file.path.slice(file.path.lastIndexOf(".")) : undefined,
    }));
  return { from: context.pos - typed.length, options, validFor: /^[^{},]*$/ };
}

/** The environments, and the commands the project defines (this file's live text, the others' as stored). */
async function definitions(context, project) {
  const others = await project.textsOf((path) => SOURCE.test(path), { maxAge: DEFINITIONS_MAX_AGE });
  const found = [context.state.doc.toString(), ...others.map(({ text }) => text)].map(latexDefinitions);
  return {
    commands: found.flatMap(({ commands }) => commands),
    environments: [...new Set([...LATEX_ENVIRONMENTS, ...found.flatMap(({ environments }) => environments)])],
  };
}

/** `\begin{name}` brings its `\end{name}`, the cursor on the empty line between. The `}` that closeBrackets
 * typed after the cursor is taken into the snippet rather than left dangling after it. */
function beginOption(name) {
  const body = snippet(`${name.replace(/[{}]/g, "\\$&")}}\n\t\${}\n\\end{${name}}`);
  return {
    label: name,
    type: "type",
    apply: (view, completion, from, to) => body(view, completion, from, view.state.sliceDoc(to, to + 1) === "}" ? to + 1 : to),
  };
}

/** The innermost environment begun before `position` and not ended yet, if any. */
function openEnvironment(state, position) {
  const open = [];
  for (const [, which, name] of state.sliceDoc(0, position).matchAll(/\\(begin|end)\s*\{([^{}]+)\}/g)) {
    if (which === "begin") open.push(name);
    else if (open.at(-1) === name) open.pop();
  }
  return open.at(-1);
}

async function environmentSource(context, project) {
  const match = context.matchBefore(ENVIRONMENT);
  if (!match) return null;
  const [, which, typed] = ENVIRONMENT.exec(match.text);
  const { environments } = await definitions(context, project);
  if (which === "end") {
    const open = openEnvironment(context.state, match.from);
    const names = open ? [open, ...environments.filter((name) => name !== open)] : environments;
    // The environment to close comes first.
    const options = names.map((name) => ({ label: name, type: "type", boost: name === open ? 99 : 0 }));
    return { from: context.pos - typed.length, options, validFor: /^[^{}\s]*$/ };
  }
  const options = environments.map(beginOption);
  return { from: context.pos - typed.length, options, validFor: /^[^{}\s]*$/ };
}

async function commandSource(context, project) {
  const match = context.matchBefore(COMMAND);
  // `\\` (a line break) is no command: a list opened there would take the Enter typed after it.
  if (!match || context.state.sliceDoc(match.from - 1, match.from) === "\\") return null;
  const { commands } = await definitions(context, project);
  const options = [
    snippetCompletion("\\begin{${environment}}\n\t${}\n\\end{${environment}}", { label: "\\begin", type: "keyword", detail: "…\\end" }),
    ...LATEX_COMMANDS.filter(([name]) => name !== "begin").map(([name, args, detail]) =>
      args
        ? snippetCompletion(`\\${name}${args}`, { label: `\\${name}`, type: "function", detail })
        : { label: `\\${name}`, type: "function", detail: detail || undefined },
    ),
    ...commands.map(({ name, arguments: count }) =>
      count > 0
        ? snippetCompletion(`\\${name}${"{${}}".repeat(count)}`, { label: `\\${name}`, type: "function", detail: "defined in the project" })
        : { label: `\\${name}`, type: "function", detail: "defined in the project" },
    ),
  ];
  const unique = [...new Map(options.map((option) => [option.label, option])).values()];
  return { from: match.from, options: unique, validFor: /^\\[a-zA-Z@]*$/ };
}

/** The LaTeX completion sources, reading the project through `project` (a ProjectIndex). */
export function latexCompletionSources(project) {
  return [referenceSource, citationSource, fileSource, environmentSource, commandSource].map(
    (source) => (context) => source(context, project),
  );
}
