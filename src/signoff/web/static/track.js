// The reporter's tracking page: the link's secret is in the fragment (#cap=...), which the browser
// never sends. This puts it in the page's form, takes it out of the address bar and sends the form
// (POST: the secret never appears in an address or a log). Without this script, the reporter pastes
// the link into the same form.
"use strict";
(function () {
  var form = document.getElementById("track-open");
  if (!form) { return; }
  var cap = new URLSearchParams(window.location.hash.slice(1)).get("cap");
  if (!cap) { return; }
  form.elements.cap.value = cap;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  document.getElementById("track-status").textContent = "Opening your report\u2026";
  form.submit();
})();
