// The project's API as the page calls it: the session's cookie, Django's CSRF token (the one htmx sends), and
// the API's error shape turned into an Error whose `code`, `details` and `status` say what went wrong.
function csrfToken() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch {
    return "";
  }
}

export function pathUrl(path) {
  return path.split("/").map(encodeURIComponent).join("/");
}

export async function call(method, url, { json, body, headers = {} } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json", ...headers } };
  if (method !== "GET") init.headers["X-CSRFToken"] = csrfToken();
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (body !== undefined) {
    init.body = body;
  }
  const response = await fetch(url, init);
  if (response.ok) return response.status === 204 ? null : response.json();
  let error = { code: "error", message: `The server answered ${response.status}.`, details: {} };
  try {
    error = (await response.json()).error || error;
  } catch {
    // not the API's error shape (a proxy's page, say): keep the status
  }
  throw Object.assign(new Error(error.message), { code: error.code, details: error.details || {}, status: response.status });
}
