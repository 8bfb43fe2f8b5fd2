// Topics (the worker's read-only /sluiceway/topics extension): every topic with its
// partitions' earliest and latest offsets, and one topic with the consumer groups that
// committed offsets on it and their lag per partition.

import { api } from "./api.js";
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
  }

  return { refresh };
}
