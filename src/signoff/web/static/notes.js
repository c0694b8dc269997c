// Live check of an edit being typed: the verifier's codes and the line it would render as, from
// /notes/check (read-only). Saving verifies again on the server; without this script nothing is lost.
"use strict";
(function () {
  var forms = document.querySelectorAll("form.edit-form");
  Array.prototype.forEach.call(forms, function (form) {
    var field = form.querySelector("textarea");
    var out = form.querySelector("output.live-check");
    var timer = null;
    var asked = 0;
    function check() {
      var mine = ++asked;
      var text = field.value.trim();
      if (!text || /[\r\n]/.test(field.value) || text.length > Number(field.getAttribute("maxlength"))) {
        out.textContent = "A sentence is one line of text: it is checked when it is one.";
        return;
      }
      var url = form.getAttribute("data-check") + "?sentence=" + encodeURIComponent(form.getAttribute("data-sentence")) +
        "&text=" + encodeURIComponent(field.value);
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
        if (!r.ok) { throw new Error("status " + r.status); }
        return r.json();
      }).then(function (data) {
        if (mine !== asked) { return; }
        var codes = data.errors.map(function (e) { return e.code + " '" + e.token + "'"; }).join("; ");
        out.textContent = (data.ok ? "Verifies. " : "Does not verify: " + codes + ". ") + "Renders as: " + data.line;
      }).catch(function () {
        if (mine === asked) { out.textContent = "Not checked yet (one line of text); saving checks it."; }
      });
    }
    field.addEventListener("input", function () {
      if (timer) { clearTimeout(timer); }
      timer = setTimeout(check, 250);
    });
  });
})();
