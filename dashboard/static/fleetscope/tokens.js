// Tokens page paste box: POSTs the text to /api/tokens/count (session + CSRF header) and
// shows, per encoding side by side, the text cut into its tokens. Text goes in through
// textContent only, never as HTML.
(function () {
  "use strict";

  function csrfToken(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function visible(text) {
    // Whitespace-only tokens would be invisible; show spaces, tabs and newlines.
    return text.replace(/ /g, "\u00b7").replace(/\t/g, "\u2192").replace(/\n/g, "\u21b5\n");
  }

  function column(name, count, pieces) {
    var col = document.createElement("div");
    col.className = "token-column";
    var head = document.createElement("h3");
    head.textContent = name + " \u00b7 " + count + " tokens";
    col.appendChild(head);
    var body = document.createElement("div");
    body.className = "token-pieces";
    pieces.forEach(function (piece, i) {
      var span = document.createElement("span");
      span.className = "tok c" + (i % 5) + (piece.ids.length > 1 ? " multi" : "");
      span.textContent = visible(piece.text);
      span.title = piece.ids.length + " token" + (piece.ids.length > 1 ? "s" : "") + ": " + piece.ids.join(", ");
      body.appendChild(span);
    });
    col.appendChild(body);
    return col;
  }

  function setup() {
    var form = document.getElementById("token-form");
    if (!form) { return; }
    var results = document.getElementById("token-results");
    var language = document.getElementById("token-language");
    var encodings = JSON.parse(document.getElementById("token-encodings").textContent);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var text = form.querySelector("textarea").value;
      fetch(form.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(form) },
        body: JSON.stringify({ text: text, encodings: encodings, pieces: true })
      })
        .then(function (resp) {
          return resp.json().then(function (body) {
            if (!resp.ok) { throw new Error(body.detail || resp.statusText); }
            return body;
          });
        })
        .then(function (answer) {
          results.innerHTML = "";
          encodings.forEach(function (name) {
            results.appendChild(column(name, answer.counts[name], answer.pieces[name]));
          });
          language.textContent = "language: " + (answer.language || "undetermined") +
            " \u00b7 " + answer.chars + " characters, " + answer.bytes + " UTF-8 bytes";
        })
        .catch(function (err) {
          results.innerHTML = "";
          var p = document.createElement("p");
          p.className = "error";
          p.textContent = "Could not count: " + err.message;
          results.appendChild(p);
        });
    });
    form.requestSubmit();
  }

  window.addEventListener("DOMContentLoaded", setup);
})();
