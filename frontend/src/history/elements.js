// Building the History panel's DOM. Names, paths and labels come from people, so they are only ever set as
// text; and never a `style` attribute, which the page's Content-Security-Policy refuses.
export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "className") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children.filter((child) => child !== undefined && child !== null && child !== false));
  return node;
}
