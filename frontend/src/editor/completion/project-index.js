// The project's other files as completion needs them: their paths, and the text of its sources and
// bibliographies. The open file is not read here: completion takes it from the editor, whose text is the live
// Y.Text. The other files' texts come from the file API, which serves a text document with every edit accepted
// from live editors (workspace.selectors.file_current brings Collaboration's projection up to date first), so a
// label a co-author typed a moment ago in another file is there. Nothing announces typing in other files, so
// labels and citation keys are read again each time their completion opens (one request per file, in parallel);
// paths and definitions, which change rarely, are kept for a few seconds and dropped when the tree changes.
import { pathUrl } from "../../project/api.js";

const DEFINITIONS_MAX_AGE_MILLISECONDS = 10_000;
const LARGEST_READ_BYTES = 2_000_000; // a source this large is not a paper's: not worth reading per keystroke

export class ProjectIndex {
  constructor({ projectId, openPath }) {
    this.api = `/v1/projects/${projectId}`;
    this.openPath = openPath; // a function: the open file may be renamed meanwhile
    this.files = [];
    this.texts = new Map(); // path -> the text last read, kept for when the server cannot be reached
    this.listedAt = 0;
    this.inFlight = new Map();
    document.addEventListener("quire:project-changed", () => {
      this.listedAt = 0; // files came, went or moved: list them again next time
    });
  }

  /** Every file of the project (not folders): `[{path, kind, size}]`, at most a few seconds old. */
  async fileList() {
    if (Date.now() - this.listedAt < DEFINITIONS_MAX_AGE_MILLISECONDS) return this.files;
    return this.once("list", async () => {
      try {
        const response = await fetch(`${this.api}/files`, { credentials: "same-origin", headers: { Accept: "application/json" } });
        if (!response.ok) return this.files;
        this.files = (await response.json()).filter((entry) => entry.kind !== "folder");
        this.listedAt = Date.now();
      } catch {
        // offline: what was listed before
      }
      return this.files;
    });
  }

  /** `[{path, text}]` of the other text files whose path passes `wanted`, as the server has them now.
   * `maxAge` (milliseconds) lets a caller take texts read that recently instead. */
  async textsOf(wanted, { maxAge = 0 } = {}) {
    const readable = (file) => file.kind === "text" && !file.encoding && file.size <= LARGEST_READ_BYTES;
    const files = (await this.fileList()).filter((file) => readable(file) && file.path !== this.openPath() && wanted(file.path));
    return Promise.all(files.map(async (file) => ({ path: file.path, text: await this.textOf(file.path, maxAge) })));
  }

  async textOf(path, maxAge) {
    const kept = this.texts.get(path);
    if (kept && Date.now() - kept.readAt <= maxAge) return kept.text;
    return this.once(`text:${path}`, async () => {
      try {
        const response = await fetch(`${this.api}/files/${pathUrl(path)}`, { credentials: "same-origin" });
        if (response.ok) {
          const text = await response.text();
          this.texts.set(path, { text, readAt: Date.now() });
          return text;
        }
      } catch {
        // offline: the text read before, if any
      }
      return kept?.text ?? "";
    });
  }

  /** One request at a time per key: completions asked for meanwhile share its answer. */
  once(key, request) {
    if (!this.inFlight.has(key)) {
      this.inFlight.set(
        key,
        request().finally(() => this.inFlight.delete(key)),
      );
    }
    return this.inFlight.get(key);
  }
}

export const DEFINITIONS_MAX_AGE = DEFINITIONS_MAX_AGE_MILLISECONDS;
