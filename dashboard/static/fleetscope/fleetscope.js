// Fleetscope pages: draws every .chart[data-src] from the JSON figure its view serves,
// and re-draws them (and reloads marked fragments) on the auto-refresh interval.
(function () {
  "use strict";

  function drawChart(el) {
    return fetch(el.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (resp) {
        if (!resp.ok) { throw new Error(resp.status + " " + resp.statusText); }
        return resp.json();
      })
      .then(function (fig) {
        if (el.querySelector("p.muted")) { el.innerHTML = ""; }
        var config = { responsive: true, displaylogo: false };
        return window.Plotly.react(el, fig.data, fig.layout, config);
      })
      .catch(function (err) {
        el.innerHTML = "";
        var p = document.createElement("p");
        p.className = "error";
        p.textContent = "Chart failed to load: " + err.message;
        el.appendChild(p);
      });
  }

  function drawAll() {
    document.querySelectorAll(".chart[data-src]").forEach(drawChart);
  }

  function reloadFragments() {
    document.querySelectorAll("[data-fragment]").forEach(function (el) {
      fetch(el.dataset.fragment, { credentials: "same-origin" })
        .then(function (resp) { return resp.ok ? resp.text() : null; })
        .then(function (html) { if (html !== null) { el.innerHTML = html; } });
    });
  }

  function setupRefresh() {
    var select = document.querySelector("select[data-refresh]");
    if (!select) { return; }
    var timer = null;
    function arm() {
      if (timer) { clearInterval(timer); }
      var seconds = parseInt(select.value, 10);
      if (seconds > 0) { timer = setInterval(function () { drawAll(); reloadFragments(); }, seconds * 1000); }
      var url = new URL(window.location.href);
      url.searchParams.set("refresh", select.value);
      window.history.replaceState(null, "", url.toString());
    }
    select.addEventListener("change", arm);
    arm();
  }

  function setupTree() {
    document.addEventListener("click", function (ev) {
      var btn = ev.target.closest("button[data-toggle]");
      if (!btn) { return; }
      var row = btn.closest("li");
      var open = row.classList.toggle("open");
      btn.setAttribute("aria-expanded", open ? "true" : "false");
    });
    document.querySelectorAll("[data-expand-all]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var open = btn.dataset.expandAll === "open";
        document.querySelectorAll(".tree li.has-children").forEach(function (li) {
          li.classList.toggle("open", open);
          var t = li.querySelector("button[data-toggle]");
          if (t) { t.setAttribute("aria-expanded", open ? "true" : "false"); }
        });
      });
    });
  }

  window.Fleetscope = { drawAll: drawAll, reloadFragments: reloadFragments };
  window.addEventListener("DOMContentLoaded", function () {
    drawAll();
    setupRefresh();
    setupTree();
  });
})();
