// The history API as the History panel calls it (workspace/api/history.py), with the page's session and CSRF
// token (../project/api.js).
import { call, pathUrl } from "../project/api.js";

export class HistoryApi {
  constructor(projectId) {
    this.base = `/v1/projects/${projectId}`;
  }

  /** A page of versions, newest first: `{versions, next}`. Empty filters are left out of the query. */
  versions({ path = "", author = "", before = null } = {}) {
    const query = new URLSearchParams();
    if (path) query.set("path", path);
    if (author) query.set("author", author);
    if (before !== null) query.set("before", String(before));
    return call("GET", `${this.base}/history?${query}`);
  }

  /** The files that differ between two versions (`against`: a version number or "current"), as JSON. */
  diff(version, against, path) {
    const query = new URLSearchParams({ against: String(against), path });
    return call("GET", `${this.base}/history/${version}/diff?${query}`);
  }

  /** A text file as a version left it. */
  async fileText(version, path) {
    const response = await fetch(`${this.base}/history/${version}/files/${pathUrl(path)}`, {
      credentials: "same-origin",
    });
    if (!response.ok) {
      throw Object.assign(new Error(`The server answered ${response.status}.`), { status: response.status });
    }
    return response.text();
  }

  /** Make the files named (every file when `paths` is null) what the version left them: `{version}`. */
  restore(version, paths = null) {
    return call("POST", `${this.base}/history/${version}/restore`, { json: paths === null ? {} : { paths } });
  }

  labels() {
    return call("GET", `${this.base}/labels`);
  }

  labelCreate(name) {
    return call("POST", `${this.base}/labels`, { json: { name } });
  }

  /** Build the version (a job of its own, in the task center; never the project's PDF). */
  build(version) {
    return call("POST", `${this.base}/builds`, { json: { version } });
  }

  archiveUrl(version) {
    return `${this.base}/history/${version}/archive`;
  }
}
