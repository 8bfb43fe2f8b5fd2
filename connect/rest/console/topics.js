// Topics (the worker's read-only /sluiceway/topics extension): every topic with its
// partitions' earliest and latest offsets, and one topic with the consumer groups that
// committed offsets on it and their lag per partition, and its records (newest first by
// default, paged by partition and offset), Schema Registry-framed keys and values decoded
// by the worker (/sluiceway/topics/{name}/records).

import { api, request } from "./api.js";
import { fill, h } from "./dom.js";

const dash = (v) => (v === null || v === undefined ? "–" : String(v));
const records = (p) =>
  p.earliest_offset === null || p.latest_offset === null ? null : p.latest_offset - p.earliest_offset;
const topicLink = (name) => h("a", { href: `#/topics/${encodeURIComponent(name)}` }, name);

export function topicsView(container, _params, _context) {
  const showInternal = h("input", { type: "checkbox", id: "show-internal" });
  const body = h("div", { class: "topic-list" }, h("p", { class: "muted" }, "Loading topics…"));
  container.append(
    h(
      "section",
      { class: "topics" },
      h(
        "div",
        { class: "view-head" },
        h("h2", {}, "Topics"),
        h("label", { class: "inline" }, showInternal, " show internal topics"),
      ),
      body,
    ),
  );
  let last = [];
  showInternal.addEventListener("change", () => render());

  function render() {
    const shown = last.filter((t) => showInternal.checked || !t.internal);
    if (!shown.length) {
      fill(body, h("p", { class: "muted empty" }, "No topics."));
      return;
    }
    fill(
      body,
      h(
        "table",
        { class: "topics-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", {}, "Topic"),
            h("th", { class: "num" }, "Partitions"),
            h("th", { class: "num" }, "Records"),
            h("th", {}, "Offsets per partition (earliest → latest)"),
          ),
        ),
        h(
          "tbody",
          {},
          shown.map((t) => {
            const counts = t.partitions.map(records);
            const total = counts.some((c) => c === null) ? null : counts.reduce((a, b) => a + b, 0);
            return h(
              "tr",
              { class: "topic", dataset: { topic: t.name } },
              h("td", {}, topicLink(t.name)),
              h("td", { class: "num partitions" }, String(t.partition_count)),
              h("td", { class: "num records" }, dash(total)),
              h(
                "td",
                { class: "offsets" },
                t.partitions.map((p) =>
                  h(
                    "span",
                    { class: "partition", dataset: { partition: p.partition }, title: p.error || "" },
                    `${p.partition}: ${dash(p.earliest_offset)} → ${dash(p.latest_offset)}`,
                  ),
                ),
              ),
            );
          }),
        ),
      ),
    );
  }

  async function refresh() {
    last = await api.topics();
    render();
  }

  return { refresh };
}

export function topicView(container, params, _context) {
  const partitions = h("div", { class: "partitions" });
  const recordList = recordsPanel(params.name);
  const groups = h("div", { class: "groups" });
  container.append(
    h(
      "section",
      { class: "topic-detail", dataset: { topic: params.name } },
      h(
        "div",
        { class: "view-head" },
        h("h2", {}, "Topic ", h("code", {}, params.name)),
        h("a", { class: "button", href: "#/topics" }, "All topics"),
      ),
      h("h3", {}, "Partitions"),
      partitions,
      h("h3", {}, "Consumer groups"),
      groups,
      h("h3", {}, "Records"),
      recordList.element,
    ),
  );

  function renderPartitions(topic) {
    fill(
      partitions,
      h(
        "table",
        { class: "partitions-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { class: "num" }, "Partition"),
            h("th", { class: "num" }, "Earliest offset"),
            h("th", { class: "num" }, "Latest offset"),
            h("th", { class: "num" }, "Records"),
          ),
        ),
        h(
          "tbody",
          {},
          topic.partitions.map((p) =>
            h(
              "tr",
              { class: "partition", dataset: { partition: p.partition }, title: p.error || "" },
              h("td", { class: "num" }, String(p.partition)),
              h("td", { class: "num earliest" }, dash(p.earliest_offset)),
              h("td", { class: "num latest" }, dash(p.latest_offset)),
              h("td", { class: "num" }, dash(records(p))),
            ),
          ),
        ),
      ),
    );
  }

  function renderGroups(topic) {
    if (!topic.consumer_groups.length) {
      fill(groups, h("p", { class: "muted empty" }, "No consumer group has committed offsets on this topic."));
      return;
    }
    fill(
      groups,
      topic.consumer_groups.map((g) =>
        h(
          "article",
          { class: "group", dataset: { group: g.group_id, lag: g.lag } },
          h(
            "header",
            {},
            h("h4", {}, g.group_id),
            h("span", { class: "badge" }, g.state),
            h("span", {}, "lag ", h("strong", { class: "lag" }, String(g.lag))),
          ),
          h(
            "table",
            { class: "lag-table" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                h("th", { class: "num" }, "Partition"),
                h("th", { class: "num" }, "Committed offset"),
                h("th", { class: "num" }, "Latest offset"),
                h("th", { class: "num" }, "Lag"),
              ),
            ),
            h(
              "tbody",
              {},
              g.partitions.map((p) =>
                h(
                  "tr",
                  { dataset: { partition: p.partition } },
                  h("td", { class: "num" }, String(p.partition)),
                  h("td", { class: "num committed" }, dash(p.committed_offset)),
                  h("td", { class: "num latest" }, dash(p.latest_offset)),
                  h("td", { class: "num lag" }, dash(p.lag)),
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }

  async function refresh() {
    const topic = await api.topic(params.name);
    renderPartitions(topic);
    renderGroups(topic);
    await recordList.refresh(topic);
  }

  return { refresh };
}

// -- records ---------------------------------------------------------------------------------

const LIMITS = [10, 20, 50, 100, 500];
const SCHEMA_FORMATS = new Set(["AVRO", "JSON", "PROTOBUF"]);
// The stylesheet has no rules for the records table yet: the few it needs, inline.

/** GET /sluiceway/topics/{name}/records with the query of the controls. */
export function recordsPath(name, { partition = "", offset = null, limit = 20 } = {}) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (partition !== "") query.set("partition", String(partition));
  if (offset !== null) query.set("offset", String(offset));
  return `/sluiceway/topics/${encodeURIComponent(name)}/records?${query}`;
}

/** The JSON a key or value holds: decoded data, or text that is a JSON object or array. */
export function jsonOf(shown) {
  if (SCHEMA_FORMATS.has(shown.format)) return { found: true, value: shown.data };
  if (shown.format === "text" && /^\s*[[{]/.test(shown.data)) {
    try {
      return { found: true, value: JSON.parse(shown.data) };
    } catch {
      // text that only looks like JSON
    }
  }
  return { found: false, value: undefined };
}

function formatBadge(shown) {
  if (SCHEMA_FORMATS.has(shown.format)) {
    const subjects = shown.subjects && shown.subjects.length ? `subjects: ${shown.subjects.join(", ")}` : "";
    return h(
      "span",
      { class: "badge format", dataset: { format: shown.format }, title: subjects },
      `${shown.format} #${shown.schema_id}`,
    );
  }
  if (shown.schema_id !== null && shown.schema_id !== undefined) {
    return h("span", { class: "badge format", dataset: { format: shown.format } }, `#${shown.schema_id} not decoded`);
  }
  return h("span", { class: "badge format", dataset: { format: shown.format } }, shown.format);
}

/** A key or value cell's content. */
export function shownNode(shown, pretty) {
  if (shown === null || shown === undefined) return h("span", { class: "muted null" }, "null");
  const json = jsonOf(shown);
  const body = json.found
    ? h("pre", { class: "json" }, JSON.stringify(json.value, null, pretty ? 2 : undefined))
    : h("pre", { class: shown.format === "base64" ? "base64" : "text" }, shown.data);
  return [
    formatBadge(shown),
    shown.error ? h("div", { class: "decode-error" }, shown.error) : null,
    body,
  ];
}

function headerNodes(headers) {
  return headers.map((header) =>
    h(
      "div",
      { class: "header", dataset: { header: header.name } },
      h("code", {}, header.name),
      ": ",
      header.value === null
        ? h("span", { class: "muted" }, "null")
        : [header.value.format === "base64" ? h("span", { class: "badge" }, "base64") : null, " ", header.value.data],
    ),
  );
}

function timeOf(record) {
  if (record.timestamp === null) return h("span", { class: "muted" }, "–");
  return h(
    "time",
    { datetime: new Date(record.timestamp).toISOString(), title: `${record.timestamp_type} ${record.timestamp}` },
    new Date(record.timestamp).toISOString().replace("T", " ").replace("Z", ""),
  );
}

/**
 * The records of topic `name`: partition, offset and limit controls, "Newest" (each chosen
 * partition's last records, followed as the view refreshes), "Older"/"Newer" pages within
 * one partition, and the records with their keys and values (JSON pretty or compact).
 */
function recordsPanel(name) {
  const state = { partition: "", offset: null, limit: 20 };
  const partitionSelect = h("select", { id: "records-partition" }, h("option", { value: "" }, "all"));
  const offsetInput = h("input", { id: "records-offset", type: "number", min: "0", placeholder: "newest", size: 8 });
  const limitSelect = h(
    "select",
    { id: "records-limit" },
    LIMITS.map((n) => h("option", { value: String(n), selected: n === state.limit }, String(n))),
  );
  const pretty = h("input", { type: "checkbox", id: "records-pretty", checked: true });
  const newest = h("button", { type: "button", class: "newest" }, "Newest");
  const older = h("button", { type: "button", class: "older" }, "Older");
  const newer = h("button", { type: "button", class: "newer" }, "Newer");
  const summary = h("p", { class: "muted records-summary" });
  const body = h("div", { class: "records" }, h("p", { class: "muted" }, "Loading records…"));
  const form = h(
    "form",
    { class: "inline-form records-controls" },
    h("label", { for: "records-partition" }, "Partition"),
    partitionSelect,
    h("label", { for: "records-offset" }, "from offset"),
    offsetInput,
    h("label", { for: "records-limit" }, "records per partition"),
    limitSelect,
    h("button", { type: "submit" }, "Show"),
    newest,
    older,
    newer,
    h("label", { class: "inline" }, pretty, " pretty JSON"),
  );
  let partitionCount = -1;
  let last = null; // the last answer
  let shownKey = ""; // what is on screen, so that an unchanged answer does not redraw it

  let asked = 0; // answers to earlier questions are dropped when they come late
  const go = (changes) => {
    Object.assign(state, changes);
    offsetInput.value = state.offset === null ? "" : String(state.offset);
    load();
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const typed = offsetInput.value.trim();
    go({
      partition: partitionSelect.value,
      offset: typed === "" ? null : Math.max(0, Math.floor(Number(typed))),
      limit: Number(limitSelect.value),
    });
  });
  partitionSelect.addEventListener("change", () => go({ partition: partitionSelect.value }));
  limitSelect.addEventListener("change", () => go({ limit: Number(limitSelect.value) }));
  newest.addEventListener("click", () => go({ offset: null }));
  older.addEventListener("click", () => {
    const w = window_();
    if (w) go({ offset: Math.max(w.start_offset - state.limit, w.earliest_offset) });
  });
  newer.addEventListener("click", () => {
    const w = window_();
    if (w) go({ offset: w.end_offset >= w.latest_offset ? null : w.end_offset });
  });
  pretty.addEventListener("change", () => render(true));

  /** The one partition's window when one partition is shown. */
  function window_() {
    if (!last || state.partition === "" || last.partitions.length !== 1) return null;
    const w = last.partitions[0];
    return w.start_offset === null ? null : w;
  }

  function controls() {
    const w = window_();
    older.disabled = !w || w.start_offset <= w.earliest_offset;
    newer.disabled = !w || state.offset === null;
    const paging = state.partition === "" ? "Choose a partition to page through it." : "";
    older.title = paging;
    newer.title = paging;
  }

  function render(force = false) {
    controls();
    if (!last) return;
    const key = JSON.stringify([last, pretty.checked]);
    if (!force && key === shownKey) return;
    shownKey = key;
    const problems = last.partitions.filter((p) => p.error).map((p) => `partition ${p.partition}: ${p.error}`);
    fill(
      summary,
      `${last.records.length} records`,
      state.offset === null ? ", the newest of each partition" : ` from offset ${state.offset}`,
      problems.length ? h("span", { class: "decode-error" }, ` (${problems.join("; ")})`) : null,
    );
    if (!last.records.length) {
      fill(body, h("p", { class: "muted empty" }, "No records here."));
      return;
    }
    fill(
      body,
      h(
        "table",
        { class: "records-table topics-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { class: "num" }, "Partition"),
            h("th", { class: "num" }, "Offset"),
            h("th", {}, "Time (UTC)"),
            h("th", {}, "Key"),
            h("th", {}, "Value"),
            h("th", {}, "Headers"),
          ),
        ),
        h(
          "tbody",
          {},
          last.records.map((r) =>
            h(
              "tr",
              { class: "record", dataset: { partition: r.partition, offset: r.offset } },
              h("td", { class: "num partition" }, String(r.partition)),
              h("td", { class: "num offset" }, String(r.offset)),
              h("td", { class: "time" }, timeOf(r)),
              h("td", { class: "record-key" }, shownNode(r.key, pretty.checked)),
              h("td", { class: "record-value" }, shownNode(r.value, pretty.checked)),
              h("td", { class: "record-headers" }, headerNodes(r.headers)),
            ),
          ),
        ),
      ),
    );
  }

  async function refresh(topic) {
    if (topic.partition_count !== partitionCount) {
      partitionCount = topic.partition_count;
      fill(
        partitionSelect,
        h("option", { value: "" }, "all"),
        topic.partitions.map((p) => h("option", { value: String(p.partition) }, String(p.partition))),
      );
      partitionSelect.value = state.partition;
    }
    await load();
  }

  /** Read the records the controls ask for (the view's refresh does too, to follow new ones). */
  async function load() {
    const mine = ++asked;
    let answer;
    try {
      answer = await request("GET", recordsPath(name, state));
    } catch (err) {
      if (mine !== asked) return;
      last = null;
      shownKey = "";
      controls();
      fill(summary, "");
      fill(body, h("p", { class: "decode-error" }, `Records: ${err.message}`));
      return;
    }
    if (mine !== asked) return;
    last = answer;
    render();
  }

  return { element: h("div", { class: "topic-records" }, form, summary, body), refresh };
}
