// A tolerant reader of BibTeX/BibLaTeX entries for completion: each `@type{key, field = {…} | "…" | word, …}`
// gives its key, author and title. It never throws: an entry it cannot read to its end still gives its key, and
// @string/@preamble/@comment are skipped. No macros are expanded (a title in {braces} keeps its words).

const SKIPPED_TYPES = new Set(["string", "preamble", "comment"]);

/** The value that starts at `at` (a {braced}, "quoted" or bare one), and where it ends. */
function valueAt(text, at) {
  const open = text[at];
  if (open === "{" || open === '"') {
    const close = open === "{" ? "}" : '"';
    let depth = 0;
    for (let i = at + 1; i < text.length; i += 1) {
      const char = text[i];
      if (char === "\\") i += 1;
      else if (char === "{") depth += 1;
      else if (char === "}" && depth > 0) depth -= 1;
      else if (char === close && depth === 0) return { value: text.slice(at + 1, i), end: i + 1 };
    }
    return { value: text.slice(at + 1), end: text.length };
  }
  const bare = /^[^,}\s]*/.exec(text.slice(at))[0];
  return { value: bare, end: at + bare.length };
}

/** The fields of an entry's body (after its key), up to the entry's closing brace. */
function fieldsOf(text, at) {
  const fields = {};
  const field = /\s*,?\s*([A-Za-z][\w-]*)\s*=\s*/y;
  let position = at;
  for (;;) {
    field.lastIndex = position;
    const match = field.exec(text);
    if (!match) break;
    let { value, end } = valueAt(text, field.lastIndex);
    // `title = {A} # " and " # {B}`: concatenations are joined.
    const joined = /\s*#\s*/y;
    for (joined.lastIndex = end; joined.exec(text); joined.lastIndex = end) {
      const next = valueAt(text, joined.lastIndex);
      value += next.value;
      end = next.end;
    }
    fields[match[1].toLowerCase()] = value;
    position = end;
  }
  return fields;
}

/** Braces and runs of white space removed, for showing. */
export function bibPlain(value) {
  return (value || "").replace(/[{}]/g, "").replace(/\s+/g, " ").trim();
}

/** Every entry of a .bib text: `[{key, type, author, title, line}]`, in the file's order. */
export function bibEntries(text) {
  const entries = [];
  const start = /@([A-Za-z]+)\s*[{(]\s*([^,\s{}()]*)\s*,?/g;
  for (let match = start.exec(text); match; match = start.exec(text)) {
    const type = match[1].toLowerCase();
    if (SKIPPED_TYPES.has(type) || !match[2]) continue;
    const fields = fieldsOf(text, start.lastIndex);
    entries.push({
      key: match[2],
      type,
      author: bibPlain(fields.author || fields.editor),
      title: bibPlain(fields.title),
      line: text.slice(0, match.index).split("\n").length,
    });
  }
  return entries;
}

/** "Knuth", "Knuth and Lamport", "Knuth et al." from an author field. */
export function authorsShort(author) {
  const names = author
    .split(/\s+and\s+/i)
    .map((name) => (name.includes(",") ? name.split(",")[0] : name.split(" ").pop()).trim())
    .filter(Boolean);
  if (names.length > 2) return `${names[0]} et al.`;
  return names.join(" and ");
}
