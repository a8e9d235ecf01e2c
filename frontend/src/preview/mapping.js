// Where the preview's text came from, both ways: a point on a page → the source file and line that made it, and a
// source line → the place on a page. SyncTeX does this for the PDF pane; for the live preview typst.ts 0.8.0-rc3
// has no such lookup in the browser: its renderer can name an element's Typst span (a number), but turning a span
// into a file and line needs the compiled world, and the web compiler exposes no call for it (tinymist resolves
// spans in its language server). So the preview matches text: the renderer's semantic layer lists every text run
// of a page, with its position and its characters; the runs, in document order, are found one after the other in
// the project's Typst sources (whitespace collapsed, typographic quotes and dashes as typed), and each found run
// knows the source offsets it came from. Text Typst makes itself (numbering, list markers, page numbers) or text
// that differs from what was typed (escapes, `#"strings"`) may be found nowhere: such a run maps to nothing, and
// the nearest run that does is used instead.

const ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'", "&#x27;": "'" };
const TYPOGRAPHY = { "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "--", "\u2014": "---", "\u2026": "...", "\u00a0": " ", "\u00ad": "" };
const SHORT_WINDOW = 120; // a run of one or two letters (math, a marker) is looked for this close after the last one

let semiCharWidth = null; // the renderer's own estimate of a character's width (vec2canvas BrowserFontMetric)

function charWidth(character) {
  if (semiCharWidth === null) {
    const context = document.createElement("canvas").getContext("2d");
    context.font = "128px monospace";
    semiCharWidth = context.measureText("A").width / 128 || 0.6;
  }
  const code = character.codePointAt(0);
  return code >= 0x2e80 && code <= 0xffdc ? semiCharWidth * 2 : semiCharWidth;
}

function number(style, property) {
  const match = new RegExp(`${property}:\\s*(?:calc\\(var\\([^)]*\\)\\s*\\*\\s*)?(-?[\\d.]+)`).exec(style);
  return match ? Number(match[1]) : null;
}

// The text runs of one page's semantic layer (vec2sema's HTML: one span per run, positions in points).
export function runsOf(html, page) {
  const runs = [];
  const pattern = /<span class="typst-content-text" data-text-id="\d+"(?: data-matrix="[^"]*")? style="([^"]*)">([^<]*)<\/span>/g;
  for (const [, style, escaped] of html.matchAll(pattern)) {
    const text = escaped.replace(/&(?:lt|gt|amp|quot|#39|#x27);/g, (entity) => ENTITIES[entity]);
    const size = number(style, "font-size");
    const left = number(style, "left");
    const top = number(style, "top");
    const scale = /scaleX\(([-\d.]+)\)/.exec(style);
    if (size === null || left === null || top === null || !text.trim()) continue;
    const natural = [...text].reduce((sum, character) => sum + charWidth(character), 0) * size;
    const width = natural * (scale ? Number(scale[1]) : 1);
    runs.push({ page, text, x: left, y: top, width: Math.max(width, 1), height: size });
  }
  return runs;
}

// A source with its whitespace collapsed, and where each of its characters came from.
function normalized(text) {
  let out = "";
  const offsets = [];
  let space = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (/\s/.test(character)) {
      if (!space) {
        out += " ";
        offsets.push(index);
      }
      space = true;
      continue;
    }
    space = false;
    out += character;
    offsets.push(index);
  }
  offsets.push(text.length);
  return { flat: out, offsets };
}

// A run's characters as they were most likely typed; `map[i]` is the run's character index for the i-th one.
function typed(text) {
  let out = "";
  const map = [];
  let space = true; // leading spaces go
  [...text].forEach((character, index) => {
    let replaced = TYPOGRAPHY[character] ?? character;
    if (/^\s+$/.test(replaced)) {
      if (space) return;
      space = true;
      replaced = " ";
    } else if (replaced) space = false;
    for (const piece of replaced) {
      out += piece;
      map.push(index);
    }
  });
  while (out.endsWith(" ")) {
    out = out.slice(0, -1);
    map.pop();
  }
  return { text: out, map };
}

function alphanumerics(text) {
  return (text.match(/[\p{L}\p{N}]/gu) || []).length;
}

// Lines are 1-based, as the editor counts them.
export function lineAt(text, offset) {
  let line = 1;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) line++;
  return line;
}

function lineRange(text, line) {
  let from = 0;
  for (let number = 1; number < line; number++) {
    const next = text.indexOf("\n", from);
    if (next === -1) return null;
    from = next + 1;
  }
  const end = text.indexOf("\n", from);
  return { from, to: end === -1 ? text.length : end };
}

export class PreviewMap {
  // runs: in document order; sources: Map path → text, the open file first (it is looked in first).
  constructor(runs, sources) {
    this.runs = runs;
    // path → {text, flat: the text with its whitespace collapsed, offsets: flat index → text offset, cursor}
    this.sources = new Map([...sources].map(([path, text]) => [path, { text, ...normalized(text), cursor: 0 }]));
    this.align();
  }

  align() {
    let last = null;
    for (const run of this.runs) {
      const { text: wanted, map } = typed(run.text);
      run.map = map;
      run.typed = wanted;
      const letters = alphanumerics(wanted);
      if (!letters) continue;
      const short = letters < 3;
      const order = last ? [last, ...[...this.sources.keys()].filter((path) => path !== last)] : [...this.sources.keys()];
      let found = null;
      for (const path of order) {
        const source = this.sources.get(path);
        const at = source.flat.indexOf(wanted, source.cursor);
        if (at !== -1 && (!short || at - source.cursor <= SHORT_WINDOW)) {
          found = { path, at, advance: true };
          break;
        }
      }
      if (!found && !short) {
        for (const path of order) {
          const at = this.sources.get(path).flat.indexOf(wanted);
          if (at !== -1) {
            found = { path, at, advance: false }; // out of order (a header, a caption repeated): keep our place
            break;
          }
        }
      }
      if (!found && !short) found = this.byWord(wanted, order);
      if (!found) continue;
      const source = this.sources.get(found.path);
      run.path = found.path;
      run.from = found.at; // in the normalized source
      run.to = Math.min(found.at + wanted.length, source.flat.length);
      if (found.advance) {
        source.cursor = run.to;
        last = found.path;
      }
    }
  }

  // A run typed otherwise (an escape, a hyphenated word, a ligature): placed by its longest word.
  byWord(wanted, order) {
    const words = [...wanted.matchAll(/[\p{L}\p{N}]{3,}/gu)].sort((a, b) => b[0].length - a[0].length);
    if (!words.length) return null;
    const [word] = words;
    for (const path of order) {
      const source = this.sources.get(path);
      const at = source.flat.indexOf(word[0], source.cursor);
      if (at !== -1 && at - source.cursor <= 2000) return { path, at: Math.max(0, at - word.index), advance: true };
    }
    return null;
  }

  sourceOffset(run, characterIndex) {
    const source = this.sources.get(run.path);
    let typedIndex = run.map.findIndex((index) => index >= characterIndex);
    if (typedIndex === -1) typedIndex = run.typed.length;
    const at = Math.min(run.from + typedIndex, run.to);
    return source.offsets[Math.min(at, source.offsets.length - 1)];
  }

  // {page, x, y} in points → {file, line}, or null.
  sourceAt({ page, x, y }) {
    const mapped = this.runs.filter((run) => run.page === page && run.path);
    if (!mapped.length) return null;
    const distance = (run) => {
      const dy = y < run.y ? run.y - y : y > run.y + run.height ? y - run.y - run.height : 0;
      const dx = x < run.x ? run.x - x : x > run.x + run.width ? x - run.x - run.width : 0;
      return dy * 4 + dx; // the line one clicked on first, then the run on it
    };
    const run = mapped.reduce((best, candidate) => (distance(candidate) < distance(best) ? candidate : best));
    const characters = [...run.text].length;
    const index = Math.max(0, Math.min(characters - 1, Math.floor(((x - run.x) / run.width) * characters)));
    const offset = this.sourceOffset(run, index);
    return { file: run.path, line: lineAt(this.sources.get(run.path).text, offset) };
  }

  // A source line → {page, x, y, width, height} in points: the runs that came from it, on the first page with
  // any; a line that made no text (blank, code) gets the next line's that did, else the previous one's.
  placeOf(file, line) {
    const source = this.sources.get(file);
    if (!source) return null;
    const range = lineRange(source.text, line);
    if (!range) return null;
    const runs = this.runs.filter((run) => run.path === file);
    const start = (run) => source.offsets[run.from];
    const end = (run) => source.offsets[Math.max(run.from, run.to - 1)] + 1;
    let hits = runs.filter((run) => start(run) < Math.max(range.to, range.from + 1) && end(run) > range.from);
    if (!hits.length) {
      const after = runs.filter((run) => start(run) >= range.to).sort((a, b) => start(a) - start(b))[0];
      const before = runs.filter((run) => end(run) <= range.from).sort((a, b) => end(b) - end(a))[0];
      hits = [after || before].filter(Boolean);
    }
    if (!hits.length) return null;
    const page = hits[0].page;
    const onPage = hits.filter((run) => run.page === page);
    const left = Math.min(...onPage.map((run) => run.x));
    const top = Math.min(...onPage.map((run) => run.y));
    const right = Math.max(...onPage.map((run) => run.x + run.width));
    const bottom = Math.max(...onPage.map((run) => run.y + run.height));
    return { page, x: left, y: top, width: right - left, height: bottom - top };
  }
}
