// Records per second per connector, from the task counters the worker exposes at /metrics.
// The console samples /metrics every refresh and keeps WINDOW_MS of samples in memory; a
// rate is the increase of a connector's counters (summed over its tasks) between two
// consecutive samples, divided by the time between them. As in Prometheus' rate(), a
// counter that went down was reset (its task restarted) and counts from zero.

import { svg } from "./dom.js";

/** The counters charted: records a source task wrote to Kafka, records a sink task read. */
export const THROUGHPUT_METRICS = [
  "kafka_connect_source_task_metrics_source_record_write_total",
  "kafka_connect_sink_task_metrics_sink_record_read_total",
];
export const WINDOW_MS = 5 * 60 * 1000;

export class Throughput {
  constructor(windowMs = WINDOW_MS, metrics = THROUGHPUT_METRICS) {
    this.windowMs = windowMs;
    this.metrics = new Set(metrics);
    this.samples = []; // [{t, counters: Map(connector -> Map(series -> value))}], oldest first
  }

  /** Record one parsed exposition (see prometheus.js) taken at time `t` (ms). */
  add(t, exposition) {
    const counters = new Map();
    for (const sample of exposition.samples) {
      const connector = sample.labels.connector;
      if (!this.metrics.has(sample.name) || connector === undefined) continue;
      if (!counters.has(connector)) counters.set(connector, new Map());
      const key = `${sample.name}|${sample.labels.task ?? ""}`;
      counters.get(connector).set(key, sample.value);
    }
    this.samples.push({ t, counters });
    while (this.samples.length > 2 && this.samples[0].t < t - this.windowMs) this.samples.shift();
  }

  /** Whether any sample had a counter of `connector`. */
  has(connector) {
    return this.samples.some((s) => s.counters.has(connector));
  }

  /** [{t, rate}] of `connector`, one point per pair of consecutive samples. */
  rates(connector) {
    const points = [];
    for (let i = 1; i < this.samples.length; i++) {
      const prev = this.samples[i - 1];
      const cur = this.samples[i];
      const seconds = (cur.t - prev.t) / 1000;
      if (seconds <= 0) continue;
      const now = cur.counters.get(connector);
      if (!now) continue;
      const before = prev.counters.get(connector) ?? new Map();
      let increase = 0;
      for (const [key, value] of now) {
        const old = before.get(key);
        // A series that is new since the last sample, or went down (reset), counts from zero.
        increase += old === undefined || value < old ? value : value - old;
      }
      points.push({ t: cur.t, rate: increase / seconds });
    }
    return points;
  }
}

/** An SVG line chart of `points` over the window ending at `now`, scaled to its peak. */
export function sparkline(points, now, windowMs = WINDOW_MS, width = 240, height = 48) {
  const peak = Math.max(1, ...points.map((p) => p.rate));
  const x = (t) => (((t - (now - windowMs)) / windowMs) * width).toFixed(1);
  const y = (rate) => (height - 2 - (rate / peak) * (height - 4)).toFixed(1);
  const chart = svg("svg", {
    class: "sparkline",
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: "img",
    preserveAspectRatio: "none",
  });
  chart.append(svg("line", { class: "axis", x1: 0, y1: height - 1, x2: width, y2: height - 1 }));
  if (points.length) {
    const coords = points.map((p) => `${x(p.t)},${y(p.rate)}`);
    const first = x(points[0].t);
    const last = x(points[points.length - 1].t);
    chart.append(svg("polygon", { class: "area", points: `${first},${height} ${coords.join(" ")} ${last},${height}` }));
    chart.append(svg("polyline", { class: "line", points: coords.join(" ") }));
    const lastPoint = points[points.length - 1]; // visible even while the line is a single point
    chart.append(svg("circle", { class: "now", cx: last, cy: y(lastPoint.rate), r: 2 }));
  }
  return chart;
}
