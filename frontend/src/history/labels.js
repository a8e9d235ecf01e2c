// Labels: names for the project's files as they were at a moment ("sent to the journal"). Each is listed with
// who made it, a link to its version in the list, its zip and a build of it; owners and editors label the
// current state.
import { element } from "./elements.js";

const DAY_AND_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export class Labels {
  constructor(root, api, { view, labelled, say }) {
    this.api = api;
    this.view = view;
    this.labelled = labelled;
    this.say = say;
    this.list = root.querySelector("[data-history-labels]");
    this.form = root.querySelector("[data-history-label-form]");
    this.form?.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
  }

  async load() {
    try {
      const { labels } = await this.api.labels();
      this.list.replaceChildren(...labels.map((label) => this.item(label)));
      if (labels.length === 0) this.list.append(element("li", { className: "muted small" }, "No labels yet."));
    } catch (error) {
      this.say(error.message || "The labels could not be loaded.", true);
    }
  }

  item(label) {
    const view = element("button", { type: "button", className: "link" }, `Version ${label.version}`);
    view.addEventListener("click", () => this.view(label.version));
    const download = element(
      "a",
      { href: this.api.archiveUrl(label.version), download: true, className: "small" },
      "Download zip",
    );
    const build = element(
      "button",
      { type: "button", className: "link small", "data-builder-only": "", "data-history-label-build": "" },
      "Build",
    );
    build.hidden = this.form ? this.form.hidden : true; // offered to those who may build, as the form is
    build.addEventListener("click", () => this.build(label));
    const made = new Date(label.created_at);
    return element(
      "li",
      { className: "history-label", "data-label": label.name },
      element("span", { className: "badge history-label-badge" }, label.name),
      element(
        "span",
        { className: "small muted" },
        view,
        ` · ${label.created_by || "someone"}, `,
        element("time", { datetime: made.toISOString() }, DAY_AND_TIME.format(made)),
      ),
      download,
      build,
    );
  }

  async build(label) {
    try {
      await this.api.build(label.version);
      this.say(`Building “${label.name}” (version ${label.version}): its PDF will be in Tasks.`);
      document.body.dispatchEvent(new CustomEvent("quire:job-submitted", { bubbles: true }));
    } catch (error) {
      this.say(error.message || "The build could not be started.", true);
    }
  }

  async create() {
    const input = this.form.elements.name;
    const name = input.value.trim();
    if (!name) return;
    const button = this.form.querySelector("button");
    button.disabled = true;
    try {
      const label = await this.api.labelCreate(name);
      input.value = "";
      this.say(`Labelled version ${label.version} “${label.name}”.`);
      await Promise.all([this.load(), this.labelled(label)]);
    } catch (error) {
      this.say(error.message || "The label could not be made.", true);
    } finally {
      button.disabled = false;
    }
  }
}
