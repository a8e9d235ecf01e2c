// The restore controls (for owners and editors; the template hides them from viewers and the API refuses
// them anyway): this file, or the whole project, made what the selected version left them. A restore is a new
// version by the restorer; editors with a restored file open receive its text live, as an edit.
function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** Which version to restore a file from, so that it becomes what the selected version left it; null when that
 * version did not have the file. A file the version deleted comes back as it was just before. */
export function fileRestoreTarget(comparison, file, version) {
  if (comparison.against === "current") {
    return file.kind === "create" ? null : { version: version.id, path: file.old_path };
  }
  if (file.kind === "delete") return { version: version.id - 1, path: file.path, deleted: true };
  return { version: version.id, path: file.path };
}

export class RestoreControls {
  constructor(root, api, { restored, say }) {
    this.api = api;
    this.restored = restored;
    this.say = say;
    this.fileButton = root.querySelector("[data-history-restore-file]");
    this.projectButton = root.querySelector("[data-history-restore-project]");
    this.file = null;
    this.version = null;
    this.fileButton?.addEventListener("click", () => this.fileRestore());
    this.projectButton?.addEventListener("click", () => this.projectRestore());
  }

  /** What the buttons restore now: `file` a fileRestoreTarget (or null), `version` the selected version. */
  show({ file, version }) {
    this.file = file;
    this.version = version;
    if (this.fileButton) {
      this.fileButton.disabled = !file;
      this.fileButton.textContent = file?.deleted ? "Restore this deleted file" : "Restore this file";
      this.fileButton.title = file ? `Make ${file.path} what version ${file.version} left it` : "";
    }
    if (this.projectButton) this.projectButton.disabled = !version;
  }

  async fileRestore() {
    const { version, path } = this.file;
    await this.run(() => this.api.restore(version, [path]), `${path} is restored`);
  }

  async projectRestore() {
    const number = this.version.id;
    const question =
      `Restore the whole project to version ${number}? Every file becomes what version ${number} left it ` +
      "(the change is a new version, which can be undone by restoring the one before it).";
    if (!window.confirm(question)) return;
    await this.run(() => this.api.restore(number, null), `The project is restored to version ${number}`);
  }

  async run(action, done) {
    for (const button of [this.fileButton, this.projectButton]) if (button) button.disabled = true;
    try {
      const { version } = await action();
      this.say(
        version
          ? `${done}: version ${version.id}, ${plural(version.changes.length, "file")} changed.`
          : "Nothing to restore: the files are already what that version left them.",
      );
      await this.restored(version);
    } catch (error) {
      this.say(error.message || "The restore did not work.", true);
      this.show({ file: this.file, version: this.version });
    }
  }
}
