// Build sees what was typed: a build request waits (a short, bounded wait) until every change typed on
// this page is stored on the server, and says so plainly if it cannot be; Ctrl/Cmd+Enter builds.
const WAIT_MILLISECONDS = 5000;
const documents = new Set();

export function buildGateRegister(liveDocument) {
  documents.add(liveDocument);
}

async function allSaved() {
  const results = await Promise.all([...documents].map((each) => each.whenSaved(WAIT_MILLISECONDS)));
  return results.every(Boolean);
}

function notice(form, text) {
  const target = document.getElementById("build-notice") || form;
  const paragraph = document.createElement("p");
  paragraph.className = "notice notice-error";
  paragraph.setAttribute("role", "alert");
  paragraph.textContent = text;
  target.replaceChildren(paragraph);
}

const UNSAVED = "Your latest changes are not saved yet (the connection is down), so the build did not start. "
  + "It will be possible once they sync.";

export function buildGateInstall() {
  // htmx asks before it sends; the request goes once the changes are stored.
  document.body.addEventListener("htmx:confirm", (event) => {
    const form = event.target.closest && event.target.closest("form.build-form");
    if (!form || documents.size === 0) return;
    event.preventDefault();
    allSaved().then((saved) => (saved ? event.detail.issueRequest(true) : notice(form, UNSAVED)));
  });
}

export function buildNow() {
  const button = document.getElementById("build-button");
  if (button && !button.disabled) button.click();
  return true;
}
