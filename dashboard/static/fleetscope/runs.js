// The run page's agent tree: find an agent by name (matches shown with their planners,
// everything else hidden), and keep expanded nodes expanded when auto-refresh reloads it.
(function () {
  "use strict";

  function nodes() { return document.querySelectorAll(".agent-tree li[data-node]"); }

  function applyFilter() {
    var input = document.querySelector("[data-tree-filter]");
    var count = document.querySelector("[data-tree-filter-count]");
    if (!input) { return; }
    var text = input.value.trim().toLowerCase();
    var matches = 0;
    nodes().forEach(function (li) { li.classList.remove("hidden", "match"); });
    if (!text) { if (count) { count.textContent = ""; } return; }
    // Leaves first: a node stays visible when it or anything below it matches.
    var all = Array.prototype.slice.call(nodes()).reverse();
    all.forEach(function (li) {
      var own = li.dataset.node.toLowerCase().indexOf(text) !== -1;
      var below = li.querySelector(":scope > ul > li:not(.hidden)") !== null;
      if (own) { li.classList.add("match"); matches += 1; }
      if (own || below) {
        if (below) {
          li.classList.add("open");
          var t = li.querySelector(":scope > .node button[data-toggle]");
          if (t) { t.setAttribute("aria-expanded", "true"); }
        }
      } else {
        li.classList.add("hidden");
      }
    });
    if (count) { count.textContent = matches === 1 ? "1 agent" : matches + " agents"; }
  }

  // fleetscope.js replaces [data-fragment] contents on refresh; remember which nodes the
  // user opened or closed, and restore them (and the filter) in the new contents.
  var remembered = null;
  function remember() {
    remembered = {};
    document.querySelectorAll(".agent-tree li.has-children").forEach(function (li) {
      remembered[li.dataset.node] = li.classList.contains("open");
    });
  }
  function restore() {
    if (remembered === null) { return; }
    document.querySelectorAll(".agent-tree li.has-children").forEach(function (li) {
      if (Object.prototype.hasOwnProperty.call(remembered, li.dataset.node)) {
        var open = remembered[li.dataset.node];
        li.classList.toggle("open", open);
        var t = li.querySelector(":scope > .node button[data-toggle]");
        if (t) { t.setAttribute("aria-expanded", open ? "true" : "false"); }
      }
    });
    applyFilter();
  }

  window.addEventListener("DOMContentLoaded", function () {
    var input = document.querySelector("[data-tree-filter]");
    if (input) { input.addEventListener("input", applyFilter); applyFilter(); }
    // The tree's sort is read by the server: a new choice reloads the page sorted.
    document.querySelectorAll("select[data-submit-on-change]").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
    var tree = document.getElementById("agent-tree");
    if (tree) {
      remember();
      // After fleetscope.js has toggled (its handlers run first; the timeout makes sure).
      document.addEventListener("click", function (ev) {
        if (ev.target.closest("button[data-toggle], [data-expand-all]")) { setTimeout(remember, 0); }
      });
      new MutationObserver(restore).observe(tree, { childList: true });
    }
  });
})();
