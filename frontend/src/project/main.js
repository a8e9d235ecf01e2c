// The project page as a place several people share: it hears on its events socket when the project's PDF, tree
// or the reader's role changed (events.js) and shows it at once: the tree is asked for again (tree.js), the
// build status and PDF follow (htmx listens for quire:project-changed), a demoted member loses Build and sees
// "read-only", a removed one is told and shown nothing more.
import { ProjectEvents } from "./events.js";
import { FileTree } from "./tree.js";

const BUILDERS = new Set(["owner", "editor"]);

function socketUrl(path) {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}${path}`;
}

function roleShow(page, role) {
  const mayEdit = BUILDERS.has(role);
  page.dataset.role = role;
  document.querySelectorAll("[data-builder-only]").forEach((element) => (element.hidden = !mayEdit));
  document.querySelectorAll("[data-viewer-only]").forEach((element) => (element.hidden = mayEdit));
  document.querySelectorAll("[data-read-only-badge]").forEach((element) => (element.hidden = mayEdit));
  document.querySelectorAll("[data-tree-toolbar]").forEach((element) => (element.hidden = !mayEdit));
  const actions = document.getElementById("processing-actions");
  if (actions && window.htmx) {
    window.htmx.ajax("GET", actions.dataset.actionsUrl, { target: actions, swap: "outerHTML" });
  }
}

function accessLost(page, notice = "[data-access-lost]") {
  document.querySelector(notice)?.removeAttribute("hidden");
  page.dataset.role = "";
  document.querySelectorAll("[data-tree-toolbar], #processing-actions").forEach((element) => (element.hidden = true));
}

function start() {
  const page = document.querySelector("[data-project-page]");
  if (!page) return;
  const tree = new FileTree(page);
  tree.install();
  document.body.addEventListener("quire:role-changed", (event) => {
    roleShow(page, event.detail.role);
    tree.refresh();
  });
  document.body.addEventListener("quire:access-lost", () => accessLost(page));
  document.body.addEventListener("quire:signed-out", () => accessLost(page, "[data-signed-out]"));
  const events = new ProjectEvents(socketUrl(page.dataset.eventsPath));
  events.start();
  window.quireProject = { events, tree }; // tests reach the page's parts here
}

// A form that asks first (`data-confirm`): inline handlers would break the Content-Security-Policy.
document.addEventListener("submit", (event) => {
  const question = event.target.dataset?.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
