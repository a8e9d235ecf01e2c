// One version in the History panel's list: its time span in local time, its authors each in their colour, its
// labels, and the files it touched, each a button showing that file's diff with its kind and line counts.
import { authorChip, colourOf } from "./authors.js";
import { element } from "./elements.js";

const DAY_AND_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const TIME = new Intl.DateTimeFormat(undefined, { timeStyle: "short" });
const KIND_WORDS = { edit: "edited", create: "created", delete: "deleted", move: "moved", restore: "restored" };

function moment(date, format) {
  return element("time", { datetime: date.toISOString() }, format.format(date));
}

/** "6 Dec 2025, 14:02 – 14:35": the end is left out when it reads the same as the start. */
export function timeSpan(startedAt, endedAt) {
  const started = new Date(startedAt);
  const ended = new Date(endedAt);
  const span = element("span", { className: "history-time" }, moment(started, DAY_AND_TIME));
  const sameDay = started.toDateString() === ended.toDateString();
  if (!sameDay || TIME.format(started) !== TIME.format(ended)) {
    span.append(" – ", moment(ended, sameDay ? TIME : DAY_AND_TIME));
  }
  return span;
}

function changeButton(change) {
  const name = change.kind === "move" ? `${change.old_path} → ${change.path}` : change.path;
  const counts =
    change.file_kind === "text"
      ? [
          element("span", { className: "history-added" }, `+${change.added}`),
          element("span", { className: "history-removed" }, `−${change.removed}`),
        ]
      : [element("span", { className: "muted" }, "binary")];
  return element(
    "button",
    { type: "button", className: "history-change", "data-path": change.path, "aria-pressed": "false" },
    element("span", { className: "history-path" }, name),
    element("span", { className: `history-kind history-kind-${change.kind}` }, KIND_WORDS[change.kind] || change.kind),
    ...counts,
  );
}

/** The version's list item; a click on its head or one of its files calls `select(version, path)`. */
export function versionItem(version, select) {
  const head = element(
    "button",
    { type: "button", className: "history-version-head" },
    timeSpan(version.started_at, version.ended_at),
    element("span", { className: "muted small" }, `#${version.id}`),
  );
  head.addEventListener("click", () => select(version, null));
  const changes = element(
    "ul",
    { className: "history-changes" },
    ...version.changes.map((change) => {
      const button = changeButton(change);
      button.addEventListener("click", () => select(version, change.path));
      return element("li", {}, button);
    }),
  );
  return element(
    "li",
    { className: "history-version", "data-version": version.id },
    head,
    version.kind === "restore"
      ? element("p", { className: "history-restored small" }, `Restored version ${version.restored_from}`)
      : null,
    element(
      "p",
      { className: "history-authors" },
      ...version.authors.map((name) => authorChip(name, colourOf(version.colours, name))),
    ),
    version.labels.length
      ? element(
          "p",
          { className: "history-labels-of" },
          ...version.labels.map((name) => element("span", { className: "badge history-label-badge" }, name)),
        )
      : null,
    changes,
  );
}
