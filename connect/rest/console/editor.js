// Creating a connector, or editing one's config. The plugin's key definitions come from
// GET /connector-plugins/{plugin}/config (documentation, defaults, required keys); values
// are edited key by key, or as raw JSON or .properties text. "Validate" asks
// PUT /connector-plugins/{plugin}/config/validate and shows each key's errors next to
// that key; "Create"/"Save" validates first, then POST /connectors or
// PUT /connectors/{name}/config. Keys left empty are not sent, so their defaults apply.

import { api } from "./api.js";
import { fill, h } from "./dom.js";
import { showError, showInfo } from "./notices.js";
import { formatProperties, parseProperties } from "./properties.js";

const OWN_GROUP = "Connector"; // the plugin's own keys have no group in the definitions
const HIDDEN = "[hidden]"; // what the raw editor shows for a password (Kafka's word for it)

class InputError extends Error {}

function parseJsonConfig(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InputError(`JSON: ${err.message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new InputError("JSON: the config must be an object of keys and string values");
  const config = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && typeof v === "object")
      throw new InputError(
        `JSON: the value of '${key}' must be a string, not ${Array.isArray(v) ? "an array" : "an object"}`,
      );
    if (v !== null) config[key] = String(v);
  }
  return config;
}

function uniqueDefinitions(definitions) {
  const seen = new Set();
  return definitions.filter((d) => !seen.has(d.name) && seen.add(d.name));
}

export function editorView(container, params, _context) {
  const editing = params.name ?? null;
  let mode = "form";
  let definitions = [];
  let loaded = false;
  let hiddenValues = {}; // the passwords the raw editor shows as [hidden], by key

  const pluginSelect = h(
    "select",
    { id: "plugin", name: "connector.class", disabled: editing !== null },
    h("option", { value: "" }, "Choose a plugin…"),
  );
  const nameInput = h("input", {
    id: "connector-name",
    name: "name",
    autocomplete: "off",
    readonly: editing !== null,
    value: editing ?? "",
    placeholder: "my-connector",
  });
  const keys = h("div", { id: "form-keys" });
  const extras = h("div", { class: "extra-rows" });
  const raw = h("textarea", { id: "raw", rows: 18, spellcheck: "false", hidden: true, "aria-label": "Raw config" });
  const summary = h("div", { id: "form-errors", role: "status" });
  const modeButtons = ["form", "json", "properties"].map((m) =>
    h(
      "button",
      {
        type: "button",
        role: "tab",
        class: `mode${m === mode ? " active" : ""}`,
        dataset: { mode: m },
        "aria-selected": String(m === mode),
        onclick: () => switchMode(m),
      },
      { form: "Keys", json: "JSON", properties: "Properties" }[m],
    ),
  );
  const validateButton = h(
    "button",
    { type: "button", id: "validate", onclick: () => busy(validateButton, validate) },
    "Validate",
  );
  const saveButton = h("button", { type: "submit", id: "save", class: "primary" }, editing ? "Save" : "Create");
  const form = h(
    "form",
    { id: "connector-form", novalidate: true, autocomplete: "off" },
    h(
      "div",
      { class: "key fixed", dataset: { key: "connector.class" } },
      h(
        "label",
        { for: "plugin" },
        "Plugin ",
        h("code", {}, "connector.class"),
        h("span", { class: "req", title: "required" }, "*"),
      ),
      pluginSelect,
      h("div", { class: "doc", id: "plugin-doc" }),
      h("ul", { class: "errors" }),
    ),
    h(
      "div",
      { class: "key fixed", dataset: { key: "name" } },
      h(
        "label",
        { for: "connector-name" },
        "Name ",
        h("code", {}, "name"),
        h("span", { class: "req", title: "required" }, "*"),
      ),
      nameInput,
      h("div", { class: "doc" }, "Globally unique name of the connector."),
      h("ul", { class: "errors" }),
    ),
    h("div", { class: "modes", role: "tablist" }, modeButtons),
    h(
      "div",
      { id: "form-body" },
      keys,
      h(
        "section",
        { class: "extra" },
        h("h4", {}, "Other keys"),
        extras,
        h(
          "button",
          { type: "button", class: "small", id: "add-key", onclick: () => extras.append(extraRow("", "")) },
          "Add key",
        ),
      ),
    ),
    raw,
    summary,
    h(
      "div",
      { class: "buttons" },
      validateButton,
      saveButton,
      h("a", { class: "button", href: "#/connectors" }, "Cancel"),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(saveButton, save);
  });
  container.append(
    h("section", { class: "editor" }, h("h2", {}, editing ? `Edit connector ${editing}` : "New connector"), form),
  );

  async function busy(button, work) {
    button.disabled = true;
    try {
      await work();
    } catch (err) {
      if (err instanceof InputError || err.name === "PropertiesError") showSummary([err.message]);
      else showError(err);
    } finally {
      button.disabled = false;
    }
  }

  // -- the key rows -------------------------------------------------------------------

  function inputFor(def) {
    const attrs = { id: `key-${def.name}`, name: def.name, dataset: { key: def.name }, autocomplete: "off" };
    const fallback =
      def.default_value === null || def.default_value === undefined || def.default_value === ""
        ? null
        : def.default_value;
    if (def.type === "BOOLEAN") {
      return h(
        "select",
        attrs,
        h("option", { value: "" }, fallback === null ? "(not set)" : `(default: ${fallback})`),
        h("option", { value: "true" }, "true"),
        h("option", { value: "false" }, "false"),
      );
    }
    return h("input", { ...attrs, type: def.type === "PASSWORD" ? "password" : "text", placeholder: fallback ?? "" });
  }

  function keyRow(def) {
    const fallback =
      def.default_value === null || def.default_value === undefined || def.default_value === ""
        ? null
        : def.default_value;
    return h(
      "div",
      { class: `key${def.required ? " required" : ""}`, dataset: { key: def.name } },
      h(
        "label",
        { for: `key-${def.name}` },
        h("code", {}, def.name),
        def.required ? h("span", { class: "req", title: "required" }, "*") : null,
        h("span", { class: "type" }, def.type),
        def.importance ? h("span", { class: `importance ${def.importance.toLowerCase()}` }, def.importance) : null,
      ),
      inputFor(def),
      h(
        "div",
        { class: "doc" },
        def.documentation || (def.display_name !== def.name ? def.display_name : ""),
        fallback !== null ? h("span", { class: "default" }, "default ", h("code", {}, fallback)) : null,
        def.required ? h("span", { class: "required-note" }, "required") : null,
      ),
      h("ul", { class: "errors" }),
    );
  }

  function extraRow(key, value) {
    const keyInput = h("input", { class: "extra-key", placeholder: "key", value: key, "aria-label": "Key" });
    const valueInput = h("input", { class: "extra-value", placeholder: "value", value, "aria-label": "Value" });
    const row = h(
      "div",
      { class: "key extra-row", dataset: { key } },
      keyInput,
      valueInput,
      h(
        "button",
        { type: "button", class: "small", "aria-label": "Remove key", onclick: () => row.remove() },
        "Remove",
      ),
      h("ul", { class: "errors" }),
    );
    keyInput.addEventListener("input", () => (row.dataset.key = keyInput.value.trim()));
    return row;
  }

  function renderDefinitions() {
    const groups = new Map([[OWN_GROUP, []]]);
    for (const def of definitions) {
      if (def.name === "name" || def.name === "connector.class") continue;
      const group = def.group || OWN_GROUP;
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(def);
    }
    fill(
      keys,
      [...groups]
        .filter(([, defs]) => defs.length)
        .map(([group, defs]) =>
          h(
            "details",
            {
              class: "group",
              dataset: { group },
              open: group === OWN_GROUP || group === "Common" || defs.some((d) => d.required),
            },
            h(
              "summary",
              {},
              group === OWN_GROUP ? "Connector settings" : group,
              h("span", { class: "muted" }, ` (${defs.length})`),
            ),
            defs.map(keyRow),
          ),
        ),
    );
  }

  function defined(name) {
    return definitions.some((d) => d.name === name);
  }

  // -- config <-> form ----------------------------------------------------------------

  function fromForm() {
    const config = {};
    if (nameInput.value.trim()) config.name = nameInput.value.trim();
    if (pluginSelect.value) config["connector.class"] = pluginSelect.value;
    for (const input of keys.querySelectorAll("[data-key]:is(input, select)")) {
      if (input.value !== "") config[input.dataset.key] = input.value;
    }
    for (const row of extras.querySelectorAll(".extra-row")) {
      const key = row.querySelector(".extra-key").value.trim();
      if (key) config[key] = row.querySelector(".extra-value").value;
    }
    return config;
  }

  function collect() {
    if (mode === "form") return fromForm();
    const config = mode === "json" ? parseJsonConfig(raw.value) : parseProperties(raw.value);
    // A password left as [hidden] keeps its value; typing a new one replaces it.
    for (const [key, value] of Object.entries(config)) {
      if (value === HIDDEN && Object.hasOwn(hiddenValues, key)) config[key] = hiddenValues[key];
    }
    return config;
  }

  function isPassword(key) {
    return definitions.some((d) => d.name === key && d.type === "PASSWORD");
  }

  function toForm(config) {
    if (!editing) nameInput.value = config.name ?? "";
    for (const input of keys.querySelectorAll("[data-key]:is(input, select)"))
      input.value = config[input.dataset.key] ?? "";
    extras.replaceChildren();
    for (const [key, value] of Object.entries(config)) {
      if (key !== "name" && key !== "connector.class" && !defined(key)) extras.append(extraRow(key, value));
    }
  }

  function showRaw(config) {
    // Passwords are never put on screen as text: the raw editor shows them as [hidden].
    hiddenValues = {};
    const shown = {};
    for (const [key, value] of Object.entries(config)) {
      if (value && isPassword(key)) {
        hiddenValues[key] = value;
        shown[key] = HIDDEN;
      } else {
        shown[key] = value;
      }
    }
    raw.value = mode === "json" ? JSON.stringify(shown, null, 2) : formatProperties(shown);
  }

  async function switchMode(next) {
    if (next === mode) return;
    let config;
    try {
      config = collect();
    } catch (err) {
      showSummary([err.message]);
      return;
    }
    mode = next;
    for (const b of modeButtons) {
      b.classList.toggle("active", b.dataset.mode === mode);
      b.setAttribute("aria-selected", String(b.dataset.mode === mode));
    }
    document.getElementById("form-body").hidden = mode !== "form";
    raw.hidden = mode === "form";
    if (mode === "form") {
      if (config["connector.class"] && config["connector.class"] !== pluginSelect.value && !editing)
        await choosePlugin(config["connector.class"]);
      toForm(config);
    } else {
      showRaw(config);
    }
  }

  // -- plugins --------------------------------------------------------------------------

  function ensureOption(value) {
    if (value && ![...pluginSelect.options].some((o) => o.value === value))
      pluginSelect.append(h("option", { value }, value));
  }

  let choosing = 0; // the latest plugin choice wins if answers come back out of order

  async function choosePlugin(plugin) {
    const turn = ++choosing;
    ensureOption(plugin);
    pluginSelect.value = plugin;
    const fetched = plugin ? uniqueDefinitions(await api.pluginConfig(plugin)) : [];
    if (turn !== choosing) return;
    // Read the form only now: what was typed while the definitions loaded is kept too.
    const keep = mode === "form" && loaded ? fromForm() : null;
    definitions = fetched;
    const option = pluginSelect.selectedOptions[0];
    document.getElementById("plugin-doc").textContent =
      option && option.dataset.type ? `A ${option.dataset.type} connector, version ${option.dataset.version}.` : "";
    renderDefinitions();
    if (keep) toForm({ ...keep, "connector.class": plugin });
  }

  pluginSelect.addEventListener("change", () => busy(pluginSelect, () => choosePlugin(pluginSelect.value)));

  // -- validation and saving --------------------------------------------------------------

  function showSummary(messages, ok = null) {
    fill(
      summary,
      ok ? h("p", { class: "ok" }, ok) : null,
      messages.length
        ? h(
            "ul",
            { class: "errors" },
            messages.map((m) => h("li", {}, m)),
          )
        : null,
    );
  }

  function clearKeyErrors() {
    for (const row of form.querySelectorAll(".key.invalid")) row.classList.remove("invalid");
    for (const list of form.querySelectorAll(".key .errors")) list.replaceChildren();
    summary.replaceChildren();
  }

  function rowFor(key) {
    if (mode !== "form") return null;
    return form.querySelector(`.key[data-key="${CSS.escape(key)}"]`);
  }

  function showValidation(result) {
    clearKeyErrors();
    const elsewhere = [];
    for (const { value } of result.configs) {
      if (!value.errors || !value.errors.length) continue;
      const row = rowFor(value.name);
      if (!row) {
        for (const e of value.errors) elsewhere.push(`${value.name}: ${e}`);
        continue;
      }
      row.classList.add("invalid");
      fill(
        row.querySelector(".errors"),
        value.errors.map((e) => h("li", {}, e)),
      );
      const group = row.closest("details");
      if (group) group.open = true;
    }
    const count = result.error_count;
    showSummary(elsewhere, count ? null : "The config is valid.");
    if (count) {
      const where = [
        form.querySelector(".key.invalid") ? "see the keys marked in red" : null,
        elsewhere.length ? "listed below" : null,
      ];
      const detail = where.filter(Boolean).join(", and ");
      const text = `${count} ${count === 1 ? "error" : "errors"}${detail ? `: ${detail}` : ""}.`;
      summary.prepend(h("p", { class: "error-count" }, text));
    }
    const first = form.querySelector(".key.invalid input, .key.invalid select");
    if (first) first.focus();
  }

  async function validate() {
    const config = collect();
    const plugin = config["connector.class"];
    if (!plugin) {
      clearKeyErrors();
      const row = form.querySelector('.key[data-key="connector.class"]');
      row.classList.add("invalid");
      fill(row.querySelector(".errors"), h("li", {}, "Choose a plugin (connector.class)."));
      return null;
    }
    const result = await api.validate(plugin, config);
    showValidation(result);
    return { result, config };
  }

  async function save() {
    const checked = await validate();
    if (!checked || checked.result.error_count) return;
    const { config } = checked;
    if (editing) {
      await api.saveConfig(editing, config);
      showInfo(`Saved the config of ${editing}`);
    } else {
      await api.create(config.name, config);
      showInfo(`Created connector ${config.name}`);
    }
    location.hash = "#/connectors";
  }

  // -- loading ----------------------------------------------------------------------------

  (async () => {
    try {
      const plugins = await api.plugins();
      for (const p of plugins) {
        pluginSelect.append(
          h(
            "option",
            { value: p.class, dataset: { type: p.type, version: p.version } },
            `${p.class.split(".").pop()} (${p.type}, ${p.version})`,
          ),
        );
      }
      if (editing) {
        const config = await api.config(editing);
        await choosePlugin(config["connector.class"] || "");
        toForm(config);
      }
    } catch (err) {
      showError(err);
    } finally {
      loaded = true;
    }
  })();

  return {};
}
