// The task center's behaviour in the browser, on every signed-in page: the Tasks button opens and closes the
// drawer (on a phone it stays a link to the /tasks page), the drawer keeps focus inside it (Esc closes it,
// ↑ ↓ Home End move between tasks), a job submitted from the page opens it (except a build: its status is
// shown beside the editor), the badge is told when this browser last looked (localStorage, a server
// timestamp) so only newer failures count, and a live region announces jobs that change state.
//
// The markup is server-rendered (processing/task_center.html, partial `header`) and so is every list, row
// and badge; the server decides what polls and for how long (processing/ui/task_views.py). Without this
// module the button is a link to /tasks and the page still works.

const SMALL_SCREEN = "(max-width: 760px)"; // quire.css's phone width, where the drawer would fill the screen
const FOCUSABLE =
  'a[href], button:not([disabled]), summary, select, input, textarea, [tabindex]:not([tabindex="-1"])';
const ROW_KEYS = new Set(["ArrowDown", "ArrowUp", "Home", "End"]);

function start() {
  const button = document.getElementById("task-center-button");
  const drawer = document.getElementById("task-drawer");
  if (!button || !drawer || !window.htmx) return;
  const htmx = window.htmx;
  const body = document.getElementById("task-drawer-body");
  const title = document.getElementById("task-drawer-title");
  const announcer = document.getElementById("task-announcer");
  const seenKey = `quire.tasks.seen.${button.dataset.user || ""}`;
  const smallScreen = window.matchMedia(SMALL_SCREEN);
  let opener = null;
  let shownStates = null; // job id -> state, as last seen on screen
  let badgeCounts = null;

  function seenAt() {
    try {
      return window.localStorage.getItem(seenKey) || "";
    } catch {
      return "";
    }
  }

  function acknowledge(serverNow) {
    if (!serverNow || serverNow <= seenAt()) return;
    try {
      window.localStorage.setItem(seenKey, serverNow);
    } catch {
      // private mode: no memory
    }
  }

  const isOpen = () => !drawer.hidden;
  const onTasksPage = () => !!document.querySelector(".tasks-page #task-list");

  function openDrawer(from) {
    if (isOpen()) {
      title.focus();
      return;
    }
    opener = from || document.activeElement;
    shownStates = null;
    drawer.hidden = false;
    button.setAttribute("aria-expanded", "true");
    document.body.classList.add("drawer-open");
    body.innerHTML = '<p class="muted small drawer-loading">Loading…</p>';
    htmx.ajax("GET", button.dataset.listUrl, { target: body, swap: "innerHTML" });
    title.focus();
  }

  function closeDrawer() {
    if (!isOpen()) return;
    htmx.swap(body, "", { swapStyle: "innerHTML" }); // the rows leave the page, so their polling stops
    drawer.hidden = true;
    button.setAttribute("aria-expanded", "false");
    document.body.classList.remove("drawer-open");
    const back = opener && document.body.contains(opener) && !opener.disabled ? opener : button;
    back.focus();
    opener = null;
    htmx.trigger(document.body, "quire:jobs-changed");
  }

  function focusables() {
    return [...drawer.querySelectorAll(FOCUSABLE)].filter((element) => element.offsetParent !== null);
  }

  function trapTab(event) {
    const items = focusables();
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (event.shiftKey && (document.activeElement === first || document.activeElement === title)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  function moveBetweenRows(event) {
    const active = document.activeElement;
    const rows = [...drawer.querySelectorAll(".job")];
    if (!rows.length || (active !== title && !active.classList.contains("job"))) return;
    let index = rows.indexOf(active);
    if (event.key === "ArrowDown") index = Math.min(rows.length - 1, index + 1);
    else if (event.key === "ArrowUp") index = Math.max(0, index - 1);
    else if (event.key === "Home") index = 0;
    else if (event.key === "End") index = rows.length - 1;
    event.preventDefault();
    rows[index].focus();
  }

  button.addEventListener("click", (event) => {
    if (smallScreen.matches) return; // small screens get the full-screen /tasks page
    event.preventDefault();
    if (isOpen()) closeDrawer();
    else openDrawer(button);
  });

  drawer.addEventListener("click", (event) => {
    if (event.target.closest("[data-close-tasks]")) closeDrawer();
  });

  drawer.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      closeDrawer();
    } else if (event.key === "Tab") trapTab(event);
    else if (ROW_KEYS.has(event.key)) moveBetweenRows(event);
  });

  document.addEventListener("click", (event) => {
    const link = event.target.closest("[data-open-tasks]");
    if (!link || smallScreen.matches) return;
    event.preventDefault();
    openDrawer(link);
  });

  // A job was submitted from this page: show it where state is kept, the task center — except a build,
  // whose progress the build status beside the editor shows (the drawer would cover the editor).
  document.body.addEventListener("quire:job-submitted", (event) => {
    if (smallScreen.matches || isOpen() || onTasksPage()) return;
    if (event.target.closest?.(".build-form")) return;
    // The event comes from the form; focus returns to its button (disabled while the request ran).
    const form = event.target.closest?.("form");
    openDrawer(form?.querySelector("[type=submit]") || event.target);
  });

  // The badge tells the server when this browser last looked, so only newer failures count.
  document.body.addEventListener("htmx:configRequest", (event) => {
    if (event.detail.elt?.id === "task-badge") {
      event.detail.parameters.seen = isOpen() || onTasksPage() ? "now" : seenAt();
    }
  });

  function announce(text) {
    if (!announcer || !text) return;
    announcer.textContent = "";
    window.setTimeout(() => (announcer.textContent = text), 50);
  }

  function scanRows() {
    const list = document.getElementById("task-list");
    if (!list) return;
    const visible = isOpen() || onTasksPage();
    const states = {};
    const changes = [];
    list.querySelectorAll("[data-job-id]").forEach((row) => {
      states[row.dataset.jobId] = row.dataset.state;
      if (visible) acknowledge(row.dataset.now);
      if (shownStates && shownStates[row.dataset.jobId] !== row.dataset.state) {
        changes.push(`${row.dataset.label}: ${row.dataset.stateLabel.toLowerCase()}`);
      }
    });
    if (visible) acknowledge(list.dataset.now);
    if (changes.length) announce(changes.join(". "));
    shownStates = states;
  }

  function scanBadge() {
    const badge = document.getElementById("task-badge");
    if (!badge || badge.dataset.active === undefined) return;
    const counts = { active: +badge.dataset.active, failed: +badge.dataset.failed };
    const label =
      "Tasks" +
      (counts.active ? `, ${counts.active} active` : "") +
      (counts.failed ? `, ${counts.failed} failed since you last looked` : "");
    button.setAttribute("aria-label", label);
    if (badgeCounts && !isOpen() && !onTasksPage()) {
      if (counts.failed > badgeCounts.failed) announce("A task failed. Open Tasks to see why.");
      else if (badgeCounts.active && !counts.active) announce("All tasks have finished.");
    }
    badgeCounts = counts;
  }

  document.body.addEventListener("htmx:afterSettle", () => {
    scanRows();
    scanBadge();
  });
  scanRows();
}

start();
