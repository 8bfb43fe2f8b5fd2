// The connectors page: every connector with its state, type and tasks (a FAILED task's
// trace folds out), actions (pause, resume, stop, restart with tasks, delete), and its
// throughput over the last minutes. Refreshed by the shell's loop.

import { api } from "./api.js";
import { badge, fill, formatRate, h } from "./dom.js";
import { confirmAction, showError, showInfo } from "./notices.js";
import { sparkline, WINDOW_MS } from "./throughput.js";

export function connectorsView(container, _params, context) {
  const opened = new Set(); // traces the user folded out stay out across refreshes
  const list = h("div", { class: "connector-list" }, h("p", { class: "muted" }, "Loading connectors…"));
  container.append(
    h(
      "section",
      { class: "connectors" },
      h(
        "div",
        { class: "view-head" },
        h("h2", {}, "Connectors"),
        h("a", { class: "button", href: "#/connectors/new" }, "New connector"),
      ),
      list,
    ),
  );

  async function run(button, work, done) {
    button.disabled = true;
    try {
      await work();
      if (done) showInfo(done);
    } catch (err) {
      showError(err);
    } finally {
      await context.refreshNow();
    }
  }

  function actions(name) {
    const button = (label, work, done, extra = {}) => {
      const el = h(
        "button",
        {
          type: "button",
          class: `action ${extra.class || ""}`.trim(),
          dataset: { action: label.toLowerCase() },
          title: extra.title,
        },
        label,
      );
      el.addEventListener("click", () => run(el, work, done));
      return el;
    };
    return h(
      "div",
      { class: "actions" },
      h(
        "a",
        { class: "button", href: `#/connectors/${encodeURIComponent(name)}/edit`, dataset: { action: "edit" } },
        "Edit",
      ),
      button("Pause", () => api.pause(name), `Pausing ${name}`),
      button("Resume", () => api.resume(name), `Resuming ${name}`),
      button("Stop", () => api.stop(name), `Stopping ${name}`, { title: "Stop the connector and shut its tasks down" }),
      button("Restart", () => api.restart(name), `Restarting ${name} and its tasks`, {
        title: "Restart the connector and all its tasks",
      }),
      button(
        "Delete",
        async () => {
          if (
            await confirmAction(
              `Delete connector ${name}? Its config and status go; its topics and committed offsets stay.`,
              "Delete",
            )
          ) {
            await api.remove(name);
            showInfo(`Deleted ${name}`);
          }
        },
        null,
        { class: "danger" },
      ),
    );
  }

  function trace(key, text) {
    const details = h(
      "details",
      { class: "trace", dataset: { key }, open: opened.has(key) },
      h("summary", {}, "trace"),
      h("pre", {}, text),
    );
    details.addEventListener("toggle", () => (details.open ? opened.add(key) : opened.delete(key)));
    return details;
  }

  function tasksTable(name, tasks) {
    if (!tasks.length) return h("p", { class: "muted" }, "No tasks.");
    return h(
      "table",
      { class: "tasks" },
      h("thead", {}, h("tr", {}, h("th", {}, "Task"), h("th", {}, "Worker"), h("th", {}, "State"), h("th", {}, ""))),
      h(
        "tbody",
        {},
        tasks.map((task) => {
          const restart = h(
            "button",
            { type: "button", class: "small", dataset: { action: "restart-task" } },
            "Restart task",
          );
          restart.addEventListener("click", () =>
            run(restart, () => api.restartTask(name, task.id), `Restarting task ${name}-${task.id}`),
          );
          return h(
            "tr",
            { class: "task", dataset: { task: task.id, state: task.state } },
            h("td", {}, String(task.id)),
            h("td", { class: "worker" }, task.worker_id),
            h("td", {}, badge(task.state), task.trace ? trace(`${name}/${task.id}`, task.trace) : null),
            h("td", {}, restart),
          );
        }),
      ),
    );
  }

  function throughput(name) {
    const el = h("div", { class: "throughput", dataset: { connector: name } });
    const points = context.throughput.rates(name);
    if (!points.length) {
      const why = context.metrics.error
        ? `Throughput unavailable (${context.metrics.error})`
        : "Throughput: waiting for samples of /metrics…";
      el.dataset.status = context.metrics.error ? "unavailable" : "waiting";
      return fill(el, h("span", { class: "muted" }, why));
    }
    const now = points[points.length - 1].rate;
    const peak = Math.max(...points.map((p) => p.rate));
    el.dataset.status = "ok";
    el.dataset.rate = String(now);
    el.dataset.peak = String(peak);
    const minutes = Math.round(WINDOW_MS / 60000);
    return fill(
      el,
      sparkline(points, Date.now()),
      h(
        "span",
        { class: "numbers" },
        h("strong", { class: "rate" }, formatRate(now)),
        " records/s now · peak ",
        h("span", { class: "peak" }, formatRate(peak)),
        ` over the last ${minutes} min`,
      ),
    );
  }

  function card(name, entry) {
    const status = entry.status || { connector: { state: "UNKNOWN", worker_id: "" }, tasks: [] };
    const info = entry.info || { config: {}, type: status.type };
    const state = status.connector.state;
    return h(
      "article",
      { class: "connector", dataset: { name, state } },
      h(
        "header",
        {},
        h("h3", {}, name),
        badge(state),
        h("span", { class: "type" }, status.type || info.type || "unknown"),
        h(
          "span",
          { class: "muted class", title: info.config["connector.class"] },
          (info.config["connector.class"] || "").split(".").pop(),
        ),
        h("span", { class: "muted worker" }, status.connector.worker_id),
        actions(name),
      ),
      status.connector.trace ? trace(`${name}/connector`, status.connector.trace) : null,
      h("div", { class: "body" }, tasksTable(name, status.tasks || []), throughput(name)),
    );
  }

  async function refresh() {
    const all = await api.connectors();
    const names = Object.keys(all).sort();
    if (!names.length) {
      fill(
        list,
        h(
          "p",
          { class: "muted empty" },
          "No connectors yet. ",
          h("a", { href: "#/connectors/new" }, "Create one"),
          ".",
        ),
      );
    } else {
      fill(
        list,
        names.map((name) => card(name, all[name])),
      );
    }
  }

  return { refresh };
}
