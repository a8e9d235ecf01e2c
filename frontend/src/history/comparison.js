// What a diff compares. By default a version against the one before it (what the version did); with "compare
// with the current files", the version against the project as it is now; with a version number, against that
// version (the earlier of the two on the left). Version 1 has nothing before it: its
// files are shown all added, written by its authors.
import { element } from "./elements.js";

function firstVersionFile(version, path, text) {
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  return {
    path,
    old_path: path,
    kind: "create",
    file_kind: "text",
    added: lines.length,
    removed: 0,
    old_text: null,
    new_text: text,
    line_authors: lines.map(() => version.authors),
    colours: version.colours,
  };
}

async function firstVersionFiles(api, version, path) {
  const change = version.changes.find((each) => each.path === path);
  if (change?.file_kind === "asset") return [{ ...change, kind: "create", old_text: null, new_text: null }];
  try {
    return [firstVersionFile(version, path, await api.fileText(version.id, path))];
  } catch (error) {
    if (error.status === 404) return []; // the version did not leave that file behind
    throw error;
  }
}

/** `{older, newer, files}`: the two sides' names and the files that differ between them (only `path`'s). */
export async function comparisonLoad(api, { version, path, againstCurrent, againstVersion = null }) {
  const name = `Version ${version.id}`;
  if (againstVersion !== null && againstVersion !== version.id) {
    const answer = await api.diff(version.id, againstVersion, path);
    const [older, newer] = [version.id, againstVersion].sort((a, b) => a - b);
    return { older: `Version ${older}`, newer: `Version ${newer}`, files: answer.files, against: "version" };
  }
  if (againstCurrent) {
    const answer = await api.diff(version.id, "current", path);
    return { older: name, newer: "The current files", files: answer.files, against: "current" };
  }
  if (version.id > 1) {
    try {
      const answer = await api.diff(version.id - 1, version.id, path);
      return { older: `Version ${version.id - 1}`, newer: name, files: answer.files, against: "previous" };
    } catch (error) {
      // The versions before it were folded away (the project keeps a limited history): it is the first.
      if (error.code !== "version_not_found") throw error;
    }
  }
  return { older: "Nothing", newer: name, files: await firstVersionFiles(api, version, path), against: "nothing" };
}

/** Says that the two sides hold the same file. */
export function sameFiles(comparison, path) {
  const where = comparison.against === "current" ? "is the same now as" : "was not changed by";
  return element("p", { className: "muted" }, element("code", {}, path), ` ${where} this version.`);
}
