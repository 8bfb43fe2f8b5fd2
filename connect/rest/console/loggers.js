// Loggers (Kafka Connect's /admin/loggers): the worker's configured loggers and their
// levels; a level changes with PUT /admin/loggers/{name}, which also sets the logger's
// children, as in Kafka.

import { api } from "./api.js";
import { fill, h } from "./dom.js";
import { showError, showInfo } from "./notices.js";

const LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"];

function levelSelect(current, attrs = {}) {
  return h(
    "select",
    attrs,
    LEVELS.map((l) => h("option", { value: l, selected: l === current }, l)),
  );
}

export function loggersView(container, _params, _context) {
  const table = h("div", { class: "logger-list" }, h("p", { class: "muted" }, "Loading loggers…"));
  const nameInput = h("input", {
    id: "logger-name",
    placeholder: "logger name, e.g. connect.runtime",
    autocomplete: "off",
  });
  const newLevel = levelSelect("DEBUG", { id: "logger-level", "aria-label": "Level" });
  const form = h(
    "form",
    { class: "inline-form", id: "logger-form" },
    h("label", { for: "logger-name" }, "Set the level of "),
    nameInput,
    newLevel,
    h("button", { type: "submit" }, "Set level"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    if (!name) {
      showError(new Error("Name the logger whose level to set (root for the root logger)."));
      return;
    }
    change(name, newLevel.value);
  });
  container.append(
    h("section", { class: "loggers" }, h("div", { class: "view-head" }, h("h2", {}, "Loggers")), form, table),
  );

  async function change(name, level) {
    try {
      const changed = await api.setLogger(name, level);
      const list = Array.isArray(changed) ? changed.join(", ") : name;
      showInfo(`${level}: ${list}`);
    } catch (err) {
      showError(err);
    }
    await load();
  }

  async function load() {
    const loggers = await api.loggers();
    fill(
      table,
      h(
        "table",
        { class: "loggers-table" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", {}, "Logger"), h("th", {}, "Level"), h("th", {}, "Last modified"), h("th", {}, "")),
        ),
        h(
          "tbody",
          {},
          Object.entries(loggers).map(([name, info]) => {
            const select = levelSelect(info.level, { "aria-label": `Level of ${name}` });
            const button = h("button", { type: "button", class: "small" }, "Set");
            button.addEventListener("click", () => change(name, select.value));
            return h(
              "tr",
              { class: "logger", dataset: { logger: name, level: info.level } },
              h("td", {}, h("code", {}, name)),
              h("td", { class: "level" }, info.level),
              h("td", { class: "muted" }, info.last_modified ? new Date(info.last_modified).toLocaleString() : "–"),
              h("td", {}, select, " ", button),
            );
          }),
        ),
      ),
    );
  }

  // Loaded when shown and after a change, not on every refresh: a refresh would undo a
  // level picked but not yet set.
  load().catch(showError);
  return {};
}
