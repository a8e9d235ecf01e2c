// One text document kept in step with the server: a Yjs document over y-websocket, plus Quire's two
// messages (collaboration/live/protocol.py):
//   100 ACKNOWLEDGED  the server's state vector after it stored an update of ours: that much is durable
//   101 REFUSED       {code, message}: why an update was refused (the server then closes the socket), or
//                     "read_only" / "editable" when the author's role changed
// A change typed here is saved once an acknowledgement covers it; updates that arrive from the server are
// durable already (the server stores before it relays).
import * as decoding from "lib0/decoding";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";

const MESSAGE_ACKNOWLEDGED = 100;
const MESSAGE_REFUSED = 101;
const RESYNC_MILLISECONDS = 10000; // a relayed update the channel layer lost arrives with the next resync

export class LiveDocument extends EventTarget {
  constructor({ socketUrl, room }) {
    super();
    this.doc = new Y.Doc();
    this.text = this.doc.getText("content");
    this.acknowledged = new Map(); // client id → the clock up to which the server has stored it
    this.authored = new Set(); // client ids this page typed under
    this.status = "connecting";
    this.closedBy = null; // {code, reason} when the server closed for good
    this.refusal = null;
    this.provider = new WebsocketProvider(socketUrl, room, this.doc, {
      disableBc: true, // tabs sync through the server only, so "saved" always means stored there
      resyncInterval: RESYNC_MILLISECONDS,
      maxBackoffTime: 4000,
    });
    this.provider.messageHandlers[MESSAGE_ACKNOWLEDGED] = (_encoder, decoder) => {
      const stateVector = Y.decodeStateVector(decoding.readVarUint8Array(decoder));
      for (const [client, clock] of stateVector) {
        if ((this.acknowledged.get(client) || 0) < clock) this.acknowledged.set(client, clock);
      }
      this.changed();
    };
    this.provider.messageHandlers[MESSAGE_REFUSED] = (_encoder, decoder) => {
      this.refusal = JSON.parse(decoding.readVarString(decoder));
      this.dispatchEvent(new CustomEvent("refused", { detail: this.refusal }));
      this.changed();
    };
    this.doc.on("update", (_update, origin) => {
      if (origin !== this.provider) this.authored.add(this.doc.clientID);
      this.changed();
    });
    this.provider.on("status", ({ status }) => {
      this.status = status;
      this.changed();
    });
    this.provider.on("closed", (event) => {
      this.closedBy = event;
      this.changed();
    });
  }

  get awareness() {
    return this.provider.awareness;
  }

  /** Changes typed here that the server has not acknowledged yet. */
  get unsaved() {
    const local = Y.decodeStateVector(Y.encodeStateVector(this.doc));
    for (const client of this.authored) {
      if ((local.get(client) || 0) > (this.acknowledged.get(client) || 0)) return true;
    }
    return false;
  }

  /** "saved" | "saving" | "offline" | "closed" */
  get state() {
    if (this.closedBy) return "closed";
    if (this.status !== "connected") return "offline";
    return this.unsaved ? "saving" : "saved";
  }

  changed() {
    this.dispatchEvent(new Event("change"));
  }

  /** Resolves true once every change typed so far is stored, false if that takes longer than `ms`. */
  whenSaved(ms) {
    if (this.state === "saved") return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (result) => {
        clearTimeout(timer);
        this.removeEventListener("change", check);
        resolve(result);
      };
      const check = () => {
        if (this.state === "saved") done(true);
        else if (this.state === "closed") done(false);
      };
      const timer = setTimeout(() => done(false), ms);
      this.addEventListener("change", check);
    });
  }

  reconnect() {
    this.closedBy = null;
    this.provider.connect();
  }
}
