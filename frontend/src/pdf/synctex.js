// SyncTeX both ways, resolved by the server from the shown build's data (under that build's authorization):
// - "show in PDF" (`quire:show-in-pdf` {file, line} from the editor) marks the matching place in the pane;
// - Ctrl/Cmd+click in the PDF asks which source file and line made that spot, and opens it
//   (`quire:open-location` {file, line}, which the editor handles, or a navigation to that file).
import { openLocation } from "../shared/locations.js";

async function lookUp(jobId, direction, params) {
  const query = new URLSearchParams(params).toString();
  const answer = await fetch(`/v1/processing/jobs/${jobId}/synctex/${direction}?${query}`, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  return answer.ok ? answer.json() : null;
}

export function synctexInstall(pane) {
  document.addEventListener("quire:show-in-pdf", async ({ detail }) => {
    const source = pane.source;
    if (!source || !source.synctex) {
      pane.say("Build the project to find this line in the PDF.");
      return;
    }
    const place = await lookUp(source.jobId, "forward", { file: detail.file, line: detail.line });
    if (place) pane.view.highlight(place.page, place);
    else pane.say(`No place in the PDF comes from ${detail.file}:${detail.line}.`);
  });
  pane.pages.addEventListener("click", async (event) => {
    if (!(event.ctrlKey || event.metaKey)) return;
    const source = pane.source;
    const point = pane.view.pointOf(event);
    if (!source || !source.synctex || !point) return;
    event.preventDefault();
    const place = await lookUp(source.jobId, "inverse", { page: point.page, x: point.x, y: point.y });
    if (place) openLocation(place.file, place.line);
  });
}
