// Fleetscope pages: draws every .chart[data-src] from the JSON figure its view serves
// (loading plotly.js only on pages that have one), lays the charts out in the page's
// colours (dark mode included), shows times in the zone the user chose (<time> elements,
// zone labels and chart time axes), follows a chart's data links (a click on a linked
// point or annotation opens its page), and re-draws charts and reloads marked fragments on
// the auto-refresh interval.
(function () {
  "use strict";

  var FIRST_CHART_MARK = "fleetscope:first-chart";
  var plotlyLoading = null;

  // plotly.js (4.8 MB, served compressed and long-cached) is fetched once, by the first
  // chart: partials/chart.html names its static URL, so pages without charts never load it.
  function loadPlotly(el) {
    if (window.Plotly) { return Promise.resolve(window.Plotly); }
    if (!plotlyLoading) {
      plotlyLoading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = el.dataset.plotly;
        script.onload = function () { mark("fleetscope:plotly-loaded"); resolve(window.Plotly); };
        script.onerror = function () { plotlyLoading = null; reject(new Error("plotly.js did not load")); };
        document.head.appendChild(script);
      });
    }
    return plotlyLoading;
  }

  // --- time zone: the server prints UTC; "browser" shows the browser's own zone ---

  function browserZone() { return document.documentElement.dataset.timeZone === "browser"; }

  function zoneName() {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "local time"; }
    catch (e) { return "local time"; }
  }

  function pad(n, width) { var s = String(n); while (s.length < (width || 2)) { s = "0" + s; } return s; }

  // The same texts as templatetags/fleetscope_time.py's PRECISIONS, in the browser's zone.
  function formatLocal(d, precision) {
    var date = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate());
    var hm = pad(d.getHours()) + ":" + pad(d.getMinutes());
    var hms = hm + ":" + pad(d.getSeconds());
    if (precision === "date") { return date; }
    if (precision === "clock") { return hms; }
    if (precision === "second") { return date + " " + hms; }
    return date + " " + hm;
  }

  function convertTimes(root) {
    if (!browserZone()) { return; }
    root.querySelectorAll("time[datetime]:not([data-local])").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) { return; }
      el.title = el.textContent + " UTC";
      el.textContent = formatLocal(d, el.dataset.precision || "minute");
      el.dataset.local = "1";
    });
    root.querySelectorAll("[data-zone-label]").forEach(function (el) { el.textContent = zoneName(); });
  }

  // Plotly has no time zones: a date axis shows the wall-clock text it is given, so in
  // the browser's zone every UTC date string of the figure becomes local wall-clock text.
  var UTC_DATE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]00:?00)?$/;

  function localDate(value) {
    if (typeof value !== "string" || !UTC_DATE.test(value)) { return value; }
    var iso = value.replace(" ", "T");
    if (!/(Z|[+-]\d{2}:?\d{2})$/.test(iso)) { iso += "Z"; }
    var d = new Date(iso);
    if (isNaN(d.getTime())) { return value; }
    return formatLocal(d, "second") + "." + pad(d.getMilliseconds(), 3);
  }

  function shiftArray(values) { return Array.isArray(values) ? values.map(localDate) : values; }

  function shiftFigure(fig) {
    var layout = fig.layout || {};
    var dateAxes = {};
    Object.keys(layout).forEach(function (key) {
      var m = /^xaxis(\d*)$/.exec(key);
      if (m && layout[key] && layout[key].type === "date") {
        dateAxes["x" + m[1]] = true;
        var axis = layout[key];
        if (axis.range) { axis.range = shiftArray(axis.range); }
        if (axis.title && axis.title.text === "UTC") { axis.title.text = zoneName(); }
      }
    });
    (fig.data || []).forEach(function (trace) {
      if (dateAxes[trace.xaxis || "x"]) {
        trace.x = shiftArray(trace.x);
        if (trace.base !== undefined) { trace.base = shiftArray(trace.base); }
      }
    });
    (layout.shapes || []).concat(layout.annotations || []).forEach(function (item) {
      if (!dateAxes[(item.xref || "x").replace(" domain", "")]) { return; }
      ["x", "x0", "x1"].forEach(function (k) { if (k in item) { item[k] = localDate(item[k]); } });
    });
    return fig;
  }

  // --- colours: charts take the page's (light or dark) colours at draw time ---

  function themed(layout) {
    var css = getComputedStyle(document.documentElement);
    var v = function (name) { return css.getPropertyValue(name).trim(); };
    var panel = v("--panel"), ink = v("--ink"), muted = v("--muted"), line = v("--line");
    if (!panel) { return layout; }
    layout.paper_bgcolor = panel;
    layout.plot_bgcolor = panel;
    layout.font = Object.assign({}, layout.font, { color: ink });
    Object.keys(layout).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        layout[key] = Object.assign({}, layout[key], {
          gridcolor: line, zerolinecolor: line, linecolor: line,
          tickfont: Object.assign({}, (layout[key] || {}).tickfont, { color: muted }),
        });
      }
    });
    layout.legend = Object.assign({}, layout.legend, { bgcolor: "rgba(0,0,0,0)", font: { color: ink } });
    layout.hoverlabel = Object.assign({ bgcolor: panel, font: { color: ink }, bordercolor: line }, layout.hoverlabel);
    return layout;
  }

  // Performance marks (ms from navigation): when plotly.js ran, when the first chart was drawn.
  function mark(name) {
    if (window.performance && performance.mark && performance.getEntriesByName(name).length === 0) {
      performance.mark(name);
    }
  }

  function markFirstChart() { mark(FIRST_CHART_MARK); }

  function fetchFigure(el) {
    return fetch(el.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (resp) {
        if (!resp.ok) { throw new Error(resp.status + " " + resp.statusText); }
        return resp.json();
      });
  }

  function drawChart(el) {
    return Promise.all([loadPlotly(el), fetchFigure(el)])
      .then(function (loaded) {
        var Plotly = loaded[0], fig = loaded[1];
        el._fleetscopeFigure = JSON.stringify(fig);  // to re-lay out when the scheme changes
        return render(Plotly, el, fig);
      })
      .catch(function (err) {
        el.innerHTML = "";
        var p = document.createElement("p");
        p.className = "error";
        p.textContent = "Chart failed to load: " + err.message;
        el.appendChild(p);
      });
  }

  function render(Plotly, el, fig) {
    if (browserZone()) { shiftFigure(fig); }
    if (el.querySelector("p.muted")) { el.innerHTML = ""; }
    var config = { responsive: true, displaylogo: false };
    return Plotly.react(el, fig.data, themed(fig.layout || {}), config)
      .then(function () { followLinks(el); })
      .then(markFirstChart);
  }

  // --- data links: analytics/charts.py puts them in layout.meta.links, one href (or
  // null) per point of a linked trace and one per linked annotation ---

  function figureLinks(el) {
    var meta = el.layout && el.layout.meta;
    return (meta && meta.links) || { points: {}, annotations: {} };
  }

  // The first hovered or clicked point that has a link (an "x unified" chart reports a
  // point of every trace at that time).
  function pointHref(el, points) {
    var linked = figureLinks(el).points;
    for (var i = 0; points && i < points.length; i++) {
      var hrefs = linked[String(points[i].curveNumber)];
      var href = hrefs && hrefs[points[i].pointNumber];
      if (href) { return href; }
    }
    return null;
  }

  function setCursor(el, cursor) {
    var drag = el.querySelector(".nsewdrag");
    if (drag) { drag.style.cursor = cursor; }
  }

  function followLinks(el) {
    Object.keys(figureLinks(el).annotations).forEach(function (index) {
      var label = el.querySelector('.annotation[data-index="' + index + '"]');
      if (label) { label.style.cursor = "pointer"; }
    });
    if (el._fleetscopeLinks) { return; }  // Plotly.react keeps the handlers of the first draw
    el._fleetscopeLinks = true;
    el.on("plotly_hover", function (ev) { setCursor(el, pointHref(el, ev.points) ? "pointer" : ""); });
    el.on("plotly_unhover", function () { setCursor(el, ""); });
    el.on("plotly_click", function (ev) {
      var href = pointHref(el, ev.points);
      if (href) { window.location.assign(href); }
    });
    el.on("plotly_clickannotation", function (ev) {
      var href = figureLinks(el).annotations[String(ev.index)];
      if (href) { window.location.assign(href); }
    });
  }

  function redrawInPlace() {
    if (!window.Plotly) { return; }
    document.querySelectorAll(".chart[data-src]").forEach(function (el) {
      if (el._fleetscopeFigure) { render(window.Plotly, el, JSON.parse(el._fleetscopeFigure)); }
    });
  }

  function drawAll() {
    document.querySelectorAll(".chart[data-src]").forEach(drawChart);
  }

  function reloadFragments() {
    document.querySelectorAll("[data-fragment]").forEach(function (el) {
      fetch(el.dataset.fragment, { credentials: "same-origin" })
        .then(function (resp) { return resp.ok ? resp.text() : null; })
        .then(function (html) {
          if (html !== null) { el.innerHTML = html; convertTimes(el); }
        });
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

  window.Fleetscope = {
    drawAll: drawAll, reloadFragments: reloadFragments, convertTimes: convertTimes,
    localDate: localDate,
  };
  // This script is deferred: the document is parsed, so the charts start now, before
  // DOMContentLoaded's other listeners.
  drawAll();
  convertTimes(document);
  window.addEventListener("DOMContentLoaded", function () {
    setupRefresh();
    setupTree();
  });
  if (window.matchMedia) {
    var scheme = window.matchMedia("(prefers-color-scheme: dark)");
    if (scheme.addEventListener) { scheme.addEventListener("change", redrawInPlace); }
  }
})();

// A control marked data-autosubmit sends its form when changed (the serving pages' run
// and engine pickers): one delegated listener, as the Content-Security-Policy forbids
// inline handlers (dashboard/security.py).
document.addEventListener("change", function (ev) {
  var control = ev.target.closest && ev.target.closest("[data-autosubmit]");
  if (control && control.form) { control.form.submit(); }
});
