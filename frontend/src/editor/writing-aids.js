// What helps while writing, for the editor in `root` (a `[data-live-editor]` element): completion of LaTeX and
// Typst from the whole project (completion/), and spell checking of prose (spelling.js).
import { EditorState } from "@codemirror/state";

import { projectIdOf } from "./comments.js";
import { latexCompletionSources } from "./completion/latex.js";
import { ProjectIndex } from "./completion/project-index.js";
import { typstCompletionSources } from "./completion/typst.js";
import { spellChecking } from "./spelling.js";

function completionSourcesFor(path, project) {
  if (/\.(tex|ltx|sty|cls|dtx)$/i.test(path)) return latexCompletionSources(project);
  if (/\.typ$/i.test(path)) return typstCompletionSources(project);
  return [];
}

/** The completion sources of the file's language, offered through language data: setup.js's autocompletion()
 * asks them. */
function projectCompletion(root) {
  const project = new ProjectIndex({ projectId: projectIdOf(root.dataset.socketPath), openPath: () => root.dataset.path });
  const sources = completionSourcesFor(root.dataset.path, project);
  return sources.map((source) => EditorState.languageData.of(() => [{ autocomplete: source }]));
}

export function writingAids(root) {
  return [projectCompletion(root), spellChecking(root)];
}
