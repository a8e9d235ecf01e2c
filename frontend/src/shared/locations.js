// Opening a source location from anywhere on the project page (a diagnostic, a SyncTeX click): the editor
// takes it when it has that file open (it cancels the event); otherwise the page opens that file there.
export function openLocation(file, line) {
  const event = new CustomEvent("quire:open-location", { detail: { file, line }, cancelable: true });
  if (!document.dispatchEvent(event)) return; // the editor had the file and moved to the line
  const url = new URL(window.location.href);
  url.searchParams.set("file", file);
  url.searchParams.set("line", String(line));
  url.searchParams.delete("tab");
  window.location.assign(url.toString());
}
