// The History panel of the project page (workspace/history_panel.html). The History button shows it in place of
// the author's loop, whose editors stay connected meanwhile (so a restore reaches them live, as an edit); the
// address's "#history" opens it at once, which is how the History link of the other tabs lands here.
import { HistoryPanel } from "./panel.js";

function start() {
  const root = document.querySelector("[data-history-panel]");
  if (!root) return;
  const panel = new HistoryPanel(root);
  const loop = document.querySelector("[data-author-loop]");
  const openers = [...document.querySelectorAll("[data-history-open]")];

  const shown = (open) => {
    root.hidden = !open;
    if (loop) loop.hidden = open;
    for (const opener of openers) opener.setAttribute("aria-expanded", String(open));
    const url = new URL(window.location.href);
    url.hash = open ? "history" : "";
    window.history.replaceState(window.history.state, "", url);
    if (open) panel.refresh();
  };

  for (const opener of openers) {
    opener.addEventListener("click", (event) => {
      event.preventDefault();
      shown(root.hidden);
      if (!root.hidden) root.querySelector("h2").focus();
    });
  }
  root.querySelector("[data-history-close]").addEventListener("click", () => {
    shown(false);
    openers[0]?.focus();
  });
  if (window.location.hash === "#history") shown(true);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
