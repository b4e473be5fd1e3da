"use strict";
// A node's panel (its change, scores, agents' steps, model calls, evaluation logs) and the tree's zoom, shared by
// the HTML report (report.js) and the live page (engine/live/static/live.js), so both show a node the same way.
// Archive text enters the page only through textContent (never innerHTML).
// CladePanel(panel, open).render(node, ctx): `node` is one node of engine/report/data.py; ctx holds what the
// panel needs beyond the node: {parentEvaluations, nDevInstances, hasSteps, finalNode}; `open(id)` follows a link.
window.CladePanel = function (panel, open) {
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmt(x, digits) {
    return x === null || x === undefined ? "—" : Number(x).toFixed(digits);
  }
  function fmtPct(x) {
    return x === null || x === undefined ? "—" : (100 * Number(x)).toFixed(1) + "%";
  }
  function nodeLink(id) {
    const b = el("button", "link", "#" + id);
    b.addEventListener("click", () => open(id));
    return b;
  }
  function section(title) {
    panel.appendChild(el("h2", null, title));
  }
  function pre(text, cls) {
    return el("pre", cls || null, text);
  }

  function diffBlock(diff) {
    const p = el("pre", "diff");
    for (const line of diff.split("\n")) {
      let cls = null;
      if (line.startsWith("+++") || line.startsWith("---")) cls = "file";
      else if (line.startsWith("+")) cls = "add";
      else if (line.startsWith("-")) cls = "del";
      else if (line.startsWith("@@")) cls = "hunk";
      p.appendChild(el("span", cls, line === "" ? "\u00a0" : line));
    }
    return p;
  }

  function scoresTable(node, ctx) {
    const before = new Map();
    for (const e of ctx.parentEvaluations || []) if (e.repeat === 0) before.set(e.split + "/" + e.instance, e.score);
    const t = el("table", "scores");
    const head = el("tr");
    for (const h of ["instance", "split", "score", "parent", "change", "status", "runtime s"]) head.appendChild(el("th", null, h));
    t.appendChild(head);
    for (const e of node.evaluations) {
      const tr = el("tr");
      const p = before.has(e.split + "/" + e.instance) ? before.get(e.split + "/" + e.instance) : null;
      const delta = p === null ? null : e.score - p;
      tr.appendChild(el("td", null, e.instance + (e.repeat ? " (repeat " + e.repeat + ")" : "")));
      tr.appendChild(el("td", null, e.split));
      tr.appendChild(el("td", null, fmt(e.score, 3)));
      tr.appendChild(el("td", null, fmt(p, 3)));
      tr.appendChild(el("td", delta === null ? null : delta > 1e-9 ? "up" : delta < -1e-9 ? "down" : null,
        delta === null ? "—" : (delta > 0 ? "+" : "") + delta.toFixed(3)));
      tr.appendChild(el("td", e.status === "ok" ? null : "bad", e.status));
      tr.appendChild(el("td", null, fmt(e.runtime_s, 2)));
      t.appendChild(tr);
    }
    return t;
  }

  function llmCall(call, open) {
    const d = el("details", "item");
    d.open = open;
    const tokens = (call.tokens_in || 0) + " → " + (call.tokens_out || 0) + " tokens";
    const cost = call.cost_usd === null || call.cost_usd === undefined ? "unpriced" : "$" + Number(call.cost_usd).toFixed(4);
    const purpose = call.purpose + (call.instance ? " (" + call.instance + ")" : "");
    d.appendChild(el("summary", null, "call " + call.id + " · " + purpose + " · " + call.model + " · " + tokens +
      " · " + cost + " · " + fmt(call.latency_s, 1) + " s" + (call.error ? " · failed" : "")));
    if (call.of_parent) d.appendChild(el("p", "meta", "asked about this node; the child it was for was never stored"));
    for (const m of call.messages) {
      d.appendChild(el("div", "role", "prompt: " + m.role));
      d.appendChild(pre(m.content));
    }
    d.appendChild(el("div", "role", call.error ? "error" : "answer"));
    d.appendChild(pre(call.error ? call.error : call.answer === null ? "(no answer)" : call.answer));
    return d;
  }

  function evalLog(e) {
    const d = el("details", "item");
    d.appendChild(el("summary", null, e.split + " " + e.instance + (e.repeat ? " #" + e.repeat : "") + " · " + e.status +
      " · score " + fmt(e.score, 3) + " · " + fmt(e.runtime_s, 2) + " s" + (e.worker ? " · " + e.worker : "")));
    const parts = [["feedback", e.feedback], ["stdout (tail)", e.stdout], ["stderr (tail)", e.stderr], ["metrics", e.metrics]];
    let any = false;
    for (const [name, text] of parts) {
      if (text === null || text === undefined || text === "") continue;
      any = true;
      d.appendChild(el("div", "role", name));
      d.appendChild(pre(text));
    }
    if (!any) d.appendChild(el("p", "empty", "no output, no feedback"));
    return d;
  }

  // a coding agent's steps: number, tool, action and result excerpts (as text), tokens, time
  function stepsTable(steps, more) {
    const wrap = el("div", "steps");
    const t = el("table", "steps");
    const head = el("tr");
    for (const h of ["#", "tool", "action", "result", "tokens in/out", "s"]) head.appendChild(el("th", null, h));
    t.appendChild(head);
    for (const s of steps) {
      const tr = el("tr");
      tr.appendChild(el("td", "num", s.step));
      tr.appendChild(el("td", "tool", s.tool));
      tr.appendChild(el("td", "text", s.action));
      tr.appendChild(el("td", "text", s.result));
      tr.appendChild(el("td", "num", s.tokens_in + " / " + s.tokens_out));
      tr.appendChild(el("td", "num", fmt(s.time_s, 1)));
      t.appendChild(tr);
    }
    wrap.appendChild(t);
    if (more) wrap.appendChild(el("p", "empty", more + " more step" + (more === 1 ? "" : "s") + " not shown (the archive's table trajectory_steps has them all)"));
    return wrap;
  }

  function stepsSummary(steps, more) {
    const n = steps.length + (more || 0);
    let tin = 0, tout = 0, secs = 0;
    for (const s of steps) { tin += s.tokens_in; tout += s.tokens_out; secs += s.time_s; }
    return n + " step" + (n === 1 ? "" : "s") + " · " + tin + " → " + tout + " tokens · " + fmt(secs, 1) + " s" +
      (more ? " (shown steps)" : "");
  }

  function evalSteps(e) {
    const d = el("details", "item steps");
    d.appendChild(el("summary", null, e.instance + (e.repeat ? " #" + e.repeat : "") + " · " + e.split + " · " + e.status +
      " · score " + fmt(e.score, 3) + " · " + stepsSummary(e.steps, e.steps_more)));
    d.appendChild(stepsTable(e.steps, e.steps_more));
    return d;
  }

  function trajectories(node) {
    section("How this node was made");
    if (node.expansion_steps) {
      panel.appendChild(el("p", "meta", "the steps parent #" + node.parent + "'s agent took while it edited its own code into this node: " +
        stepsSummary(node.expansion_steps, node.expansion_more)));
      panel.appendChild(stepsTable(node.expansion_steps, node.expansion_more));
    } else {
      panel.appendChild(el("p", "empty", node.parent === null ? "the seed: no parent made it"
        : "no agent steps recorded: made by the " + node.mutator + " mutator"));
    }
    const withSteps = node.evaluations.filter((e) => e.steps);
    section("Agent steps per evaluation (" + withSteps.length + ")");
    if (withSteps.length) withSteps.forEach((e) => panel.appendChild(evalSteps(e)));
    else panel.appendChild(el("p", "empty", "no steps recorded for this node's evaluations"));
  }

  function render(node, ctx) {
    const id = node.id;
    panel.replaceChildren();
    const title = el("h2", "title", "Node #" + id + " ");
    title.appendChild(el("span", "badge " + node.status, node.status));
    if (id === ctx.finalNode) title.appendChild(el("span", "badge final", "final"));
    panel.appendChild(title);
    const meta = el("p", "meta");
    if (node.parent === null) meta.appendChild(document.createTextNode("root · "));
    else { meta.appendChild(document.createTextNode("parent ")); meta.appendChild(nodeLink(node.parent)); meta.appendChild(document.createTextNode(" · ")); }
    meta.appendChild(document.createTextNode("depth " + node.depth + " · " + node.mutator + (node.model ? " (" + node.model + ")" : "") +
      " · " + node.created_at));
    panel.appendChild(meta);
    if (node.children.length) {
      const kids = el("p", "meta", "children: ");
      node.children.forEach((c, i) => { if (i) kids.appendChild(document.createTextNode(", ")); kids.appendChild(nodeLink(c)); });
      panel.appendChild(kids);
    }
    panel.appendChild(el("p", "meta", node.mean === null ? "no dev evaluation yet"
      : "mean dev score " + fmt(node.mean, 3) + " over " + node.n_dev + " of " + ctx.nDevInstances + " dev instances"));
    if (node.arena) panel.appendChild(el("p", "meta", node.role === "tester"
      ? "tester: mean share of code agents its confirmed tests broke " + fmtPct(node.arena.tester)
      : "arena: original dev set " + fmtPct(node.arena.original) + " · evolved dev set " + fmtPct(node.arena.evolved)
        + " · holdout " + fmtPct(node.arena.holdout)));
    panel.appendChild(el("div", "desc", node.description || "(no description)"));
    if (node.reason) panel.appendChild(el("div", "reason", node.reason));
    if (node.note) {
      section("Improvement note (the review that planned this change)");
      panel.appendChild(el("pre", "note", node.note));
    }

    section("Scores per instance");
    if (node.evaluations.length) panel.appendChild(scoresTable(node, ctx));
    else panel.appendChild(el("p", "empty", "not evaluated"));

    section(node.parent === null ? "Files" : "Diff against parent #" + node.parent);
    if (node.diff) panel.appendChild(diffBlock(node.diff));
    else panel.appendChild(el("p", "empty", node.parent === null ? "the root: no parent to compare with" : "no change"));

    if (ctx.hasSteps) trajectories(node);

    section("LLM calls (" + node.llm_calls.length + ")");
    if (node.llm_calls.length) node.llm_calls.forEach((c, i) => panel.appendChild(llmCall(c, i === node.llm_calls.length - 1)));
    else panel.appendChild(el("p", "empty", node.mutator === "llm" ? "none recorded for this node"
      : "none: made by the " + node.mutator + " mutator"));

    section("Evaluation logs (" + node.evaluations.length + ")");
    if (node.evaluations.length) node.evaluations.forEach((e) => panel.appendChild(evalLog(e)));
    else panel.appendChild(el("p", "empty", "no evaluations"));
  }

  return { render: render, el: el, fmt: fmt };
};

// The zoom buttons (.zoom button[data-zoom]) of a tree pane: the SVG keeps its viewBox and is drawn larger or
// smaller. `attach(svg)` again after the SVG is replaced (the live page) keeps the chosen scale.
window.CladeZoom = function (scroller) {
  let svg = null, baseW = 0, baseH = 0, scale = 1;
  function apply() {
    if (!svg) return;
    svg.setAttribute("width", String(Math.round(baseW * scale)));
    svg.setAttribute("height", String(Math.round(baseH * scale)));
  }
  function zoom(s) { scale = Math.max(0.02, Math.min(4, s)); apply(); }
  function attach(el) {
    svg = el;
    baseW = Number(svg.getAttribute("width"));
    baseH = Number(svg.getAttribute("height"));
    apply();
  }
  document.addEventListener("click", (ev) => {  // delegated: the live page replaces its buttons with the legend
    const b = ev.target.closest ? ev.target.closest(".zoom button") : null;
    if (!b) return;
    const how = b.dataset.zoom;
    if (how === "in") zoom(scale * 1.25);
    else if (how === "out") zoom(scale / 1.25);
    else if (how === "fit") zoom(Math.min(1, (scroller.clientWidth - 4) / baseW));
    else zoom(1);
  });
  return { attach: attach };
};
