// Schemas (the worker's read-only /sluiceway/schemas extension, which reads the Schema
// Registry): every subject with its versions, latest id, type and compatibility level, and
// one subject's versions with a line diff between any two of them.

import { api } from "./api.js";
import { fill, h } from "./dom.js";

const subjectLink = (name) => h("a", { href: `#/schemas/${encodeURIComponent(name)}` }, name);

/** A schema's text laid out one JSON element a line (text that is not JSON stays as it is). */
export function pretty(schema) {
  try {
    return JSON.stringify(JSON.parse(schema), null, 2);
  } catch {
    return schema;
  }
}

/**
 * The lines of `before` and `after` as a diff: [kind, text] with kind " " (both), "-" (only
 * before) or "+" (only after), along a longest common subsequence of lines.
 */
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  const common = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push([" ", a[i]]);
      i++;
      j++;
    } else if (common[i + 1][j] >= common[i][j + 1]) {
      out.push(["-", a[i++]]);
    } else {
      out.push(["+", b[j++]]);
    }
  }
  while (i < a.length) out.push(["-", a[i++]]);
  while (j < b.length) out.push(["+", b[j++]]);
  return out;
}

export function schemasView(container, _params, _context) {
  const body = h("div", { class: "schema-list" }, h("p", { class: "muted" }, "Loading schemas…"));
  container.append(h("section", { class: "schemas" }, h("div", { class: "view-head" }, h("h2", {}, "Schemas")), body));

  async function refresh() {
    const subjects = await api.schemas();
    if (!subjects.length) {
      fill(body, h("p", { class: "muted empty" }, "No subjects."));
      return;
    }
    fill(
      body,
      h(
        "table",
        { class: "schemas-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", {}, "Subject"),
            h("th", {}, "Type"),
            h("th", {}, "Versions"),
            h("th", { class: "num" }, "Latest id"),
            h("th", {}, "Compatibility"),
          ),
        ),
        h(
          "tbody",
          {},
          subjects.map((s) =>
            h(
              "tr",
              { class: "subject", dataset: { subject: s.subject } },
              h("td", {}, subjectLink(s.subject)),
              h("td", { class: "type" }, s.schema_type),
              h("td", { class: "versions" }, s.versions.join(", ")),
              h("td", { class: "num latest-id" }, String(s.latest_id)),
              h("td", { class: "compatibility" }, s.compatibility),
            ),
          ),
        ),
      ),
    );
  }

  return { refresh };
}

export function schemaView(container, params, _context) {
  const from = h("select", { id: "diff-from" });
  const to = h("select", { id: "diff-to" });
  const level = h("span", { class: "compatibility badge" });
  const diff = h("pre", { class: "schema-diff" });
  const shown = h("pre", { class: "schema-text" });
  container.append(
    h(
      "section",
      { class: "schema-detail", dataset: { subject: params.name } },
      h(
        "div",
        { class: "view-head" },
        h("h2", {}, "Subject ", h("code", {}, params.name)),
        level,
        h("a", { class: "button", href: "#/schemas" }, "All subjects"),
      ),
      h("h3", {}, "Changes"),
      h("label", { class: "inline" }, "from version ", from),
      h("label", { class: "inline" }, " to version ", to),
      diff,
      h("h3", {}, "Schema of the later version"),
      shown,
    ),
  );
  let versions = [];
  from.addEventListener("change", () => render());
  to.addEventListener("change", () => render());

  function render() {
    const a = versions.find((v) => String(v.version) === from.value);
    const b = versions.find((v) => String(v.version) === to.value);
    if (!a || !b) return;
    fill(
      diff,
      lineDiff(pretty(a.schema), pretty(b.schema)).map(([kind, text]) =>
        h("span", { class: kind === "+" ? "added" : kind === "-" ? "removed" : "same" }, `${kind} ${text}\n`),
      ),
    );
    fill(shown, `version ${b.version}, id ${b.id}, ${b.schema_type}\n\n${pretty(b.schema)}`);
  }

  async function refresh() {
    const subject = await api.schema(params.name);
    const known = versions.map((v) => v.version).join(",");
    versions = subject.versions;
    fill(level, subject.compatibility);
    if (versions.map((v) => v.version).join(",") !== known) {
      const options = () => versions.map((v) => h("option", { value: String(v.version) }, `${v.version} (id ${v.id})`));
      fill(from, options());
      fill(to, options());
      from.value = String(versions[Math.max(versions.length - 2, 0)].version);
      to.value = String(versions[versions.length - 1].version);
    }
    render();
  }

  return { refresh };
}
