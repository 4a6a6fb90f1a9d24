// People page: choosing a team in the filter reloads the page with ?team= (the form's
// own submit, so the URL keeps the window's parameters too).
(function () {
  "use strict";
  document.querySelectorAll("form.people-filter select[name=team]").forEach(function (select) {
    select.addEventListener("change", function () {
      select.form.submit();
    });
  });
})();
