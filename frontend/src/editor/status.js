// Says plainly whether what the author typed is saved, and asks before leaving with unsaved changes.
const WORDS = {
  saved: "All changes saved",
  saving: "Saving…",
  offline: "Offline — your changes will sync when the connection is back",
};

const CLOSED = {
  4400: "The connection was refused as malformed; reload the page.",
  4401: "You were signed out; sign in again to keep working.",
  4403: "You can no longer edit this document; reload the page.",
  4410: "This document was deleted.",
  4413: "That change would make the document too large, so it was not saved.",
};

export function statusShow(document_, element) {
  const render = () => {
    const state = document_.state;
    element.dataset.state = state;
    if (state === "closed") {
      const { code, reason } = document_.closedBy;
      element.textContent = (document_.refusal && document_.refusal.message) || CLOSED[code] || reason;
    } else {
      element.textContent = WORDS[state];
    }
  };
  document_.addEventListener("change", render);
  render();
  window.addEventListener("beforeunload", (event) => {
    if (document_.unsaved) {
      event.preventDefault();
      event.returnValue = ""; // the browser shows its own "leave page?" question
    }
  });
}
