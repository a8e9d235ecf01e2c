// Comments beside the editor: select text and comment; threads with replies, edited and deleted by their
// authors (an owner may delete any), resolved and reopened by any member, viewers included. The panel lists
// this document's threads (open or resolved) and how many wait on other files; it asks the server again
// whenever the project's events socket says comments changed, so every member sees a thread at once.
import { call } from "../project/api.js";
import { commentMarksShow, threadRanges } from "./comment-marks.js";

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === undefined) continue;
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.filter(Boolean));
  return node;
}

/** CodeMirror counts UTF-16 units, the API counts code points. */
function codePoints(view, position) {
  return [...view.state.doc.sliceString(0, position)].length;
}

export class CommentsPanel {
  constructor({ root, view, live, projectId, userName, isOwner, currentPath }) {
    Object.assign(this, { root, view, live, projectId, userName, isOwner, currentPath });
    this.threads = [];
    this.showing = "open";
    this.activeId = null;
    this.panel = element("aside", { class: "comments-panel", "data-comments-panel": true, "aria-label": "Comments" });
    root.append(this.panel);
    this.addButton = element("button", {
      type: "button",
      class: "small",
      "data-comment-add": true,
      title: "Comment on the selected text",
      text: "Comment",
    });
    root.querySelector(".editor-bar")?.append(this.addButton);
    this.addButton.addEventListener("click", () => this.composeStart());
    document.body.addEventListener("quire:project-changed", ({ detail }) => {
      if (["comments", "all"].includes(detail.what)) this.refresh();
    });
    // Between frames the highlights move with CodeMirror's own mapping; once a frame they are resolved again
    // from their anchors. Never at once: typing changes the Y.Text from inside an editor update.
    live.text.observe(() => this.marksRefreshSoon());
    view.dom.addEventListener("click", (event) => {
      const mark = event.target.closest("[data-thread]");
      if (mark) this.activate(mark.dataset.thread, { scroll: false });
    });
    this.refresh();
  }

  url(suffix = "") {
    return `/v1/projects/${this.projectId}/comments${suffix}`;
  }

  async refresh() {
    try {
      this.threads = (await call("GET", this.url())).threads;
    } catch (error) {
      this.panel.replaceChildren(element("p", { class: "error", text: `Comments could not be loaded: ${error.message}` }));
      return;
    }
    this.render();
  }

  mine() {
    return this.threads.filter((thread) => thread.path === this.currentPath());
  }

  marksRefreshSoon() {
    if (this.marksPending) return;
    this.marksPending = requestAnimationFrame(() => {
      this.marksPending = null;
      this.marksRefresh();
    });
  }

  marksRefresh() {
    const threads = this.mine();
    commentMarksShow(this.view, threads, threadRanges(threads, this.live.doc), this.activeId);
  }

  composeStart() {
    const { from, to } = this.view.state.selection.main;
    if (from === to) {
      this.addButton.title = "Select the text to comment on first";
      this.view.focus();
      return;
    }
    const quote = this.view.state.sliceDoc(from, to);
    const range = { from: codePoints(this.view, from), to: codePoints(this.view, to) };
    const text = element("textarea", { "aria-label": "Your comment", rows: 3, "data-comment-text": true });
    const form = element(
      "form",
      { class: "comment-compose", "data-comment-compose": true },
      element("blockquote", { class: "comment-quote", text: quote }),
      text,
      element("button", { type: "submit", class: "small primary", text: "Comment" }),
      element("button", { type: "button", class: "small", "data-cancel": true, text: "Cancel" }),
    );
    form.querySelector("[data-cancel]").addEventListener("click", () => form.remove());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.act(() => call("POST", this.url(), { json: { path: this.currentPath(), ...range, text: text.value } }), form);
    });
    this.panel.querySelector("[data-comment-compose]")?.remove();
    this.panel.prepend(form);
    text.focus();
  }

  async act(request, form) {
    try {
      const answer = await request();
      form?.remove();
      if (answer?.id) this.activeId = answer.id;
      await this.refresh();
    } catch (error) {
      const shown = form?.querySelector(".error") || element("p", { class: "error", role: "alert" });
      shown.textContent = error.message;
      if (form && !shown.isConnected) form.append(shown);
    }
  }

  activate(id, { scroll = true } = {}) {
    this.activeId = id;
    const range = threadRanges(this.threads.filter((thread) => thread.id === id), this.live.doc).get(id);
    if (range && scroll) {
      this.view.dispatch({ selection: { anchor: range.from, head: range.to }, scrollIntoView: true });
    }
    this.render();
  }

  render() {
    const compose = this.panel.querySelector("[data-comment-compose]");
    const mine = this.mine();
    const open = mine.filter((thread) => !thread.resolved);
    const resolved = mine.filter((thread) => thread.resolved);
    const shown = this.showing === "open" ? open : resolved;
    const tabs = element(
      "div",
      { class: "comment-tabs", role: "tablist" },
      this.tab("open", `Open (${open.length})`),
      this.tab("resolved", `Resolved (${resolved.length})`),
    );
    const list = element("ol", { class: "comment-threads", "data-comment-threads": true });
    for (const thread of shown) list.append(this.threadElement(thread));
    if (shown.length === 0) list.append(element("li", { class: "muted small", text: "No comments here." }));
    const elsewhere = this.threads.filter((thread) => thread.path !== this.currentPath() && !thread.resolved);
    this.panel.replaceChildren(...[compose, element("h3", { text: "Comments" }), tabs, list].filter(Boolean));
    if (elsewhere.length) this.panel.append(this.elsewhereElement(elsewhere));
    this.marksRefresh();
  }

  tab(name, label) {
    const button = element("button", {
      type: "button",
      class: "small",
      role: "tab",
      "aria-selected": String(this.showing === name),
      "data-comments-show": name,
      text: label,
    });
    button.addEventListener("click", () => {
      this.showing = name;
      this.render();
    });
    return button;
  }

  threadElement(thread) {
    const item = element("li", {
      class: `comment-thread${thread.id === this.activeId ? " active" : ""}`,
      "data-thread-id": thread.id,
    });
    const quote = element("blockquote", { class: "comment-quote", text: thread.quote });
    quote.addEventListener("click", () => this.activate(thread.id));
    item.append(quote);
    if (thread.from === null) item.append(element("p", { class: "muted small", "data-on-deleted": true, text: "on deleted text" }));
    const comments = element("ul", { class: "comments" });
    for (const comment of thread.comments) comments.append(this.commentElement(thread, comment));
    item.append(comments, this.replyForm(thread));
    const resolve = element("button", {
      type: "button",
      class: "small",
      "data-resolve": true,
      text: thread.resolved ? "Reopen" : "Resolve",
    });
    resolve.addEventListener("click", () =>
      this.act(() => call("PATCH", this.url(`/${thread.id}`), { json: { resolved: !thread.resolved } })),
    );
    item.append(resolve);
    return item;
  }

  commentElement(thread, comment) {
    const author = element("strong", { class: "comment-author", text: comment.author });
    author.style.color = comment.colour;
    const text = element("span", { class: "comment-text", "data-comment-body": true, text: comment.text });
    const row = element("li", { "data-comment-id": comment.id }, author, " ", text);
    if (comment.edited_at) row.append(element("span", { class: "muted small", text: " (edited)" }));
    const base = this.url(`/${thread.id}/replies/${comment.id}`);
    if (comment.author === this.userName) {
      const edit = element("button", { type: "button", class: "link small", "data-comment-edit": true, text: "Edit" });
      edit.addEventListener("click", () => row.replaceWith(this.editForm(base, comment)));
      row.append(" ", edit);
    }
    if (comment.author === this.userName || this.isOwner) {
      const remove = element("button", { type: "button", class: "link small", "data-comment-delete": true, text: "Delete" });
      remove.addEventListener("click", () => this.act(() => call("DELETE", base)));
      row.append(" ", remove);
    }
    return row;
  }

  editForm(url, comment) {
    const text = element("textarea", { rows: 2, "aria-label": "Edit your comment" });
    text.value = comment.text;
    const form = element("form", { class: "comment-edit" }, text, element("button", { type: "submit", class: "small", text: "Save" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.act(() => call("PATCH", url, { json: { text: text.value } }), form);
    });
    return element("li", {}, form);
  }

  replyForm(thread) {
    const text = element("textarea", { rows: 1, "aria-label": "Reply", placeholder: "Reply…", "data-reply-text": true });
    const form = element("form", { class: "comment-reply" }, text, element("button", { type: "submit", class: "small", text: "Reply" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.act(() => call("POST", this.url(`/${thread.id}/replies`), { json: { text: text.value } }), form);
    });
    return form;
  }

  elsewhereElement(threads) {
    const byPath = new Map();
    for (const thread of threads) byPath.set(thread.path, (byPath.get(thread.path) || 0) + 1);
    const list = element("ul", { class: "small" });
    for (const [path, count] of byPath) {
      const url = new URL(window.location.href);
      url.searchParams.set("file", path);
      url.searchParams.delete("line");
      list.append(element("li", {}, element("a", { href: url.toString(), text: path }), ` ${count} open`));
    }
    return element("section", { class: "comments-elsewhere" }, element("h4", { text: "On other files" }), list);
  }
}

/** The project's id, from the editor's socket path (/ws/projects/<id>/documents). */
export function projectIdOf(socketPath) {
  return socketPath.split("/")[3];
}
