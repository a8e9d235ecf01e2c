/* Quire task center: the header button and badge, the drawer and its keyboard, and announcements.
 *
 * The server decides what polls (see processing/views.py); this script only opens and closes the
 * drawer, remembers when this browser last looked at the center (localStorage, a server timestamp),
 * and tells assistive technology when a job changes state.
 */
(function () {
  "use strict";

  var button = document.getElementById("task-center-button");
  var drawer = document.getElementById("task-drawer");
  if (!button || !drawer || !window.htmx) return;
  var body = document.getElementById("task-drawer-body");
  var title = document.getElementById("task-drawer-title");
  var announcer = document.getElementById("task-announcer");
  var seenKey = "quire.tasks.seen." + (button.dataset.user || "");
  var smallScreen = window.matchMedia("(max-width: 760px)");
  var opener = null;
  var shownStates = null; // job id -> state, as last seen on screen
  var badgeCounts = null;

  function seenAt() {
    try { return window.localStorage.getItem(seenKey) || ""; } catch (error) { return ""; }
  }

  function acknowledge(serverNow) {
    if (!serverNow || serverNow <= seenAt()) return;
    try { window.localStorage.setItem(seenKey, serverNow); } catch (error) { /* private mode: no memory */ }
  }

  function isOpen() { return !drawer.hidden; }

  function onTasksPage() { return !!document.querySelector(".tasks-page #task-list"); }

  function openDrawer(from) {
    if (isOpen()) { title.focus(); return; }
    opener = from || document.activeElement;
    shownStates = null;
    drawer.hidden = false;
    button.setAttribute("aria-expanded", "true");
    document.body.classList.add("drawer-open");
    body.innerHTML = '<p class="muted small drawer-loading">Loading…</p>';
    window.htmx.ajax("GET", button.dataset.listUrl, { target: body, swap: "innerHTML" });
    title.focus();
  }

  function closeDrawer() {
    if (!isOpen()) return;
    window.htmx.swap(body, "", { swapStyle: "innerHTML" }); // the rows leave the page, so their polling stops
    drawer.hidden = true;
    button.setAttribute("aria-expanded", "false");
    document.body.classList.remove("drawer-open");
    var back = opener && document.body.contains(opener) && !opener.disabled ? opener : button;
    back.focus();
    opener = null;
    window.htmx.trigger(document.body, "quire:jobs-changed");
  }

  function focusables() {
    var selector = 'a[href], button:not([disabled]), summary, select, input, textarea, [tabindex]:not([tabindex="-1"])';
    return Array.prototype.filter.call(drawer.querySelectorAll(selector), function (element) {
      return element.offsetParent !== null;
    });
  }

  function trapTab(event) {
    var items = focusables();
    if (!items.length) return;
    var first = items[0], last = items[items.length - 1];
    if (event.shiftKey && (document.activeElement === first || document.activeElement === title)) {
      event.preventDefault(); last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault(); first.focus();
    }
  }

  function moveBetweenRows(event) {
    var active = document.activeElement;
    var rows = Array.prototype.slice.call(drawer.querySelectorAll(".job"));
    if (!rows.length || (active !== title && !active.classList.contains("job"))) return;
    var index = rows.indexOf(active);
    if (event.key === "ArrowDown") index = Math.min(rows.length - 1, index + 1);
    else if (event.key === "ArrowUp") index = Math.max(0, index - 1);
    else if (event.key === "Home") index = 0;
    else if (event.key === "End") index = rows.length - 1;
    event.preventDefault();
    rows[index].focus();
  }

  button.addEventListener("click", function (event) {
    if (smallScreen.matches) return; // small screens get the full-screen /tasks page
    event.preventDefault();
    isOpen() ? closeDrawer() : openDrawer(button);
  });

  drawer.addEventListener("click", function (event) {
    if (event.target.closest("[data-close-tasks]")) closeDrawer();
  });

  drawer.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { event.preventDefault(); closeDrawer(); }
    else if (event.key === "Tab") trapTab(event);
    else if (["ArrowDown", "ArrowUp", "Home", "End"].indexOf(event.key) >= 0) moveBetweenRows(event);
  });

  document.addEventListener("click", function (event) {
    var link = event.target.closest("[data-open-tasks]");
    if (!link || smallScreen.matches) return;
    event.preventDefault();
    openDrawer(link);
  });

  // A job was submitted from this page: show it where state is kept, the task center — except a build,
  // whose progress the build status beside the editor shows (the drawer would cover the editor).
  document.body.addEventListener("quire:job-submitted", function (event) {
    if (smallScreen.matches || isOpen() || onTasksPage()) return;
    if (event.target.closest && event.target.closest(".build-form")) return;
    // The event comes from the form; focus returns to its button (disabled while the request ran).
    var form = event.target.closest ? event.target.closest("form") : null;
    openDrawer((form && form.querySelector("[type=submit]")) || event.target);
  });

  // The badge tells the server when this browser last looked, so only newer failures count.
  document.body.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.elt && event.detail.elt.id === "task-badge") {
      event.detail.parameters.seen = isOpen() || onTasksPage() ? "now" : seenAt();
    }
  });

  function announce(text) {
    if (!announcer || !text) return;
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  function scanRows() {
    var list = document.getElementById("task-list");
    if (!list) return;
    var visible = isOpen() || onTasksPage();
    var states = {}, changes = [];
    list.querySelectorAll("[data-job-id]").forEach(function (row) {
      states[row.dataset.jobId] = row.dataset.state;
      if (visible) acknowledge(row.dataset.now);
      if (shownStates && shownStates[row.dataset.jobId] !== row.dataset.state) {
        changes.push(row.dataset.label + ": " + row.dataset.stateLabel.toLowerCase());
      }
    });
    if (visible) acknowledge(list.dataset.now);
    if (changes.length) announce(changes.join(". "));
    shownStates = states;
  }

  function scanBadge() {
    var badge = document.getElementById("task-badge");
    if (!badge || badge.dataset.active === undefined) return;
    var counts = { active: +badge.dataset.active, failed: +badge.dataset.failed };
    var label = "Tasks" + (counts.active ? ", " + counts.active + " active" : "") +
      (counts.failed ? ", " + counts.failed + " failed since you last looked" : "");
    button.setAttribute("aria-label", label);
    if (badgeCounts && !isOpen() && !onTasksPage()) {
      if (counts.failed > badgeCounts.failed) announce("A task failed. Open Tasks to see why.");
      else if (badgeCounts.active && !counts.active) announce("All tasks have finished.");
    }
    badgeCounts = counts;
  }

  document.body.addEventListener("htmx:afterSettle", function () { scanRows(); scanBadge(); });
  scanRows();
})();
