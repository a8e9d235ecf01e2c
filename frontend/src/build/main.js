// The build panel beside the editor: the log of the latest build (grouped diagnostics whose entries open
// their file at their line, and the raw log, opened at the first error), Rebuild, "build when I stop
// typing", and the Source/PDF switch on a phone. The status itself is server-rendered and polled by htmx
// (processing/build_panel.html); this module watches it.
import { openLocation } from "../shared/locations.js";

const AUTO_BUILD_PAUSE_MILLISECONDS = 1500; // the pause: long enough to finish a word

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

/** Per user and project, in this browser: build a moment after typing stops, one build at a time, never while
 * offline. The toggle arrives with the project's actions (htmx, after this script starts) and again whenever
 * they are swapped, so it is found by delegation and set from the remembered choice each time it appears.
 * An auto-build asks the server to supersede the caller's build still waiting in the queue. */
function autoBuild() {
  const toggle = () => document.getElementById("auto-build");
  const keyOf = (element) => `quire.auto-build.${element.dataset.user}.${element.dataset.project}`;
  const on = () => Boolean(toggle()?.checked);
  const remembered = () => {
    const element = toggle();
    if (element && !element.dataset.remembered) {
      element.dataset.remembered = "true";
      element.checked = window.localStorage.getItem(keyOf(element)) === "on";
    }
  };
  document.addEventListener("change", (event) => {
    if (event.target.id !== "auto-build") return;
    window.localStorage.setItem(keyOf(event.target), event.target.checked ? "on" : "off");
    if (event.target.checked) attempt();
  });
  document.body.addEventListener("htmx:afterSettle", remembered);
  remembered();

  let timer = null;
  let wanted = false; // typed since the last auto-build
  let due = false; // and the pause after the last keystroke has passed
  let superseding = false; // the next build request is an auto-build
  const online = () =>
    navigator.onLine && (window.quireEditors || []).every(({ live }) => live.state === "saved" || live.state === "saving");
  // What the last attempt did, on <html data-auto-build>: "held-offline" until the page is back, then "sent".
  const said = (what) => {
    document.documentElement.dataset.autoBuild = what;
  };
  const attempt = () => {
    if (!wanted || !due || !on()) return;
    if (!online()) return said("held-offline"); // the "online" event, a save or the next keystroke tries again
    const status = statusElement();
    if (status && ["preparing", "queued", "running", "finalizing"].includes(status.dataset.state)) return;
    const button = buildButton();
    if (!button || button.disabled) return;
    wanted = due = false;
    superseding = true;
    said("sent");
    button.click();
  };
  document.body.addEventListener("htmx:configRequest", (event) => {
    if (!superseding || !event.detail.elt.closest?.("form.build-form")) return;
    superseding = false;
    event.detail.parameters.supersede = "1";
  });
  document.addEventListener("quire:document-typed", () => {
    wanted = true;
    due = false;
    clearTimeout(timer);
    timer = setTimeout(() => {
      due = true;
      attempt();
    }, AUTO_BUILD_PAUSE_MILLISECONDS);
  });
  document.body.addEventListener("htmx:afterSettle", () => setTimeout(attempt, 0)); // a running build finished
  // Held offline: tried again once the page is back and what was typed is stored.
  window.addEventListener("online", attempt);
  (window.quireEditors || []).forEach(({ live }) => live.addEventListener("change", () => live.state === "saved" && attempt()));
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
