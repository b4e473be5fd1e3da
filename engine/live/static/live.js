"use strict";
// The live page's script: polls the JSON routes every ~2 s and updates only what changed, so a run is followed
// without a reload, and an open node panel (panel.js, the report's) stays open. Text from archives enters the
// page through textContent; the tree and chart markup come escaped from the server (engine/live/charts.py).
(function () {
  const POLL_MS = 2000;
  const body = document.body;
  function $(id) { return document.getElementById(id); }
  function setText(id, text) { const e = $(id); if (e && e.textContent !== String(text)) e.textContent = String(text); }
  function ago(iso, nowMs) {
    const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
    return s < 90 ? s + " s" : Math.round(s / 60) + " min";
  }
  // opened with the printed URL: its token has set the cookie, so it leaves the address bar (and the history)
  const query = new URLSearchParams(location.search);
  if (query.has("token")) {
    query.delete("token");
    const rest = query.toString();
    history.replaceState(history.state, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    if (r.status === 401) throw new Error("no valid token (the server restarted?): open the URL `clade runs serve` printed");
    const data = await r.json();
    if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
    return data;
  }
  function every(ms, fn) {  // runs fn now, then ms after each run ends (never two at once)
    const tick = async () => { try { await fn(); } catch (e) { setText("freshness", "cannot reach the server: " + e.message); } setTimeout(tick, ms); };
    tick();
  }

  // ----- the index: every run, the columns of `runs list` -----
  function indexPage() {
    let last = "";
    every(POLL_MS * 1.5, async () => {
      const data = await getJSON("/api/runs");
      setText("sources", "runs under " + data.sources.join(", "));
      setText("freshness", "updated " + new Date().toLocaleTimeString() + " (refreshes itself)");
      const key = JSON.stringify(data);
      if (key === last) return;
      last = key;
      const table = $("runs");
      const head = document.createElement("tr");
      data.columns.forEach((c, i) => { const th = document.createElement("th"); th.textContent = c; if (data.justify[i] === "right") th.className = "right"; head.appendChild(th); });
      const rows = [head];
      for (const row of data.rows) {
        const tr = document.createElement("tr");
        tr.className = row.state;
        row.cells.forEach((cell, i) => {
          const td = document.createElement("td");
          if (data.justify[i] === "right") td.className = "right";
          if (i === 0) { const a = document.createElement("a"); a.href = "/run/" + encodeURIComponent(row.name); a.textContent = cell; td.appendChild(a); }
          else td.textContent = cell;
          tr.appendChild(td);
        });
        rows.push(tr);
      }
      table.replaceChildren(...rows);
      const empty = $("empty");
      empty.hidden = data.rows.length > 0;
      empty.textContent = "No runs yet (a run is a folder with an archive.duckdb); this list refreshes itself.";
    });
  }

  // ----- one run -----
  function runPage() {
    const name = body.dataset.run;
    const base = "/api/run/" + encodeURIComponent(name);
    const panel = $("panel");
    const view = window.CladePanel(panel, (id) => openNode(id, true));
    const zoom = window.CladeZoom($("tree-scroll"));
    const shown = {};  // section id -> the markup now on the page
    let version = null, state = null, selected = null, shownNode = "";

    function setHTML(id, html) {
      if (shown[id] === html) return false;
      shown[id] = html;
      $(id).innerHTML = html;  // server markup: every archive text in it is escaped
      return true;
    }
    function bindTree() {
      const svg = $("tree");
      if (!svg) return;
      zoom.attach(svg);
      svg.querySelectorAll(".node").forEach((g) => {
        const id = Number(g.dataset.id);
        g.addEventListener("click", () => openNode(id, true));
        g.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openNode(id, true); } });
        if (id === selected) g.classList.add("selected");
      });
    }
    async function openNode(id, fresh) {
      selected = id;
      document.querySelectorAll("#tree .node.selected").forEach((g) => g.classList.remove("selected"));
      const g = document.querySelector('#tree .node[data-id="' + id + '"]');
      if (g) g.classList.add("selected");
      let d;
      try { d = await getJSON(base + "/node/" + id); } catch (e) { if (fresh) { panel.replaceChildren(); panel.appendChild(view.el("p", "empty", e.message)); } return; }
      if (selected !== id) return;
      const key = JSON.stringify(d);
      if (!fresh && key === shownNode) return;  // nothing new about the open node: leave the panel as it is
      shownNode = key;
      const scroll = panel.scrollTop;
      const open = new Set([...panel.querySelectorAll("details[open] > summary")].map((s) => s.textContent));
      view.render(d.node, { parentEvaluations: d.parent_evaluations, nDevInstances: d.n_dev_instances,
                            hasSteps: d.has_steps, finalNode: d.final });
      if (fresh) { panel.scrollTop = 0; if (history.replaceState) history.replaceState(null, "", "#node-" + id); }
      else {  // a refresh of the open node: keep what the reader opened and where they were
        panel.querySelectorAll("details > summary").forEach((s) => { if (open.has(s.textContent)) s.parentElement.open = true; });
        panel.scrollTop = scroll;
      }
    }
    function freshness(data) {
      const now = Date.now();
      if (data.state === "live" && data.live_as_of) return "live, as of " + ago(data.live_as_of, now) + " ago";
      if (data.state === "locked") return "waiting for the search's live copy";
      if (data.state === "finished") return data.stop_reason ? "finished: " + data.stop_reason : "finished";
      return data.status;
    }
    let lastData = null;
    setInterval(() => { if (lastData) setText("freshness", freshness(lastData)); }, 1000);

    every(POLL_MS, async () => {
      const data = await getJSON(base + (version ? "?since=" + encodeURIComponent(version) : ""));
      lastData = data;
      const st = $("state");
      st.className = "state " + data.state;
      setText("state", data.state === "live" ? "running" : data.status);
      setText("freshness", freshness(data));
      const msg = $("message");
      msg.hidden = !data.message;
      if (data.message) msg.textContent = data.message;
      if (data.unchanged || data.state === "locked" || data.state === "error") return;
      const changed = version !== null && version !== data.version;
      version = data.version;
      state = data.state;
      setText("eval-count", data.dev_evals);
      setText("budget", data.budget ? " / " + data.budget : "");
      setText("eval-note", data.holdout_evals + " holdout · " + data.n_dev_instances + " dev instances");
      setText("node-count", data.nodes);
      setText("node-note", data.nodes_by_status.valid + " valid, " + data.nodes_by_status.invalid + " invalid, " + data.nodes_by_status.failed + " failed");
      setText("best", data.best ? data.best.mean.toFixed(3) + " (#" + data.best.node + ")" : "—");
      setText("final", data.final ? "#" + data.final.node : state === "live" ? "not yet" : "none");
      setText("final-note", data.final ? data.final.rule : "chosen when the search ends");
      setText("cost", "$" + data.spend.cost_usd.toFixed(4));
      setText("tokens", data.spend.calls + " calls · " + data.spend.tokens_in + " tokens in, " + data.spend.tokens_out + " out");
      for (const id of ["legend", "scores", "lanes", "calls", "memory"]) setHTML(id, data.html[id]);
      if (setHTML("tree-scroll", data.html.tree)) bindTree();
      if (changed && selected !== null) openNode(selected, false);
    });
    humanDesk(base);
    const m = /^#node-(\d+)$/.exec(location.hash);
    if (m) openNode(Number(m[1]), true);
  }

  // ----- the human mutator's question (--mutator human): shown while it waits, answered by a POST -----
  function humanDesk(base) {
    const url = base + "/human";
    let key = null;
    every(2000, async () => {
      const d = await getJSON(url);
      const q = d.pending;
      $("human").hidden = !q;
      if (!q || q.key === key) return;
      key = q.key;
      setText("human-key", q.key + " (" + q.purpose + ")");
      setText("human-prompt", q.messages.map((m) => "--- " + m.role + " ---\n" + m.content).join("\n\n"));
      setText("human-status", "");
      $("human-answer").value = "";
    });
    $("human-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const r = await fetch(url, { method: "POST", cache: "no-store",
        headers: { "Content-Type": "application/json", "X-Clade-Answer": "1" },
        body: JSON.stringify({ key: key, answer: $("human-answer").value }) });
      const d = await r.json().catch(() => ({}));
      setText("human-status", d.message || d.error || ("HTTP " + r.status));
    });
  }

  if (body.dataset.page === "index") indexPage();
  else if (body.dataset.page === "run") runPage();
})();
