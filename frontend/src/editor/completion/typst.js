// Typst completion, one source per context before the cursor:
//   @                                    the labels `<name>` of every .typ file of the project (this one live),
//                                        and the keys of its .bib files (Typst cites them with @ too)
//   #import " / #include " / image(" / read(" / bibliography(" …   the project's files of that kind
//   #                                    the standard library's functions (a curated list: vocabulary.js)
import { authorsShort, bibEntries } from "./bibtex.js";
import { typstLabels } from "./scan.js";
import { TYPST_FUNCTIONS } from "./vocabulary.js";

const REFERENCE = /(?:^|[^\w@])@([\w:.-]*)$/;
const PATH_ARGUMENT = /(?:#(import|include)\s+|\b(image|read|bibliography|csv|json|yaml|toml|xml|cbor)\(\s*)"([^"]*)$/;
const CODE = /#([a-zA-Z_][\w-]*)?$/;

const FILES_FOR = {
  import: /\.typ$/i,
  include: /\.typ$/i,
  image: /\.(png|jpe?g|gif|svg|webp|pdf)$/i,
  bibliography: /\.(bib|ya?ml)$/i,
  csv: /\.csv$/i,
  json: /\.json$/i,
  yaml: /\.ya?ml$/i,
  toml: /\.toml$/i,
  xml: /\.xml$/i,
};

async function referenceSource(context, project) {
  const match = context.matchBefore(REFERENCE);
  if (!match) return null;
  const typed = REFERENCE.exec(match.text)[1];
  const here = typstLabels(context.state.doc.toString()).map((label) => ({ ...label, path: project.openPath() }));
  const [sources, bibliographies] = await Promise.all([
    project.textsOf((path) => /\.typ$/i.test(path)),
    project.textsOf((path) => /\.bib$/i.test(path)),
  ]);
  const labels = [...here, ...sources.flatMap(({ path, text }) => typstLabels(text).map((label) => ({ ...label, path })))];
  const options = [
    ...labels.map(({ name, path, line }) => ({ label: name, type: "variable", detail: `${path}:${line}` })),
    ...bibliographies.flatMap(({ text }) =>
      bibEntries(text).map((entry) => ({
        label: entry.key,
        type: "text",
        detail: [authorsShort(entry.author), entry.title].filter(Boolean).join(" · "),
      })),
    ),
  ];
  return { from: context.pos - typed.length, options, validFor: /^[\w:.-]*$/ };
}

async function pathSource(context, project) {
  const match = context.matchBefore(PATH_ARGUMENT);
  if (!match) return null;
  const [, keyword, call, typed] = PATH_ARGUMENT.exec(match.text);
  const wanted = FILES_FOR[keyword || call] || /./;
  // Typst reads a relative path from the file's own folder, and "/…" from the project's root.
  const root = project.openPath().includes("/") ? "/" : "";
  const options = (await project.fileList())
    .filter((file) => wanted.test(file.path) && file.path !== project.openPath())
    .map((file) => ({ label: `${root}${file.path}`, type: "constant" }));
  return { from: context.pos - typed.length, options, validFor: /^[^"]*$/ };
}

function functionSource(context) {
  const match = context.matchBefore(CODE);
  if (!match) return null;
  const options = TYPST_FUNCTIONS.map(([name, detail]) => ({ label: name, type: "function", detail }));
  return { from: match.from + 1, options, validFor: /^[\w-]*$/ };
}

/** The Typst completion sources, reading the project through `project` (a ProjectIndex). */
export function typstCompletionSources(project) {
  return [referenceSource, pathSource, functionSource].map((source) => (context) => source(context, project));
}
