// The console's shell: hash routes to views, and one refresh loop that samples /metrics
// and then refreshes the view on screen. Views are objects {refresh?(), destroy?()} made
// by a factory (container, params, context); a view without refresh (the editor) is
// left alone so that nothing typed is lost.

import { api, request } from "./api.js";
import { connectorsView } from "./connectors.js";
import { editorView } from "./editor.js";
import { loggersView } from "./loggers.js";
import { showError } from "./notices.js";
import { parseExposition } from "./prometheus.js";
import { Throughput } from "./throughput.js";
import { schemaView, schemasView } from "./schemas.js";
import { topicView, topicsView } from "./topics.js";

const REFRESH_KEY = "sluiceway.console.refresh";
const METRICS_RETRY_MS = 30000; // a worker without /metrics (404) is asked again this often, not every tick

const context = {
  throughput: new Throughput(),
  metrics: { error: null, missing: false, failedAt: 0 },
  refreshNow: () => tick(),
};

// [hash pattern, view factory, params from the match, the nav entry to highlight]
const routes = [
  [/^#\/connectors\/new$/, editorView, () => ({}), "editor"],
  [/^#\/connectors\/(.+)\/edit$/, editorView, (m) => ({ name: decodeURIComponent(m[1]) }), "connectors"],
  [/^#\/topics\/(.+)$/, topicView, (m) => ({ name: decodeURIComponent(m[1]) }), "topics"],
  [/^#\/topics$/, topicsView, () => ({}), "topics"],
  [/^#\/schemas\/(.+)$/, schemaView, (m) => ({ name: decodeURIComponent(m[1]) }), "schemas"],
  [/^#\/schemas$/, schemasView, () => ({}), "schemas"],
  [/^#\/loggers$/, loggersView, () => ({}), "loggers"],
  [/^#\/connectors$/, connectorsView, () => ({}), "connectors"],
];

let current = null;
let timer = null;
let running = null;

async function sampleMetrics() {
  const now = Date.now();
  if (context.metrics.missing && now - context.metrics.failedAt < METRICS_RETRY_MS) return;
  try {
    context.throughput.add(Date.now(), parseExposition(await api.metrics()));
    context.metrics.error = null;
    context.metrics.missing = false;
  } catch (err) {
    context.metrics.error = err.status ? `GET /metrics: ${err.status} ${err.message}` : err.message;
    context.metrics.missing = err.status === 404;
    context.metrics.failedAt = now;
  }
}

/** Sample the metrics and refresh the view; one run at a time. */
async function tick() {
  clearTimeout(timer);
  if (running) return running;
  running = (async () => {
    try {
      await sampleMetrics();
      if (current && current.refresh) await current.refresh();
    } catch (err) {
      showError(err);
    } finally {
      running = null;
      schedule();
    }
  })();
  return running;
}

function schedule() {
  clearTimeout(timer);
  const ms = Number(document.getElementById("refresh").value);
  if (ms > 0) timer = setTimeout(tick, ms);
}

function route() {
  const hash = location.hash || "#/connectors";
  for (const [pattern, factory, params, nav] of routes) {
    const match = hash.match(pattern);
    if (match) return [factory, params(match), nav];
  }
  return [connectorsView, {}, "connectors"];
}

function show() {
  const [factory, params, nav] = route();
  if (current && current.destroy) current.destroy();
  const container = document.getElementById("view");
  container.replaceChildren();
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === nav);
  }
  current = factory(container, params, context);
  tick();
}

async function showWorker() {
  try {
    const root = await request("GET", "/");
    document.getElementById("worker").textContent = `v${root.version} · cluster ${root.kafka_cluster_id}`;
  } catch (err) {
    showError(err);
  }
}

function start() {
  const select = document.getElementById("refresh");
  const saved = localStorage.getItem(REFRESH_KEY);
  if (saved !== null && [...select.options].some((o) => o.value === saved)) select.value = saved;
  select.addEventListener("change", () => {
    localStorage.setItem(REFRESH_KEY, select.value);
    tick();
  });
  window.addEventListener("hashchange", show);
  showWorker();
  show();
}

start();
