// The operators' Overview charts (Django admin): one uPlot chart per figure, a line per operation, for the
// window chosen (1 hour, 24 hours, 7 days), fetched from the rollups and fetched again every 15 seconds.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

const REFRESH_MS = 15_000;
const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"];

const root = document.querySelector("[data-operator-charts]");
if (root) start(root);

function start(root) {
  const area = root.querySelector("[data-charts-area]");
  const time = root.querySelector("[data-chart-time]");
  const buttons = [...root.querySelectorAll("[data-window]")];
  let chosen = "1h";
  let charts = [];

  for (const button of buttons) {
    button.addEventListener("click", () => {
      chosen = button.dataset.window;
      for (const other of buttons) other.setAttribute("aria-pressed", String(other === button));
      load();
    });
  }

  async function load() {
    const response = await fetch(`${root.dataset.url}?window=${encodeURIComponent(chosen)}`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    if (!response.ok) {
      time.textContent = `Could not load the charts (${response.status}).`;
      return;
    }
    const data = await response.json();
    if (data.window !== chosen) return; // an answer for a window no longer shown
    render(data);
    time.textContent = `Data of ${new Date(data.generated_at).toLocaleString()}`;
    time.title = data.generated_at;
    root.dataset.loadedWindow = data.window;
    root.dataset.points = String(data.x.length);
  }

  function render(data) {
    for (const chart of charts) chart.destroy();
    charts = [];
    area.replaceChildren();
    if (!data.x.length) {
      area.textContent = "No history yet: the maintenance loop writes one row per operation each minute.";
      return;
    }
    const width = Math.max(320, Math.min(640, Math.floor((area.clientWidth || 1200) / 2) - 24));
    for (const [name, figure] of Object.entries(data.figures)) {
      const box = document.createElement("figure");
      box.className = "operator-chart";
      box.dataset.figure = name;
      const caption = document.createElement("figcaption");
      caption.textContent = figure.label;
      box.append(caption);
      area.append(box);
      const latest = Object.fromEntries(data.operations.map((op) => [op, lastValue(figure.series[op])]));
      box.dataset.latest = JSON.stringify(latest);
      const series = [
        {},
        ...data.operations.map((op, index) => ({ label: op, stroke: COLOURS[index % COLOURS.length], width: 1.5 })),
      ];
      const values = [data.x, ...data.operations.map((op) => figure.series[op])];
      const axes = [{}, { size: axisWidth }];
      charts.push(new uPlot({ width, height: 170, series, axes, scales: { x: { time: true } } }, values, box));
    }
    root.quireCharts = charts; // tests read what the charts drew
  }

  load();
  setInterval(load, REFRESH_MS);
}

/** The y axis as wide as its longest label (uPlot's fixed 50 px clipped "15,000" to "5,000"). */
function axisWidth(chart, values, axisIndex, cycle) {
  const axis = chart.axes[axisIndex];
  if (cycle > 1) return axis._size; // uPlot asks again while it settles the layout: keep the first answer
  let size = axis.ticks.size + axis.gap;
  const longest = (values || []).reduce((found, value) => (value.length > found.length ? value : found), "");
  if (longest) {
    chart.ctx.font = axis.font[0];
    size += chart.ctx.measureText(longest).width / window.devicePixelRatio;
  }
  return Math.ceil(size);
}

function lastValue(values) {
  for (let index = values.length - 1; index >= 0; index -= 1) {
    if (values[index] !== null) return values[index];
  }
  return null;
}
