"use strict";
// The report's own script: reads the embedded JSON and opens a node's panel (panel.js) on click.
(function () {
  const data = JSON.parse(document.getElementById("clade-data").textContent);
  const nodes = new Map(data.nodes.map((n) => [n.id, n]));
  const finalNode = data.final ? data.final.node : null;
  const panel = document.getElementById("panel");
  const view = window.CladePanel(panel, show);

  function show(id) {
    const node = nodes.get(id);
    if (!node) return;
    document.querySelectorAll("#tree .node.selected").forEach((g) => g.classList.remove("selected"));
    const g = document.querySelector('#tree .node[data-id="' + id + '"]');
    if (g) g.classList.add("selected");
    const parent = node.parent === null ? null : nodes.get(node.parent);
    view.render(node, { parentEvaluations: parent ? parent.evaluations : [], nDevInstances: data.n_dev_instances,
                        hasSteps: data.has_steps, finalNode: finalNode });
    panel.scrollTop = 0;
    if (history.replaceState) history.replaceState(null, "", "#node-" + id);
  }

  document.querySelectorAll("#tree .node").forEach((g) => {
    const id = Number(g.dataset.id);
    g.addEventListener("click", () => show(id));
    g.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); show(id); } });
  });
  window.CladeZoom(document.getElementById("tree-scroll")).attach(document.getElementById("tree"));

  const m = /^#node-(\d+)$/.exec(location.hash);
  if (m) show(Number(m[1]));
  window.cladeShow = show;
})();
