// The project page's events socket (collaboration/live/project_events.py): small JSON messages saying what
// changed, never content. Each becomes a DOM event the page's parts listen to, and they ask again, through the
// ordinary authorized requests, for what they show:
//   quire:project-changed {what: "output" | "tree" | "comments" | "all"}   (on document.body, where htmx listens)
//   quire:role-changed    {role}
//   quire:access-lost                                        (the server closed with 4403: no reconnecting)
//   quire:signed-out                                         (4401: the sign-in ended; no reconnecting)
// After a reconnect everything may have changed meanwhile, so "all" is announced.
const PING_MILLISECONDS = 25000; // a page that says nothing for the server's idle timeout is closed
const BACKOFF_MILLISECONDS = [500, 1000, 2000, 4000, 8000];

function announce(name, detail) {
  document.body.dispatchEvent(new CustomEvent(name, { bubbles: true, detail }));
}

export class ProjectEvents {
  constructor(url) {
    this.url = url;
    this.failures = 0;
    this.opened = false;
    this.ping = null;
  }

  start() {
    const socket = new WebSocket(this.url);
    socket.addEventListener("open", () => {
      if (this.opened) announce("quire:project-changed", { what: "all" });
      this.opened = true;
      this.failures = 0;
      this.ping = setInterval(() => socket.send("ping"), PING_MILLISECONDS);
    });
    socket.addEventListener("message", (event) => this.received(JSON.parse(event.data)));
    socket.addEventListener("close", (event) => {
      clearInterval(this.ping);
      if (event.code === 4403 || event.code === 4401) {
        announce(event.code === 4403 ? "quire:access-lost" : "quire:signed-out", {});
        return;
      }
      if (event.code >= 4400 && event.code < 4500) return; // final: reconnecting cannot help
      const wait = BACKOFF_MILLISECONDS[Math.min(this.failures, BACKOFF_MILLISECONDS.length - 1)];
      this.failures += 1;
      setTimeout(() => this.start(), wait);
    });
    this.socket = socket;
  }

  received(message) {
    if (message.type === "output" || message.type === "tree" || message.type === "comments") {
      announce("quire:project-changed", { what: message.type });
    } else if (message.type === "role") {
      announce("quire:role-changed", { role: message.role });
    }
  }
}
