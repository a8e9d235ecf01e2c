// The build panel beside the editor: the log of the latest build (grouped diagnostics whose entries open
// their file at their line, and the raw log, opened at the first error), Rebuild, "build when I stop
// typing", and the Source/PDF switch on a phone. The status itself is server-rendered and polled by htmx
// (processing/build_panel.html); this module watches it.
import { openLocation } from "../shared/locations.js";

const AUTO_BUILD_PAUSE_MILLISECONDS = 2500;

function statusElement() {
  return document.getElementById("build-status");
}

function buildButton() {
  return document.getElementById("build-button");
}

/** Load the latest finished build's log into the panel when the status names a new one. */
function logPanel() {
  const panel = document.getElementById("build-log");
  if (!panel || !window.htmx) return;
  let shown = "";
  const follow = () => {
    const status = statusElement();
    const url = status ? status.dataset.logUrl : "";
    if (status && status.dataset.state !== "none") panel.hidden = false;
    if (!url || url === shown) return;
    shown = url;
    // Never the previous build's "no errors" beside this one's counts: the old log goes before the new loads.
    const body = panel.querySelector("[data-build-log-body]") || panel;
    const loading = document.createElement("p");
    loading.className = "muted small";
    loading.dataset.logLoading = "";
    loading.textContent = "Loading the log…";
    body.replaceChildren(loading);
    body.setAttribute("aria-busy", "true");
    window.htmx.ajax("GET", url, { target: body, swap: "innerHTML" }).finally(() => body.removeAttribute("aria-busy"));
  };
  // After the swap, in the same task as it: the status's new counts never stand beside the old log.
  document.body.addEventListener("htmx:afterSwap", follow);
  document.body.addEventListener("htmx:afterSettle", follow);
  follow();
  panel.addEventListener("click", (event) => {
    const entry = event.target.closest("[data-jump-file]");
    if (entry) openLocation(entry.dataset.jumpFile, Number(entry.dataset.jumpLine));
  });
  panel.addEventListener(
    "toggle",
    (event) => {
      const details = event.target;
      if (details.matches("[data-raw-log]") && details.open) {
        details.querySelector(".first-error")?.scrollIntoView({ block: "center" });
      }
    },
    true,
  );
}

function rebuildButtons() {
  document.addEventListener("click", (event) => {
    if (event.target.closest("#build-status [data-rebuild]")) buildButton()?.click();
  });
}

/** Per user and project, in this browser: build a moment after typing stops, one build at a time. */
function autoBuild() {
  const toggle = document.getElementById("auto-build");
  if (!toggle) return;
  const key = `quire.auto-build.${toggle.dataset.user}.${toggle.dataset.project}`;
  toggle.checked = window.localStorage.getItem(key) === "on";
  toggle.addEventListener("change", () => window.localStorage.setItem(key, toggle.checked ? "on" : "off"));
  let timer = null;
  let wanted = false;
  const attempt = () => {
    if (!wanted || !toggle.checked) return;
    const status = statusElement();
    if (status && ["preparing", "queued", "running", "finalizing"].includes(status.dataset.state)) return;
    wanted = false;
    buildButton()?.click();
  };
  document.addEventListener("quire:document-typed", () => {
    if (!toggle.checked) return;
    wanted = true;
    clearTimeout(timer);
    timer = setTimeout(attempt, AUTO_BUILD_PAUSE_MILLISECONDS);
  });
  document.body.addEventListener("htmx:afterSettle", attempt); // a build that was running has finished
}

/** On a narrow screen the source and the PDF are two tabs of one place. */
function paneSwitch() {
  const layout = document.querySelector("[data-author-loop]");
  const buttons = document.querySelectorAll("[data-show-pane]");
  if (!layout || buttons.length === 0) return;
  const show = (pane) => {
    layout.dataset.showing = pane;
    buttons.forEach((button) => button.setAttribute("aria-selected", String(button.dataset.showPane === pane)));
  };
  buttons.forEach((button) => button.addEventListener("click", () => show(button.dataset.showPane)));
  show(layout.dataset.showing || "source");
}

function start() {
  logPanel();
  rebuildButtons();
  autoBuild();
  paneSwitch();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
