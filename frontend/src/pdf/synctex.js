// SyncTeX both ways, resolved by the server from the shown output's data (for every member who may view the
// project, checked on each request):
// - "show in PDF" (`quire:show-in-pdf` {file, line} from the editor) marks the matching place in the pane;
// - Ctrl/Cmd+click in the PDF asks which source file and line made that spot, and opens it
//   (`quire:open-location` {file, line}, which the editor handles, or a navigation to that file).
import { openLocation } from "../shared/locations.js";

async function lookUp(base, direction, params) {
  const query = new URLSearchParams(params).toString();
  const answer = await fetch(`${base}/${direction}?${query}`, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  return answer.ok ? answer.json() : null;
}

export function synctexInstall(pane) {
  document.addEventListener("quire:show-in-pdf", async ({ detail }) => {
    const source = pane.source;
    if (!source || !source.synctexUrl) {
      pane.say(source ? "This PDF has no SyncTeX data to find the line with." : "Build the project to find this line in the PDF.");
      return;
    }
    const place = await lookUp(source.synctexUrl, "forward", { file: detail.file, line: detail.line });
    if (place) pane.view.highlight(place.page, place);
    else pane.say(`No place in the PDF comes from ${detail.file}:${detail.line}.`);
  });
  pane.pages.addEventListener("click", async (event) => {
    if (!(event.ctrlKey || event.metaKey)) return;
    const source = pane.source;
    const point = pane.view.pointOf(event);
    if (!source || !source.synctexUrl || !point) return;
    event.preventDefault();
    const place = await lookUp(source.synctexUrl, "inverse", { page: point.page, x: point.x, y: point.y });
    if (place) openLocation(place.file, place.line);
  });
}
